// Vectors wider than what is left of a padded row: stick_vectorize(x, 2) over rows of 130 fp16
// elements (3 sticks) makes a row's last vector run 64 elements past the row's end, into the next
// row. Staged with the vectors' loop innermost, one transfer per row stops at the row's end; with
// the rows looped inside the vectors' loop, the last vector's transfer would overwrite the next
// row's first elements (seed 21 case 522 of the random pipelines: 112 elements silently wrong), so
// the compiler refuses that order and says what to change.
#include <gtest/gtest.h>

#include "compiler_test_util.h"

namespace spyre::testing {
namespace {

using namespace Halide;

Algorithm sum_of_abs() {
    return [] {
        Kernel k;
        ImageParam in0(Float(16), 2, "in0"), in1(Float(16), 2, "in1");
        Var x("x"), y("y");
        Func p("p"), out("out");
        p(x, y) = abs(in0(x, y));
        out(x, y) = p(x, y) + in1(x, y);
        k.inputs = {in0, in1};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        k.funcs = {{"p", p}};
        return k;
    };
}

Schedule two_stick_vectors(bool rows_inside) {
    return [=](Kernel &k) {
        Var yo("yo"), yi("yi");
        const Var x = k.vars.at("x"), y = k.vars.at("y");
        spyre::schedule(k.output).stick_vectorize(x, 2).split(y, yo, yi, 2);
        if (rows_inside) k.output.reorder(yi, x);
        spyre::schedule(k.funcs.at("p")).scratchpad_root().stick_vectorize(x);
    };
}

TEST(VectorsPastRows, TwoStickVectorsOverThreeStickRowsMatchCpuWithTheVectorLoopInnermost) {
    const DiffResult r = run_differential(sum_of_abs(), two_stick_vectors(false), {{130, 7}, {130, 7}}, {130, 7});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

TEST(VectorsPastRows, RowsLoopedInsideVectorsThatRunPastThemAreRefusedNotWrittenOver) {
    Kernel k = sum_of_abs()();
    two_stick_vectors(true)(k);
    const std::string msg =
        error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{130, 7}, {130, 7}}, {130, 7})); });
    EXPECT_NE(msg.find("Func out: vectors of 128 elements of out run past the end of its rows of 130 elements (3 sticks)"),
              std::string::npos) << msg;
    EXPECT_NE(msg.find("stick_vectorize by a number of sticks that divides 3, or keep the vectorized loop innermost"),
              std::string::npos) << msg;
}

}  // namespace
}  // namespace spyre::testing
