// int8 and uint8 on Spyre: byte inputs and outputs (128 elements to a stick), their conversions to
// and from fp16, fp32 and int32, and the quantize / dequantize patterns built from them, compiled
// from ordinary Halide pipelines and compared exactly with Halide's CPU realisation, at shapes that
// are whole sticks and shapes that are not. Byte values have no arithmetic of their own on the
// vector unit: the back end computes it in int32 (legalise_types.h, test_narrow_types.cpp).
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"
#include "directives.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct Int8Case {
    std::string name;
    int cols, rows, cores;
};

// Rows split over cores in whole sticks of the per-row fp16 scale (64 rows per core).
const auto kInt8Shapes = ::testing::Values(Int8Case{"one_stick_1c", 128, 16, 1}, Int8Case{"part_stick_1c", 100, 7, 1},
                                       Int8Case{"rows_over_4c", 200, 256, 4}, Int8Case{"wide_rows_over_3c", 1000, 192, 3});
std::string int8_case_name(const ::testing::TestParamInfo<Int8Case> &info) { return info.param.name; }

Expr int8_f16c(double v) { return Internal::make_const(Float(16), v); }

// Splits y over the case's cores and vectorizes x by `sticks` sticks of the output.
Schedule int8_rows_schedule(const Int8Case &c, int sticks = 1) {
    return [=](Kernel &k) {
        SpyreSchedule s = schedule(k.output);
        if (c.cores > 1) s.ring_split(k.vars["y"], c.cores, c.rows);
        s.stick_vectorize(k.vars["x"], sticks);
    };
}

Kernel int8_two_d(std::vector<ImageParam> in, Func out, Var x, Var y) {
    Kernel k;
    k.inputs = std::move(in);
    k.output = out;
    k.vars = {{"x", x}, {"y", y}};
    return k;
}

