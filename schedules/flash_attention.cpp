#include "flash_attention.h"

#include <algorithm>
#include <cmath>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;

FlashAttentionKernel make_flash_attention(int dim, int seq, int heads, int q_tile, int k_tile, bool causal) {
    if (dim <= 0 || seq <= 0 || heads <= 0 || q_tile <= 0 || k_tile <= 0)
        throw_error("flash_attention: dim, seq, heads, q_tile and k_tile must be positive (got ", dim, ", ", seq, ", ",
                    heads, ", ", q_tile, ", ", k_tile, ")");
    for (auto [what, tile] : {std::pair<const char *, int>{"q_tile", q_tile}, {"k_tile", k_tile}})
        if (seq % tile)
            throw_error("flash_attention: seq ", seq, " is not a whole number of ", what, "s of ", tile,
                        " positions; pick a ", what, " that divides it");
    // Each query tile then lies inside one key tile, so every key tile it sees holds a key at or
    // before each of its rows: no row's tile maximum is over masked scores alone.
    if (causal && k_tile % q_tile)
        throw_error("flash_attention: causal attention needs k_tile (", k_tile, ") a multiple of q_tile (", q_tile,
                    "), so that no query row sees a key tile of masked scores only");
    FlashAttentionKernel a;
    a.dim = dim, a.seq = seq, a.heads = heads, a.q_tile = q_tile, a.k_tile = k_tile;
    a.q = ImageParam(Float(16), 3, "q");
    a.k = ImageParam(Float(16), 3, "k");
    a.v = ImageParam(Float(16), 3, "v");
    a.d = Var("d"), a.t = Var("t"), a.qi = Var("qi"), a.j = Var("j"), a.i = Var("i"), a.sq = Var("sq"),
    a.h = Var("h");
    a.rd = RDom(0, dim, "rd");
    a.rt = RDom(0, k_tile, "rt");
    a.rj = RDom(0, seq / k_tile, "rj");
    Var d = a.d, t = a.t, qi = a.qi, j = a.j, i = a.i, sq = a.sq, h = a.h;
    const int Tq = q_tile, Tk = k_tile;
    const float scale = 1.0f / std::sqrt(float(dim));
    a.scores = Func("fa_scores");
    a.tile_max = Func("fa_tile_max");
    a.exps = Func("fa_exps");
    a.tile_sum = Func("fa_tile_sum");
    a.probs = Func("fa_probs");
    a.pv = Func("fa_pv");
    a.state = Func("fa_state");
    a.out = Func("flash_attention");
    a.scores(t, qi, j, i, h) = 0.0f;
    a.scores(t, qi, j, i, h) += cast<float>(a.q(a.rd, i * Tq + qi, h)) * cast<float>(a.k(a.rd, j * Tk + t, h));
    // Causal: a query sees the keys up to its own position. Key tiles wholly after the query tile
    // are skipped (rj's predicate); inside the others, later keys score -inf and weigh 0.
    Func scored = a.scores;
    if (causal) {
        a.masked = Func("fa_masked");
        a.masked(t, qi, j, i, h) = select(j * Tk + t <= i * Tq + qi, a.scores(t, qi, j, i, h), Float(32).min());
        a.rj.where(a.rj * Tk <= i * Tq + (Tq - 1));  // Halide makes this the loop's bound
        scored = a.masked;
    }
    a.tile_max(qi, j, i, h) = maximum(scored(a.rt, qi, j, i, h));
    a.exps(t, qi, j, i, h) = exp((scored(t, qi, j, i, h) - a.tile_max(qi, j, i, h)) * scale);
    a.probs(t, qi, j, i, h) = cast<float16_t>(a.exps(t, qi, j, i, h));
    // The row sums add the fp16 probabilities that P V multiplies, so the normaliser matches them
    // (and the exponentials need no fp32 copy of their own).
    a.tile_sum(qi, j, i, h) = sum(cast<float>(a.probs(a.rt, qi, j, i, h)));
    a.pv(d, qi, j, i, h) = 0.0f;
    a.pv(d, qi, j, i, h) += cast<float>(a.probs(a.rt, qi, j, i, h)) * cast<float>(a.v(d, j * Tk + a.rt, h));
    // The state (l, O, m), m replicated along d so that the three share a shape. Its elements are
    // stored in this order, each after every element that reads its old value (m is read by all),
    // and l, which does not need P V, first: its vector work runs while the PE array computes P V.
    a.state(d, qi, i, h) = Tuple(0.0f, 0.0f, Float(32).min());
    Expr l = a.state(d, qi, i, h)[0], o = a.state(d, qi, i, h)[1], m = a.state(d, qi, i, h)[2];
    Expr tm = a.tile_max(qi, a.rj, i, h), mn = max(m, tm);
    // add is exp((tm - mn) * scale) written with the row's scalar tm on the right, so the vector
    // unit subtracts it from each row without broadcasting it first (the same bits: negating both
    // factors is exact).
    Expr keep = exp((m - mn) * scale), add = exp((mn - tm) * -scale);
    a.state(d, qi, i, h) =
        Tuple(l * keep + a.tile_sum(qi, a.rj, i, h) * add, o * keep + a.pv(d, qi, a.rj, i, h) * add, mn);
    a.out(d, sq, h) = cast<float16_t>(a.state(d, sq % Tq, sq / Tq, h)[1] / a.state(d, sq % Tq, sq / Tq, h)[0]);
    return a;
}

