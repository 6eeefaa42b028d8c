// Softmax compiled from the Halide algorithm with each named schedule matches Halide's CPU
// realisation (exp differs by at most a couple of fp16 ULPs between Halide's exp and ours), at
// the calibration shape and at shapes that are not whole sticks.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "softmax.h"

namespace spyre::testing {
namespace {

using namespace Halide;

Algorithm softmax_alg(int cols, int rows, int dim = 1) {
    return [=] {
        SoftmaxKernel sk = make_softmax(cols, rows, dim);
        Kernel k;
        k.inputs = {sk.in};
        k.output = sk.out;
        k.funcs = {{"mx", sk.mx}, {"t", sk.t}, {"e", sk.e}, {"s", sk.s}};
        return k;
    };
}

Schedule softmax_sched(const std::string &name, int cols, int rows, int cores, int dim = 1) {
    return [=](Kernel &k) {
        SoftmaxKernel sk;
        sk.in = k.inputs[0];
        sk.out = k.output;
        sk.mx = k.funcs["mx"], sk.t = k.funcs["t"], sk.e = k.funcs["e"], sk.s = k.funcs["s"];
        sk.x = Var("x"), sk.y = Var("y");
        sk.cols = cols, sk.rows = rows, sk.dim = dim;
        schedule_softmax(sk, name, MachineDesc{}, cores);
    };
}

struct SoftmaxCase {
    std::string schedule;
    int cols, rows;
    int cores = 1;
};

class SoftmaxSchedules : public ::testing::TestWithParam<SoftmaxCase> {};

TEST_P(SoftmaxSchedules, MatchesCpu) {
    SoftmaxCase c = GetParam();
    DiffResult r = run_differential(softmax_alg(c.cols, c.rows), softmax_sched(c.schedule, c.cols, c.rows, c.cores),
                                    {{c.cols, c.rows}}, {c.cols, c.rows});
    EXPECT_LE(r.cmp.max_ulp, 2) << r.cmp.first_mismatch;
    EXPECT_TRUE(meets_channel_floor(r));
    EXPECT_EQ(r.program.num_cores, c.schedule == "cores32" ? 32 : c.cores);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SoftmaxSchedules,
                         ::testing::Values(SoftmaxCase{"stage1", 1024, 512}, SoftmaxCase{"stage2", 1024, 512},
                                           SoftmaxCase{"stage3", 1024, 512}, SoftmaxCase{"stage4", 1024, 512},
                                           SoftmaxCase{"cores32", 1024, 512}, SoftmaxCase{"stage1", 1000, 128},
                                           SoftmaxCase{"stage3", 100, 128}, SoftmaxCase{"stage4", 1000, 128},
                                           SoftmaxCase{"cores32", 1000, 2048}, SoftmaxCase{"stage1", 1024, 2048, 32},
                                           SoftmaxCase{"stage2", 1024, 2048, 32}, SoftmaxCase{"stage3", 64, 2048, 32}, SoftmaxCase{"stage3", 1024, 2048, 32},
                                           SoftmaxCase{"stage4", 1000, 2048, 32}, SoftmaxCase{"stage1", 100, 1},
                                           // Wide rows: tiles shrink to fit LX; 1151 rows split unevenly.
                                           SoftmaxCase{"stage4", 8192, 40}, SoftmaxCase{"cores32", 8192, 1151},
                                           // Rows that are not whole tiles of 64.
                                           SoftmaxCase{"stage1", 64, 70}, SoftmaxCase{"stage2", 64, 70}, SoftmaxCase{"stage3", 130, 100}),
                         [](const auto &info) {
                             return info.param.schedule + "_" + std::to_string(info.param.cols) + "x" +
                                    std::to_string(info.param.rows) + "_" + std::to_string(info.param.cores) + "c";
                         });

// torch.softmax(x, dim=0), the kernel of IBM's single-core table (SPYRE_FACTS.md): each named
// schedule, on one core at the table's shape and at shapes that are not whole sticks, and with the
// columns split over cores (at most one core per stick of columns).
class SoftmaxDim0Schedules : public ::testing::TestWithParam<SoftmaxCase> {};

TEST_P(SoftmaxDim0Schedules, MatchesCpu) {
    SoftmaxCase c = GetParam();
    DiffResult r = run_differential(softmax_alg(c.cols, c.rows, 0), softmax_sched(c.schedule, c.cols, c.rows, c.cores, 0),
                                    {{c.cols, c.rows}}, {c.cols, c.rows});
    EXPECT_LE(r.cmp.max_ulp, 2) << r.cmp.first_mismatch;
    // Stage 4 splits the column sticks over the most cores up to the request that divide them.
    const int sticks = (c.cols + 63) / 64;
    int cores = std::min(c.schedule == "cores32" ? 32 : c.cores, sticks);
    while (sticks % cores) cores--;
    EXPECT_EQ(r.program.num_cores, c.schedule == "stage4" || c.schedule == "cores32" ? cores : 1);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SoftmaxDim0Schedules,
                         ::testing::Values(SoftmaxCase{"stage1", 1024, 512}, SoftmaxCase{"stage2", 1024, 512},
                                           SoftmaxCase{"stage3", 1024, 512}, SoftmaxCase{"stage4", 1024, 512},
                                           SoftmaxCase{"cores32", 1024, 512}, SoftmaxCase{"stage4", 1024, 512, 4},
                                           SoftmaxCase{"stage1", 128, 7}, SoftmaxCase{"stage2", 192, 33},
                                           SoftmaxCase{"stage3", 1000, 33}, SoftmaxCase{"stage4", 130, 70, 3},
                                           SoftmaxCase{"stage4", 192, 16, 2},
                                           SoftmaxCase{"cores32", 4096, 64}, SoftmaxCase{"cores32", 1000, 300}),
                         [](const auto &info) {
                             return info.param.schedule + "_" + std::to_string(info.param.cols) + "x" +
                                    std::to_string(info.param.rows) + "_" + std::to_string(info.param.cores) + "c";
                         });

TEST(SoftmaxDim, OtherThanZeroOrOneIsRefusedByName) {
    EXPECT_NE(error_of([] { make_softmax(64, 8, 2); }).find("softmax: dim 2 is not a dim"), std::string::npos);
}

}  // namespace
}  // namespace spyre::testing
