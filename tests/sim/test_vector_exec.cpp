// Numerics of the vector unit and PE array (vector_exec.cpp) against plain C++ computations of the
// same thing, including the fp16 rounding cases that distinguish "round after every op" from
// other plausible implementations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "device/fp8.h"
#include "device/half.h"
#include "device/program_builder.h"
#include "sim/lx_access.h"
#include "sim/op_cost.h"
#include "sim/vector_exec.h"

namespace spyre {
namespace {

constexpr int64_t kDst = 0;          // LX byte offsets of the operands used by the tests
constexpr int64_t kSrc0 = 64 * 1024;
constexpr int64_t kSrc1 = 128 * 1024;
constexpr float kTwoM11 = 1.0f / 2048.0f;  // 2^-11: half an fp16 ulp at 1.0

// One core's LX and registers. Every instruction is checked by lx_access (as the simulator does)
// before it runs, so the tests also exercise the ranges the functional units rely on.
class VecTest : public ::testing::Test {
protected:
    MachineDesc m;
    std::vector<uint8_t> lx;
    int64_t regs[kNumRegs] = {};
    DeviceProgram prog;

    VecTest() : lx(size_t(m.lx_bytes), 0) {}

    // Builds a one-instruction program through ProgramBuilder (which fills the slots and verifies).
    Instr build(const std::function<void(ProgramBuilder &)> &f) {
        ProgramBuilder b("t", 1);
        f(b);
        prog = b.finish();
        return prog.code.back();
    }
    void run(const Instr &in) {
        lx_access(prog, in, regs, m, 0);
        if (in.op == Opcode::MATMUL) exec_matmul(in, prog.mm[size_t(in.a[7])], regs, lx.data());
        else exec_vector(in, regs, lx.data(), m);
    }

    // Element access in LX.
    float h(int64_t off, int64_t i) const {
        uint16_t v;
        std::memcpy(&v, &lx[size_t(off + 2 * i)], 2);
        return half_to_float(v);
    }
    uint16_t hbits(int64_t off, int64_t i) const {
        uint16_t v;
        std::memcpy(&v, &lx[size_t(off + 2 * i)], 2);
        return v;
    }
    void set_h(int64_t off, int64_t i, float v) {
        uint16_t b = float_to_half(v);
        std::memcpy(&lx[size_t(off + 2 * i)], &b, 2);
    }
    float f(int64_t off, int64_t i) const {
        float v;
        std::memcpy(&v, &lx[size_t(off + 4 * i)], 4);
        return v;
    }
    void set_f(int64_t off, int64_t i, float v) { std::memcpy(&lx[size_t(off + 4 * i)], &v, 4); }
    int32_t i32(int64_t off, int64_t i) const {
        int32_t v;
        std::memcpy(&v, &lx[size_t(off + 4 * i)], 4);
        return v;
    }
    void set_i32(int64_t off, int64_t i, int32_t v) { std::memcpy(&lx[size_t(off + 4 * i)], &v, 4); }

    // Typed access: fp16 values are returned as float.
    float get(DType t, int64_t off, int64_t i) const { return t == DType::F16 ? h(off, i) : f(off, i); }
    void set(DType t, int64_t off, int64_t i, float v) {
        if (t == DType::F16) set_h(off, i, v);
        else set_f(off, i, v);
    }
    // Fills n elements with random values in [lo, hi) (representable in the type).
    void randomize(DType t, int64_t off, int64_t n, float lo, float hi, unsigned seed) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> d(lo, hi);
        for (int64_t i = 0; i < n; i++) set(t, off, i, d(rng));
    }
    int64_t lanes(DType t) const { return m.stick_bytes / dtype_bytes(t); }
};

// Result of an fp16 or fp32 op on float inputs: computed in float, rounded to the type.
float rnd(DType t, float v) { return t == DType::F16 ? round_to_half(v) : v; }

// Exact comparison that treats all NaNs alike.
void expect_same(float expected, float actual, const std::string &what) {
    if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(actual)) << what;
    } else {
        EXPECT_EQ(float_to_bits(expected), float_to_bits(actual)) << what << ": expected " << expected << " got "
                                                                    << actual;
    }
}

struct BinCase {
    Opcode op;
    float (*ref)(float, float);
};
const BinCase kBinOps[] = {
    {Opcode::VADD, [](float a, float b) { return a + b; }},
    {Opcode::VSUB, [](float a, float b) { return a - b; }},
    {Opcode::VMUL, [](float a, float b) { return a * b; }},
    {Opcode::VDIV, [](float a, float b) { return a / b; }},
    {Opcode::VMAX, [](float a, float b) { return a > b ? a : b; }},
    {Opcode::VMIN, [](float a, float b) { return a < b ? a : b; }},
};

TEST_F(VecTest, BinaryOpsMatchReference) {
    const int sticks = 2, groups = 3;
    for (DType t : {DType::F16, DType::F32}) {
        const int64_t n = sticks * groups * lanes(t);
        for (const BinCase &c : kBinOps) {
            randomize(t, kSrc0, n, -8.0f, 8.0f, 1);
            randomize(t, kSrc1, n, 0.25f, 4.0f, 2);
            for (int64_t i = 0; i < n; i += 7) set(t, kSrc1, i, -get(t, kSrc1, i));  // mixed signs
            run(build([&](ProgramBuilder &b) {
                b.vbin(c.op, t, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), Lx(int32_t(kSrc1)), sticks, groups);
            }));
            for (int64_t i = 0; i < n; i++)
                expect_same(rnd(t, c.ref(get(t, kSrc0, i), get(t, kSrc1, i))), get(t, kDst, i),
                            std::string(op_info(c.op).name) + " " + dtype_name(t) + " element " +
                                std::to_string(i));
        }
    }
}

TEST_F(VecTest, BinaryScalarSrc1BroadcastsOnePerGroup) {
    const int sticks = 2, groups = 3;
    for (DType t : {DType::F16, DType::F32}) {
        const int64_t per_group = sticks * lanes(t), n = per_group * groups;
        for (const BinCase &c : kBinOps) {
            randomize(t, kSrc0, n, -8.0f, 8.0f, 3);
            // Scalars next to each other, then garbage that must not be read as group data.
            for (int g = 0; g < groups; g++) set(t, kSrc1, g, 0.5f + float(g) * 1.25f);
            for (int g = groups; g < 64; g++) set(t, kSrc1, g, 1000.0f);
            run(build([&](ProgramBuilder &b) {
                b.vbin(c.op, t, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), Lx(int32_t(kSrc1)), sticks, groups,
                       kSrc1Scalar);
            }));
            for (int64_t i = 0; i < n; i++)
                expect_same(rnd(t, c.ref(get(t, kSrc0, i), get(t, kSrc1, i / per_group))), get(t, kDst, i),
                            std::string(op_info(c.op).name) + " scalar " + dtype_name(t));
        }
    }
}