// Quantize an fp16 row to int8 with a per-row scale (positive, and small enough that some values
// clamp): q = cast<int8_t>(clamp(round(v / scale), -128, 127)).
class QuantizeInt8 : public ::testing::TestWithParam<Int8Case> {};
TEST_P(QuantizeInt8, MatchesCpuExactly) {
    const Int8Case c = GetParam();
    auto alg = [] {
        ImageParam in(Float(16), 2, "in"), s(Float(16), 1, "s");
        Var x("x"), y("y");
        Func out("quantize");
        Expr scale = s(y) * s(y) + int8_f16c(0.25);
        out(x, y) = cast<int8_t>(clamp(round(in(x, y) * int8_f16c(48) / scale), int8_f16c(-128), int8_f16c(127)));
        return int8_two_d({in, s}, out, x, y);
    };
    DiffResult r = run_differential(alg, int8_rows_schedule(c), {{c.cols, c.rows}, {c.rows}}, {c.cols, c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, c.cores);
}
INSTANTIATE_TEST_SUITE_P(Shapes, QuantizeInt8, kInt8Shapes, int8_case_name);

// The asymmetric form: an fp32 computation, a zero point of 128 and uint8 codes.
class QuantizeUint8 : public ::testing::TestWithParam<Int8Case> {};
TEST_P(QuantizeUint8, MatchesCpuExactly) {
    const Int8Case c = GetParam();
    auto alg = [] {
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func out("quantize_u8");
        Expr v = round(cast<float>(in(x, y)) * 40.0f) + 128.0f;
        out(x, y) = cast<uint8_t>(clamp(v, 0.0f, 255.0f));
        return int8_two_d({in}, out, x, y);
    };
    DiffResult r = run_differential(alg, int8_rows_schedule(c), {{c.cols, c.rows}}, {c.cols, c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}
INSTANTIATE_TEST_SUITE_P(Shapes, QuantizeUint8, kInt8Shapes, int8_case_name);

// Dequantize int8 codes with a per-row fp16 scale: an fp16 vector of two sticks reads one int8 stick.
class DequantizeInt8 : public ::testing::TestWithParam<Int8Case> {};
TEST_P(DequantizeInt8, MatchesCpuExactly) {
    const Int8Case c = GetParam();
    auto alg = [] {
        ImageParam q(Int(8), 2, "q"), s(Float(16), 1, "s");
        Var x("x"), y("y");
        Func out("dequantize");
        out(x, y) = cast<float16_t>(q(x, y)) * (s(y) * int8_f16c(0.015625));
        return int8_two_d({q, s}, out, x, y);
    };
    DiffResult r =
        run_differential(alg, int8_rows_schedule(c, 2), {{c.cols, c.rows}, {c.rows}}, {c.cols, c.rows}, -128, 127);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}
INSTANTIATE_TEST_SUITE_P(Shapes, DequantizeInt8, kInt8Shapes, int8_case_name);

// int32 arithmetic on widened bytes, narrowed back with Halide's wrapping integer cast.
class Int8ThroughInt32 : public ::testing::TestWithParam<Int8Case> {};
TEST_P(Int8ThroughInt32, MatchesCpuExactly) {
    const Int8Case c = GetParam();
    auto alg = [] {
        ImageParam a(Int(8), 2, "a"), b(UInt(8), 2, "b");
        Var x("x"), y("y");
        Func out("bytes_i32");
        Expr p = cast<int32_t>(a(x, y)) * cast<int32_t>(b(x, y)) + 3;
        out(x, y) = cast<int8_t>(max(p, cast<int32_t>(a(x, y)) - 7));
        return int8_two_d({a, b}, out, x, y);
    };
    DiffResult r = run_differential(alg, int8_rows_schedule(c), {{c.cols, c.rows}, {c.cols, c.rows}}, {c.cols, c.rows},
                                    -128, 255);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}
INSTANTIATE_TEST_SUITE_P(Shapes, Int8ThroughInt32, kInt8Shapes, int8_case_name);

Algorithm quantize_tiles() {
    return [] {
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func out("quantize_tiles");
        out(x, y) = cast<int8_t>(clamp(round(in(x, y) * int8_f16c(30)), int8_f16c(-128), int8_f16c(127)));
        return int8_two_d({in}, out, x, y);
    };
}
void quantize_tiles_schedule(Kernel &k) {
    Var yo("yo"), yi("yi");
    schedule(k.output).ring_split(k.vars["y"], 2, 40).split(k.vars["y"], yo, yi, 4).stick_vectorize(k.vars["x"]);
    stage_all_in_lx(k.inputs[0], k.output, yo);
}

// Quantize staged through LX by tiles of rows: byte tiles move by DMA in 128-element sticks.
TEST(Int8, QuantizeInTilesStagedInLxMatchesCpu) {
    DiffResult r = run_differential(quantize_tiles(), quantize_tiles_schedule, {{1000, 40}}, {1000, 40});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, 2);
}

// 300 fp16 columns pad to 320 (five sticks of 64); the int8 output's vectors are 128 elements, so
// the last one of a row reaches past the input's padded row. The copy into LX is clipped to the
// device row (infer_dma's direct copies), so the lanes past it read only LX padding and the stored
// bytes match the CPU.
TEST(Int8, VectorsPastTheInputsPaddedRowReadOnlyPaddingAndMatchCpu) {
    DiffResult r = run_differential(quantize_tiles(), quantize_tiles_schedule, {{300, 40}}, {300, 40});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// The same rows staged by the back end (no copy of the input made by the schedule): the staged
// runs are clipped to the device row too, and the bytes match the CPU.
TEST(Int8, VectorsPastTheInputsPaddedRowInBackEndStagingMatchCpu) {
    DiffResult r = run_differential(
        quantize_tiles(),
        [](Kernel &k) {
            Var yo("yo"), yi("yi");
            schedule(k.output).split(k.vars["y"], yo, yi, 4).stick_vectorize(k.vars["x"]);
        },
        {{300, 40}}, {300, 40});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// An int32 output in tiles of 64 columns (half a stick of int8), its rows inside the column
// tiles, reading an int8 input of 100 x `input_rows`; the output has 5 rows.
DiffResult half_stick_column_tiles(int input_rows) {
    return run_differential(
        [] {
            ImageParam in(Int(8), 2, "in");
            Var x("x"), y("y");
            Func out("out");
            out(x, y) = min(5, cast<int32_t>(in(x, y)));
            return int8_two_d({in}, out, x, y);
        },
        [](Kernel &k) {
            Var xo("xo"), xi("xi");
            schedule(k.output).split(k.vars["x"], xo, xi, 64).stick_vectorize(xi);
            k.output.reorder(xi, k.vars["y"], xo);
        },
        {{100, input_rows}}, {100, 5}, -128, 127);
}

// The second column tile's reads of the input stay inside its five rows (spyre-fuzz-diff seed 12
// case 709 read a sixth row past the input's device image).
TEST(Int8, HalfStickColumnTilesOfAnInt32OutputReadOnlyTheInputsRows) {
    DiffResult r = half_stick_column_tiles(5);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// With a sixth input row that the output does not read nothing faults, so the values of the
// second column tile are what is checked.
TEST(Int8, HalfStickColumnTilesOfAnInt32OutputReadTheRightBytes) {
    DiffResult r = half_stick_column_tiles(6);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// Arithmetic on bytes is computed in int32 and narrowed back with Halide's wrap (legalise_types.h;
// test_narrow_types.cpp has the rest).
TEST(Int8, ArithmeticOnBytesIsWidenedAndWrapsAsOnTheCpu) {
    auto alg = [] {
        ImageParam a(Int(8), 2, "a");
        Var x("x"), y("y");
        Func out("byte_add");
        out(x, y) = a(x, y) + a(x, y);  // (Halide writes a + a as a * 2.)
        return int8_two_d({a}, out, x, y);
    };
    DiffResult r = run_differential(alg, int8_rows_schedule({"", 128, 4, 1}), {{128, 4}}, {128, 4}, -128, 127);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// An fp16 Func vectorized by one stick (64 elements) over rows of 50: each row reads half of an
// int8 stick, converted whole into a temporary of which the row takes its first stick.
TEST(Int8, DequantizeByOneFp16StickPerRowMatchesCpu) {
    auto alg = [] {
        ImageParam q(Int(8), 2, "q");
        Var x("x"), y("y");
        Func out("dequant_rows");
        out(x, y) = cast<float16_t>(q(x, y)) * int8_f16c(0.5);
        return int8_two_d({q}, out, x, y);
    };
    DiffResult r = run_differential(alg, int8_rows_schedule({"", 50, 7, 1}, 1), {{50, 7}}, {50, 7}, -128, 127);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// The quantize of docs/examples.md ("Quantized kernels: int8 and fp8"), as written there.
TEST(Int8, DocExampleQuantizeMatchesCpu) {
    const int cols = 200, rows = 256;
    auto alg = [] {
        ImageParam in(Float(16), 2, "in"), s(Float(16), 1, "s");
        Var x("x"), y("y");
        Func q("quantize");
        q(x, y) = cast<int8_t>(clamp(round(in(x, y) / s(y)), cast<float16_t>(-128), cast<float16_t>(127)));
        return int8_two_d({in, s}, q, x, y);
    };
    auto sched = [&](Kernel &k) { schedule(k.output).ring_split(k.vars["y"], 4, rows).stick_vectorize(k.vars["x"]); };
    DiffResult r = run_differential(alg, sched, {{cols, rows}, {rows}}, {cols, rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, 4);
}

// Rows of 64 fp16 elements through int8 and back, a value per row keeping the rows apart: each
// row is half an int8 stick, so rows of the two types cannot sit side by side in whole sticks.
TEST(Int8, ConvertingRowsOfPartByteSticksIsAnErrorThatNamesTheWidth) {
    auto alg = [] {
        ImageParam in(Float(16), 2, "in"), s(Float(16), 1, "s");
        Var x("x"), y("y");
        Func out("round_trip");
        out(x, y) = cast<float16_t>(cast<int8_t>(in(x, y))) + s(y);
        return int8_two_d({in, s}, out, x, y);
    };
    try {
        run_differential(alg, int8_rows_schedule({"", 64, 4, 1}), {{64, 4}, {4}}, {64, 4});
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("Func round_trip"), std::string::npos) << msg;
        EXPECT_NE(msg.find("converts rows of 64 elements from f16 to i8, which are not whole sticks of both (128 "
                           "elements)"),
                  std::string::npos)
            << msg;
    }
}

}  // namespace
}  // namespace spyre::testing

namespace spyre::testing {
namespace {
// out = int32(in) * int32(in) over int8 rows: Halide makes the product an int16 widening multiply
// cast back to int32; the device computes the int16 in int32, and the no-op cast dropped the value
// in a temporary instead of the output's LX tile: the kernel stored zeros (fuzz-diff seed 1 cases
// 978, 1209, 9658). On one core and with more cores than rows.
class Int8WidenedProduct : public ::testing::TestWithParam<int> {};

TEST_P(Int8WidenedProduct, StoresTheProductNotZeros) {
    const int cores = GetParam();
    auto alg = [] {
        Kernel k;
        Halide::ImageParam in(Halide::Int(8), 2, "in0");
        Halide::Var x("x"), y("y");
        Halide::Func out("out");
        out(x, y) = Halide::cast<int32_t>(in(x, y)) * Halide::cast<int32_t>(in(x, y));
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    auto sched = [cores](Kernel &k) {
        spyre::schedule(k.output).stick_vectorize(k.vars.at("x"));
        if (cores > 1) spyre::schedule(k.output).ring_split(k.vars.at("y"), cores, 2);
    };
    DiffResult r = run_differential(alg, sched, {{64, 2}}, {64, 2}, -8, 8);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Cores, Int8WidenedProduct, ::testing::Values(1, 4),
                         [](const auto &info) { return std::to_string(info.param) + "_cores"; });
}  // namespace
}  // namespace spyre::testing

namespace spyre::testing {
namespace {

using namespace Halide;

// A vector as wide as an int8 stick (128 lanes) over output rows narrower than it (fp16 or fp32
// rows of 2 or 130 elements): its sticks past the end of an output row are padding lanes, and the
// store moves only the row's own sticks. Before, it wrote into the next row (and past the buffer
// for the last, refused: random pipeline seed 6 cases 294, 582, 1280, 1733 under auto); over the
// cores, rows written by different cores must not touch each other's sticks.
TEST(Int8WideVectors, AStoreWiderThanItsRowMovesOnlyTheRow) {
    struct Case {
        Type out;
        int w, h, sticks, cores;
    };
    for (const Case &c : {Case{Float(32), 2, 3, 4, 1}, Case{Float(32), 2, 3, 2, 1}, Case{Float(16), 130, 2, 2, 1},
                          Case{Float(16), 130, 8, 2, 4}, Case{Float(32), 100, 6, 4, 3}}) {
        auto alg = [&] {
            Kernel k;
            ImageParam in(Int(8), 2, "in");
            Var x("x"), y("y");
            Func out("out");
            out(x, y) = cast(c.out, cast(Float(16), in(x, y)) * cast(Float(16), 0.5f));
            k.inputs = {in};
            k.output = out;
            k.vars = {{"x", x}, {"y", y}};
            return k;
        };
        auto sched = [&](Kernel &k) {
            if (c.cores > 1) spyre::schedule(k.output).ring_split(k.vars.at("y"), c.cores);
            spyre::schedule(k.output).stick_vectorize(k.vars.at("x"), c.sticks);
        };
        DiffResult r = run_differential(alg, sched, {{c.w, c.h}}, {c.w, c.h}, -100, 100);
        EXPECT_EQ(r.cmp.mismatches, 0) << c.out << " " << c.w << "x" << c.h << ", " << c.sticks << " sticks, " << c.cores
                                       << " cores: " << r.cmp.first_mismatch;
    }
}

// In rows without padding a vector past a row's end may be the next row's elements (a fused loop's
// vector, FusedVectors.*), so no store or load is clipped there: an update vectorized again after
// stick_vectorize (Halide's 32 x 32 lanes over fp32 rows of 256) reaches past the buffer at the
// last row and is refused, naming the Func.
TEST(Int8WideVectors, AVectorPastRowsWithoutPaddingIsRefusedNotClipped) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func f("twice");
    f(x, y) = in(x, y);
    f(x, y) += in(x, y) * 2.0f;
    spyre::schedule(f).ring_split(y, 4, 64).stick_vectorize(x);
    f.update().vectorize(x, 32);
    const std::string msg = error_of([&] { compile_for_spyre(f, {in}, kernel_options({{256, 64}}, {256, 64})); });
    EXPECT_NE(msg.find("Func twice"), std::string::npos) << msg;
    EXPECT_NE(msg.find("reaches past its end"), std::string::npos) << msg;
}

// A fused loop's vectors cross whole rows without padding (fuse(x, y, xy).vectorize(xy, 256) over
// rows of 128, 1 MiB staged a vector at a time): every element is stored and read, none clipped at
// a row's end (they were: 524288 of them silently wrong).
TEST(FusedVectors, AcrossRowsWithoutPaddingMatchCpuExactly) {
    for (int w : {128, 64}) {
        auto alg = [] {
            Kernel k;
            ImageParam in(Float(16), 2, "in");
            Var x("x"), y("y");
            Func out("out");
            out(x, y) = in(x, y) * cast<float16_t>(2.0f);
            k.inputs = {in};
            k.output = out;
            k.vars = {{"x", x}, {"y", y}};
            return k;
        };
        DiffResult r = run_differential(
            alg,
            [](Kernel &k) {
                Var xy("xy");
                k.output.fuse(k.vars.at("x"), k.vars.at("y"), xy).vectorize(xy, 256);
            },
            {{w, 8192}}, {w, 8192});
        EXPECT_EQ(r.cmp.mismatches, 0) << w << " wide: " << r.cmp.first_mismatch;
    }
}

}  // namespace
}  // namespace spyre::testing
