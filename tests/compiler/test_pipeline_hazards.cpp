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

}  // namespace
}  // namespace spyre::testing