TEST_F(VecTest, BinaryRowSrc1IsOneGroupReadByEveryGroup) {
    const int sticks = 2, groups = 3;
    for (DType t : {DType::F16, DType::F32}) {
        const int64_t per_group = sticks * lanes(t), n = per_group * groups;
        for (const BinCase &c : kBinOps) {
            randomize(t, kSrc0, n, -8.0f, 8.0f, 3);
            randomize(t, kSrc1, per_group, 0.5f, 4.0f, 5);
            // Past the row: garbage that must not be read as the later groups' operand.
            for (int64_t i = per_group; i < n; i++) set(t, kSrc1, i, 1000.0f);
            run(build([&](ProgramBuilder &b) {
                b.vbin(c.op, t, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), Lx(int32_t(kSrc1)), sticks, groups,
                       kSrc1Row);
            }));
            for (int64_t i = 0; i < n; i++)
                expect_same(rnd(t, c.ref(get(t, kSrc0, i), get(t, kSrc1, i % per_group))), get(t, kDst, i),
                            std::string(op_info(c.op).name) + " row " + dtype_name(t));
        }
    }
}

TEST_F(VecTest, FoldCombinesTheGroupsIntoOneInOrder) {
    const int sticks = 1, groups = 5;
    for (DType t : {DType::F16, DType::F32}) {
        const int64_t per_group = sticks * lanes(t);
        for (const BinCase &c : kBinOps) {
            if (c.op == Opcode::VFMA) continue;
            randomize(t, kSrc0, per_group, 0.5f, 2.0f, 7);
            randomize(t, kSrc1, per_group * groups, 0.5f, 2.0f, 9);
            run(build([&](ProgramBuilder &b) {
                b.vbin(c.op, t, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), Lx(int32_t(kSrc1)), sticks, groups,
                       kFoldGroups);
            }));
            for (int64_t i = 0; i < per_group; i++) {
                float acc = get(t, kSrc0, i);
                for (int g = 0; g < groups; g++) acc = rnd(t, c.ref(acc, get(t, kSrc1, g * per_group + i)));
                expect_same(acc, get(t, kDst, i), std::string(op_info(c.op).name) + " fold " + dtype_name(t));
            }
        }
    }
}

TEST_F(VecTest, Fp16AddRoundsToNearestEven) {
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even 1.0.
    // (1 + 2^-10) + 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): rounds up.
    set_h(kSrc0, 0, 1.0f);
    set_h(kSrc1, 0, kTwoM11);
    set_h(kSrc0, 1, 1.0f + 2 * kTwoM11);
    set_h(kSrc1, 1, kTwoM11);
    set_h(kSrc0, 2, 65504.0f);  // largest half + 15 rounds back to 65504; + 16 (65520) ties to inf
    set_h(kSrc1, 2, 15.0f);
    set_h(kSrc0, 3, 65504.0f);
    set_h(kSrc1, 3, 16.0f);
    run(build([&](ProgramBuilder &b) {
        b.vbin(Opcode::VADD, DType::F16, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), Lx(int32_t(kSrc1)), 1);
    }));
    EXPECT_EQ(h(kDst, 0), 1.0f);
    EXPECT_EQ(h(kDst, 1), 1.0f + 4 * kTwoM11);
    EXPECT_EQ(h(kDst, 2), 65504.0f);
    EXPECT_TRUE(std::isinf(h(kDst, 3)));
}

TEST_F(VecTest, MaxMinRuleReturnsSecondOnTies) {
    // a > b ? a : b: for -0 vs +0 (equal) the second operand wins.
    set_f(kSrc0, 0, -0.0f);
    set_f(kSrc1, 0, 0.0f);
    set_f(kSrc0, 1, 0.0f);
    set_f(kSrc1, 1, -0.0f);
    run(build([&](ProgramBuilder &b) {
        b.vbin(Opcode::VMAX, DType::F32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), Lx(int32_t(kSrc1)), 1);
    }));
    EXPECT_FALSE(std::signbit(f(kDst, 0)));
    EXPECT_TRUE(std::signbit(f(kDst, 1)));
}

TEST_F(VecTest, FmaIsUnfused) {
    // fp32: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11 (tie to even), so a*b + c with
    // c = -(1 + 2^-11) is 0 unfused and 2^-24 fused.
    const float a32 = 1.0f + 1.0f / 4096.0f;
    set_f(kSrc0, 0, a32);
    set_f(kSrc1, 0, a32);
    set_f(kDst, 0, -(1.0f + kTwoM11));
    run(build([&](ProgramBuilder &b) {
        b.vbin(Opcode::VFMA, DType::F32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), Lx(int32_t(kSrc1)), 1);
    }));
    EXPECT_EQ(f(kDst, 0), 0.0f);

    // fp16: (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20; the product rounds to half (1 + 2^-9) before the add,
    // so adding -(1 + 2^-9) gives 0, not 2^-20 (which a float-precision product would give).
    const float a16 = 1.0f + 2 * kTwoM11;
    set_h(kSrc0, 0, a16);
    set_h(kSrc1, 0, a16);
    set_h(kDst, 0, -(1.0f + 4 * kTwoM11));
    run(build([&](ProgramBuilder &b) {
        b.vbin(Opcode::VFMA, DType::F16, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), Lx(int32_t(kSrc1)), 1);
    }));
    EXPECT_EQ(h(kDst, 0), 0.0f);
}

TEST_F(VecTest, FmaMatchesReference) {
    const int sticks = 1, groups = 4;
    for (DType t : {DType::F16, DType::F32}) {
        for (bool scalar : {false, true}) {
            const int64_t per_group = sticks * lanes(t), n = per_group * groups;
            randomize(t, kSrc0, n, -4.0f, 4.0f, 5);
            randomize(t, kSrc1, n, -4.0f, 4.0f, 6);
            randomize(t, kDst, n, -4.0f, 4.0f, 7);
            std::vector<float> expected(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; i++) {
                float b = get(t, kSrc1, scalar ? i / per_group : i);
                volatile float p = rnd(t, get(t, kSrc0, i) * b);  // volatile: never contracted into an FMA
                expected[size_t(i)] = rnd(t, p + get(t, kDst, i));
            }
            run(build([&](ProgramBuilder &b) {
                b.vbin(Opcode::VFMA, t, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), Lx(int32_t(kSrc1)), sticks,
                       groups, scalar ? kSrc1Scalar : 0);
            }));
            for (int64_t i = 0; i < n; i++)
                expect_same(expected[size_t(i)], get(t, kDst, i), std::string("VFMA ") + dtype_name(t));
        }
    }
}

