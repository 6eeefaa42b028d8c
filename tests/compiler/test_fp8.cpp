// fp8 (E4M3, E5M2) on Spyre: spyre::to_fp8 / spyre::from_fp8 (dsl/fp8.h) in quantize, dequantize
// and quantize-dequantize kernels, compiled with the ordinary directives, run on the simulator and
// compared bit for bit with Halide's CPU realisation (which calls the same routines through the
// conversion functions), at whole-stick and part-stick shapes. Each conversion is one VCVTF8.
#include <gtest/gtest.h>

#include <cstring>

#include "compiler_test_util.h"
#include "device/error.h"
#include "directives.h"
#include "fp8.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct Fp8Case {
    std::string name;
    int cols, rows, cores;
    Fp8Format fmt;
};

// Rows split over cores in whole sticks of the per-row fp16 scale (64 rows per core).
const Fp8Case kCases[] = {
    {"e4m3_1x100", 100, 1, 1, Fp8Format::E4M3},       {"e4m3_7x130", 130, 7, 1, Fp8Format::E4M3},
    {"e4m3_64x1024", 1024, 64, 1, Fp8Format::E4M3},   {"e4m3_256x200_4c", 200, 256, 4, Fp8Format::E4M3},
    {"e5m2_1x100", 100, 1, 1, Fp8Format::E5M2},       {"e5m2_7x130", 130, 7, 1, Fp8Format::E5M2},
    {"e5m2_64x1024", 1024, 64, 1, Fp8Format::E5M2},   {"e5m2_256x200_4c", 200, 256, 4, Fp8Format::E5M2}};
const auto kFp8Shapes = ::testing::ValuesIn(kCases);
// A kernel that converts fp16 rows to codes and back inside one Func needs rows that are whole
// sticks of both (the int8 rule, docs/directives.md): 130 columns pad to 192 fp16 elements, a
// byte stick and a half, so the round trip takes 384 columns instead.
const Fp8Case kRoundTripCases[] = {
    {"e4m3_1x100", 100, 1, 1, Fp8Format::E4M3},       {"e4m3_7x384", 384, 7, 1, Fp8Format::E4M3},
    {"e4m3_64x1024", 1024, 64, 1, Fp8Format::E4M3},   {"e4m3_256x200_4c", 200, 256, 4, Fp8Format::E4M3},
    {"e5m2_1x100", 100, 1, 1, Fp8Format::E5M2},       {"e5m2_7x384", 384, 7, 1, Fp8Format::E5M2},
    {"e5m2_64x1024", 1024, 64, 1, Fp8Format::E5M2},   {"e5m2_256x200_4c", 200, 256, 4, Fp8Format::E5M2}};
std::string case_name(const ::testing::TestParamInfo<Fp8Case> &info) { return info.param.name; }
void PrintTo(const Fp8Case &c, std::ostream *os) { *os << c.name; }

// fp16 output from byte codes: vectors of two fp16 sticks read one whole byte stick per row. At
// 130 columns the fp16 rows pad to 192 elements, which two-stick vectors would overrun, so there
// each fp16 stick is a vector and each row's byte stick is widened whole into a temporary.
int fp16_sticks_over_bytes(const Fp8Case &c) { return c.cols % 128 > 0 && c.cols % 128 <= 64 ? 1 : 2; }

Expr f16c(double v) { return Internal::make_const(Float(16), v); }

Kernel fp8_two_d(std::vector<ImageParam> in, Func out, Var x, Var y) {
    Kernel k;
    k.inputs = std::move(in);
    k.output = out;
    k.vars = {{"x", x}, {"y", y}};
    return k;
}

Schedule fp8_rows_schedule(const Fp8Case &c, int sticks = 1) {
    return [=](Kernel &k) {
        SpyreSchedule s = schedule(k.output);
        if (c.cores > 1) s.ring_split(k.vars["y"], c.cores, c.rows);
        s.stick_vectorize(k.vars["x"], sticks);
    };
}

