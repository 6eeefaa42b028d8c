// Image pipelines as Halide's tutorials write them. Convolutions written with an RDom of taps, as Halide's tutorials write them: an inline
// sum()/maximum() over in(x + r.x - 1, y + r.y - 1) through a boundary condition, or a Func of the
// user's with an update over the taps. The taps along the stick are unrolled (each a VSHIFT at a
// constant shift), and an inline reduction that reads only inputs is computed in LX once per row
// of its consumer (dsl/inline_reductions.h): the hand schedule only vectorizes the output. And
// 2:1 down- and upsampling, along the rows and along the stick (VSTRIDE).
// Checked bit-exactly against Halide's CPU realisation.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "auto_schedule.h"
#include "compiler_test_util.h"
#include "ktir/ktir_export.h"

namespace spyre::testing {
namespace {

using namespace Halide;

enum class Taps { BoxSum3x3, Max5Zero, Sum20Row, Sum100Row };

// out(x, y) over an fp16 input; the taps as an inline reduction.
Algorithm inline_taps(Taps t) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func out("out");
        Func edge = BoundaryConditions::repeat_edge(in);
        switch (t) {
        case Taps::BoxSum3x3: {
            RDom r(0, 3, 0, 3, "r");
            out(x, y) = cast<float16_t>(sum(cast<float>(edge(x + r.x - 1, y + r.y - 1))) / 9.0f);
            break;
        }
        case Taps::Max5Zero: {
            RDom r(0, 5, "r");
            Func zero = BoundaryConditions::constant_exterior(in, cast<float16_t>(0));
            out(x, y) = maximum(zero(x + r - 2, y));
            break;
        }
        case Taps::Sum20Row:
        case Taps::Sum100Row: {
            RDom r(0, t == Taps::Sum20Row ? 20 : 100, "r");
            out(x, y) = cast<float16_t>(sum(cast<float>(edge(x + r - 10, y))));
            break;
        }
        }
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

Schedule rows_over(int cores) {
    return [=](Kernel &k) { spyre::schedule(k.output).ring_split(k.vars.at("y"), cores).stick_vectorize(k.vars.at("x")); };
}

TEST(RDomStencils, AnInlineSumOverA3x3RDomMatchesCpuWithOnlyTheOutputScheduled) {
    // 200 columns: the last stick is part padding, and the right edge's clamp falls inside it.
    const DiffResult r = run_differential(inline_taps(Taps::BoxSum3x3), rows_over(8), {{200, 30}}, {200, 30});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_TRUE(meets_channel_floor(r));
}

TEST(RDomStencils, AnInlineMaximumOverFiveTapsWithAZeroEdgeMatchesCpu) {
    const DiffResult r = run_differential(inline_taps(Taps::Max5Zero), rows_over(4), {{130, 8}}, {130, 8});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

TEST(RDomStencils, TwentyTapsAlongTheStickAreUnrolledAndMatchCpu) {
    const DiffResult r = run_differential(inline_taps(Taps::Sum20Row), rows_over(2), {{128, 4}}, {128, 4});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

TEST(RDomStencils, AWindowOfMoreTapsThanAreUnrolledIsAnErrorNamingTheRDom) {
    Kernel k = inline_taps(Taps::Sum100Row)();
    rows_over(2)(k);
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{128, 4}}, {128, 4})); });
    // A one-dimensional RDom's only RVar is r.x, as Halide names it.
    EXPECT_NE(e.find("Func sum: r.x offsets its reads along the stick dimension (x + r.x) over 100 taps"), std::string::npos) << e;
    EXPECT_NE(e.find("at most 64"), std::string::npos) << e;
}

// The same box filter with the accumulator a Func of the user's, its taps left as loops.
Algorithm named_accumulator() {
    return [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func acc("acc"), out("out");
        Func edge = BoundaryConditions::repeat_edge(in);
        RDom r(0, 3, 0, 3, "r");
        acc(x, y) = 0.0f;
        acc(x, y) += cast<float>(edge(x + r.x - 1, y + r.y - 1));
        out(x, y) = cast<float16_t>(acc(x, y) / 9.0f);
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"acc", acc}};
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

