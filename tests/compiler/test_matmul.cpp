// Matmul (C = A x B, fp16 operands, fp32 accumulation, fp16 result) compiled with pe_matmul runs on
// the PE array (MATMUL instructions) and without it on the vector unit; both match Halide's CPU
// realisation exactly (fp16 products are exact in fp32 and both sides add in k order), at shapes
// whose K, N and M are not whole sticks, and for a single row.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"
#include "matmul.h"

namespace spyre::testing {
namespace {

using namespace Halide;

Algorithm matmul(int K) {
    return [=] {
        Kernel k;
        ImageParam a(Float(16), 2, "a"), b(Float(16), 2, "b");
        Var n("n"), m("m");
        RDom r(0, K, "k");
        Func c("acc"), out("mm");
        c(n, m) = 0.0f;
        c(n, m) += cast<float>(a(r, m)) * cast<float>(b(n, r));
        out(n, m) = cast<float16_t>(c(n, m));
        k.inputs = {a, b};
        k.output = out;
        k.funcs = {{"c", c}};
        k.vars = {{"n", n}, {"m", m}};
        return k;
    };
}

int matmul_count(const DeviceProgram &p, Opcode op) {
    int c = 0;
    for (const Instr &in : p.code) c += in.op == op;
    return c;
}

struct MatmulShape {
    int K, N, M;
};

class Matmul : public ::testing::TestWithParam<MatmulShape> {};

TEST_P(Matmul, PeArrayMatchesCpu) {
    MatmulShape s = GetParam();
    DiffResult r = run_differential(
        matmul(s.K),
        [&](Kernel &k) {
            Func c = k.funcs["c"];
            RVar rk(c.update(0).get_schedule().rvars()[0].var);
            spyre::schedule(c).scratchpad_root().stick_vectorize(k.vars["n"]).pe_matmul(rk);
            spyre::schedule(k.output).stick_vectorize(k.vars["n"]);
        },
        {{s.K, s.M}, {s.N, s.K}}, {s.N, s.M}, -2, 2);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    EXPECT_GE(matmul_count(r.program, Opcode::MATMUL), 1);
    EXPECT_EQ(r.stats.pe_macs, int64_t(s.K) * s.N * s.M);
}

TEST_P(Matmul, VectorUnitMatchesCpu) {
    MatmulShape s = GetParam();
    DiffResult r = run_differential(
        matmul(s.K),
        [&](Kernel &k) {
            Func c = k.funcs["c"];
            spyre::schedule(c).scratchpad_root().stick_vectorize(k.vars["n"]);
            c.update().vectorize(k.vars["n"], 64, TailStrategy::RoundUp);  // whole fp16 sticks of b
            spyre::schedule(k.output).stick_vectorize(k.vars["n"]);
        },
        {{s.K, s.M}, {s.N, s.K}}, {s.N, s.M}, -2, 2);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(matmul_count(r.program, Opcode::MATMUL), 0);
}

// Q K^T: both operands are sticked on the reduction (d); the PE array needs B sticked on n, so
// the back end restickifies K's tile (VTRANSPOSE, at the restickify rate) before each MATMUL.
Algorithm scores(int D) {
    return [=] {
        Kernel k;
        ImageParam q(Float(16), 2, "q"), kk(Float(16), 2, "keys");
        Var s2("s2"), s1("s1");
        RDom r(0, D, "d");
        Func c("qk"), out("scores");
        c(s2, s1) = 0.0f;
        c(s2, s1) += cast<float>(q(r, s1)) * cast<float>(kk(r, s2));
        out(s2, s1) = cast<float16_t>(c(s2, s1));
        k.inputs = {q, kk};
        k.output = out;
        k.funcs = {{"c", c}};
        k.vars = {{"n", s2}, {"m", s1}};
        return k;
    };
}

TEST_P(Matmul, RestickifiesBStickedOnK) {
    MatmulShape s = GetParam();  // K = head dim, N = keys, M = queries
    DiffResult r = run_differential(
        scores(s.K),
        [&](Kernel &k) {
            Func c = k.funcs["c"];
            RVar rk(c.update(0).get_schedule().rvars()[0].var);
            spyre::schedule(c).scratchpad_root().stick_vectorize(k.vars["n"]).pe_matmul(rk);
            spyre::schedule(k.output).stick_vectorize(k.vars["n"]);
        },
        {{s.K, s.M}, {s.K, s.N}}, {s.N, s.M}, -2, 2);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    EXPECT_GE(matmul_count(r.program, Opcode::VTRANSPOSE), 1);
    EXPECT_GE(matmul_count(r.program, Opcode::MATMUL), 1);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Matmul,
                         ::testing::Values(MatmulShape{64, 64, 64}, MatmulShape{100, 100, 7}, MatmulShape{130, 70, 33}, MatmulShape{64, 128, 1}),
                         [](const auto &info) {
                             return std::to_string(info.param.K) + "x" + std::to_string(info.param.N) + "x" +
                                    std::to_string(info.param.M);
                         });

// K split into 512-element panels before pe_matmul, as a 14336-wide down projection needs to fit
// LX: split(k, ko, ki, 512) then pe_matmul(ki), with ko left where Halide's split puts it (inside
// the pure loops) or reordered outside by hand. pe_matmul moves ko outside the (k, n, m) nest; both
// match the CPU bit for bit and run the same program.
TEST(KPanels, SplitBeforePeMatmulMatchesCpuWhereverThePanelLoopIs) {
    const int K = 3584, N = 256, M = 64;
    std::vector<double> us;
    for (bool by_hand : {false, true}) {
        DiffResult r = run_differential(
            matmul(K),
            [&](Kernel &k) {
                Func c = k.funcs["c"];
                RVar rk(c.update(0).get_schedule().rvars()[0].var), ko("ko"), ki("ki");
                c.update().split(rk, ko, ki, 512);
                if (by_hand) c.update().reorder(ki, k.vars["n"], k.vars["m"], ko);
                spyre::schedule(c).scratchpad_root().stick_vectorize(k.vars["n"]).pe_matmul(ki);
                spyre::schedule(k.output).stick_vectorize(k.vars["n"]);
            },
            {{K, M}, {N, K}}, {N, M}, -2, 2);
        EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
        EXPECT_EQ(r.stats.pe_macs, int64_t(K) * N * M);
        us.push_back(r.stats.us);
    }
    EXPECT_EQ(us[0], us[1]);
}

}  // namespace
}  // namespace spyre::testing