// Bit for bit: the outputs' bytes, not their values (so -0 against +0 or two NaNs differ).
void expect_same_bits(const DiffResult &r) {
    ASSERT_EQ(r.got.size_in_bytes(), r.want.size_in_bytes());
    Runtime::Buffer<> g = r.got.copy(), w = r.want.copy();
    const auto *a = static_cast<const uint8_t *>(g.data()), *b = static_cast<const uint8_t *>(w.data());
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < g.size_in_bytes(); i++)
        if (a[i] != b[i] && bad++ == 0) first = i;
    EXPECT_EQ(bad, 0u) << "first differing byte " << first << ": got " << int(a[first]) << ", want " << int(b[first]);
}

int fp8_count_op(const DeviceProgram &p, Opcode op, DType t) {
    int n = 0;
    for (const Instr &in : p.code) n += in.op == op && DType(in.dtype) == t;
    return n;
}

// The per-row scale reaches values beyond the format's range (they saturate; in E5M2 some fp16
// products overflow to inf first, which stays inf) and values in its subnormal range.
Expr row_scale(const ImageParam &s, Fp8Format fmt, const Var &y) {
    return s(y) * s(y) * f16c(fmt == Fp8Format::E4M3 ? 40 : 4000) + f16c(0.0001);
}

// fp16 rows times a per-row scale, encoded: one VCVTF8 from fp16 (no widening to fp32 on the way).
class QuantizeFp8 : public ::testing::TestWithParam<Fp8Case> {};
TEST_P(QuantizeFp8, MatchesCpuBitExactly) {
    const Fp8Case c = GetParam();
    auto alg = [c] {
        ImageParam in(Float(16), 2, "in"), s(Float(16), 1, "s");
        Var x("x"), y("y");
        Func q("quantize_fp8");
        q(x, y) = to_fp8(in(x, y) * row_scale(s, c.fmt, y), c.fmt);
        return fp8_two_d({in, s}, q, x, y);
    };
    DiffResult r = run_differential(alg, fp8_rows_schedule(c), {{c.cols, c.rows}, {c.rows}}, {c.cols, c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    expect_same_bits(r);
    EXPECT_EQ(r.program.num_cores, c.cores);
    EXPECT_GE(fp8_count_op(r.program, Opcode::VCVTF8, DType::F16), 1);
    EXPECT_EQ(fp8_count_op(r.program, Opcode::VCVT, DType::F16), 0);
}
INSTANTIATE_TEST_SUITE_P(Shapes, QuantizeFp8, kFp8Shapes, case_name);

bool is_nan_code(int code, Fp8Format fmt) {
    return fmt == Fp8Format::E4M3 ? (code & 0x7F) == 0x7F : (code & 0x7F) > 0x7C;
}

// Codes cycling through every value of the format (zeros, subnormals, the largest, and in E5M2
// the infinities), NaN codes left out when `nan` is false.
Runtime::Buffer<> all_codes(int cols, int rows, Fp8Format fmt, bool nan) {
    Runtime::Buffer<uint8_t> q(cols, rows);
    int code = 0;
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            do code = (code + 37) % 256;  // 37 is odd: every code in turn
            while (!nan && is_nan_code(code, fmt));
            q(x, y) = uint8_t(code);
        }
    return q;
}

// Every code decoded to fp16 and scaled per row: the decode is one VCVTF8 into fp16. NaN codes are
// left out: Halide 14's CPU code turns a NaN in fp16 arithmetic into an infinity (the device
// keeps the NaN), so they would test Halide's fp16 arithmetic rather than fp8; the plain decode
// below covers them.
class DequantizeFp8 : public ::testing::TestWithParam<Fp8Case> {};
TEST_P(DequantizeFp8, MatchesCpuBitExactly) {
    const Fp8Case c = GetParam();
    auto alg = [c] {
        ImageParam q(UInt(8), 2, "q"), s(Float(16), 1, "s");
        Var x("x"), y("y");
        Func out("dequantize_fp8");
        out(x, y) = from_fp8(q(x, y), c.fmt) * s(y);
        return fp8_two_d({q, s}, out, x, y);
    };
    Runtime::Buffer<> scales = random_buffer(halide_type_t(halide_type_float, 16), {c.rows}, -4, 4, 99);
    DiffResult r = run_differential_on(alg, fp8_rows_schedule(c, fp16_sticks_over_bytes(c)), {all_codes(c.cols, c.rows, c.fmt, false), scales},
                                    {c.cols, c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    expect_same_bits(r);
    EXPECT_GE(fp8_count_op(r.program, Opcode::VCVTF8, DType::U8), 1);
    EXPECT_EQ(fp8_count_op(r.program, Opcode::VCVT, DType::F32), 0);
}
INSTANTIATE_TEST_SUITE_P(Shapes, DequantizeFp8, kFp8Shapes, case_name);

// Every code, NaNs included, decoded to fp16 as the output: bit for bit (NaN codes give the fp16
// NaN with their sign on both sides).
class DecodeFp8 : public ::testing::TestWithParam<Fp8Case> {};
TEST_P(DecodeFp8, EveryCodeMatchesCpuBitExactly) {
    const Fp8Case c = GetParam();
    auto alg = [c] {
        ImageParam q(UInt(8), 2, "q");
        Var x("x"), y("y");
        Func out("decode_fp8");
        out(x, y) = from_fp8(q(x, y), c.fmt);
        return fp8_two_d({q}, out, x, y);
    };
    DiffResult r = run_differential_on(alg, fp8_rows_schedule(c, fp16_sticks_over_bytes(c)), {all_codes(c.cols, c.rows, c.fmt, true)},
                                    {c.cols, c.rows});
    expect_same_bits(r);
    EXPECT_GE(fp8_count_op(r.program, Opcode::VCVTF8, DType::U8), 1);
}
INSTANTIATE_TEST_SUITE_P(Shapes, DecodeFp8, kFp8Shapes, case_name);

// Every fp16 bit pattern (NaNs, infinities, zeros and subnormals of fp16 included) as a 256 x 256
// input, encoded: bit for bit.
TEST(Fp8, EncodeEveryFp16ValueMatchesCpu) {
    Runtime::Buffer<uint16_t> bits(256, 256);
    for (int y = 0; y < 256; y++)
        for (int x = 0; x < 256; x++) bits(x, y) = uint16_t(y * 256 + x);
    Runtime::Buffer<> in(halide_type_t(halide_type_float, 16), {256, 256});
    std::memcpy(in.data(), bits.data(), bits.size_in_bytes());
    for (Fp8Format fmt : {Fp8Format::E4M3, Fp8Format::E5M2}) {
        SCOPED_TRACE(fp8_format_name(fmt));
        auto alg = [fmt] {
            ImageParam v(Float(16), 2, "v");
            Var x("x"), y("y");
            Func q("encode_all");
            q(x, y) = to_fp8(v(x, y), fmt);
            return fp8_two_d({v}, q, x, y);
        };
        DiffResult r = run_differential_on(alg, fp8_rows_schedule({"", 256, 256, 4, fmt}), {in}, {256, 256});
        expect_same_bits(r);
        Runtime::Buffer<uint8_t> got = r.got;
        for (int i = 0; i < 65536; i++)
            ASSERT_EQ(got(i % 256, i / 256), fp8_encode_half(uint16_t(i), fmt)) << "fp16 bits " << i;
    }
}

// Quantize and dequantize in one kernel ("fake quantization"), with an fp32 decode: codes never
// leave LX.
class RoundTripFp8 : public ::testing::TestWithParam<Fp8Case> {};
TEST_P(RoundTripFp8, MatchesCpuBitExactly) {
    const Fp8Case c = GetParam();
    auto alg = [c] {
        ImageParam in(Float(16), 2, "in"), s(Float(16), 1, "s");
        Var x("x"), y("y");
        Func out("fake_quant");
        Expr scale = s(y) * s(y) + f16c(0.5);
        Expr code = to_fp8(in(x, y) / scale, c.fmt);
        out(x, y) = cast<float16_t>(from_fp8(code, c.fmt, Float(32)) * cast<float>(scale));
        return fp8_two_d({in, s}, out, x, y);
    };
    // Values well beyond E4M3's range (they saturate), over modest scales.
    Runtime::Buffer<> in = random_buffer(halide_type_t(halide_type_float, 16), {c.cols, c.rows}, -600, 600, 5);
    Runtime::Buffer<> scales = random_buffer(halide_type_t(halide_type_float, 16), {c.rows}, -4, 4, 6);
    DiffResult r = run_differential_on(alg, fp8_rows_schedule(c), {in, scales}, {c.cols, c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    expect_same_bits(r);
    EXPECT_GE(fp8_count_op(r.program, Opcode::VCVTF8, DType::F16), 1);
    EXPECT_GE(fp8_count_op(r.program, Opcode::VCVTF8, DType::U8), 1);
}
INSTANTIATE_TEST_SUITE_P(Shapes, RoundTripFp8, ::testing::ValuesIn(kRoundTripCases), case_name);

// An fp32 computation encoded from fp32.
TEST(Fp8, QuantizeFromFp32MatchesCpu) {
    auto alg = [] {
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func q("quantize_f32");
        q(x, y) = to_fp8(cast<float>(in(x, y)) * 97.3f, Fp8Format::E4M3);
        return fp8_two_d({in}, q, x, y);
    };
    DiffResult r = run_differential(alg, fp8_rows_schedule({"", 300, 5, 1, Fp8Format::E4M3}), {{300, 5}}, {300, 5});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    expect_same_bits(r);
    EXPECT_GE(fp8_count_op(r.program, Opcode::VCVTF8, DType::F32), 1);
}

// The fp8 example of docs/examples.md ("Quantized kernels: int8 and fp8"), as written there.
TEST(Fp8, DocExampleQuantizeAndDequantizeMatchCpu) {
    const int cols = 200, rows = 256;
    auto quantize = [] {
        ImageParam in(Float(16), 2, "in"), s(Float(16), 1, "s"), codes(UInt(8), 2, "codes");
        Var x("x"), y("y");
        Func q("quantize_fp8"), d("dequantize_fp8");
        q(x, y) = spyre::to_fp8(in(x, y) / s(y), spyre::Fp8Format::E4M3);          // uint8 codes
        d(x, y) = spyre::from_fp8(codes(x, y), spyre::Fp8Format::E4M3) * s(y);    // float16
        return fp8_two_d({in, s}, q, x, y);
    };
    auto dequantize = [] {
        ImageParam in(Float(16), 2, "in"), s(Float(16), 1, "s"), codes(UInt(8), 2, "codes");
        Var x("x"), y("y");
        Func q("quantize_fp8"), d("dequantize_fp8");
        q(x, y) = spyre::to_fp8(in(x, y) / s(y), spyre::Fp8Format::E4M3);          // uint8 codes
        d(x, y) = spyre::from_fp8(codes(x, y), spyre::Fp8Format::E4M3) * s(y);    // float16
        return fp8_two_d({codes, s}, d, x, y);
    };
    DiffResult rq = run_differential(
        quantize, [&](Kernel &k) { schedule(k.output).ring_split(k.vars["y"], 4, rows).stick_vectorize(k.vars["x"]); },
        {{cols, rows}, {rows}}, {cols, rows});
    expect_same_bits(rq);
    EXPECT_EQ(rq.program.num_cores, 4);
    Runtime::Buffer<> scales = random_buffer(halide_type_t(halide_type_float, 16), {rows}, -4, 4, 8);
    DiffResult rd = run_differential_on(
        dequantize,
        [&](Kernel &k) { schedule(k.output).ring_split(k.vars["y"], 4, rows).stick_vectorize(k.vars["x"], 2); },
        {all_codes(cols, rows, Fp8Format::E4M3, false), scales}, {cols, rows});
    expect_same_bits(rd);
    EXPECT_EQ(rd.program.num_cores, 4);
}

// Constants are converted when the expression is built.
TEST(Fp8, ConstantsConvertAtBuildTime) {
    Expr c = to_fp8(Expr(1000.0f), Fp8Format::E4M3);
    ASSERT_TRUE(c.as<Internal::UIntImm>());
    EXPECT_EQ(c.as<Internal::UIntImm>()->value, 0x7Eu);  // saturated to 448
    Expr d = from_fp8(Internal::make_const(UInt(8), 0x3C), Fp8Format::E5M2, Float(32));
    ASSERT_TRUE(d.as<Internal::FloatImm>());
    EXPECT_EQ(d.as<Internal::FloatImm>()->value, 1.0);
}

// Any program linked with spyre_dsl realises fp8 pipelines with Halide's own JIT: the conversion
// functions are exported, and fp8_jit_externs() names them for Pipeline::set_jit_externs.
TEST(Fp8, PlainJitRealisationsFindTheConversionFunctions) {
    Var x("x");
    Func codes("codes"), back("back");
    codes(x) = to_fp8(cast<float>(x) * 0.37f - 20.0f, Fp8Format::E5M2);
    back(x) = from_fp8(codes(x), Fp8Format::E5M2, Float(32));
    codes.compute_root().vectorize(x, 16);
    Buffer<float> out = back.realize({256});
    for (int i = 0; i < 256; i++) {
        const uint8_t code = fp8_encode(float(i) * 0.37f - 20.0f, Fp8Format::E5M2);
        ASSERT_EQ(out(i), fp8_decode(code, Fp8Format::E5M2)) << i;
    }
    Pipeline p(back);
    p.set_jit_externs(fp8_jit_externs());
    Buffer<float> again = p.realize({256});
    for (int i = 0; i < 256; i++) ASSERT_EQ(again(i), out(i)) << i;
}

TEST(Fp8, DecodingCodesThatAreNotUint8IsAnError) {
    ImageParam q(Int(8), 2, "q");
    std::string msg = error_of([&] { from_fp8(q(0, 0), Fp8Format::E4M3); });
    EXPECT_NE(msg.find("spyre::from_fp8: the code has type int8; fp8 codes are uint8"), std::string::npos) << msg;
    ImageParam f(Float(16), 2, "f");
    msg = error_of([&] { from_fp8(f(0, 0), Fp8Format::E5M2); });
    EXPECT_NE(msg.find("the code has type float16"), std::string::npos) << msg;
}

TEST(Fp8, DecodingIntoANonFloatTypeIsAnError) {
    ImageParam q(UInt(8), 2, "q");
    std::string msg = error_of([&] { from_fp8(q(0, 0), Fp8Format::E4M3, Int(32)); });
    EXPECT_NE(msg.find("spyre::from_fp8: result type int32 is not float16 or float32"), std::string::npos) << msg;
}

TEST(Fp8, EncodingANonNumberIsAnError) {
    Var x("x");
    std::string msg = error_of([&] { to_fp8(x < 3, Fp8Format::E4M3); });
    EXPECT_NE(msg.find("spyre::to_fp8: the value has type bool"), std::string::npos) << msg;
}

// The codes are bytes: arithmetic on them is uint8 arithmetic, computed in int32 and wrapped as on
// the CPU (legalise_types.h), whatever it means for the codes.
TEST(Fp8, ArithmeticOnCodesIsUint8ArithmeticAsOnTheCpu) {
    auto alg = [] {
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func q("code_sum");
        q(x, y) = to_fp8(in(x, y), Fp8Format::E4M3) + to_fp8(in(x, y), Fp8Format::E5M2);
        return fp8_two_d({in}, q, x, y);
    };
    DiffResult r = run_differential(alg, fp8_rows_schedule({"", 128, 2, 1, {}}), {{128, 2}}, {128, 2});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing
