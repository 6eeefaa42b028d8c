// A decoder's whole MLP block as one pipeline (RMSNorm, SwiGLU, residual add; schedules/mlp_block.h)
// against Halide's CPU realisation: by the hand schedule (the norm in device memory, two matmul
// stages) and by spyre::auto_schedule, which composes the same kinds of choice: the norm planned
// as a pipeline of its own by the rows family, the projections as matmul stages on the PE array.
// Before that composition auto put every matmul of it on the vector unit (750 ms at 64 x 4096 x
// 14336, about 320 times its speed of light). The bound is absolute, as test_gated_mlp's.
#include <gtest/gtest.h>

#include "auto_schedule.h"
#include "compiler_test_util.h"
#include "mlp_block.h"

namespace spyre::testing {
namespace {

struct MlpBlockCase {
    int dim, hidden, rows, cores;
};

Algorithm mlp_block_algorithm(const MlpBlockCase &c, std::shared_ptr<MlpBlockKernel> &inst) {
    return [&inst, c] {
        inst = std::make_shared<MlpBlockKernel>(make_mlp_block(c.dim, c.hidden, c.rows));
        Kernel k;
        k.inputs = inst->inputs();
        k.output = inst->out;
        k.funcs = {{"ss", inst->ss}, {"normed", inst->normed}, {"gate", inst->gate},
                   {"up", inst->up},  {"h", inst->h},           {"down", inst->down}};
        return k;
    };
}

std::vector<std::vector<int>> block_inputs(const MlpBlockCase &c) {
    return {{c.dim, c.rows}, {c.dim}, {c.hidden, c.dim}, {c.hidden, c.dim}, {c.dim, c.hidden}};
}

class MlpBlock : public ::testing::TestWithParam<MlpBlockCase> {};

TEST_P(MlpBlock, HandAndAutoMatchCpuAndAutoIsNoSlower) {
    const MlpBlockCase c = GetParam();
    std::shared_ptr<MlpBlockKernel> inst;
    const DiffResult hand = run_differential(
        mlp_block_algorithm(c, inst), [&](Kernel &) { schedule_mlp_block(*inst, "stages", c.cores); }, block_inputs(c),
        {c.dim, c.rows}, -0.25f, 0.25f);
    EXPECT_LE(hand.cmp.max_abs_error, 2e-3) << hand.cmp.first_mismatch;
    EXPECT_EQ(hand.stats.pe_macs, 3 * int64_t(c.dim) * c.hidden * c.rows);

    AutoResult chosen;
    const DiffResult a = run_differential(
        mlp_block_algorithm(c, inst),
        [&](Kernel &k) {
            CompileOptions o;
            for (const auto &s : inst->input_shapes()) o.inputs.push_back(TensorSpec{s, {}});
            o.output = TensorSpec{inst->output_shape(), {}};
            AutoOptions ao;
            ao.max_evaluations = 48;
            ao.max_cores = c.cores;
            ao.progress = false;
            chosen = auto_schedule(k.output, k.inputs, o, ao);
        },
        block_inputs(c), {c.dim, c.rows}, -0.25f, 0.25f);
    EXPECT_LE(a.cmp.max_abs_error, 2e-3) << a.cmp.first_mismatch << "\n" << chosen.cpp;
    // At a few rows a rows schedule whose cores each take the whole weights (shared loads, which
    // cross device memory once) can beat the matmul family; when the matmul family wins, its norm
    // is planned by the rows family.
    if (chosen.family == "matmul") {
        EXPECT_NE(chosen.summary.find(" pre=(rows"), std::string::npos) << "the norm planned by the rows family: "
                                                                         << chosen.summary;
    }
    EXPECT_EQ(a.stats.pe_macs, 3 * int64_t(c.dim) * c.hidden * c.rows) << "every product on the PE array";
    EXPECT_LE(a.stats.us, hand.stats.us) << chosen.summary;
}

INSTANTIATE_TEST_SUITE_P(Shapes, MlpBlock,
                         ::testing::Values(MlpBlockCase{256, 512, 64, 8}, MlpBlockCase{128, 384, 20, 4}),
                         [](const auto &info) {
                             const MlpBlockCase &c = info.param;
                             return std::to_string(c.dim) + "x" + std::to_string(c.hidden) + "x" + std::to_string(c.rows) +
                                    "_" + std::to_string(c.cores) + "c";
                         });

}  // namespace
}  // namespace spyre::testing