TEST_F(VecTest, UnaryOpsMatchReference) {
    struct Case {
        Opcode op;
        float (*ref)(float);
        float lo, hi;
    };
    const Case cases[] = {
        {Opcode::VEXP, [](float x) { return std::exp(x); }, -6.0f, 6.0f},
        {Opcode::VLOG, [](float x) { return std::log(x); }, 0.01f, 100.0f},
        {Opcode::VTANH, [](float x) { return std::tanh(x); }, -4.0f, 4.0f},
        {Opcode::VRECIP, [](float x) { return 1.0f / x; }, 0.1f, 10.0f},
        {Opcode::VRSQRT, [](float x) { return 1.0f / std::sqrt(x); }, 0.01f, 100.0f},
        {Opcode::VSQRT, [](float x) { return std::sqrt(x); }, 0.0f, 100.0f},
        {Opcode::VNEG, [](float x) { return -x; }, -5.0f, 5.0f},
        {Opcode::VABS, [](float x) { return std::fabs(x); }, -5.0f, 5.0f},
        {Opcode::VCOPY, [](float x) { return x; }, -5.0f, 5.0f},
    };
    const int sticks = 3, groups = 2;
    for (DType t : {DType::F16, DType::F32}) {
        const int64_t n = sticks * groups * lanes(t);
        for (const Case &c : cases) {
            randomize(t, kSrc0, n, c.lo, c.hi, 9);
            run(build([&](ProgramBuilder &b) {
                b.vun(c.op, t, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), sticks, groups);
            }));
            for (int64_t i = 0; i < n; i++)
                expect_same(rnd(t, c.ref(get(t, kSrc0, i))), get(t, kDst, i),
                            std::string(op_info(c.op).name) + " " + dtype_name(t));
        }
    }
}

TEST_F(VecTest, UnaryEdgeValues) {
    set_h(kSrc0, 0, 0.0f);
    set_h(kSrc0, 1, -1.0f);
    set_h(kSrc0, 2, 20.0f);  // exp(20) overflows fp16
    run(build([&](ProgramBuilder &b) { b.vun(Opcode::VRSQRT, DType::F16, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1); }));
    EXPECT_TRUE(std::isinf(h(kDst, 0)));
    EXPECT_TRUE(std::isnan(h(kDst, 1)));
    run(build([&](ProgramBuilder &b) { b.vun(Opcode::VEXP, DType::F16, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1); }));
    EXPECT_EQ(h(kDst, 0), 1.0f);
    EXPECT_TRUE(std::isinf(h(kDst, 2)));
}

TEST_F(VecTest, CopyIsBitwiseForAnyType) {
    const int sticks = 2, groups = 2;
    const int64_t bytes = sticks * groups * m.stick_bytes;
    for (int64_t i = 0; i < bytes; i++) lx[size_t(kSrc0 + i)] = uint8_t(i * 37 + 11);
    set_h(kSrc0, 0, 0.0f);
    const uint16_t snan = 0x7d01;  // a signalling NaN pattern: must survive unchanged
    std::memcpy(&lx[size_t(kSrc0)], &snan, 2);
    for (DType t : {DType::F16, DType::F32, DType::I32}) {
        std::fill(lx.begin(), lx.begin() + bytes, 0);
        run(build([&](ProgramBuilder &b) { b.vun(Opcode::VCOPY, t, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), sticks, groups); }));
        EXPECT_EQ(0, std::memcmp(&lx[size_t(kDst)], &lx[size_t(kSrc0)], size_t(bytes))) << dtype_name(t);
    }
}

TEST_F(VecTest, InPlaceBinary) {
    randomize(DType::F16, kSrc0, 64, 1.0f, 2.0f, 11);
    randomize(DType::F16, kSrc1, 64, 1.0f, 2.0f, 12);
    std::vector<float> expected(64);
    for (int i = 0; i < 64; i++) expected[size_t(i)] = round_to_half(h(kSrc0, i) * h(kSrc1, i));
    run(build([&](ProgramBuilder &b) {
        b.vbin(Opcode::VMUL, DType::F16, 0, Lx(int32_t(kSrc0)), Lx(int32_t(kSrc0)), Lx(int32_t(kSrc1)), 1);
    }));
    for (int i = 0; i < 64; i++) EXPECT_EQ(expected[size_t(i)], h(kSrc0, i));
}

TEST_F(VecTest, RegisterPlusOffsetAddressing) {
    regs[3] = kSrc0 - 256;
    regs[4] = kSrc1 + 128;
    set_f(kSrc0, 0, 2.0f);
    set_f(kSrc1, 0, 3.0f);
    run(build([&](ProgramBuilder &b) {
        b.vbin(Opcode::VADD, DType::F32, 0, Lx(int32_t(kDst)), Lx(Reg{3}, 256), Lx(Reg{4}, -128), 1);
    }));
    EXPECT_EQ(f(kDst, 0), 5.0f);
}

TEST_F(VecTest, ConvertFloatTypes) {
    // f16 -> f32: exact; one source stick (64 halves) becomes two destination sticks per group.
    const int groups = 2;
    randomize(DType::F16, kSrc0, 64 * groups, -100.0f, 100.0f, 13);
    set_h(kSrc0, 1, std::numeric_limits<float>::infinity());
    run(build([&](ProgramBuilder &b) {
        b.vcvt(DType::F16, DType::F32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1, groups);
    }));
    for (int i = 0; i < 64 * groups; i++) EXPECT_EQ(h(kSrc0, i), f(kDst, i));

    // f32 -> f16: RNE, including ties and overflow. Two source sticks = one destination stick.
    const float vals[] = {1.0f + kTwoM11, 1.0f + 3 * kTwoM11, 65519.0f, 65520.0f, -1e9f, 1e-8f, 3e-8f, 0.1f};
    for (int g = 0; g < groups; g++)
        for (int i = 0; i < 64; i++) set_f(kSrc0, g * 64 + i, vals[i % 8] * (g ? -1.0f : 1.0f));
    run(build([&](ProgramBuilder &b) {
        b.vcvt(DType::F32, DType::F16, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 2, groups);
    }));
    for (int i = 0; i < 64 * groups; i++) EXPECT_EQ(float_to_half(f(kSrc0, i)), hbits(kDst, i)) << i;
    EXPECT_EQ(h(kDst, 0), 1.0f);
    EXPECT_EQ(h(kDst, 1), 1.0f + 4 * kTwoM11);
    EXPECT_EQ(h(kDst, 2), 65504.0f);
    EXPECT_TRUE(std::isinf(h(kDst, 3)));
    EXPECT_EQ(h(kDst, 5), 0.0f);               // 1e-8 < 2^-25: zero
    EXPECT_EQ(h(kDst, 6), 1.0f / 16777216.0f); // 3e-8 rounds to the smallest subnormal
}