TEST(RDomStencils, ANamedAccumulatorsTapsAreUnrolledByStickVectorizeAndMatchCpu) {
    const DiffResult r = run_differential(named_accumulator(), [](Kernel &k) {
        const Var x = k.vars.at("x"), y = k.vars.at("y");
        spyre::schedule(k.output).ring_split(y, 4).stick_vectorize(x);
        // fp32 of fp16 taps: two fp32 sticks make each vector one whole fp16 stick.
        spyre::schedule(k.funcs.at("acc")).scratchpad_store_at(k.output, y).stick_vectorize(x, 2);
    }, {{128, 16}}, {128, 16});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

TEST(RDomStencils, AnFp32AccumulatorVectorizedByItsOwnStickSaysHowManySticks) {
    Kernel k = named_accumulator()();
    const Var x = k.vars.at("x"), y = k.vars.at("y");
    spyre::schedule(k.output).ring_split(y, 4).stick_vectorize(x);
    spyre::schedule(k.funcs.at("acc")).scratchpad_store_at(k.output, y).stick_vectorize(x, 1);
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{128, 16}}, {128, 16})); });
    EXPECT_NE(e.find("Func acc"), std::string::npos) << e;
    EXPECT_NE(e.find("stick_vectorize(x, 2)"), std::string::npos) << e;
}

TEST(AutoRDomStencils, AnInlineSumOverA3x3RDomIsScheduledAndMatchesCpu) {
    const Algorithm alg = inline_taps(Taps::BoxSum3x3);
    const DiffResult hand = run_differential(alg, rows_over(8), {{200, 30}}, {200, 30});
    Schedule by_auto = [&](Kernel &k) {
        AutoOptions ao;
        ao.max_evaluations = 64;
        ao.progress = false;
        auto_schedule(k.output, k.inputs, kernel_options({{200, 30}}, {200, 30}), ao);
    };
    const DiffResult a = run_differential(alg, by_auto, {{200, 30}}, {200, 30});
    EXPECT_EQ(a.cmp.mismatches, 0) << a.cmp.first_mismatch;
    EXPECT_LE(a.stats.us, hand.stats.us);
}