FlashTiles flash_attention_tiles(int seq, bool causal) {
    auto largest_divisor = [&](int most, int of) {
        for (int t = std::min(most, seq) / of * of; t > of; t -= of)
            if (seq % t == 0) return t;
        return of;
    };
    const int q = largest_divisor(64, 1);
    return {q, largest_divisor(256, causal ? q : 1)};
}

const std::vector<std::string> &flash_attention_schedules() {
    static const std::vector<std::string> names = {"kv_stream", "kv_resident", "cpu"};
    return names;
}

void schedule_flash_attention(FlashAttentionKernel &a, const std::string &name, int cores, const MachineDesc &m) {
    if (name == "cpu") {
        for (Func f : {a.scores, a.tile_max, a.exps, a.tile_sum, a.probs, a.pv, a.state}) f.compute_root();
        return;
    }
    check_known("flash_attention", "schedule", name, flash_attention_schedules());
    const int lanes32 = int(m.stick_bytes / 4);
    Var io("io"), ii("ii");
    // Heads over the cores, query tiles in order on each; the state of a query tile lives in LX
    // while its key tiles are folded in.
    schedule(a.out, m).ring_split(a.h, std::min(cores, a.heads), a.heads).split(a.sq, io, ii, a.q_tile).stick_vectorize(a.d);
    schedule(a.state, m).scratchpad_store_at(a.out, io).stick_vectorize(a.d);
    a.state.update().reorder(a.d, a.qi, a.rj).vectorize(a.d, lanes32, TailStrategy::RoundUp);
    // Everything of one key tile is computed at the key-tile loop, in LX.
    for (Func f : {a.scores, a.probs}) {
        f.compute_at(a.state, a.rj).store_in(MemoryType::VTCM);
        schedule(f, m).stick_vectorize(a.t);
    }
    for (Func f : {a.tile_max, a.tile_sum}) f.compute_at(a.state, a.rj).store_in(MemoryType::VTCM);
    a.pv.compute_at(a.state, a.rj).store_in(MemoryType::VTCM);
    a.pv.vectorize(a.d, lanes32, TailStrategy::RoundUp);
    // Both matmuls on the PE array.
    RVar kd(a.rd.x.name() + kPeLoopSuffix), kt(a.rt.x.name() + kPeLoopSuffix);
    a.scores.update().rename(a.rd.x, kd).reorder(kd, a.t, a.qi);
    a.pv.update().rename(a.rt.x, kt).reorder(kt, a.d, a.qi);
    // The query tile is copied into LX once, not at every key tile that reads it.
    stage_all_in_lx(a.q, a.out, io, m);
    if (name == "kv_resident") {
        // The head's K and V are copied into LX once per head and read there by every tile.
        stage_all_in_lx(a.k, a.out, a.h, m);
        stage_all_in_lx(a.v, a.out, a.h, m);
    }
}

}  // namespace spyre