TEST_F(VecTest, ConvertToI32TruncatesAndSaturates) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    {
        const float in[] = {2.5f, -2.5f, -0.75f, 65504.0f, inf, -inf, nan, -1000.5f};
        const int32_t out[] = {2, -2, 0, 65504, INT32_MAX, INT32_MIN, 0, -1000};
        for (int i = 0; i < 64; i++) set_h(kSrc0, i, in[i % 8]);
        run(build([&](ProgramBuilder &b) { b.vcvt(DType::F16, DType::I32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1); }));
        for (int i = 0; i < 64; i++) EXPECT_EQ(out[i % 8], i32(kDst, i)) << "f16 " << i;
    }
    {
        const float in[] = {3e9f, -3e9f, -0.99f, 2147483520.0f, -2147483648.0f, nan, 2147483648.0f, -123456.7f};
        const int32_t out[] = {INT32_MAX, INT32_MIN, 0, 2147483520, INT32_MIN, 0, INT32_MAX, -123456};
        for (int i = 0; i < 32 * 3; i++) set_f(kSrc0, i, in[i % 8]);
        run(build([&](ProgramBuilder &b) { b.vcvt(DType::F32, DType::I32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1, 3); }));
        for (int i = 0; i < 32 * 3; i++) EXPECT_EQ(out[i % 8], i32(kDst, i)) << "f32 " << i;
    }
}

TEST_F(VecTest, ConvertFromI32RoundsToNearestEven) {
    {
        const int32_t in[] = {16777217, 16777219, -16777219, 7, INT32_MAX, INT32_MIN, 0, -1};
        const float out[] = {16777216.0f, 16777220.0f, -16777220.0f, 7.0f, 2147483648.0f, -2147483648.0f, 0.0f, -1.0f};
        for (int i = 0; i < 32; i++) set_i32(kSrc0, i, in[i % 8]);
        run(build([&](ProgramBuilder &b) { b.vcvt(DType::I32, DType::F32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1); }));
        for (int i = 0; i < 32; i++) EXPECT_EQ(out[i % 8], f(kDst, i)) << i;
    }
    {
        // i32 -> f16: 2049 and 2051 are ties at spacing 2 (-> 2048, 2052); 65519 -> 65504; 65520 -> inf.
        const int32_t in[] = {2049, 2051, -2049, 65519, 65520, -70000, INT32_MAX, 3};
        const float inf = std::numeric_limits<float>::infinity();
        const float out[] = {2048.0f, 2052.0f, -2048.0f, 65504.0f, inf, -inf, inf, 3.0f};
        // Two source sticks (64 ints) make one half stick; four groups.
        for (int i = 0; i < 64 * 4; i++) set_i32(kSrc0, i, in[i % 8]);
        run(build([&](ProgramBuilder &b) { b.vcvt(DType::I32, DType::F16, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 2, 4); }));
        for (int i = 0; i < 64 * 4; i++) EXPECT_EQ(out[i % 8], h(kDst, i)) << i;
    }
}

// Every int8 and uint8 code widens exactly to fp16, fp32 and int32 (sign- or zero-extended).
TEST_F(VecTest, ConvertBytesWidensEveryCodeExactly) {
    for (DType from : {DType::I8, DType::U8}) {
        for (int i = 0; i < 256; i++) lx[size_t(kSrc0 + i)] = uint8_t(i);
        auto want = [&](int i) { return from == DType::I8 ? int(int8_t(uint8_t(i))) : i; };
        run(build([&](ProgramBuilder &b) { b.vcvt(from, DType::F16, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 2); }));
        for (int i = 0; i < 256; i++) ASSERT_EQ(float(want(i)), h(kDst, i)) << dtype_name(from) << " " << i;
        run(build([&](ProgramBuilder &b) { b.vcvt(from, DType::F32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 2); }));
        for (int i = 0; i < 256; i++) ASSERT_EQ(float(want(i)), f(kDst, i)) << dtype_name(from) << " " << i;
        run(build([&](ProgramBuilder &b) { b.vcvt(from, DType::I32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 2); }));
        for (int i = 0; i < 256; i++) ASSERT_EQ(want(i), i32(kDst, i)) << dtype_name(from) << " " << i;
    }
    // int8 <-> uint8 keeps the bits.
    run(build([&](ProgramBuilder &b) { b.vcvt(DType::I8, DType::U8, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 2); }));
    for (int i = 0; i < 256; i++) ASSERT_EQ(uint8_t(i), lx[size_t(kDst + i)]);
}

// A narrowing to a byte keeps the low 8 bits of the int32 value, a float truncated toward zero
// first (Halide's CPU casts on x86); NaN, infinities and floats past int32 give 0.
TEST_F(VecTest, ConvertToBytesTruncatesThenWraps) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const float in[] = {2.5f, -2.5f, -0.75f, 127.9f, -128.9f, 200.0f, 300.0f, -129.0f,
                        65504.0f, inf, -inf, nan, 255.0f, -1.0f, 0.0f, 1000.5f};
    const int32_t as_int[] = {2, -2, 0, 127, -128, 200, 300, -129, 65504, 0, 0, 0, 255, -1, 0, 1000};
    for (DType to : {DType::I8, DType::U8}) {
        for (int i = 0; i < 128; i++) set_h(kSrc0, i, in[i % 16]);
        run(build([&](ProgramBuilder &b) { b.vcvt(DType::F16, to, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 2); }));
        for (int i = 0; i < 128; i++) ASSERT_EQ(uint8_t(uint32_t(as_int[i % 16])), lx[size_t(kDst + i)]) << "f16 " << i;
        for (int i = 0; i < 128; i++) set_f(kSrc0, i, in[i % 16]);
        run(build([&](ProgramBuilder &b) { b.vcvt(DType::F32, to, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 4); }));
        for (int i = 0; i < 128; i++) ASSERT_EQ(uint8_t(uint32_t(as_int[i % 16])), lx[size_t(kDst + i)]) << "f32 " << i;
        const int32_t ints[] = {127, 128, -129, 256, -1, 70000, INT32_MIN, 5};
        for (int i = 0; i < 128; i++) set_i32(kSrc0, i, ints[i % 8]);
        run(build([&](ProgramBuilder &b) { b.vcvt(DType::I32, to, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 4); }));
        for (int i = 0; i < 128; i++) ASSERT_EQ(uint8_t(uint32_t(ints[i % 8])), lx[size_t(kDst + i)]) << "i32 " << i;
    }
}

// VROUND: to the nearest integer, ties to even, in fp16 and fp32.
TEST_F(VecTest, RoundTiesToEven) {
    const float in[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f, 1000.5f};
    const float out[] = {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 2.0f, -3.0f, 1000.0f};
    for (DType t : {DType::F16, DType::F32}) {
        for (int i = 0; i < 64; i++) set(t, kSrc0, i, in[i % 8]);
        run(build([&](ProgramBuilder &b) { b.vun(Opcode::VROUND, t, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 2); }));
        for (int i = 0; i < 64; i++) {
            ASSERT_EQ(out[i % 8], get(t, kDst, i)) << dtype_name(t) << " " << i;
            ASSERT_EQ(std::signbit(out[i % 8]), std::signbit(get(t, kDst, i))) << dtype_name(t) << " " << i;
        }
    }
}

// VCVTF8 runs the fp8 routines (device/fp8.h, tested against the format definitions in
// tests/device/test_fp8.cpp) over every element, in the instruction's format and direction:
// every fp16 value encoded, every code decoded to fp16 and fp32, fp32 values encoded.
TEST_F(VecTest, Fp8ConversionsEncodeAndDecodeEveryElement) {
    for (Fp8Format fmt : {Fp8Format::E4M3, Fp8Format::E5M2}) {
        SCOPED_TRACE(fp8_format_name(fmt));
        for (uint32_t i = 0; i < 65536; i++) std::memcpy(&lx[size_t(kSrc0 + 2 * i)], &i, 2);
        run(build([&](ProgramBuilder &b) {
            b.vcvtf8(DType::F16, DType::U8, fmt, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 512, 2);
        }));
        for (uint32_t i = 0; i < 65536; i++)
            ASSERT_EQ(fp8_encode(half_to_float(uint16_t(i)), fmt), lx[size_t(kDst + i)]) << "fp16 " << i;

        for (int i = 0; i < 256; i++) lx[size_t(kSrc0 + i)] = uint8_t(i);
        run(build([&](ProgramBuilder &b) {
            b.vcvtf8(DType::U8, DType::F16, fmt, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1, 2);
        }));
        for (int i = 0; i < 256; i++) ASSERT_EQ(fp8_decode_half(uint8_t(i), fmt), hbits(kDst, i)) << "code " << i;
        run(build([&](ProgramBuilder &b) {
            b.vcvtf8(DType::U8, DType::F32, fmt, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 2, 1);
        }));
        for (int i = 0; i < 256; i++) {
            const float want = fp8_decode(uint8_t(i), fmt), got = f(kDst, i);
            if (std::isnan(want)) ASSERT_TRUE(std::isnan(got)) << "code " << i;
            else ASSERT_EQ(float_to_bits(want), float_to_bits(got)) << "code " << i;
        }

        std::mt19937 rng(3);
        std::uniform_int_distribution<uint32_t> bits;
        std::vector<float> vals(128);
        for (float &v : vals) v = bits_to_float(bits(rng));
        vals[0] = 449.0f, vals[1] = -1e9f, vals[2] = std::ldexp(1.0f, -17), vals[3] = 240.0f;
        for (int i = 0; i < 128; i++) set_f(kSrc0, i, vals[size_t(i)]);
        run(build([&](ProgramBuilder &b) {
            b.vcvtf8(DType::F32, DType::U8, fmt, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 4, 1);
        }));
        for (int i = 0; i < 128; i++) ASSERT_EQ(fp8_encode(vals[size_t(i)], fmt), lx[size_t(kDst + i)]) << "f32 " << i;
    }
}

// A decode in place: the destination (two or four times the bytes) covers the codes it reads.
TEST_F(VecTest, Fp8DecodeInPlaceReadsTheCodesFirst) {
    for (int i = 0; i < 128; i++) lx[size_t(kSrc0 + i)] = uint8_t(i * 2 + 1);
    run(build([&](ProgramBuilder &b) {
        b.vcvtf8(DType::U8, DType::F16, Fp8Format::E4M3, 0, Lx(int32_t(kSrc0)), Lx(int32_t(kSrc0)), 1);
    }));
    for (int i = 0; i < 128; i++) ASSERT_EQ(fp8_decode_half(uint8_t(i * 2 + 1), Fp8Format::E4M3), hbits(kSrc0, i)) << i;
}

// No published figure gives an fp8 conversion rate: VCVTF8 is timed as the VCVT between the same
// types (docs/device_model.md).
TEST(Fp8Cost, TimedAsTheVcvtBetweenTheSameTypes) {
    MachineDesc m;
    ProgramBuilder b("cost", 1);
    b.vcvt(DType::F16, DType::U8, 0, Lx(0), Lx(4096), 4, 3);
    b.vcvtf8(DType::F16, DType::U8, Fp8Format::E4M3, 0, Lx(0), Lx(4096), 4, 3);
    b.vcvt(DType::U8, DType::F32, 0, Lx(0), Lx(4096), 2, 3);
    b.vcvtf8(DType::U8, DType::F32, Fp8Format::E5M2, 0, Lx(0), Lx(4096), 2, 3);
    DeviceProgram p = b.finish();
    EXPECT_EQ(vector_sticks(p.code[1], m), vector_sticks(p.code[0], m));
    EXPECT_EQ(vector_cycles(p.code[1], m), vector_cycles(p.code[0], m));
    EXPECT_EQ(vector_sticks(p.code[3], m), 24);  // the fp32 side: 2 byte sticks are 8 fp32 sticks, 3 groups
    EXPECT_EQ(vector_cycles(p.code[3], m), vector_cycles(p.code[2], m));
}

TEST_F(VecTest, FillEveryType) {
    const int sticks = 2, groups = 3;
    std::fill(lx.begin(), lx.begin() + 4096, 0xAB);
    run(build([&](ProgramBuilder &b) { b.vfill(DType::F16, 0, Lx(int32_t(kDst)), 1.0f / 3.0f, sticks, groups); }));
    const int64_t n16 = sticks * groups * 64;
    for (int64_t i = 0; i < n16; i++) ASSERT_EQ(float_to_half(1.0f / 3.0f), hbits(kDst, i));
    EXPECT_EQ(0xAB, lx[size_t(kDst + n16 * 2)]);  // nothing past the range

    run(build([&](ProgramBuilder &b) { b.vfill(DType::F32, 0, Lx(int32_t(kDst)), -1.5e-3f, sticks, groups); }));
    for (int64_t i = 0; i < sticks * groups * 32; i++) ASSERT_EQ(-1.5e-3f, f(kDst, i));

    run(build([&](ProgramBuilder &b) { b.vfill(DType::I32, 0, Lx(int32_t(kDst)), -2.7f, sticks, groups); }));
    for (int64_t i = 0; i < sticks * groups * 32; i++) ASSERT_EQ(-2, i32(kDst, i));

    run(build([&](ProgramBuilder &b) { b.vfill(DType::I8, 0, Lx(int32_t(kDst)), -3.0f, sticks, groups); }));
    for (int64_t i = 0; i < sticks * groups * 128; i++) ASSERT_EQ(uint8_t(0xFD), lx[size_t(kDst + i)]);
    EXPECT_EQ(0xAB, lx[size_t(kDst + sticks * groups * 128)]);

    run(build([&](ProgramBuilder &b) {
        b.vfill(DType::F32, 0, Lx(int32_t(kDst)), -std::numeric_limits<float>::infinity(), 1);
    }));
    EXPECT_TRUE(std::isinf(f(kDst, 5)) && f(kDst, 5) < 0);
}

TEST_F(VecTest, BroadcastOneElementPerGroup) {
    const int sticks = 2, groups = 3;
    for (DType t : {DType::F16, DType::F32, DType::I32, DType::I8, DType::U8}) {
        const int64_t eb = dtype_bytes(t), per_group = sticks * lanes(t);
        for (int64_t i = 0; i < groups * eb; i++) lx[size_t(kSrc0 + i)] = uint8_t(0x30 + i);
        run(build([&](ProgramBuilder &b) { b.vbcast(t, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), sticks, groups); }));
        for (int g = 0; g < groups; g++)
            for (int64_t i = 0; i < per_group; i++)
                ASSERT_EQ(0, std::memcmp(&lx[size_t(kDst + (g * per_group + i) * eb)], &lx[size_t(kSrc0 + g * eb)],
                                         size_t(eb)))
                    << dtype_name(t) << " group " << g << " element " << i;
    }
}