// A 2:1 downsample along the stick: the error names the stride, not a stick boundary of rows.
// Halide's tutorial blur, separable, through repeat_edge, with blur_x kept in LX per row of the
// output: Halide partitions blur_x's row loop at the image's edges, so its count depends on the
// output row (two rows at the top and bottom, three between). The bound of what each core reads took
// the largest count at every row and refused the schedule ("core 0 reads bytes [0, 35584) ... a loop
// or vector reaches past its end"); it is now bounded row by row, and the kernel matches the CPU.
Algorithm separable_blur() {
    return [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func bx("blur_x"), by("blur_y");
        Func e = BoundaryConditions::repeat_edge(in);
        bx(x, y) = (e(x - 1, y) + e(x, y) + e(x + 1, y)) / 3;
        by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3;
        k.inputs = {in};
        k.output = by;
        k.funcs = {{"blur_x", bx}};
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

TEST(SeparableBlur, BlurXKeptInLxPerOutputRowWithRepeatEdgeMatchesCpu) {
    for (int cores : {1, 8}) {
        const Schedule s = [=](Kernel &k) {
            const Var x = k.vars.at("x"), y = k.vars.at("y");
            spyre::schedule(k.output).ring_split(y, cores).stick_vectorize(x);
            spyre::schedule(k.funcs.at("blur_x")).scratchpad_store_at(k.output, y).stick_vectorize(x);
        };
        const DiffResult r = run_differential(separable_blur(), s, {{256, 64}}, {256, 64});
        EXPECT_EQ(r.cmp.mismatches, 0) << cores << " cores: " << r.cmp.first_mismatch;
    }
}

// The same blur as Halide's tutorials write it for 8-bit images: blur_x in uint16 over a uint8 image,
// blur_y back to uint8. The device has no 16-bit type; blur_x kept in LX was refused ("type uint16
// has no stick operations"). It is now stored in int32 (legalise_types), each vector a whole stick of
// the bytes it reads, and what it stores bounds what blur_y reads back (sums of three bytes, whose
// sums of three stay in 16 bits).
Algorithm byte_blur(int scale) {
    return [=] {
        Kernel k;
        ImageParam in(UInt(8), 2, "in");
        Var x("x"), y("y");
        Func bx("blur_x"), by("blur_y");
        Func e = BoundaryConditions::repeat_edge(in);
        bx(x, y) = (cast<uint16_t>(e(x - 1, y)) + e(x, y) + e(x + 1, y)) * cast<uint16_t>(scale);
        by(x, y) = cast<uint8_t>((bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / (9 * scale));
        k.inputs = {in};
        k.output = by;
        k.funcs = {{"blur_x", bx}};
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

Schedule blur_x_in_lx(int cores) {
    return [=](Kernel &k) {
        const Var x = k.vars.at("x"), y = k.vars.at("y");
        spyre::schedule(k.output).ring_split(y, cores).stick_vectorize(x);
        spyre::schedule(k.funcs.at("blur_x")).scratchpad_store_at(k.output, y).stick_vectorize(x);
    };
}

TEST(ByteBlur, AUint16BlurXKeptInLxMatchesCpuExactly) {
    for (auto [w, h, cores] : {std::tuple{256, 64, 8}, std::tuple{200, 30, 4}}) {
        const DiffResult r = run_differential(byte_blur(1), blur_x_in_lx(cores), {{w, h}}, {w, h}, 0, 255);
        EXPECT_EQ(r.cmp.mismatches, 0) << w << "x" << h << ": " << r.cmp.first_mismatch;
    }
}

TEST(ByteBlur, AutoScheduleMatchesCpuExactly) {
    AutoOptions ao;
    ao.max_evaluations = 8;
    ao.progress = false;
    const CompileOptions o = kernel_options({{256, 64}}, {256, 64});
    AutoResult chosen;
    const DiffResult r = run_differential(
        byte_blur(1), [&](Kernel &k) { chosen = auto_schedule(k.output, k.inputs, o, ao); }, {{256, 64}}, {256, 64}, 0, 255);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch << "\n" << chosen.cpp;
}

// Vectorized by one uint16 stick (64 lanes), blur_x reads half a stick of the uint8 image: refused
// with the count that reads whole sticks. Its edge reads are clamped vectors (repeat_edge's min and
// max of a ramp), which the advice took for one element read for a whole vector (a broadcast
// parameter) before.
TEST(ByteBlur, AUint16StageVectorizedByOneStickSaysHowManySticksReadWholeBytes) {
    Kernel k = byte_blur(1)();
    const Var x = k.vars.at("x"), y = k.vars.at("y");
    spyre::schedule(k.output).ring_split(y, 4).stick_vectorize(x);
    spyre::schedule(k.funcs.at("blur_x")).scratchpad_store_at(k.output, y).stick_vectorize(x, 1);
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{256, 64}}, {256, 64})); });
    EXPECT_NE(e.find("Func blur_x: access to in does not start on a stick boundary (128 elements); its vectors are 64 "
                     "elements and a stick of in holds 128: stick_vectorize(x, 2)"),
              std::string::npos)
        << e;
    EXPECT_EQ(e.find("broadcast"), std::string::npos) << e;
}

// Scaled by 100, blur_x's values pass 2^16, where Halide's uint16 wraps; stored in int32 they would
// not: refused, naming the Func and the store.
TEST(ByteBlur, AUint16StageThatMayWrapIsRefusedNamingItsStore) {
    Kernel k = byte_blur(100)();
    blur_x_in_lx(4)(k);
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{256, 64}}, {256, 64})); });
    EXPECT_NE(e.find("Func blur_x: a uint16 value that may wrap past 16 bits is used by its store into blur_x"),
              std::string::npos) << e;
}

