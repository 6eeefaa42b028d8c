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

// The loop's count is bounded over the cores; the transfers are then sized for the longest share,
// which reaches past the last core's rows: a refusal that says so, not an internal error.
TEST(UnevenCoreShares, ASplitOfACoresShorterShareIsRefusedNamingTheCoreNotAsAnInternalError) {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func out("out");
    out(x, y) = in(x, y) + 1;
    spyre::schedule(out).stick_vectorize(x);
    spyre::schedule(out).ring_split(y, 4, 7);  // 2 rows a core, the last core 1
    spyre::schedule(out).split(y, yo, yi, 5);
    const std::string msg = error_of([&] { compile_for_spyre(out, {in}, kernel_options({{7, 7}}, {7, 7})); });
    EXPECT_EQ(msg.find("internal"), std::string::npos) << msg;
    EXPECT_NE(msg.find("core 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("a split inside a ring split whose last cores take fewer rows"), std::string::npos) << msg;
}

// The same split where every core's share is whole: it runs.
TEST(UnevenCoreShares, ASplitOfEvenCoreSharesMatchesTheCpu) {
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
    auto sched = [](Kernel &k) {
        Var yo("yo"), yi("yi");
        spyre::schedule(k.output).stick_vectorize(k.vars["x"]);
        spyre::schedule(k.output).ring_split(k.vars["y"], 4, 8);
        spyre::schedule(k.output).split(k.vars["y"], yo, yi, 2);
    };
    DiffResult r = run_differential(alg, sched, {{7, 8}}, {7, 8});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing
