// int8 x int8 -> int32 matmul (C(n, m) = sum_k i32(A(k, m)) * i32(B(n, k))) compiled with pe_matmul
// runs on the PE array in its int8 mode (MATMUL of type i8, int32 accumulation) and matches
// Halide's CPU realisation exactly, at shapes whose K, N and M are whole int8 sticks and not, with
// B sticked on N and restickified from K. The time of an int8 MATMUL follows the machine
// description: pe_int8_rate_factor times the fp16 rate.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"
#include "directives.h"
#include "sim/op_cost.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// b_k_major: B stored {K, N} (sticked on K), read as b(k, n): restickified before the MATMUL.
Algorithm int8_matmul(int K, bool b_k_major = false) {
    return [=] {
        Kernel k;
        ImageParam a(Int(8), 2, "a"), b(Int(8), 2, "b");
        Var n("n"), m("m");
        RDom r(0, K, "k");
        Func c("imm");
        c(n, m) = 0;
        Expr bv = b_k_major ? b(r, n) : b(n, r);
        c(n, m) += cast<int32_t>(a(r, m)) * cast<int32_t>(bv);
        k.inputs = {a, b};
        k.output = c;
        k.vars = {{"n", n}, {"m", m}};
        return k;
    };
}

Schedule on_pe(int cores = 1, int rows = 0) {
    return [=](Kernel &k) {
        Func c = k.output;
        RVar rk(c.update(0).get_schedule().rvars()[0].var);
        SpyreSchedule s = schedule(c);
        if (cores > 1) s.ring_split(k.vars["m"], cores, rows);
        s.stick_vectorize(k.vars["n"]).pe_matmul(rk);
    };
}

int int8_matmul_count(const DeviceProgram &p, Opcode op, DType t) {
    int c = 0;
    for (const Instr &in : p.code) c += in.op == op && DType(in.dtype) == t;
    return c;
}

struct Int8MatmulShape {
    std::string name;
    int K, N, M, cores;
    bool b_k_major;
};

class Int8Matmul : public ::testing::TestWithParam<Int8MatmulShape> {};

TEST_P(Int8Matmul, PeArrayMatchesCpuExactly) {
    const Int8MatmulShape s = GetParam();
    const std::vector<int> b_shape = s.b_k_major ? std::vector<int>{s.K, s.N} : std::vector<int>{s.N, s.K};
    DiffResult r = run_differential(int8_matmul(s.K, s.b_k_major), on_pe(s.cores, s.M), {{s.K, s.M}, b_shape},
                                    {s.N, s.M}, -128, 127);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_GE(int8_matmul_count(r.program, Opcode::MATMUL, DType::I8), 1);
    EXPECT_EQ(int8_matmul_count(r.program, Opcode::MATMUL, DType::F16), 0);
    EXPECT_EQ(r.stats.pe_macs, int64_t(s.K) * s.N * s.M);
    EXPECT_EQ(r.program.num_cores, s.cores);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Int8Matmul,
                         ::testing::Values(Int8MatmulShape{"sticks", 256, 128, 16, 1, false},
                                           Int8MatmulShape{"part_sticks", 100, 200, 7, 1, false},
                                           Int8MatmulShape{"rows_over_4c", 128, 256, 64, 4, false},
                                           Int8MatmulShape{"b_sticked_on_k", 128, 128, 8, 1, true},
                                           Int8MatmulShape{"one_row", 300, 128, 1, 1, false}),
                         [](const auto &info) { return info.param.name; });

// An int8 MATMUL takes 1 / pe_int8_rate_factor of the time of the fp16 one of the same extents
// (padded to sticks of its own type: 128 elements).
TEST(Int8MatmulTiming, RateFactorOfTheMachineDescription) {
    MatmulDesc d;
    d.m = 64, d.n = 256, d.k = 256;
    MachineDesc m;
    EXPECT_DOUBLE_EQ(matmul_cycles(d, m, DType::I8) * m.pe_int8_rate_factor, matmul_cycles(d, m, DType::F16));
    m.pe_int8_rate_factor = 4.0;
    EXPECT_DOUBLE_EQ(matmul_cycles(d, m, DType::I8) * 4.0, matmul_cycles(d, m, DType::F16));
    d.n = 100, d.k = 100;  // 128 each in int8 sticks, 128 in fp16 sticks too (64 x 2)
    EXPECT_EQ(matmul_padded_macs(d, m, DType::I8), int64_t(64) * 128 * 128);
    d.n = 130;  // 256 in int8 sticks, 192 in fp16 sticks
    EXPECT_EQ(matmul_padded_macs(d, m, DType::I8), int64_t(64) * 256 * 128);
    EXPECT_EQ(matmul_padded_macs(d, m, DType::F16), int64_t(64) * 192 * 128);
}

TEST(Int8MatmulErrors, AnInt8ProductIntoAFloatAccumulatorNamesTheForms) {
    auto alg = [] {
        Kernel k;
        ImageParam a(Int(8), 2, "a"), b(Int(8), 2, "b");
        Var n("n"), m("m");
        RDom r(0, 128, "k");
        Func c("fmm");
        c(n, m) = 0.0f;
        c(n, m) += cast<float>(a(r, m)) * cast<float>(b(n, r));
        k.inputs = {a, b};
        k.output = c;
        k.vars = {{"n", n}, {"m", m}};
        return k;
    };
    try {
        run_differential(alg, on_pe(), {{128, 8}, {128, 128}}, {128, 8}, -128, 127);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("Func fmm"), std::string::npos) << msg;
        EXPECT_NE(msg.find("pe_matmul: operands must be float16 values widened to float32"), std::string::npos) << msg;
        EXPECT_NE(msg.find("i32(A(k, m)) * i32(B(n, k)) of int8 A and B"), std::string::npos) << msg;
    }
}

}  // namespace
}  // namespace spyre::testing
