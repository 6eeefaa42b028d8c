// Broadcast parameters: a 1-D input read as one value per row or per head by every lane of a vector
// (a dequantisation scale per row, a mean per row, a scale per head), in hand schedules that only
// split and vectorize the output. Where such a schedule is refused as written, the compiler copies
// the input whole into each core's LX and compiles again (dsl/broadcast_inputs.h); before, each was
// refused with "access to scale does not start on a stick boundary". So it does for a small input
// of any rank that an unvectorized Func reads one element at a time. Checked bit-exactly against
// Halide's CPU realisation.
#include <gtest/gtest.h>

#include "compiler_test_util.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// out(x, y) = in(x, y) * scale(row(y)): a value per row, or per head of `rows_per_head` rows.
Algorithm scaled_rows(int rows_per_head) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in"), scale(Float(16), 1, "scale");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = in(x, y) * scale(rows_per_head == 1 ? Expr(y) : y / rows_per_head);
        k.inputs = {in, scale};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

Schedule rows_over(int cores) {
    return [=](Kernel &k) { spyre::schedule(k.output).ring_split(k.vars.at("y"), cores).stick_vectorize(k.vars.at("x")); };
}

TEST(BroadcastInputs, AScalePerRowOverEightCoresMatchesCpu) {
    const DiffResult r = run_differential(scaled_rows(1), rows_over(8), {{256, 64}, {64}}, {256, 64});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_TRUE(meets_channel_floor(r));
}

TEST(BroadcastInputs, AScalePerHeadOfEightRowsMatchesCpu) {
    const DiffResult r = run_differential(scaled_rows(8), rows_over(4), {{128, 64}, {8}}, {128, 64});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

TEST(BroadcastInputs, AnFp32MeanPerRowBesideAnInputTiledInLxMatchesCpu) {
    const DiffResult r = run_differential([] {
        Kernel k;
        ImageParam in(Float(16), 2, "in"), mean(Float(32), 1, "mean");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = cast<float16_t>(cast<float>(in(x, y)) - mean(y));
        k.inputs = {in, mean};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    }, [](Kernel &k) {
        const Var y = k.vars.at("y"), yo("yo"), yi("yi");
        spyre::schedule(k.output).split(y, yo, yi, 8).stick_vectorize(k.vars.at("x"));
        spyre::stage_all_in_lx(k.inputs[0], k.output, yo);
    }, {{256, 64}, {64}}, {256, 64});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// What the compiler does, written by hand, is left as the schedule wrote it (not staged twice).
TEST(BroadcastInputs, AScaleTheScheduleStagedItselfMatchesCpu) {
    const DiffResult r = run_differential(scaled_rows(1), [](Kernel &k) {
        rows_over(8)(k);
        spyre::stage_all_in_lx(k.inputs[1], k.output, Var::outermost());
    }, {{256, 64}, {64}}, {256, 64});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// CompileOptions::stage_broadcast_inputs off (what auto_schedule's search does): refused as written.
TEST(BroadcastInputs, WithTheOptionOffAScalePerRowIsRefusedAsWritten) {
    Kernel k = scaled_rows(1)();
    rows_over(8)(k);
    CompileOptions o = kernel_options({{256, 64}, {64}}, {256, 64});
    o.stage_broadcast_inputs = false;
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, o); });
    EXPECT_NE(e.find("one element of scale is read for a whole vector"), std::string::npos) << e;
}

// A vector of parameters over 64 KiB is not copied by the compiler; the error names the directive
// that copies it by hand.
TEST(BroadcastInputs, AParameterVectorOverTheCopiedSizeIsAnErrorNamingStageAllInLx) {
    Kernel k = scaled_rows(1)();
    rows_over(8)(k);
    const std::string e = error_of(
        [&] { compile_for_spyre(k.output, k.inputs, kernel_options({{64, 40000}, {40000}}, {64, 40000})); });
    EXPECT_NE(e.find("one element of scale is read for a whole vector: where scale is a broadcast parameter"), std::string::npos) << e;
    EXPECT_NE(e.find("stage_all_in_lx(scale, <output>, Var::outermost())"), std::string::npos) << e;
}

// A small input of any rank that a Func without stick_vectorize reads one element at a time, at
// positions no whole-stick DMA fetches (a linear 2x upsample's taps, x / 2 and (x + 1) / 2): staged
// whole by the compiler as well. Before, refused with the broadcast parameter's advice.
Algorithm upsample_taps() {
    return [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = in(x / 2, y) + in((x + 1) / 2, y);
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

Schedule rows_one_by_one() {
    return [](Kernel &k) {
        Var yo("yo"), yi("yi");
        spyre::schedule(k.output).split(k.vars.at("y"), yo, yi, 1);
    };
}

TEST(ElementwiseInputs, ASmallInputAnUnvectorizedFuncReadsAtHalfItsColumnsMatchesCpu) {
    const DiffResult r = run_differential(upsample_taps(), rows_one_by_one(), {{4, 5}}, {7, 5});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// Over the copied size, the error says the Func reads one element at a time and how to vectorize
// it, not that the input is a broadcast parameter.
TEST(ElementwiseInputs, OverTheCopiedSizeTheErrorSaysTheFuncReadsOneElementAtATime) {
    Kernel k = upsample_taps()();
    rows_one_by_one()(k);
    const std::string e =
        error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{128, 600}}, {255, 600})); });
    EXPECT_NE(e.find("the Func reads in one element at a time (it has no stick_vectorize): stick_vectorize its "
                     "innermost dimension"), std::string::npos) << e;
}

}  // namespace
}  // namespace spyre::testing
