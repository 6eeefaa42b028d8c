// Loop summaries of timing-only runs agree with exact timing on the hand-built programs: the softmax
// stages (whose LX-resident loops issue vector work with no WAIT inside the loop body), the
// full-size 32-core batched matmul, and a triangular loop nest (an inner loop counted by a register
// that grows with the outer loop, as causal attention's key tiles do), whose outer loop is never
// summarised.
#include <gtest/gtest.h>

#include "bmm_program.h"
#include "device/program_builder.h"
#include "sim/simulator.h"
#include "softmax_stages.h"

namespace spyre {
namespace {

SimStats run(const DeviceProgram &p, bool summarize) {
    SimOptions o;
    o.timing_only = true;
    o.summarize_loops = summarize;
    return simulate(p, MachineDesc{}, {}, o).stats;
}

class SoftmaxSummary : public ::testing::TestWithParam<int> {};

TEST_P(SoftmaxSummary, AgreesWithExactTiming) {
    DeviceProgram p = build_softmax_stage(GetParam());
    SimStats exact = run(p, false), summ = run(p, true);
    EXPECT_NEAR(summ.cycles / exact.cycles, 1.0, 0.02) << "summarised " << summ.us << " us, exact " << exact.us;
    EXPECT_EQ(summ.instructions, exact.instructions);
    EXPECT_EQ(summ.vector_sticks, exact.vector_sticks);
    EXPECT_EQ(summ.dram_read_bytes, exact.dram_read_bytes);
    EXPECT_LE(summ.busy_fraction(0, kEngVector), 1.0 + 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Stages, SoftmaxSummary, ::testing::Values(1, 2, 3, 4));

TEST(BmmSummary, AgreesWithExactTiming) {
    DeviceProgram p = build_bmm(BmmShape{});
    SimStats exact = run(p, false), summ = run(p, true);
    EXPECT_GT(summ.summarised_iterations, 0);
    EXPECT_NEAR(summ.cycles / exact.cycles, 1.0, 0.02);
    EXPECT_EQ(summ.pe_macs, exact.pe_macs);
    EXPECT_EQ(summ.dram_read_bytes, exact.dram_read_bytes);
}

TEST(TriangularSummary, OuterLoopRunsEveryInnerCount) {
    // for i in [0, 40): for j in [0, i / 4): one vector op; the work per outer iteration is constant
    // for four iterations at a time, then grows.
    ProgramBuilder b("triangle", 1);
    Reg i = b.alloc(), n = b.alloc(), four = b.alloc(), j = b.alloc();
    b.loop(i, 40);
    b.mov(n, i);
    b.li(four, 4);
    b.op3(Opcode::DIV, n, n, four);
    b.loop(j, 0, n);
    b.vfill(DType::F32, 0, Lx(0), 0.0f, 64, 1);
    b.wait(1u << 0);
    b.end_loop();
    b.end_loop();
    DeviceProgram p = b.finish();
    SimStats exact = run(p, false), summ = run(p, true);
    EXPECT_EQ(summ.vector_sticks, exact.vector_sticks);  // 64 x (0 + ... + 9) x 4
    EXPECT_EQ(exact.vector_sticks, 64 * 4 * 45);
    EXPECT_NEAR(summ.cycles / exact.cycles, 1.0, 0.02);
}

}  // namespace
}  // namespace spyre
