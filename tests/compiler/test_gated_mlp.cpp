// The gated MLP block (SwiGLU: silu(x W1) * (x W3), then W2) with a stage per matmul over the cores,
// the gate and up accumulators side by side in LX, with and without ring-shared panels, matches
// Halide's CPU realisation. The matmuls are exact; exp is the C library's on both sides; the bound
// is absolute (outputs near zero make ULPs meaningless).
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"
#include "gated_mlp.h"

namespace spyre::testing {
namespace {

struct GatedMlpCase {
    std::string schedule;
    int dim, hidden, rows, cores;
    // 0: the default machine. The two smaller ones leave the tiles' epilogue (silu * up) no room
    // for its temporaries over a whole tile, so instruction selection streams them in chunks.
    int64_t lx_usable = 0;
};

MachineDesc machine(const GatedMlpCase &c) {
    MachineDesc m;
    if (c.lx_usable) m.lx_usable_bytes = c.lx_usable;
    return m;
}

class GatedMlp : public ::testing::TestWithParam<GatedMlpCase> {};

TEST_P(GatedMlp, MatchesCpu) {
    GatedMlpCase c = GetParam();
    std::shared_ptr<GatedMlpKernel> inst;
    DiffResult r = run_differential(
        [&] {
            inst = std::make_shared<GatedMlpKernel>(make_gated_mlp(c.dim, c.hidden, c.rows));
            Kernel k;
            k.inputs = {inst->x, inst->w1, inst->w3, inst->w2};
            k.output = inst->out;
            k.funcs = {{"gate", inst->gate}, {"up", inst->up}, {"h", inst->h}, {"down", inst->down}};
            return k;
        },
        [&](Kernel &) { schedule_gated_mlp(*inst, c.schedule, c.cores, machine(c)); },
        {{c.dim, c.rows}, {c.hidden, c.dim}, {c.hidden, c.dim}, {c.dim, c.hidden}}, {c.dim, c.rows}, -0.25f, 0.25f,
        machine(c));
    EXPECT_LE(r.cmp.max_abs_error, 1e-3) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, c.cores);
    EXPECT_EQ(r.stats.pe_macs, 3 * int64_t(c.dim) * c.hidden * c.rows);
    if (c.schedule == "pe_ring") {
        EXPECT_GT(r.stats.ring_bytes, 0);
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GatedMlp,
                         ::testing::Values(GatedMlpCase{"tiled", 128, 512, 64, 4}, GatedMlpCase{"pe_ring", 128, 512, 64, 4},
                                           GatedMlpCase{"pe_ring", 256, 1024, 64, 8}, GatedMlpCase{"tiled", 64, 256, 64, 1},
                                           GatedMlpCase{"tiled", 128, 512, 64, 4, 80000}, GatedMlpCase{"pe_ring", 128, 512, 64, 4, 120000}),
                         [](const auto &info) {
                             const GatedMlpCase &c = info.param;
                             return c.schedule + "_" + std::to_string(c.dim) + "x" + std::to_string(c.hidden) + "x" +
                                    std::to_string(c.rows) + "_" + std::to_string(c.cores) + "c" +
                                    (c.lx_usable ? "_lx" + std::to_string(c.lx_usable) : "");
                         });

TEST(GatedMlpErrors, UnknownScheduleListsTheKnownOnes) {
    GatedMlpKernel k = make_gated_mlp(64, 256, 64);
    try {
        schedule_gated_mlp(k, "nosuch");
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("nosuch"), std::string::npos) << msg;
        EXPECT_NE(msg.find("tiled"), std::string::npos) << msg;
    }
}

}  // namespace
}  // namespace spyre::testing
