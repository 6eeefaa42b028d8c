// The MLP block (linear, gelu, linear) with the pointwise stage following the matmul's core split
// in LX, through device memory with the same split, or through device memory with a split of its
// own, matches Halide's CPU realisation. The
// matmuls and bias adds are exact; tanh is the C library's on both sides; the bound is absolute
// (outputs near zero make ULPs meaningless), 1e-3 for outputs of magnitude about 1.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "mlp.h"

namespace spyre::testing {
namespace {

struct MlpCase {
    std::string schedule;
    int dim, hidden, rows, cores;
};

class Mlp : public ::testing::TestWithParam<MlpCase> {};

TEST_P(Mlp, MatchesCpu) {
    MlpCase c = GetParam();
    std::shared_ptr<MlpKernel> inst;
    DiffResult r = run_differential(
        [&] {
            inst = std::make_shared<MlpKernel>(make_mlp(c.dim, c.hidden, c.rows));
            Kernel k;
            k.inputs = {inst->x, inst->w1, inst->b1, inst->w2, inst->b2};
            k.output = inst->out;
            k.funcs = {{"acc1", inst->acc1}, {"h", inst->h}, {"acc2", inst->acc2}};
            return k;
        },
        [&](Kernel &) { schedule_mlp(*inst, c.schedule, c.cores); },
        {{c.dim, c.rows}, {c.hidden, c.dim}, {c.hidden}, {c.dim, c.hidden}, {c.dim}}, {c.dim, c.rows}, -0.25f, 0.25f);
    EXPECT_LE(r.cmp.max_abs_error, 1e-3) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, c.cores);
    EXPECT_EQ(r.stats.pe_macs, 2 * int64_t(c.dim) * c.hidden * c.rows);
    // pe_ring's tiles fit LX whole at these sizes: the loads outside any pipeline are shared.
    if (c.schedule == "pe_ring") {
        EXPECT_GT(r.stats.ring_bytes, 0);
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Mlp,
                         ::testing::Values(MlpCase{"matched", 64, 256, 64, 1}, MlpCase{"dram", 64, 256, 64, 1},
                                           MlpCase{"single_split", 64, 256, 64, 1}, MlpCase{"matched", 128, 512, 256, 4},
                                           MlpCase{"dram", 128, 512, 256, 4}, MlpCase{"single_split", 128, 512, 256, 4},
                                           MlpCase{"tiled", 128, 512, 256, 4}, MlpCase{"pe_ring", 128, 512, 256, 4},
                                           MlpCase{"pe_ring", 256, 2048, 64, 8}),
                         [](const auto &info) {
                             const MlpCase &c = info.param;
                             return c.schedule + "_" + std::to_string(c.dim) + "x" + std::to_string(c.hidden) + "x" +
                                    std::to_string(c.rows) + "_" + std::to_string(c.cores) + "c";
                         });

}  // namespace
}  // namespace spyre::testing
