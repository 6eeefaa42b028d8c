// Regressions in instruction selection's hazards inside double-buffered loops: a buffer allocated
// in a pipelined loop's body is released (its readers waited for) before another one takes its LX,
// and a per-group scalar computed as a padded vector never reads into a neighbour's LX. Both
// showed as simulator race errors on a row tile that stages its input once per statistic.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "directives.h"

namespace spyre::testing {
namespace {

using namespace Halide;

TEST(PipelineHazards, InputStagedOncePerRowStatisticMatchesCpu) {
    const int cols = 200, rows = 24;
    for (Type t : {Float(32), Int(32)}) {
        auto alg = [=] {
            ImageParam a(t, 2, "a");
            Var x("x"), y("y");
            RDom r(0, cols, "r");
            Func total("row_total"), top("row_top"), out("shifted");
            total(y) = sum(a(r, y));
            top(y) = maximum(a(r, y));
            out(x, y) = cast<float>(a(x, y) - top(y) + total(y)) * 0.25f;
            Kernel k;
            k.inputs = {a};
            k.output = out;
            k.funcs = {{"total", total}, {"top", top}};
            k.vars = {{"x", x}, {"y", y}};
            return k;
        };
        auto sched = [=](Kernel &k) {
            Var yo("yo"), yi("yi");
            schedule(k.output).split(k.vars["y"], yo, yi, 8).stick_vectorize(k.vars["x"]);
            for (const char *f : {"total", "top"}) schedule(k.funcs[f]).scratchpad_store_at(k.output, yo);
        };
        DiffResult r = run_differential(alg, sched, {{cols, rows}}, {cols, rows}, -1000, 1000);
        EXPECT_EQ(r.cmp.mismatches, 0) << t << ": " << r.cmp.first_mismatch;
    }
}

// A pipeline of a Func p and the output reading it, for the schedules below.
Kernel producer_and_output(std::vector<ImageParam> inputs, Func p, Func out, Var x, Var y) {
    Kernel k;
    k.inputs = std::move(inputs);
    k.output = out;
    k.funcs = {{"p", p}};
    k.vars = {{"x", x}, {"y", y}};
    return k;
}

// The output in sticks, p kept in LX at the output's loop `at` ("x" or "y").
Schedule p_in_lx_at(const std::string &at) {
    return [at](Kernel &k) {
        schedule(k.output).stick_vectorize(k.vars["x"]);
        schedule(k.funcs["p"]).scratchpad_store_at(k.output, k.vars[at]).stick_vectorize(k.vars["x"]);
    };
}

// A Func kept in LX at the output's stick loop (scratchpad_store_at(out, x), x stick-vectorized) of a
// copy: each row's tile is loaded into the LX its previous row's store still read from (fuzz-diff
// seed 1 case 3018: the simulator stopped on the race).
TEST(PipelineHazards, FuncKeptInLxAtTheStickLoopMatchesCpu) {
    auto alg = [] {
        ImageParam in(Float(16), 2, "in0");
        Var x("x"), y("y");
        Func p("p"), out("out");
        p(x, y) = in(x, y);
        out(x, y) = p(x, y);
        return producer_and_output({in}, p, out, x, y);
    };
    DiffResult r = run_differential(alg, p_in_lx_at("x"), {{64, 7}}, {64, 7});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// The same at the output's row loop, rows of 200 fp32 (two sticks and a part), a select on the
// column (fuzz-diff seed 1 case 702: a VSHIFT read LX at -384).
TEST(PipelineHazards, FuncKeptInLxAtTheRowLoopMatchesCpu) {
    auto alg = [] {
        ImageParam in0(Float(32), 2, "in0"), in1(Float(32), 2, "in1");
        Var x("x"), y("y");
        Func p("p"), out("out");
        p(x, y) = min(select(x < 98, in1(x, y), in0(x, y)) - in1(x, y), (in1(x, y) - in1(x, y)) * in1(x, y));
        out(x, y) = abs(p(x, y) + in1(x, y)) - in1(x, y);
        return producer_and_output({in0, in1}, p, out, x, y);
    };
    DiffResult r = run_differential(alg, p_in_lx_at("y"), {{200, 3}, {200, 3}}, {200, 3});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing
