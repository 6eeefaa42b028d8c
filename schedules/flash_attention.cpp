#include "flash_attention.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"

namespace spyre {

using namespace Halide;

FlashAttentionKernel make_flash_attention(int dim, int seq, int heads, int q_tile, int k_tile, bool causal) {
    return make_flash_attention(AttentionShape{dim, seq, heads, seq, heads, q_tile, k_tile, causal});
}

FlashAttentionKernel make_flash_attention(const AttentionShape &shape) {
    const int dim = shape.dim, seq = shape.seq, heads = shape.heads, q_tile = shape.q_tile, k_tile = shape.k_tile;
    const int kv_seq = shape.kv_seq ? shape.kv_seq : seq, kv_heads = shape.kv_heads ? shape.kv_heads : heads;
    const bool causal = shape.causal;
    if (dim <= 0 || seq <= 0 || heads <= 0 || q_tile <= 0 || k_tile <= 0 || kv_seq <= 0 || kv_heads <= 0)
        throw_error("flash_attention: dim, seq, heads, kv_seq, kv_heads, q_tile and k_tile must be positive (got ", dim,
                    ", ", seq, ", ", heads, ", ", kv_seq, ", ", kv_heads, ", ", q_tile, ", ", k_tile, ")");
    if (heads % kv_heads)
        throw_error("flash_attention: ", heads, " query heads do not share ", kv_heads,
                    " KV heads evenly; heads must be a multiple of kv_heads");
    if (seq > kv_seq)
        throw_error("flash_attention: ", seq, " queries against ", kv_seq,
                    " keys; the queries are the last positions of the keys, so seq may not exceed kv_seq");
    for (auto [what, tile, of, n] : {std::tuple<const char *, int, const char *, int>{"q_tile", q_tile, "seq", seq},
                                     {"k_tile", k_tile, "kv_seq", kv_seq}})
        if (n % tile)
            throw_error("flash_attention: ", of, " ", n, " is not a whole number of ", what, "s of ", tile,
                        " positions; pick a ", what, " that divides it");
    const int offset = kv_seq - seq;  // the first query's position
    const int valid = shape.valid_kv ? shape.valid_kv : kv_seq;
    if (valid < 0 || valid > kv_seq)
        throw_error("flash_attention: valid_kv (", valid, ") must be between 1 and kv_seq (", kv_seq, ")");
    if (causal && valid != kv_seq)
        throw_error("flash_attention: valid_kv (", valid, ") applies without the causal mask; with it the queries' "
                    "positions bound the keys");
    if (shape.pool_blocks < 0 || (shape.pool_blocks > 0 && causal))
        throw_error("flash_attention: pool_blocks (", shape.pool_blocks, ") reads a paged cache without the causal "
                    "mask, 1 or more blocks");
    if (shape.key_bias && (causal || valid != kv_seq))
        throw_error("flash_attention: key_bias applies without the causal mask and without valid_kv: the bias "
                    "decides which keys weigh 0");
    // Each query tile then lies inside one key tile (the queries start at kv_seq - seq, whole key
    // tiles less whole query tiles), so every key tile it sees holds a key at or before each of its
    // rows: no row's tile maximum is over masked scores alone.
    if (causal && k_tile % q_tile)
        throw_error("flash_attention: causal attention needs k_tile (", k_tile, ") a multiple of q_tile (", q_tile,
                    "), so that no query row sees a key tile of masked scores only");
    FlashAttentionKernel a;
    a.dim = dim, a.seq = seq, a.heads = heads, a.q_tile = q_tile, a.k_tile = k_tile;
    a.kv_seq = kv_seq, a.kv_heads = kv_heads;
    a.q = ImageParam(Float(16), 3, "q");
    a.k = ImageParam(Float(16), 3, "k");
    a.v = ImageParam(Float(16), 3, "v");
    a.d = Var("d"), a.t = Var("t"), a.qi = Var("qi"), a.j = Var("j"), a.i = Var("i"), a.sq = Var("sq"),
    a.h = Var("h");
    a.rd = RDom(0, dim, "rd");
    a.rt = RDom(0, k_tile, "rt");
    a.rj = RDom(0, kv_seq / k_tile, "rj");
    Var d = a.d, t = a.t, qi = a.qi, j = a.j, i = a.i, sq = a.sq, h = a.h;
    // The KV head of query head h (GQA); h itself for plain multi-head attention.
    const Expr kvh = heads == kv_heads ? Expr(h) : h / (heads / kv_heads);
    const int Tq = q_tile, Tk = k_tile;
    const float scale = 1.0f / std::sqrt(float(dim));
    a.scores = Func("fa_scores");
    a.state = Func("fa_state");
    a.out = Func("flash_attention");
    a.scores(t, qi, j, i, h) = 0.0f;
    // The queries scaled by 1/sqrt(dim) once, in fp16, so that the scores come out scaled and no
    // pass over a tile of scores or of the state multiplies by the scale.
    a.qs = Func("fa_qs");
    a.qs(d, sq, h) = a.q(d, sq, h) * cast<float16_t>(scale);
    // K by key tiles with the keys along the sticks: a tile is the PE array's B operand as it is,
    // restickified once per head (kv_resident) instead of at every pair of tiles.
    a.kt = Func("fa_kt");
    // The row of key t of key tile j: in order, or (a paged cache) in the pool block the table
    // names for tile j.
    Expr row = j * Tk + t;
    if (shape.pool_blocks > 0) {
        a.block_table = ImageParam(Int(32), 1, "block_table");
        row = clamp(a.block_table(j), 0, shape.pool_blocks - 1) * Tk + t;
    }
    a.kt(t, d, j, h) = a.k(d, row, kvh);
    a.scores(t, qi, j, i, h) += cast<float>(a.qs(a.rd, i * Tq + qi, h)) * cast<float>(a.kt(t, a.rd, j, h));
    // What one key tile gives, from its scores: the tile maximum, the fp16 probabilities, their
    // row sums (of the fp16 values that P V multiplies, so the normaliser matches them and the
    // exponentials need no fp32 copy of their own) and P V.
    auto tile_funcs = [&](Func scored, const std::string &suffix, FlashTileFuncs &f) {
        f.tile_max = Func("fa_tile_max" + suffix);
        f.exps = Func("fa_exps" + suffix);
        f.probs = Func("fa_probs" + suffix);
        f.tile_sum = Func("fa_tile_sum" + suffix);
        f.pv = Func("fa_pv" + suffix);
        f.tile_max(qi, j, i, h) = maximum(scored(a.rt, qi, j, i, h));
        f.exps(t, qi, j, i, h) = exp(scored(t, qi, j, i, h) - f.tile_max(qi, j, i, h));
        f.probs(t, qi, j, i, h) = cast<float16_t>(f.exps(t, qi, j, i, h));
        f.tile_sum(qi, j, i, h) = sum(cast<float>(f.probs(a.rt, qi, j, i, h)));
        f.pv(d, qi, j, i, h) = 0.0f;
        f.pv(d, qi, j, i, h) += cast<float>(f.probs(a.rt, qi, j, i, h)) * cast<float>(a.v(d, substitute(t.name(), a.rt, row), kvh));
    };
    // Without the causal mask, the keys past `valid` (a decode step's window read in whole key
    // tiles) score the lowest float and weigh 0: a select on the key index in every tile, one
    // VSELIDX (the same fold as without it, so every schedule of it applies).
    Func scored = a.scores;
    if (shape.key_bias) {
        a.kv_bias = ImageParam(Float(16), 1, "kv_bias");
        Func biased("fa_biased");
        biased(t, qi, j, i, h) = a.scores(t, qi, j, i, h) + cast<float>(a.kv_bias(j * Tk + t));
        scored = biased;
    } else if (!causal && valid < kv_seq) {
        Func in_window("fa_valid");
        in_window(t, qi, j, i, h) = select(j * Tk + t <= valid - 1, a.scores(t, qi, j, i, h), Float(32).min());
        scored = in_window;
    }
    FlashTileFuncs whole;
    tile_funcs(scored, "", whole);
    a.tile_max = whole.tile_max, a.exps = whole.exps, a.probs = whole.probs, a.tile_sum = whole.tile_sum,
    a.pv = whole.pv;
    // The state (l, O, m), m replicated along d so that the three share a shape. Its elements are
    // stored in this order, each after every element that reads its old value (m is read by all),
    // and l, which does not need P V, first: its vector work runs while the PE array computes P V.
    a.state(d, qi, i, h) = Tuple(0.0f, 0.0f, Float(32).min());
    Expr l = a.state(d, qi, i, h)[0], o = a.state(d, qi, i, h)[1], m = a.state(d, qi, i, h)[2];
    // Folds key tile jt into the state. add is exp(tm - mn) written with the row's scalar tm on the
    // right, so the vector unit subtracts it from each row without broadcasting it first (the same
    // bits: negating is exact).
    auto fold = [&](const FlashTileFuncs &f, Expr jt) {
        Expr tm = f.tile_max(qi, jt, i, h), mn = max(m, tm);
        Expr keep = exp(m - mn), add = exp((mn - tm) * -1.0f);
        a.state(d, qi, i, h) =
            Tuple(l * keep + f.tile_sum(qi, jt, i, h) * add, o * keep + f.pv(d, qi, jt, i, h) * add, mn);
    };
    if (!causal) {
        // The key tiles after the last that holds a valid key are not visited (rj's predicate,
        // which Halide makes the loop's bound).
        if (valid < kv_seq) a.rj.where(a.rj <= (valid - 1) / Tk);
        fold(whole, a.rj);
    } else {
        // A query sees the keys up to its own position. The key tiles wholly before the query tile
        // are folded in whole (rj's predicate, which Halide makes the loop's bound; none after it
        // is visited), then the one tile that holds the query tile (k_tile is a multiple of
        // q_tile), whose later keys score the lowest float and weigh 0.
        a.rj.where(a.rj * Tk + (Tk - 1) <= offset + i * Tq);
        fold(whole, a.rj);
        a.rdiag = RDom(0, 1, "rdiag");
        Expr jd = (offset + i * Tq) / Tk + a.rdiag;
        a.masked = Func("fa_masked");
        a.masked(t, qi, j, i, h) = select(j * Tk + t <= offset + i * Tq + qi, a.scores(t, qi, j, i, h), Float(32).min());
        tile_funcs(a.masked, "_diag", a.diag);
        fold(a.diag, jd);
    }
    a.out(d, sq, h) = cast<float16_t>(a.state(d, sq % Tq, sq / Tq, h)[1] / a.state(d, sq % Tq, sq / Tq, h)[0]);
    return a;
}

FlashTiles flash_attention_tiles(int seq, bool causal) {
    auto largest_divisor = [&](int most, int of) {
        for (int t = std::min(most, seq) / of * of; t > of; t -= of)
            if (seq % t == 0) return t;
        return of;
    };
    const int q = largest_divisor(causal ? 32 : 64, 1);
    return {q, largest_divisor(256, causal ? q : 1)};
}

const std::vector<std::string> &flash_attention_schedules() {
    static const std::vector<std::string> names = {"kv_stream", "kv_resident", "kv_chunked", "cpu"};
    return names;
}

void schedule_flash_attention(FlashAttentionKernel &a, const std::string &name, int cores, const MachineDesc &m) {
    if (name == "cpu") {
        for (Func f : {a.qs, a.scores, a.tile_max, a.exps, a.tile_sum, a.probs, a.pv, a.state}) f.compute_root();
        if (a.masked.defined())
            for (Func f : {a.diag.tile_max, a.diag.exps, a.diag.tile_sum, a.diag.probs, a.diag.pv}) f.compute_root();
        return;
    }
    check_known("flash_attention", "schedule", name, flash_attention_schedules());
    const int lanes32 = int(m.stick_bytes / 4), lanes16 = int(m.stick_bytes / 2);
    const bool chunked = name == "kv_chunked";
    if (a.block_table.defined() && name != "kv_stream")
        throw_error("flash_attention: schedule ", name, " copies the head's K and V into LX whole; a paged cache "
                    "(pool_blocks) is read a key tile at a time through its block table: take kv_stream");
    if (chunked && !a.masked.defined())
        throw_error("flash_attention: schedule kv_chunked needs the causal mask (mask=causal): without it every "
                    "query tile reads every key tile, so there is nothing to load a key tile at a time");
    if (chunked && a.kv_seq != a.seq)
        throw_error("flash_attention: schedule kv_chunked loads a key tile per segment of query tiles, which needs "
                    "a prefill (seq == kv_seq); a decode step of ", a.seq, " queries against ", a.kv_seq,
                    " keys takes kv_stream or kv_resident");
    Var io("io"), ii("ii"), jo("jo"), ioi("ioi");
    // Heads over the cores, query tiles in order on each; the state of a query tile lives in LX
    // while its key tiles are folded in. kv_chunked takes the query tiles in segments, one per key
    // tile (the query tiles whose diagonal key tile it is).
    schedule(a.out, m).ring_split(a.h, std::min(cores, a.heads), a.heads).split(a.sq, io, ii, a.q_tile).stick_vectorize(a.d);
    if (chunked) a.out.split(io, jo, ioi, a.k_tile / a.q_tile);
    const Var tile = chunked ? ioi : io;
    schedule(a.state, m).scratchpad_store_at(a.out, tile).stick_vectorize(a.d);
    // Everything of one key tile is computed at the key-tile loop, in LX; both matmuls on the PE
    // array.
    auto key_tile = [&](Func scores, FlashTileFuncs f, int stage, RVar rv) {
        const LoopLevel at(a.state, rv);  // rj and rdiag each name a loop of one stage
        a.state.update(stage - 1).reorder(a.d, a.qi, rv).vectorize(a.d, lanes32, TailStrategy::RoundUp);
        for (Func g : {scores, f.probs}) {
            g.compute_at(at).store_in(MemoryType::VTCM);
            schedule(g, m).stick_vectorize(a.t);
        }
        for (Func g : {f.tile_max, f.tile_sum}) g.compute_at(at).store_in(MemoryType::VTCM);
        f.pv.compute_at(at).store_in(MemoryType::VTCM);
        f.pv.vectorize(a.d, lanes32, TailStrategy::RoundUp);
        schedule(scores, m).on_pe(a.rd.x);
        schedule(f.pv, m).on_pe(a.rt.x);
        scores.update().reorder(pe_loop(a.rd.x), a.t, a.qi);
        f.pv.update().reorder(pe_loop(a.rt.x), a.d, a.qi);
    };
    // Causal: the diagonal tile's scores are a copy of the Func of their own (cloned before either
    // is scheduled), computed at the second update's loop.
    Func diag_scores = a.masked.defined() ? a.scores.clone_in(a.masked) : Func();
    key_tile(a.scores, {a.tile_max, a.exps, a.probs, a.tile_sum, a.pv}, 1, a.rj.x);
    if (a.masked.defined()) key_tile(diag_scores, a.diag, 2, a.rdiag.x);
    // The query tile is copied into LX and scaled once, not at every key tile that reads it.
    stage_all_in_lx(a.q, a.out, tile, m);
    a.qs.compute_at(a.out, tile).store_in(MemoryType::VTCM);
    schedule(a.qs, m).stick_vectorize(a.d);
    if (chunked) {
        // The head's K and V in LX as kv_resident has them, loaded a key tile per segment: stored
        // per head, computed at the segment loop, where Halide's sliding window leaves only the
        // segment's new key tile to load (its earlier ones are there already). The back end loads
        // the next segment's key tile while this segment computes (plan_pipelines), so the first
        // query tiles start after one key tile has arrived instead of the whole head.
        if (a.k_tile % lanes16 == 0) {
            Var to("to"), ti("ti");
            a.kt.store_at(a.out, a.h).compute_at(a.out, jo).store_in(MemoryType::VTCM);
            a.kt.split(a.t, to, ti, lanes16).vectorize(ti).reorder(ti, to, a.d);
        } else {
            // Key tiles of part sticks: K as it is (as kv_resident has it then), a key tile per segment.
            stage_all_in_lx(a.k, a.out, a.h, m).store_at(a.out, a.h).compute_at(a.out, jo);
        }
        stage_all_in_lx(a.v, a.out, a.h, m).store_at(a.out, a.h).compute_at(a.out, jo);
    }
    if (name == "kv_resident") {
        // The head's K and V are copied into LX once per head and read there by every tile.
        if (a.k_tile % lanes16 == 0) {
            // K by key tiles with the keys along the sticks, once per head: per tile, its rows of d
            // are the groups of one VTRANSPOSE (the sticks of a row first, then the rows).
            Var to("to"), ti("ti");
            a.kt.compute_at(a.out, a.h).store_in(MemoryType::VTCM);
            a.kt.split(a.t, to, ti, lanes16).vectorize(ti).reorder(ti, to, a.d);
        } else {
            // Key tiles of part sticks: K as it is, each tile restickified where the scores read it.
            stage_all_in_lx(a.k, a.out, a.h, m);
        }
        stage_all_in_lx(a.v, a.out, a.h, m);
    }
}

}  // namespace spyre