// Reference reduction: float accumulator folded in index order, rounded once at the end.
float ref_reduce(Opcode op, const std::vector<float> &x, float init) {
    float acc = init;
    for (float v : x) {
        if (op == Opcode::VREDSUM) acc = acc + v;
        else if (op == Opcode::VREDMAX) acc = acc > v ? acc : v;
        else acc = acc < v ? acc : v;
    }
    return acc;
}

TEST_F(VecTest, ReductionsMatchReference) {
    const float inf = std::numeric_limits<float>::infinity();
    struct Mode {
        DType t;
        uint8_t mode;
        int valid;  // 0 = all
        int sticks;
    };
    const Mode modes[] = {
        {DType::F16, 0, 0, 2},           {DType::F16, kDstF32, 0, 2}, {DType::F32, 0, 0, 3},
        {DType::F16, 0, 37, 1},          {DType::F32, kDstF32, 5, 2}, {DType::F16, kAccumulate, 0, 2},
        {DType::F16, kAccumulate | kDstF32, 100, 2}, {DType::F32, kAccumulate, 33, 2},
    };
    const int groups = 3;
    for (Opcode op : {Opcode::VREDSUM, Opcode::VREDMAX, Opcode::VREDMIN}) {
        for (const Mode &md : modes) {
            const DType t = md.t;
            const int64_t per_group = md.sticks * lanes(t);
            const int64_t valid = md.valid ? md.valid : per_group;
            const bool dst_f32 = (md.mode & kDstF32) || t == DType::F32;
            const DType dt = dst_f32 ? DType::F32 : DType::F16;
            randomize(t, kSrc0, per_group * groups, -10.0f, 10.0f, 17);
            // Padding beyond `valid` holds values that would dominate every reduction if read.
            for (int g = 0; g < groups; g++)
                for (int64_t i = valid; i < per_group; i++) set(t, kSrc0, g * per_group + i, i % 2 ? 1000.0f : -1000.0f);
            for (int g = 0; g < groups; g++) set(dt, kDst, g, 1.5f + float(g));
            std::vector<float> expected;
            for (int g = 0; g < groups; g++) {
                std::vector<float> x;
                for (int64_t i = 0; i < valid; i++) x.push_back(get(t, kSrc0, g * per_group + i));
                float init = op == Opcode::VREDSUM ? 0.0f : op == Opcode::VREDMAX ? -inf : inf;
                if (md.mode & kAccumulate) init = get(dt, kDst, g);
                expected.push_back(rnd(dt, ref_reduce(op, x, init)));
            }
            run(build([&](ProgramBuilder &b) {
                b.vred(op, t, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), md.sticks, groups, md.valid, md.mode);
            }));
            for (int g = 0; g < groups; g++)
                expect_same(expected[size_t(g)], get(dt, kDst, g),
                            std::string(op_info(op).name) + " " + dtype_name(t) + " mode " +
                                std::to_string(md.mode) + " valid " + std::to_string(md.valid));
        }
    }
}

// The max/min folds run eight lanes at a time; a zero extreme (whose sign the in-order fold takes
// from the last zero) or a NaN must give the in-order result, across chunk boundaries too.
TEST_F(VecTest, MaxMinReductionsKeepInOrderZeroSignAndNaN) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const int sticks = 20;  // 1280 fp16 lanes: more than one 512-element chunk
    const int64_t n = sticks * lanes(DType::F16);
    struct Pattern {
        const char *name;
        std::function<float(int64_t)> value;
    };
    const Pattern patterns[] = {
        {"zeros of both signs, last -0", [&](int64_t i) { return i == n - 1 ? -0.0f : (i % 3 ? 0.0f : -0.0f); }},
        {"zeros of both signs, last +0", [&](int64_t i) { return i == n - 1 ? 0.0f : (i % 3 ? -0.0f : 0.0f); }},
        {"negatives then a lone -0", [&](int64_t i) { return i == 700 ? -0.0f : -1.0f - float(i % 7); }},
        {"a NaN in the middle", [&](int64_t i) { return i == 600 ? nan : float(i % 11) - 5.0f; }},
        {"a NaN at the end", [&](int64_t i) { return i == n - 1 ? nan : float(i % 11) - 5.0f; }},
        {"distinct values", [&](int64_t i) { return float((i * 37) % 101) - 50.0f; }},
    };
    for (const Pattern &p : patterns) {
        std::vector<float> x;
        for (int64_t i = 0; i < n; i++) {
            set_h(kSrc0, i, p.value(i));
            x.push_back(h(kSrc0, i));
        }
        for (Opcode op : {Opcode::VREDMAX, Opcode::VREDMIN}) {
            const float init = op == Opcode::VREDMAX ? -std::numeric_limits<float>::infinity()
                                                     : std::numeric_limits<float>::infinity();
            float expected = round_to_half(ref_reduce(op, x, init));
            run(build([&](ProgramBuilder &b) { b.vred(op, DType::F16, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), sticks, 1); }));
            std::string what = std::string(op_info(op).name) + " over " + p.name;
            if (std::isnan(expected)) EXPECT_TRUE(std::isnan(h(kDst, 0))) << what;
            else EXPECT_EQ(float_to_bits(expected), float_to_bits(h(kDst, 0))) << what;
        }
    }
}

// fp16 unary ops are table lookups: every one of the 65536 inputs gives the float op's rounded result.
TEST_F(VecTest, Fp16UnaryOpsMatchReferenceOnEveryInput) {
    struct Case {
        Opcode op;
        float (*ref)(float);
    };
    const Case cases[] = {
        {Opcode::VEXP, [](float x) { return std::exp(x); }},       {Opcode::VLOG, [](float x) { return std::log(x); }},
        {Opcode::VTANH, [](float x) { return std::tanh(x); }},     {Opcode::VRECIP, [](float x) { return 1.0f / x; }},
        {Opcode::VRSQRT, [](float x) { return 1.0f / std::sqrt(x); }}, {Opcode::VSQRT, [](float x) { return std::sqrt(x); }},
        {Opcode::VNEG, [](float x) { return -x; }},                {Opcode::VABS, [](float x) { return std::fabs(x); }},
    };
    const int64_t n = 65536, sticks = n / lanes(DType::F16);
    const int64_t in = 0, out = 256 * 1024;  // 128 KiB each
    for (int64_t i = 0; i < n; i++) {
        uint16_t b = uint16_t(i);
        std::memcpy(&lx[size_t(in + 2 * i)], &b, 2);
    }
    for (const Case &c : cases) {
        run(build([&](ProgramBuilder &b) { b.vun(c.op, DType::F16, 0, Lx(int32_t(out)), Lx(int32_t(in)), int32_t(sticks)); }));
        int mismatches = 0;
        for (int64_t i = 0; i < n; i++) {
            float expected = round_to_half(c.ref(half_to_float(uint16_t(i))));
            float got = h(out, i);
            if (std::isnan(expected) ? !std::isnan(got) : float_to_bits(expected) != float_to_bits(got)) mismatches++;
        }
        EXPECT_EQ(mismatches, 0) << op_info(c.op).name;
    }
}

// int32 arithmetic wraps like a two's-complement register; max/min and the reductions are exact.
TEST_F(VecTest, Int32OpsWrapAndReduceExactly) {
    const int32_t big = std::numeric_limits<int32_t>::max(), small = std::numeric_limits<int32_t>::min();
    const std::vector<int32_t> a = {1, -2, big, small, 7, -7, 100000, -100000};
    const std::vector<int32_t> b = {3, 5, 1, -1, -7, 7, 100000, 3};
    const int64_t n = 32;  // one stick of int32
    for (int64_t i = 0; i < n; i++) {
        set_i32(kSrc0, i, a[size_t(i) % a.size()]);
        set_i32(kSrc1, i, b[size_t(i) % b.size()]);
    }
    auto wrap = [](int64_t v) { return int32_t(uint32_t(uint64_t(v))); };
    struct Case {
        Opcode op;
        std::function<int32_t(int32_t, int32_t)> ref;
    };
    const Case cases[] = {
        {Opcode::VADD, [&](int32_t x, int32_t y) { return wrap(int64_t(x) + y); }},
        {Opcode::VSUB, [&](int32_t x, int32_t y) { return wrap(int64_t(x) - y); }},
        {Opcode::VMUL, [&](int32_t x, int32_t y) { return wrap(int64_t(x) * y); }},
        {Opcode::VMAX, [](int32_t x, int32_t y) { return std::max(x, y); }},
        {Opcode::VMIN, [](int32_t x, int32_t y) { return std::min(x, y); }},
    };
    for (const Case &c : cases) {
        run(build([&](ProgramBuilder &bld) {
            bld.vbin(c.op, DType::I32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), Lx(int32_t(kSrc1)), 1);
        }));
        for (int64_t i = 0; i < n; i++)
            EXPECT_EQ(i32(kDst, i), c.ref(i32(kSrc0, i), i32(kSrc1, i))) << op_info(c.op).name << " element " << i;
    }
    run(build([&](ProgramBuilder &bld) { bld.vun(Opcode::VNEG, DType::I32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1); }));
    for (int64_t i = 0; i < n; i++) EXPECT_EQ(i32(kDst, i), wrap(-int64_t(i32(kSrc0, i)))) << "VNEG " << i;
    run(build([&](ProgramBuilder &bld) { bld.vun(Opcode::VABS, DType::I32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1); }));
    EXPECT_EQ(i32(kDst, 3), small) << "abs(INT32_MIN) wraps to itself";
    int64_t sum = 0;
    int32_t mx = small;
    for (int64_t i = 0; i < n; i++) sum += i32(kSrc0, i), mx = std::max(mx, i32(kSrc0, i));
    run(build([&](ProgramBuilder &bld) { bld.vred(Opcode::VREDSUM, DType::I32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1); }));
    EXPECT_EQ(i32(kDst, 0), wrap(sum));
    run(build([&](ProgramBuilder &bld) { bld.vred(Opcode::VREDMAX, DType::I32, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1); }));
    EXPECT_EQ(i32(kDst, 0), mx);
}

TEST_F(VecTest, Fp16SumAccumulatesInFloat) {
    // 2048 + 1 + 1: per-step fp16 rounding would stay at 2048 (2049 ties to even); a float
    // accumulator gives 2050, representable in fp16.
    set_h(kSrc0, 0, 2048.0f);
    set_h(kSrc0, 1, 1.0f);
    set_h(kSrc0, 2, 1.0f);
    run(build([&](ProgramBuilder &b) {
        b.vred(Opcode::VREDSUM, DType::F16, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), 1, 1, 3);
    }));
    EXPECT_EQ(2050.0f, h(kDst, 0));
    EXPECT_EQ(0, hbits(kDst, 1));  // only one element written
}

TEST_F(VecTest, TransposeNonMultipleOfLanes) {
    struct Case {
        DType t;
        int rows, cols;
    };
    for (const Case &c : {Case{DType::F16, 5, 70}, Case{DType::F32, 33, 3}, Case{DType::F16, 64, 64},
                          Case{DType::I32, 1, 1}, Case{DType::I8, 3, 130}, Case{DType::U8, 129, 2}}) {
        const int64_t L = lanes(c.t), eb = dtype_bytes(c.t);
        const int64_t rs_src = (c.cols + L - 1) / L * L, rs_dst = (c.rows + L - 1) / L * L;
        for (int64_t i = 0; i < c.rows * rs_src * eb; i++) lx[size_t(kSrc0 + i)] = uint8_t(i * 13 + 5);
        std::fill(lx.begin() + kDst, lx.begin() + kDst + c.cols * rs_dst * eb + 256, 0xEE);
        run(build([&](ProgramBuilder &b) {
            b.vtranspose(c.t, 0, Lx(int32_t(kDst)), Lx(int32_t(kSrc0)), c.rows, c.cols);
        }));
        for (int64_t col = 0; col < c.cols; col++) {
            for (int64_t r = 0; r < rs_dst; r++) {
                const uint8_t *d = &lx[size_t(kDst + (col * rs_dst + r) * eb)];
                if (r < c.rows) {
                    ASSERT_EQ(0, std::memcmp(d, &lx[size_t(kSrc0 + (r * rs_src + col) * eb)], size_t(eb)))
                        << c.rows << "x" << c.cols << " at " << col << "," << r;
                } else {
                    for (int64_t k = 0; k < eb; k++) ASSERT_EQ(0, d[k]) << "padding " << col << "," << r;
                }
            }
        }
        EXPECT_EQ(0xEE, lx[size_t(kDst + c.cols * rs_dst * eb)]);  // nothing past the range
    }
}

TEST_F(VecTest, MatmulMatchesReference) {
    const int M = 70, N = 67, K = 130;
    MatmulDesc d;
    d.m = M;
    d.n = N;
    d.k = K;
    d.lda = 384;  // round_up(K*2, 128)
    d.ldb = 256;  // round_up(N*2, 128)
    d.ldc = 384;  // round_up(N*4, 128)
    const int64_t A = 0, B = 64 * 1024, C = 128 * 1024;
    std::mt19937 rng(21);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) set_h(A + i * d.lda, k, dist(rng));
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) set_h(B + k * d.ldb, j, dist(rng));
    for (bool acc : {false, true}) {
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) set_f(C + i * d.ldc, j, dist(rng));
        std::vector<float> expected(size_t(M * N));
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float s = acc ? f(C + i * d.ldc, j) : 0.0f;
                for (int k = 0; k < K; k++) s += h(A + i * d.lda, k) * h(B + k * d.ldb, j);
                expected[size_t(i * N + j)] = s;
            }
        // Bytes between rows (padding) must stay untouched.
        set_f(C, N, 12345.0f);
        run(build([&](ProgramBuilder &b) {
            int desc = b.mm_desc(d);
            b.matmul(0, Lx(int32_t(C)), Lx(int32_t(A)), Lx(int32_t(B)), desc, acc);
        }));
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++)
                ASSERT_EQ(float_to_bits(expected[size_t(i * N + j)]), float_to_bits(f(C + i * d.ldc, j)))
                    << "acc " << acc << " C[" << i << "][" << j << "]";
        EXPECT_EQ(12345.0f, f(C, N));
    }
}

TEST_F(VecTest, MatmulSumsInKOrder) {
    // 1 row, k = 3: 2^24 + 1 - 2^24 in k order is (2^24 + 1) -> 2^24 (tie to even), then 0.
    // Any other order would give 1.
    MatmulDesc d;
    d.m = 1;
    d.n = 1;
    d.k = 3;
    d.lda = d.ldb = d.ldc = 128;
    const int64_t A = 0, B = 4096, C = 8192;
    set_h(A, 0, 4096.0f);
    set_h(A, 1, 1.0f);
    set_h(A, 2, -4096.0f);
    set_h(B + 0 * 128, 0, 4096.0f);
    set_h(B + 1 * 128, 0, 1.0f);
    set_h(B + 2 * 128, 0, 4096.0f);
    run(build([&](ProgramBuilder &b) {
        int desc = b.mm_desc(d);
        b.matmul(0, Lx(int32_t(C)), Lx(int32_t(A)), Lx(int32_t(B)), desc, false);
    }));
    EXPECT_EQ(0.0f, f(C, 0));
}

// int8 x int8 -> int32: exact products in k order, accumulating into C and wrapping past int32.
TEST_F(VecTest, Int8MatmulAccumulatesExactlyInInt32) {
    MatmulDesc d;
    d.m = 3, d.n = 130, d.k = 5;
    d.lda = 128, d.ldb = 256, d.ldc = 1024;
    const int64_t A = 0, B = 4096, C = 16384;
    std::mt19937 rng(7);
    auto a = [&](int64_t i, int64_t k) { return int8_t(lx[size_t(A + i * d.lda + k)]); };
    auto b = [&](int64_t k, int64_t j) { return int8_t(lx[size_t(B + k * d.ldb + j)]); };
    for (int64_t i = 0; i < 8192; i++) lx[size_t(A + i)] = uint8_t(rng());
    for (int64_t i = 0; i < d.m * 256; i++) set_i32(C, i, i == 0 ? INT32_MAX : int32_t(i) - 100);
    run(build([&](ProgramBuilder &bld) {
        int desc = bld.mm_desc(d);
        bld.matmul(0, Lx(int32_t(C)), Lx(int32_t(A)), Lx(int32_t(B)), desc, true, DType::I8);
    }));
    for (int64_t i = 0; i < d.m; i++)
        for (int64_t j = 0; j < d.n; j++) {
            int64_t want = i == 0 && j == 0 ? INT32_MAX : i * 256 + j - 100;
            for (int64_t k = 0; k < d.k; k++) want += int64_t(a(i, k)) * b(k, j);
            ASSERT_EQ(int32_t(uint32_t(uint64_t(want))), i32(C + i * d.ldc, j)) << i << "," << j;
        }
}

TEST(CombineElements, Fp16RoundsPerElement) {
    std::vector<uint16_t> acc(64), src(64);
    for (int i = 0; i < 64; i++) {
        acc[size_t(i)] = float_to_half(2048.0f + 2.0f * float(i % 4));
        src[size_t(i)] = float_to_half(i % 2 ? 1.0f : -3.0f);
    }
    auto expect = [&](RedOp op, float (*ref)(float, float)) {
        std::vector<uint16_t> a = acc;
        combine_elements(op, DType::F16, reinterpret_cast<uint8_t *>(a.data()),
                         reinterpret_cast<const uint8_t *>(src.data()), 64 * 2);
        for (int i = 0; i < 64; i++)
            EXPECT_EQ(float_to_half(ref(half_to_float(acc[size_t(i)]), half_to_float(src[size_t(i)]))), a[size_t(i)]);
        return a;
    };
    std::vector<uint16_t> s = expect(RedOp::Sum, [](float x, float y) { return x + y; });
    // Ties at fp16 spacing 2 round to the even mantissa: 2050 + 1 -> 2052, 2054 + 1 -> 2056.
    EXPECT_EQ(2045.0f, half_to_float(s[0]));
    EXPECT_EQ(2052.0f, half_to_float(s[1]));
    EXPECT_EQ(2056.0f, half_to_float(s[3]));
    expect(RedOp::Max, [](float x, float y) { return x > y ? x : y; });
    expect(RedOp::Min, [](float x, float y) { return x < y ? x : y; });
}

TEST(CombineElements, Fp32AndI32) {
    float a[4] = {1.0f, -2.0f, 1e30f, 0.5f}, b[4] = {1e-8f, 3.0f, 1e30f, -0.25f};
    float s[4];
    std::memcpy(s, a, sizeof a);
    combine_elements(RedOp::Sum, DType::F32, reinterpret_cast<uint8_t *>(s), reinterpret_cast<const uint8_t *>(b), 16);
    for (int i = 0; i < 4; i++) EXPECT_EQ(a[i] + b[i], s[i]);
    std::memcpy(s, a, sizeof a);
    combine_elements(RedOp::Max, DType::F32, reinterpret_cast<uint8_t *>(s), reinterpret_cast<const uint8_t *>(b), 16);
    for (int i = 0; i < 4; i++) EXPECT_EQ(std::max(a[i], b[i]), s[i]);
    std::memcpy(s, a, sizeof a);
    combine_elements(RedOp::Min, DType::F32, reinterpret_cast<uint8_t *>(s), reinterpret_cast<const uint8_t *>(b), 8);
    EXPECT_EQ(1e-8f, s[0]);
    EXPECT_EQ(-2.0f, s[1]);
    EXPECT_EQ(1e30f, s[2]);  // beyond `bytes`: untouched

    int32_t x[3] = {INT32_MAX, -5, 7}, y[3] = {1, 9, -7};
    combine_elements(RedOp::Sum, DType::I32, reinterpret_cast<uint8_t *>(x), reinterpret_cast<const uint8_t *>(y), 12);
    EXPECT_EQ(INT32_MIN, x[0]);  // wraps
    EXPECT_EQ(4, x[1]);
    EXPECT_EQ(0, x[2]);
    int32_t p[2] = {3, -3}, q[2] = {-4, 4};
    combine_elements(RedOp::Max, DType::I32, reinterpret_cast<uint8_t *>(p), reinterpret_cast<const uint8_t *>(q), 8);
    EXPECT_EQ(3, p[0]);
    EXPECT_EQ(4, p[1]);
}

}  // namespace
}  // namespace spyre
