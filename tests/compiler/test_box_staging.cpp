// A device-memory Func that a nest writes and reads through accesses of different shapes (a scan's
// element r - 1 and element r, an init and an update over other loops) or writes from inside a
// stick is staged as one box of whole padded rows (infer_dma.h). Pipelines as users write them,
// each against Halide's CPU realisation, bit for bit; and the cases the box must not take.
#include <gtest/gtest.h>

#include "compiler_test_util.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// out(x, y) = in(x, y); out(r, y) = out(r - 1, y) + in(r, y): a running sum along each row,
// written into the output itself.
Algorithm row_running_sum(Type t, int cols) {
    return [=] {
        Kernel k;
        ImageParam in(t, 2, "in");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = in(x, y);
        RDom r(1, cols - 1, "r");
        out(r, y) = out(r - 1, y) + in(r, y);
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

TEST(BoxStaging, ARunningSumWrittenIntoTheOutputMatchesCpu) {
    for (int split : {0, 64}) {  // as written; and its columns split by a stick (the tail shifted in)
        DiffResult r = run_differential(
            row_running_sum(Float(16), 200),
            [&](Kernel &k) {
                if (!split) return;
                Var xo("xo"), xi("xi");
                spyre::schedule(k.output).split(k.vars.at("x"), xo, xi, split).stick_vectorize(xi);
            },
            {{200, 16}}, {200, 16}, -4, 4);
        EXPECT_EQ(r.cmp.mismatches, 0) << "split " << split << ": " << r.cmp.first_mismatch;
        EXPECT_EQ(r.cmp.max_ulp, 0);
    }
}

// out(x, 0) = in(x, 0); out(x, r) = out(x, r - 1) + in(x, r): a running sum down the columns,
// written into the output in device memory (the docs' "Scans" keep it in LX; here the back end
// stages the output's rows as one box).
TEST(BoxStaging, AColumnScanWrittenIntoTheOutputMatchesCpu) {
    Algorithm alg = [] {
        Kernel k;
        ImageParam in(Int(32), 2, "in");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = in(x, y);
        RDom r(1, 4, "r");
        out(x, r) = out(x, r - 1) + in(x, r);
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    DiffResult r = run_differential(
        alg, [](Kernel &k) { spyre::schedule(k.output).stick_vectorize(k.vars.at("x")); }, {{200, 5}}, {200, 5}, -100,
        100);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// A ring split over the rows whose update (unsplit) runs on core 0 alone: the cores' pure
// definitions are in device memory before the barrier after them, and core 0's box of every row
// goes back before the barrier after its nest, so no core writes those rows meanwhile.
TEST(BoxStaging, ARowSplitOverCoresWhoseUpdateIsNotSplitRunsOnCoreZeroBetweenBarriersAndMatchesCpu) {
    DiffResult r = run_differential(
        row_running_sum(Float(16), 200),
        [&](Kernel &k) { spyre::schedule(k.output).ring_split(k.vars.at("y"), 4, 16); }, {{200, 16}}, {200, 16});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, 4);
}

// The reduce-1d case of spyre-fuzz-diff seed 1 case 336: acc in device memory, vectorized; out
// split over 4 cores, one element at a time.
TEST(BoxStaging, AReductionInDeviceMemoryReadByCoresOneElementAtATimeMatchesCpu) {
    Algorithm alg = [] {
        Kernel k;
        ImageParam in(Int(32), 2, "in");
        Var x("x"), y("y");
        Func p("p"), acc("acc"), out("out");
        p(x, y) = min(in(x, y) * in(x, y), max(in(x, y), in(x, y)));
        RDom r(0, 3, "r");
        acc(x) = Int(32).min();
        acc(x) = max(acc(x), p(x, r));
        out(x) = acc(x);
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"acc", acc}};
        k.vars = {{"x", x}};
        return k;
    };
    DiffResult r = run_differential(
        alg,
        [](Kernel &k) {
            spyre::schedule(k.output).ring_split(k.vars.at("x"), 4, 130);
            spyre::schedule(k.funcs.at("acc")).device_root().stick_vectorize(k.vars.at("x"));
        },
        {{130, 3}}, {130}, -100, 100);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing
