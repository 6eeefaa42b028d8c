// Arithmetic on uint8 and int8 (and on the 16-bit values Halide makes of them) as a user writes it
// from docs/examples.md and docs/directives.md: the vector unit computes in int32, so the back end
// widens such operations (legalise_types.h) and narrows the results back with Halide's wrapping
// semantics. Each pipeline is compiled with a hand schedule (stick_vectorize, rows over cores)
// and with spyre::auto_schedule, run on the simulator and compared bit for bit with the CPU.
#include <gtest/gtest.h>

#include "auto_schedule.h"
#include "compiler_test_util.h"
#include "device/error.h"
#include "directives.h"
#include "user_terms.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct NarrowCase {
    std::string name;
    // The output's value over two inputs of the case's input type, at (x, y).
    std::function<Expr(Func a, Func b, Var x, Var y)> value;
    Type in_type;
    int cols, rows, cores;
    int sticks = 1;  // stick_vectorize(x, sticks): an fp16 output reads bytes two of its sticks at a time
};
void PrintTo(const NarrowCase &c, std::ostream *os) { *os << c.name; }

Algorithm narrow_alg(const NarrowCase &c) {
    return [=] {
        ImageParam a(c.in_type, 2, "a"), b(c.in_type, 2, "b");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = c.value(a, b, x, y);
        Kernel k;
        k.inputs = {a, b};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

Schedule narrow_hand(const NarrowCase &c) {
    return [=](Kernel &k) {
        SpyreSchedule s = schedule(k.output);
        if (c.cores > 1) s.ring_split(k.vars["y"], c.cores, c.rows);
        s.stick_vectorize(k.vars["x"], c.sticks);
    };
}

Schedule narrow_auto(const NarrowCase &c, AutoResult *chosen) {
    return [=](Kernel &k) {
        CompileOptions o;
        o.inputs = {TensorSpec{{c.cols, c.rows}, {}}, TensorSpec{{c.cols, c.rows}, {}}};
        o.output = TensorSpec{{c.cols, c.rows}, {}};
        AutoOptions ao;
        ao.max_evaluations = 8;
        ao.workers = 1;
        ao.progress = false;
        *chosen = auto_schedule(k.output, k.inputs, o, ao);
    };
}

Expr u8c(int v) { return cast<uint8_t>(v); }

std::vector<NarrowCase> narrow_cases() {
    std::vector<NarrowCase> v;
    // docs/examples.md's brighten on a uint8 image: the sum wraps past 255 as on the CPU.
    v.push_back({"brighten_u8", [](Func a, Func, Var x, Var y) { return a(x, y) + u8c(10); }, UInt(8), 300, 8, 4});
    // A threshold in uint8.
    v.push_back({"threshold_u8",
                 [](Func a, Func, Var x, Var y) { return select(a(x, y) > 128, u8c(255), u8c(0)); }, UInt(8), 256,
                 16, 4});
    // The absolute difference of two images (Halide finds absd in it).
    v.push_back({"absdiff_u8",
                 [](Func a, Func b, Var x, Var y) { return max(a(x, y), b(x, y)) - min(a(x, y), b(x, y)); }, UInt(8),
                 200, 6, 2});
    // int8 sums and products that wrap, a negation and a clamp.
    v.push_back({"add_wrap_i8", [](Func a, Func b, Var x, Var y) { return a(x, y) + b(x, y); }, Int(8), 128, 8, 1});
    v.push_back({"mul_neg_clamp_i8",
                 [](Func a, Func b, Var x, Var y) {
                     return clamp(a(x, y) * b(x, y) - a(x, y), cast<int8_t>(-100), cast<int8_t>(90)) + (-b(x, y));
                 },
                 Int(8), 130, 5, 1});
    // A blend in uint16: three parts of one image and one of the other, over four.
    v.push_back({"blend_u8",
                 [](Func a, Func b, Var x, Var y) {
                     return cast<uint8_t>((cast<uint16_t>(a(x, y)) * 3 + cast<uint16_t>(b(x, y))) / 4);
                 },
                 UInt(8), 256, 8, 2});
    // A saturating add written out, and the brighter of two images chosen by a comparison of values.
    v.push_back({"saturating_add_u8",
                 [](Func a, Func b, Var x, Var y) {
                     return cast<uint8_t>(min(cast<uint16_t>(a(x, y)) + cast<uint16_t>(b(x, y)), 255));
                 },
                 UInt(8), 100, 3, 1});
    v.push_back({"select_brighter_u8",
                 [](Func a, Func b, Var x, Var y) {
                     return select(a(x, y) >= b(x, y) && a(x, y) != u8c(7), a(x, y) - b(x, y), b(x, y) * u8c(3));
                 },
                 UInt(8), 128, 4, 1});
    // A wrapped sum widened to fp16 (the wrap happens before the conversion).
    v.push_back({"sum_to_f16_u8",
                 [](Func a, Func b, Var x, Var y) { return cast<float16_t>(a(x, y) + b(x, y)) * cast<float16_t>(0.5f); },
                 UInt(8), 128, 4, 1, 2});
    // The rounded mean of two images, as written with a 16-bit sum (Halide finds a
    // rounding_halving_add in it).
    v.push_back({"rounded_mean_u8",
                 [](Func a, Func b, Var x, Var y) {
                     return cast<uint8_t>((cast<uint16_t>(a(x, y)) + cast<uint16_t>(b(x, y)) + 1) / 2);
                 },
                 UInt(8), 256, 4, 1});
    // Means that Halide makes halving adds of (lowered with bitwise operations, which the vector unit
    // lacks: computed as the floor of the mean).
    v.push_back({"mean_i8",
                 [](Func a, Func b, Var x, Var y) {
                     return cast<int8_t>((cast<int16_t>(a(x, y)) + cast<int16_t>(b(x, y))) / 2) +
                            cast<int8_t>((cast<int16_t>(b(x, y)) - 42) / 4);
                 },
                 Int(8), 128, 4, 1});
    v.push_back({"mean_u8",
                 [](Func a, Func b, Var x, Var y) {
                     return cast<uint8_t>((cast<uint16_t>(a(x, y)) + cast<uint16_t>(b(x, y))) / 2);
                 },
                 UInt(8), 128, 4, 1});
    // Halide's absd and abs on int8 (both give uint8).
    v.push_back({"absd_abs_i8",
                 [](Func a, Func b, Var x, Var y) { return absd(a(x, y), b(x, y)) + abs(b(x, y)); }, Int(8), 128, 4,
                 1});
    // Division and modulo by constants: floor division of negative int8 values, as Halide defines it.
    v.push_back({"div_mod_const_i8",
                 [](Func a, Func b, Var x, Var y) {
                     return a(x, y) / cast<int8_t>(3) + b(x, y) % cast<int8_t>(5) - a(x, y) / cast<int8_t>(-4);
                 },
                 Int(8), 128, 4, 1});
    v.push_back({"div_shift_mask_u8",
                 [](Func a, Func b, Var x, Var y) {
                     return a(x, y) / u8c(7) + (b(x, y) >> 2) + (a(x, y) << 1) + (b(x, y) & u8c(15));
                 },
                 UInt(8), 128, 4, 1});
    v.push_back({"shift_i8",
                 [](Func a, Func b, Var x, Var y) { return (a(x, y) >> 3) + (b(x, y) << 2); }, Int(8), 128, 4, 1});
    // A condition as a number.
    v.push_back({"mask_times_u8",
                 [](Func a, Func b, Var x, Var y) { return cast<uint8_t>(a(x, y) > b(x, y)) * u8c(200); }, UInt(8),
                 128, 4, 1});
    // Halide's abs of an int32 is a uint32, which the vector unit has no type for either: cast back
    // to int32 (the fuzzer's pattern), its bits are VABS's.
    v.push_back({"abs_i32_is_uint32",
                 [](Func a, Func b, Var x, Var y) {
                     return cast<int32_t>(abs(a(x, y))) - cast<int32_t>(abs(b(x, y) * 3)) * 2;
                 },
                 Int(32), 64, 4, 1});
    return v;
}

class NarrowTypes : public ::testing::TestWithParam<NarrowCase> {};

TEST_P(NarrowTypes, HandScheduleMatchesCpuExactly) {
    const NarrowCase &c = GetParam();
    DiffResult r = run_differential(narrow_alg(c), narrow_hand(c), {{c.cols, c.rows}, {c.cols, c.rows}},
                                    {c.cols, c.rows}, -128, 255);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, c.cores);
}

TEST_P(NarrowTypes, AutoScheduleMatchesCpuExactly) {
    const NarrowCase &c = GetParam();
    AutoResult chosen;
    DiffResult r = run_differential(narrow_alg(c), narrow_auto(c, &chosen), {{c.cols, c.rows}, {c.cols, c.rows}},
                                    {c.cols, c.rows}, -128, 255);
    EXPECT_EQ(r.cmp.mismatches, 0) << chosen.summary << ": " << r.cmp.first_mismatch;
    EXPECT_GT(chosen.timed - chosen.failed, 0) << chosen.summary;
}

INSTANTIATE_TEST_SUITE_P(Pipelines, NarrowTypes, ::testing::ValuesIn(narrow_cases()),
                         [](const ::testing::TestParamInfo<NarrowCase> &i) { return i.param.name; });

// abs(INT32_MIN) is 2^31 as a uint32; made an int32 again it is INT32_MIN, as VABS's wrap gives.
TEST(NarrowTypes, AbsOfInt32MinMadeInt32AgainMatchesCpu) {
    NarrowCase c{"abs_min", [](Func a, Func, Var x, Var y) { return cast<int32_t>(abs(a(x, y))); }, Int(32), 32, 2, 1};
    Runtime::Buffer<int32_t> a(32, 2), b(32, 2);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 32; x++) {
            a(x, y) = x == 0 ? INT32_MIN : x == 1 ? INT32_MAX : (x - 16) * 100003 * (y + 1);
            b(x, y) = 0;
        }
    DiffResult r = run_differential_on(narrow_alg(c), narrow_hand(c), {Runtime::Buffer<>(a), Runtime::Buffer<>(b)}, {32, 2});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(static_cast<const int32_t *>(r.got.data())[0], INT32_MIN);
}

// An int8 output's 128-lane vectors over an fp16 Func of 64-element rows kept in device memory:
// each read of the Func is two sticks, the second masked (past the row), and the last row's
// reaches past the Func's end. The Func's device buffer has slack for it (classify_memory), so
// the program runs where it used to read outside the buffer (spyre-fuzz-diff --seed 13 --case 129).
TEST(NarrowTypes, AnInt8OutputOfAnFp16DeviceFuncWithNarrowerRowsMatchesCpu) {
    Algorithm alg = [] {
        ImageParam in(Int(32), 2, "in");
        Var x("x"), y("y");
        Func p("p"), out("out");
        p(x, y) = cast<float16_t>(in(x, y)) - 0.5f;
        out(x, y) = cast<int8_t>(clamp(round(abs(p(x, y))), -128, 127));
        Kernel k;
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        k.funcs = {{"p", p}};
        return k;
    };
    Schedule hand = [](Kernel &k) {
        Var xo("xo"), xi("xi");
        schedule(k.output).split(k.vars["x"], xo, xi, 256).stick_vectorize(xi).ring_split(k.vars["y"], 2, 2);
        schedule(k.funcs["p"]).device_root().stick_vectorize(k.vars["x"]);
    };
    DiffResult r = run_differential(alg, hand, {{64, 2}}, {64, 2}, -100, 100);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// Halide 14's search for vector intrinsics (find_intrinsics) makes i8((i16(b) - i16(a * 3)) / 2) a
// halving add of b and a * -3, which differs from its scalar code where a * 3 wraps to -128
// (a = -128: 93 in the scalar code, -35 in its vectorized code). The back end skips that search
// (lower_halide.h), so the device gives the scalar code's answer everywhere; the vectorized CPU
// code is checked too, so that a Halide which stops differing shows up here.
TEST(NarrowTypes, AWrappedProductInAHalvingSubtractIsTheScalarCodesAnswer) {
    NarrowCase c{"wrapped_product_mean",
                 [](Func a, Func b, Var x, Var y) {
                     return cast<int8_t>((cast<int16_t>(b(x, y)) - cast<int16_t>(a(x, y) * cast<int8_t>(3))) / 2);
                 },
                 Int(8), 128, 2, 1};
    Runtime::Buffer<int8_t> a(128, 2), b(128, 2);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 128; x++) a(x, y) = int8_t(x - 128 + y), b(x, y) = 58;
    DiffResult r = run_differential_on(narrow_alg(c), narrow_hand(c), {Runtime::Buffer<>(a), Runtime::Buffer<>(b)}, {128, 2});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    const int8_t *got = static_cast<const int8_t *>(r.got.data());
    EXPECT_EQ(int(got[0]), 93);  // a = -128: b - a * 3 = 58 + 128
    // Halide's vectorized CPU code on the same inputs differs at that one element.
    Kernel k = narrow_alg(c)();
    k.inputs[0].set(Halide::Buffer<int8_t>(*a.raw_buffer()));
    k.inputs[1].set(Halide::Buffer<int8_t>(*b.raw_buffer()));
    k.output.vectorize(k.vars["x"], 128);
    Halide::Buffer<int8_t> vec = k.output.realize({128, 2});
    int differ = 0;
    for (int i = 0; i < 256; i++) differ += int(got[i]) != int(vec(i % 128, i / 128));
    EXPECT_EQ(int(vec(0, 0)), -35);
    EXPECT_EQ(differ, 1);
}

