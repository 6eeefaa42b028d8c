// Loop summaries of timing-only runs agree with exact timing on the hand-built programs: the softmax
// stages (whose LX-resident loops issue vector work with no WAIT inside the loop body) and the
// full-size 32-core batched matmul.
#include <gtest/gtest.h>

#include "bmm_program.h"
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

}  // namespace
}  // namespace spyre