bool uses(const DeviceProgram &p, Opcode op) {
    return std::any_of(p.code.begin(), p.code.end(), [&](const Instr &in) { return in.op == op; });
}

// out(x, y) = f(in, x, y) over an fp16 input.
Algorithm resampled(const std::function<Expr(ImageParam &, Var, Var)> &f) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = f(in, x, y);
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

// Halide's downsample along the stick, the mean of two taps (tap < 0) or one tap: each output
// stick is every step-th lane of `step` input sticks, one VSTRIDE (docs/device_model.md).
Algorithm downsample_x(int step, int tap) {
    return resampled([=](ImageParam &in, Var x, Var y) -> Expr {
        if (tap < 0) return (in(step * x, y) + in(step * x + 1, y)) * cast<float16_t>(0.5f);
        return in(step * x + tap, y);
    });
}

// Each core's two rows of two output sticks are one VSTRIDE per tap: the rows follow one another in
// both buffers (the input's twice as long), so they merge with the sticks into one group.
TEST(StridedReads, ADownsampleAlongTheStickMatchesCpu) {
    const DiffResult r = run_differential(downsample_x(2, -1), rows_over(4), {{256, 8}}, {128, 8});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    std::vector<Instr> strided;
    for (const Instr &in : r.program.code)
        if (in.op == Opcode::VSTRIDE) strided.push_back(in);
    ASSERT_EQ(strided.size(), 2u);
    for (const Instr &in : strided) {
        EXPECT_EQ(in.a[7], 4);  // sticks per group
        EXPECT_EQ(in.a[8], 1);  // groups
    }
}

// Every third element from the third on: three input sticks per output stick.
TEST(StridedReads, AThreeToOneDecimationAlongTheStickMatchesCpu) {
    const DiffResult r = run_differential(downsample_x(3, 2), rows_over(2), {{384, 4}}, {128, 4});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// The same read from a copy of the input tiled in LX.
TEST(StridedReads, ADownsampleAlongTheStickFromAnLxTileMatchesCpu) {
    Schedule tiled = [](Kernel &k) {
        Var yo("yo"), yi("yi");
        spyre::schedule(k.output).split(k.vars.at("y"), yo, yi, 4).stick_vectorize(k.vars.at("x"));
        spyre::stage_all_in_lx(k.inputs[0], k.output, yo);
    };
    const DiffResult r = run_differential(downsample_x(2, -1), tiled, {{256, 8}}, {128, 8});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// A stride whose first element moves within its stick from row to row: the error names the stride
// and what VSTRIDE takes.
TEST(StridedReads, AStrideStartingAtADifferentPlaceInEachRowIsAnErrorNamingIt) {
    Kernel k = resampled([](ImageParam &in, Var x, Var y) { return in(2 * x + y, y); })();
    spyre::schedule(k.output).stick_vectorize(k.vars.at("x"));
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{320, 4}}, {128, 4})); });
    EXPECT_NE(e.find("reads in at every 2 elements along its stick dimension (an index such as 2 * x) from a place "
                     "within its sticks that changes from one vector to the next"), std::string::npos) << e;
}

// A pyramid level: the mean of each 2x2 block, strided along both dimensions.
TEST(StridedReads, APyramidLevelOf2x2MeansMatchesCpu) {
    const DiffResult r = run_differential(resampled([](ImageParam &in, Var x, Var y) {
        return (in(2 * x, 2 * y) + in(2 * x + 1, 2 * y) + in(2 * x, 2 * y + 1) + in(2 * x + 1, 2 * y + 1)) *
               cast<float16_t>(0.25f);
    }), rows_over(4), {{512, 32}}, {256, 16});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

TEST(StridedReads, ADownsampleAlongTheRowsMatchesCpu) {
    const DiffResult r = run_differential(resampled([](ImageParam &in, Var x, Var y) {
        return (in(x, 2 * y) + in(x, 2 * y + 1)) * cast<float16_t>(0.5f);
    }), rows_over(4), {{128, 16}}, {128, 8});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// A nearest-neighbour upsample along the stick by k: each input element k times, one VSTRIDE of
// step -k per output row (Halide interleaves the read with itself; x / 4, two such interleaves).
Algorithm upsample_x(int k) {
    return resampled([=](ImageParam &in, Var x, Var y) { return in(x / k, y); });
}

TEST(StridedReads, AnUpsampleAlongTheStickMatchesCpu) {
    for (int k : {2, 4}) {
        const DiffResult r = run_differential(upsample_x(k), rows_over(4), {{256 / k, 8}}, {256, 8});
        EXPECT_EQ(r.cmp.mismatches, 0) << k << ": " << r.cmp.first_mismatch;
        EXPECT_TRUE(uses(r.program, Opcode::VSTRIDE));
    }
}

// A linear upsample's two taps, x / k and (x + 1) / k. Halide names the read the taps share and
// lowers the second tap's other read to a shifted one; with vectors of k sticks each tap reads whole
// sticks of in (one VSTRIDE each, the second from a phase of 1). With one stick the taps read part
// of a stick at a place that changes, and the error says how wide to vectorize.
Algorithm linear_upsample_x(int k) {
    return resampled([=](ImageParam &in, Var x, Var y) { return in(x / k, y) + in((x + 1) / k, y); });
}

TEST(StridedReads, ALinearUpsampleVectorizedByTwoSticksMatchesCpu) {
    for (int k : {2, 4}) {
        const DiffResult r = run_differential(linear_upsample_x(k), [=](Kernel &kk) {
            spyre::schedule(kk.output).ring_split(kk.vars.at("y"), 2).stick_vectorize(kk.vars.at("x"), k);
        }, {{512 / k + 1, 4}}, {512, 4});
        EXPECT_EQ(r.cmp.mismatches, 0) << k << ": " << r.cmp.first_mismatch;
    }
}

TEST(StridedReads, ALinearUpsampleVectorizedByOneStickSaysHowWide) {
    Kernel k = linear_upsample_x(2)();
    spyre::schedule(k.output).ring_split(k.vars.at("y"), 2).stick_vectorize(k.vars.at("x"));
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{257, 4}}, {512, 4})); });
    EXPECT_NE(e.find("stick_vectorize(x, 2)"), std::string::npos) << e;
}

// A 2x upsample of a one-column input (a random pipeline, seed 3 case 811): Halide repeats the
// index, not a read, and the error says so (it said no Spyre instruction spreads lanes apart).
TEST(StridedReads, AnUpsampleWhoseRepeatedVectorIsNotARowReadSaysWhatItRepeats) {
    Kernel k = upsample_x(2)();
    Var xo("xo"), xi("xi");
    spyre::schedule(k.output).split(k.vars.at("x"), xo, xi, 128).stick_vectorize(xi);
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{1, 7}}, {2, 7})); });
    EXPECT_NE(e.find("Func out: stick_vectorize: it reads each element twice along the stick dimension (an index such "
                     "as x / 2, an upsample), and what it repeats is not a read of one row"), std::string::npos) << e;
}