namespace spyre::testing {
namespace {

// A whose rows run along m (sticked on m, not on the reduction) has no PE form: a compile error
// naming the Func and the directive, not a silent fallback.
TEST(MatmulErrors, OperandNotStickedOnK) {
    ImageParam a(Float(16), 2, "a_t"), b(Float(16), 2, "b");
    Var n("n"), m("m");
    RDom r(0, 64, "k");
    Func c("acc_t"), out("mm_t");
    c(n, m) = 0.0f;
    c(n, m) += cast<float>(a(m, r)) * cast<float>(b(n, r));  // both operands sticked on their non-k dims
    out(n, m) = cast<float16_t>(c(n, m));
    spyre::schedule(c).scratchpad_root().stick_vectorize(n).pe_matmul(r.x);
    spyre::schedule(out).stick_vectorize(n);
    CompileOptions o;
    o.inputs = {TensorSpec{{64, 64}, {}}, TensorSpec{{64, 64}, {}}};
    o.output = TensorSpec{{64, 64}, {}};
    std::string msg = error_of([&] { compile_for_spyre(out, {a, b}, o); });
    EXPECT_NE(msg.find("Func acc_t: pe_matmul"), std::string::npos) << msg;
}

TEST(MatmulErrors, PeMatmulNeedsAnUpdate) {
    ImageParam a(Float(16), 2, "a");
    Var n("n"), m("m");
    Func c("no_update");
    c(n, m) = cast<float>(a(n, m));
    RDom r(0, 4, "k");
    std::string msg = error_of([&] { spyre::schedule(c).pe_matmul(r.x); });
    EXPECT_NE(msg.find("Func no_update: pe_matmul(k.x): needs an update definition"), std::string::npos) << msg;
}

}  // namespace
}  // namespace spyre::testing

namespace spyre::testing {
namespace {

// Split-K: the reduction over K is divided over 32 cores, each core multiplies its share on its
// PE array into a partial kept in its LX, and one RING_REDUCE combines the partials.
TEST(SplitK, PartialsCombinedOnTheRing) {
    const int K = 4096, N = 128, M = 64;
    DiffResult r = run_differential(
        matmul(K),
        [&](Kernel &k) {
            Func c = k.funcs["c"];
            RVar rk(c.update(0).get_schedule().rvars()[0].var);
            spyre::schedule(c).scratchpad_root().ring_split_reduction(rk, 32, K, /*on_pe=*/true);
            spyre::schedule(k.output).stick_vectorize(k.vars["n"]);
        },
        {{K, M}, {N, K}}, {N, M}, -1, 1);
    // Partial sums are added in core order rather than in one left-to-right pass, so fp32 roundings
    // differ slightly; after fp16 rounding that is at most one fp16 ULP of the largest outputs
    // (|out| < 64 here: 2^-5), which near zero is many ULPs: the bound is absolute.
    EXPECT_LE(r.cmp.max_abs_error, 0.03125) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, 32);
    EXPECT_EQ(matmul_count(r.program, Opcode::RING_REDUCE), 1);
    EXPECT_GE(matmul_count(r.program, Opcode::MATMUL), 1);
    EXPECT_EQ(r.stats.pe_macs, int64_t(K) * N * M);
}


}  // namespace
}  // namespace spyre::testing
