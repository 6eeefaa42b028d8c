// Batched matmul split over cores by batch then N, on the PE array and on the vector unit, matches
// Halide's CPU realisation exactly (fp16 products are exact in fp32; both sides add in k order).
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"
#include "matmul.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct BmmCase {
    std::string schedule;
    int batch, rows, inner, cols, cores;
};

class Bmm : public ::testing::TestWithParam<BmmCase> {};

TEST_P(Bmm, MatchesCpu) {
    BmmCase c = GetParam();
    auto alg = [=] {
        MatmulKernel mk = make_bmm(c.batch, c.rows, c.inner, c.cols);
        Kernel k;
        k.inputs = {mk.a, mk.w};
        k.output = mk.out;
        k.funcs = {{"acc", mk.acc}};
        return k;
    };
    DiffResult r = run_differential(
        alg,
        [=](Kernel &k) {
            MatmulKernel mk;
            mk.batch = c.batch, mk.rows = c.rows, mk.inner = c.inner, mk.cols = c.cols;
            mk.a = k.inputs[0], mk.w = k.inputs[1], mk.out = k.output, mk.acc = k.funcs["acc"];
            mk.n = Var("n"), mk.m = Var("m"), mk.b = Var("b");
            mk.k = RDom(0, c.inner, "k");  // schedules name RVars: the same "k$x" as the algorithm's
            schedule_bmm(mk, c.schedule, c.cores);
        },
        {{c.inner, c.rows, c.batch}, {c.cols, c.inner}}, {c.cols, c.rows, c.batch}, -2, 2);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, c.cores);
    if (c.schedule == "pe") {
        EXPECT_EQ(r.stats.pe_macs, int64_t(c.batch) * c.rows * c.inner * c.cols);
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Bmm,
                         ::testing::Values(BmmCase{"pe", 2, 64, 128, 256, 8}, BmmCase{"vector", 2, 64, 128, 256, 8},
                                           BmmCase{"pe", 1, 1, 64, 64, 1}, BmmCase{"pe", 4, 32, 1024, 512, 32}),
                         [](const auto &info) {
                             const BmmCase &c = info.param;
                             return c.schedule + "_" + std::to_string(c.batch) + "x" + std::to_string(c.rows) + "x" +
                                    std::to_string(c.inner) + "x" + std::to_string(c.cols) + "_" + std::to_string(c.cores) + "c";
                         });

}  // namespace
}  // namespace spyre::testing

namespace spyre::testing {
namespace {

// A linear layer (x W + b) on the PE array, rows split over 4 cores.
TEST(Linear, MatchesCpu) {
    const int M = 64, K = 192, N = 256;
    std::shared_ptr<MatmulKernel> inst;
    DiffResult r = run_differential(
        [&] {
            inst = std::make_shared<MatmulKernel>(make_linear(M, K, N));
            Kernel k;
            k.inputs = {inst->a, inst->w, inst->bias};
            k.output = inst->out;
            k.funcs = {{"acc", inst->acc}};
            return k;
        },
        [&](Kernel &) { schedule_bmm(*inst, "pe", 4); },
        {{K, M, 1}, {N, K}, {N}}, {N, M, 1}, -2, 2);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.stats.pe_macs, int64_t(M) * K * N);
}

// 3 batches of N = 100 do not divide over 32 cores in whole sticks: the stage takes the most cores
// that do (24: 8 per batch, each 8 of the 64 rows), and still matches the CPU.
TEST(BmmSplits, AShapeThatDoesNotDivideUsesFewerCores) {
    const int B = 3, M = 64, K = 128, N = 100;
    std::shared_ptr<MatmulKernel> inst;
    DiffResult r = run_differential(
        [&] {
            inst = std::make_shared<MatmulKernel>(make_bmm(B, M, K, N));
            Kernel k;
            k.inputs = {inst->a, inst->w};
            k.output = inst->out;
            k.funcs = {{"acc", inst->acc}};
            return k;
        },
        [&](Kernel &) { schedule_bmm(*inst, "pe", 32); },
        {{K, M, B}, {N, K}}, {N, M, B}, -2, 2);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, 24);
}

TEST(BmmErrors, MoreCoresThanTheMachineHas) {
    try {
        MatmulKernel k = make_bmm(2, 64, 128, 128);
        schedule_bmm(k, "pe", 33);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("bmm: 33 cores requested, the machine has 32"), std::string::npos)
            << e.what();
    }
}


}  // namespace
}  // namespace spyre::testing
