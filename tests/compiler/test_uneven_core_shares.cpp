// A ring split that does not divide gives the last cores fewer rows (or none); a split of each
// core's share then runs a number of times that depends on the core. Found by spyre-fuzz-diff
// (seed 3, case 43): it was an internal error ("no constant bound over the loops around it"); the
// count is now bounded over the cores (select_instructions), and what the back end cannot move
// is refused in words.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "directives.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// out = in + 1 over int32 rows, its rows ring-split over 4 cores to `extent` and each core's share
// split by `factor`.
DiffResult plus_one_split(int rows, int extent, int factor) {
    auto alg = [] {
        Kernel k;
        ImageParam in(Int(32), 2, "in");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = in(x, y) + 1;
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    auto sched = [=](Kernel &k) {
        Var yo("yo"), yi("yi");
        spyre::schedule(k.output).stick_vectorize(k.vars["x"]);
        spyre::schedule(k.output).ring_split(k.vars["y"], 4, extent);
        spyre::schedule(k.output).split(k.vars["y"], yo, yi, factor);
    };
    return run_differential(alg, sched, {{7, rows}}, {7, rows}, -100, 100);
}

// The loop's count is bounded over the cores. Bounding what each core's transfers reach with that
// largest count at every core refused this schedule ("core 3 reads ... past its end", the last
// core taking one row); with the count evaluated core by core (select_dma.cpp, exact_span) no
// transfer reaches past the image, and the kernel matches the CPU.
TEST(UnevenCoreShares, ASplitOfACoresShorterShareMatchesTheCpu) {
    const DiffResult r = plus_one_split(7, 7, 5);  // 2 rows a core, the last core 1
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, 4);
}

// The same split where every core's share is whole: it runs.
TEST(UnevenCoreShares, ASplitOfEvenCoreSharesMatchesTheCpu) {
    const DiffResult r = plus_one_split(8, 8, 2);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing
