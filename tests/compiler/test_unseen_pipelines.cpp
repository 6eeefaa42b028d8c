// Pipelines the catalogue does not have, written from the docs as a new user would (LLM blocks,
// reductions, scans, stencils, a gather), each compiled twice: by spyre::auto_schedule and by a
// plain hand schedule. Both must match Halide's CPU realisation (bit-exactly, or within the ULPs a
// case states where the two orders of a float sum differ), and auto must be no slower than the
// hand schedule in modelled time. Each case's auto search is seconds: the suite runs under `sweep`.
#include <gtest/gtest.h>

#include "auto_schedule.h"
#include "compiler_test_util.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct UnseenCase {
    std::string name;
    Algorithm alg;
    std::vector<std::vector<int>> ins;
    std::vector<int> out;
    Schedule hand;
    int64_t ulp = 0;  // allowed difference from the CPU (both schedules)
};
void PrintTo(const UnseenCase &c, std::ostream *os) { *os << c.name; }

// A 2-D pipeline of `inputs` fp16 images: out = f(in0, in1, ...), the rows split by hand.
Kernel two_d(int inputs, const std::function<Expr(const std::vector<ImageParam> &, Var, Var)> &f) {
    Kernel k;
    Var x("x"), y("y");
    for (int i = 0; i < inputs; i++) k.inputs.push_back(ImageParam(Float(16), 2, "in" + std::to_string(i)));
    Func out("out");
    out(x, y) = f(k.inputs, x, y);
    k.output = out;
    k.vars = {{"x", x}, {"y", y}};
    return k;
}

Schedule rows_over(int cores) {
    return [=](Kernel &k) { spyre::schedule(k.output).ring_split(k.vars.at("y"), cores); };
}

Expr f16(Expr e) { return cast<float16_t>(e); }

std::vector<UnseenCase> unseen_cases() {
    std::vector<UnseenCase> v;
    // SwiGLU's elementwise half: silu(gate) * up.
    v.push_back({"silu_times_up", [] {
                     return two_d(2, [](const std::vector<ImageParam> &in, Var x, Var y) {
                         Expr g = cast<float>(in[0](x, y));
                         return f16(g / (1.0f + exp(-g)) * cast<float>(in[1](x, y)));
                     });
                 }, {{1024, 64}, {1024, 64}}, {1024, 64}, rows_over(32), 1});
    // A residual add, scaled.
    v.push_back({"residual_scale", [] {
                     return two_d(2, [](const std::vector<ImageParam> &in, Var x, Var y) {
                         return (in[0](x, y) + in[1](x, y)) * f16(Expr(0.5f));
                     });
                 }, {{4096, 16}, {4096, 16}}, {4096, 16}, rows_over(16)});
    // Each row less its maximum.
    v.push_back({"row_minus_max", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var x("x"), y("y");
                     RDom r(0, 1000, "r");
                     Func m("m"), out("out");
                     m(y) = maximum(in(r, y));
                     out(x, y) = in(x, y) - m(y);
                     k.inputs = {in};
                     k.output = out;
                     k.funcs = {{"m", m}};
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{1000, 64}}, {1000, 64}, [](Kernel &k) {
                     spyre::schedule(k.output).ring_split(k.vars.at("y"), 32);
                     spyre::schedule(k.funcs.at("m")).scratchpad_store_at(k.output, k.vars.at("y"));
                 }});
    // Sum down the columns into a 1-D output.
    v.push_back({"column_sums", [] {
                     Kernel k;
                     ImageParam in(Float(32), 2, "in");
                     Var x("x");
                     RDom r(0, 48, "r");
                     Func out("out");
                     out(x) = sum(in(x, r));
                     k.inputs = {in};
                     k.output = out;
                     k.vars = {{"x", x}};
                     return k;
                 }, {{2048, 48}}, {2048}, [](Kernel &k) { spyre::schedule(k.output).stick_vectorize(k.vars.at("x")); }});
    // A 3-tap average along the rows with the edges repeated.
    v.push_back({"smooth_rows_repeat_edge", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var x("x"), y("y");
                     Func c = BoundaryConditions::repeat_edge(in);
                     Func out("out");
                     out(x, y) = f16((cast<float>(c(x - 1, y)) + cast<float>(c(x, y)) + cast<float>(c(x + 1, y))) / 3.0f);
                     k.inputs = {in};
                     k.output = out;
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{512, 32}}, {512, 32}, [](Kernel &k) {
                     // As the catalogue's stencil: rows over the cores, each core's rows staged in LX.
                     Var y = k.vars.at("y"), yo("yo"), yi("yi");
                     spyre::schedule(k.output).ring_split(y, 32).split(y, yo, yi, 1).stick_vectorize(k.vars.at("x"));
                     stage_all_in_lx(k.inputs[0], k.output, yo);
                 }, 1});
    // Greedy sampling over a vocabulary row.
    v.push_back({"argmax_rows", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var y("y");
                     RDom r(0, 2000, "r");
                     Func out("out");
                     out(y) = argmax(in(r, y))[0];
                     k.inputs = {in};
                     k.output = out;
                     k.vars = {{"y", y}};
                     return k;
                 }, {{2000, 8}}, {8}, [](Kernel &) {}});
    // An embedding lookup, the ids clamped to the table.
    v.push_back({"embedding", [] {
                     Kernel k;
                     ImageParam table(Float(16), 2, "table"), ids(Int(32), 1, "ids");
                     Var x("x"), t("t");
                     Func out("out");
                     out(x, t) = table(x, clamp(ids(t), 0, 499));
                     k.inputs = {table, ids};
                     k.output = out;
                     k.vars = {{"x", x}, {"y", t}};
                     return k;
                 }, {{256, 500}, {64}}, {256, 64}, rows_over(8)});
    return v;
}

class UnseenPipelines : public ::testing::TestWithParam<UnseenCase> {};

TEST_P(UnseenPipelines, AutoMatchesCpuAndIsNoSlowerThanTheHandSchedule) {
    const UnseenCase &c = GetParam();
    const DiffResult hand = run_differential(c.alg, c.hand, c.ins, c.out, -3, 3);
    EXPECT_LE(hand.cmp.max_ulp, c.ulp) << "hand: " << hand.cmp.first_mismatch;
    AutoResult chosen;
    Schedule by_auto = [&](Kernel &k) {
        CompileOptions o;
        for (const auto &s : c.ins) o.inputs.push_back(TensorSpec{std::vector<int64_t>(s.begin(), s.end()), {}});
        o.output = TensorSpec{std::vector<int64_t>(c.out.begin(), c.out.end()), {}};
        AutoOptions ao;
        ao.max_evaluations = 128;
        ao.progress = false;
        chosen = auto_schedule(k.output, k.inputs, o, ao);
    };
    const DiffResult a = run_differential(c.alg, by_auto, c.ins, c.out, -3, 3);
    EXPECT_LE(a.cmp.max_ulp, c.ulp) << "auto (" << chosen.summary << "): " << a.cmp.first_mismatch;
    EXPECT_LE(a.stats.us, hand.stats.us) << "auto (" << chosen.summary << ") " << a.stats.us << " us, hand " << hand.stats.us
                                         << " us";
}

INSTANTIATE_TEST_SUITE_P(Sweep, UnseenPipelines, ::testing::ValuesIn(unseen_cases()),
                         [](const ::testing::TestParamInfo<UnseenCase> &i) { return i.param.name; });

}  // namespace
}  // namespace spyre::testing