TEST(StridedReads, AnUpsampleAlongTheRowsMatchesCpu) {
    const DiffResult r = run_differential(resampled([](ImageParam &in, Var x, Var y) { return in(x, y / 2); }),
                                          rows_over(4), {{128, 4}}, {128, 8});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

TEST(AutoStridedReads, DownAndUpsamplingAlongTheStickAreScheduledAndMatchCpu) {
    const DiffResult down = run_differential(downsample_x(2, -1), auto_scheduled({{512, 64}}, {256, 64}), {{512, 64}}, {256, 64});
    EXPECT_EQ(down.cmp.mismatches, 0) << down.cmp.first_mismatch;
    const DiffResult up = run_differential(upsample_x(2), auto_scheduled({{128, 64}}, {256, 64}), {{128, 64}}, {256, 64});
    EXPECT_EQ(up.cmp.mismatches, 0) << up.cmp.first_mismatch;
    // The linear upsample over an input that ends mid-stick: the second tap's last lane reads one
    // element past the first tap's vector, which its staging holds (an earlier form staged only the
    // first tap's elements and read a stale one).
    const DiffResult taps = run_differential(linear_upsample_x(2), auto_scheduled({{129, 8}}, {256, 8}), {{129, 8}}, {256, 8});
    EXPECT_EQ(taps.cmp.mismatches, 0) << taps.cmp.first_mismatch;
}

// The taps' maximum over 101 output columns (a random pipeline, seed 2 case 693): its second tap
// reads at (x + 1) / 2, so each vector must read whole sticks of the input, which only vectors of
// two sticks do (a hand schedule's stick_vectorize(x, 2)). auto tries them beside the one-stick
// vectors, which a 2-column upsample of int32 needs (seed 3 case 449).
TEST(AutoStridedReads, ALinearUpsamplesTapsAreVectorizedByTwoSticksBesideOne) {
    const Algorithm max_taps = resampled([](ImageParam &in, Var x, Var y) { return max(in(x / 2, y), in((x + 1) / 2, y)); });
    const DiffResult wide = run_differential(max_taps, auto_scheduled({{51, 16}}, {101, 16}, 8), {{51, 16}}, {101, 16});
    EXPECT_EQ(wide.cmp.mismatches, 0) << wide.cmp.first_mismatch;
    const DiffResult narrow = run_differential(linear_upsample_x(2), auto_scheduled({{2, 7}}, {2, 7}, 8), {{2, 7}}, {2, 7});
    EXPECT_EQ(narrow.cmp.mismatches, 0) << narrow.cmp.first_mismatch;
}

// A split by a stick over 100 output columns: Halide guards the tail's lanes, and the error names
// that, not the stride (it said the read's place in its stick changes).
TEST(StridedReads, ADownsampleWhoseSplitLeavesAGuardedTailNamesThePredicate) {
    Kernel k = downsample_x(2, -1)();
    Var xo("xo"), xi("xi");
    spyre::schedule(k.output).split(k.vars.at("x"), xo, xi, 64).stick_vectorize(xi);
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{200, 4}}, {100, 4})); });
    EXPECT_NE(e.find("Func out: its vectors of 64 lanes are predicated"), std::string::npos) << e;
}

// VSTRIDE has no KTIR form yet: the exporter names it rather than dropping it.
TEST(StridedReads, TheKtirExporterNamesVstride) {
    Kernel k = downsample_x(2, -1)();
    rows_over(2)(k);
    const DeviceProgram p = compile_for_spyre(k.output, k.inputs, kernel_options({{256, 4}}, {128, 4}));
    const std::string e = error_of([&] { ktir::export_ktir(p); });
    EXPECT_NE(e.find("(VSTRIDE, f16): no KTIR form"), std::string::npos) << e;
}

// A transpose whose output rows are split over more cores than the input's sticks allow: the error
// names the input whose sticks a core would cut and how many fewer cores keep them whole.
TEST(CoreSplits, ATransposeSplitOverTooManyCoresSaysHowManyFewer) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func out("out");
    out(x, y) = in(y, x);
    spyre::schedule(out).ring_split(y, 32).stick_vectorize(x);
    const std::string e = error_of([&] { compile_for_spyre(out, {in}, kernel_options({{256, 256}}, {256, 256})); });
    EXPECT_NE(e.find("gives each core 8 elements along the stick dimension of in, not whole sticks of 64: split it over 8 "
                     "times fewer cores (64 elements each)"), std::string::npos) << e;
}

}  // namespace
}  // namespace spyre::testing