// What has no exact int32 form stays an error that names the operation and what to write instead.
std::string narrow_error(const std::function<Expr(Func, Func, Var, Var)> &value, Type t) {
    NarrowCase c{"refused", value, t, 128, 4, 1};
    return error_of([&] {
        run_differential(narrow_alg(c), narrow_hand(c), {{128, 4}, {128, 4}}, {128, 4}, -128, 255);
    });
}

TEST(NarrowTypes, BitwiseXorIsAnErrorThatSaysToWriteArithmetic) {
    const std::string msg = narrow_error([](Func a, Func b, Var x, Var y) { return a(x, y) ^ b(x, y); }, UInt(8));
    EXPECT_NE(msg.find("Func out: a bitwise ^ (bitwise_xor) of uint8 values has no Spyre vector form"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("write it with arithmetic"), std::string::npos) << msg;
    EXPECT_EQ(generated_name_in(msg), "") << msg;
}

// A uint32 compared as a value: past 2^31 its int32 bits are not its value.
TEST(NarrowTypes, AUint32ComparedIsAnErrorThatSaysToCastToInt32) {
    const std::string msg =
        narrow_error([](Func a, Func b, Var x, Var y) { return select(abs(a(x, y)) < abs(b(x, y)), a(x, y), b(x, y)); },
                     Int(32));
    EXPECT_NE(msg.find("Func out: a uint32 value (such as Halide's abs of an int32) that may be 2^31 or more is used "
                       "by a comparison"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("cast it to int32 first"), std::string::npos) << msg;
}

TEST(NarrowTypes, DivisionByAValueIsAnErrorThatSaysToDivideByAConstant) {
    const std::string msg = narrow_error([](Func a, Func b, Var x, Var y) { return a(x, y) / b(x, y); }, Int(8));
    EXPECT_NE(msg.find("Func out: an integer division of int8 values by a value that is not a constant has no "
                       "Spyre vector form"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("divide in float and cast"), std::string::npos) << msg;
}

// A uint16 product of bytes times 4 may pass 65535; the min needs its wrapped value, which int32 does
// not give (there is no 16-bit type to narrow to).
TEST(NarrowTypes, A16BitValueThatMayWrapIsAnErrorThatSaysToComputeInInt32) {
    const std::string msg = narrow_error(
        [](Func a, Func b, Var x, Var y) {
            Expr p = cast<uint16_t>(a(x, y)) * cast<uint16_t>(b(x, y)) * cast<uint16_t>(4);
            return cast<uint8_t>(min(p, cast<uint16_t>(1000)) / 4);
        },
        UInt(8));
    EXPECT_NE(msg.find("Func out: a uint16 value that may wrap past 16 bits is used by a min"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("compute in int32 (cast<int32_t>)"), std::string::npos) << msg;
}

// A byte accumulator has no vector form (the reduction would need an int32 one): the error says to
// accumulate in int32.
TEST(NarrowTypes, AByteReductionIsAnErrorThatSaysToAccumulateInInt32) {
    auto alg = [] {
        ImageParam in(UInt(8), 2, "in");
        Var y("y");
        RDom r(0, 128, "r");
        Func out("row_sum");
        out(y) = u8c(0);
        out(y) += in(r, y);
        Kernel k;
        k.inputs = {in};
        k.output = out;
        k.vars = {{"y", y}};
        return k;
    };
    const std::string msg = error_of([&] { run_differential(alg, [](Kernel &) {}, {{128, 64}}, {64}, 0, 255); });
    EXPECT_NE(msg.find("Func row_sum: its update accumulates uint8 values over loop r.x (a reduction)"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("accumulate in int32"), std::string::npos) << msg;
}

// An int32 Func kept in LX per tile of a wider split (scratchpad_store_at) holds the 130 columns it
// computes: 5 int32 sticks. Its consumer's tail vector is an int8 stick of 128 lanes (x = 128..255,
// two in range), whose int32 arithmetic reads 4 sticks of it from x = 128: past those 5 sticks, into
// whatever LX lies beyond (an input's staging, being loaded: a race the simulator stopped). Halide
// masks those lanes; the LX copy is allocated to cover the read (spyre-fuzz-diff --seed 37 --case 4650).
TEST(NarrowTypes, AnInt32StageInLxReadByAWiderTailVectorMatchesCpu) {
    auto alg = [] {
        Var x("x"), y("y");
        ImageParam in(Int(8), 2, "in");
        Func p("p"), out("out");
        p(x, y) = cast<int32_t>(abs(cast<int32_t>(in(x, y))));
        out(x, y) = cast<int8_t>(clamp(1 + p(x, y) + (p(x, y) + cast<int32_t>(in(x, y))), -128, 127));
        Kernel k;
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        k.funcs = {{"p", p}};
        return k;
    };
    auto hand = [](Kernel &k) {
        Var xo("xo"), xi("xi");
        schedule(k.output).split(k.vars["x"], xo, xi, 256).stick_vectorize(xi).ring_split(k.vars["y"], 4, 2);
        schedule(k.funcs["p"]).scratchpad_store_at(k.output, xo).stick_vectorize(k.vars["x"]);
    };
    DiffResult r = run_differential(alg, hand, {{130, 2}}, {130, 2}, -128, 127);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing
