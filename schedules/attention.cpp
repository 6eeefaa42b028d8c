#include "attention.h"

#include <algorithm>
#include <cmath>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"
#include "tile_rows.h"

namespace spyre {

using namespace Halide;

namespace {
// LX per score of a query tile, all copies and temporaries counted: fp32 scores and exponentials,
// fp16 probabilities, and in the unfused schedule the staged copies of scores and probabilities
// (at 1151 keys its 64-row tile needs 1.77 MB).
constexpr int64_t kFusedLxBytesPerScore = 20, kUnfusedLxBytesPerScore = 32;
}  // namespace

AttentionKernel make_attention(int dim, int seq) {
    AttentionKernel a;
    a.dim = dim, a.seq = seq;
    a.q = ImageParam(Float(16), 2, "q");
    a.k = ImageParam(Float(16), 2, "k");
    a.v = ImageParam(Float(16), 2, "v");
    a.d = Var("d"), a.s = Var("sq"), a.t = Var("t");  // not "s": capture_stmt.cpp
    a.rd = RDom(0, dim, "rd");
    a.rt = RDom(0, seq, "rt");
    Var d = a.d, s = a.s, t = a.t;
    a.scores = Func("scores");
    a.mx = Func("att_max");
    a.e = Func("att_exp");
    a.sum = Func("att_sum");
    a.probs = Func("probs");
    a.acc = Func("att_acc");
    a.out = Func("attention");
    const float scale = 1.0f / std::sqrt(float(dim));
    a.scores(t, s) = 0.0f;
    a.scores(t, s) += cast<float>(a.q(a.rd, s)) * cast<float>(a.k(a.rd, t));
    a.mx(s) = maximum(a.scores(a.rt, s));
    a.e(t, s) = exp((a.scores(t, s) - a.mx(s)) * scale);
    a.sum(s) = sum(a.e(a.rt, s));
    a.probs(t, s) = cast<float16_t>(a.e(t, s) / a.sum(s));
    a.acc(d, s) = 0.0f;
    a.acc(d, s) += cast<float>(a.probs(a.rt, s)) * cast<float>(a.v(d, a.rt));
    a.out(d, s) = cast<float16_t>(a.acc(d, s));
    return a;
}

const std::vector<std::string> &attention_schedules() {
    static const std::vector<std::string> names = {"fused", "unfused", "cpu"};
    return names;
}

void schedule_attention(AttentionKernel &a, const std::string &name, const MachineDesc &m) {
    Var d = a.d, s = a.s, t = a.t, so("so"), si("si");
    if (name == "cpu") {
        for (Func f : {a.scores, a.mx, a.e, a.sum, a.probs, a.acc}) f.compute_root();
        return;
    }
    auto pe = [&](Func f, const RDom &r, const Var &n, const Var &row) {
        schedule(f, m).on_pe(r.x);
        f.update().reorder(pe_loop(r.x), n, row);
    };
    // Query tiles of up to 64 rows, fewer when a tile's scores over the whole sequence (fp32 scores
    // and exponentials, fp16 probabilities, their staged copies and temporaries) would not fit LX.
    const int lanes = int(m.stick_bytes / 2);
    // Whatever the tile, LX also holds K and V staged whole and K's restickified copy (the PE's B
    // operand): three D x S fp16 arrays, rows padded to whole sticks.
    MachineDesc left = m;
    left.lx_usable_bytes -= 3 * int64_t(a.dim) * ((a.seq + lanes - 1) / lanes * lanes) * 2;
    const int64_t per_row = int64_t(a.seq) * (name == "fused" ? kFusedLxBytesPerScore : kUnfusedLxBytesPerScore);
    if (left.lx_usable_bytes < int64_t(m.pe_pass_rows) * per_row)
        throw_error("attention: schedule ", name, " keeps K, V and K's restickified copy (3 x ", a.dim, " x ",
                    a.seq, " fp16) in LX beside a query tile's scores over all ", a.seq,
                    " keys, and at this sequence length even ", m.pe_pass_rows, " query rows do not fit the usable LX (",
                    m.lx_usable_bytes, " bytes); the sequence needs tiling over keys");
    int tile = fit_tile_rows(a.seq, a.seq, 1, 64, name == "fused" ? kFusedLxBytesPerScore : kUnfusedLxBytesPerScore, left);
    if (tile > m.pe_pass_rows) tile -= tile % m.pe_pass_rows;  // whole passes of the PE array
    if (name == "fused") {
        // One query tile at a time: its scores, softmax and probabilities stay in LX.
        schedule(a.out, m).split(s, so, si, tile).stick_vectorize(d);
        for (Func f : {a.scores, a.e, a.probs}) schedule(f, m).scratchpad_store_at(a.out, so).stick_vectorize(t);
        for (Func f : {a.mx, a.sum}) schedule(f, m).scratchpad_store_at(a.out, so);
        schedule(a.acc, m).scratchpad_store_at(a.out, so);
        a.acc.vectorize(d, lanes / 2, TailStrategy::RoundUp);
    } else if (name == "unfused") {
        // Scores and probabilities are materialised in device memory between the stages.
        schedule(a.scores, m).device_root().split(s, so, si, tile).stick_vectorize(t);
        schedule(a.probs, m).device_root().split(s, so, si, tile).stick_vectorize(t);
        schedule(a.e, m).scratchpad_store_at(a.probs, so).stick_vectorize(t);
        for (Func f : {a.mx, a.sum}) schedule(f, m).scratchpad_store_at(a.probs, so);
        schedule(a.out, m).split(s, so, si, tile).stick_vectorize(d);
        schedule(a.acc, m).scratchpad_store_at(a.out, so);
        a.acc.vectorize(d, lanes / 2, TailStrategy::RoundUp);
    } else {
        throw_unknown("attention", "schedule", name, attention_schedules());
    }
    pe(a.scores, a.rd, t, s);
    pe(a.acc, a.rt, d, s);
}

}  // namespace spyre
