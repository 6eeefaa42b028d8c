// IBM's cost formula (backend/sim/ibm_formula.h), term by term against values computed by hand
// from SPYRE_FACTS.md's rows (tests/calibration/test_ibm_formula_points.cpp reads programs).
#include <gtest/gtest.h>

#include <cmath>

#include "sim/ibm_formula.h"

namespace spyre {
namespace {

TEST(IbmFormula, CopyOfNBytesAt32CoresIsTheChannelLaw) {
    const MachineDesc m;
    const double n = 32.0 * 1024 * 1024;
    IbmKernel k;
    k.cores = 32;
    k.read_bytes = k.write_bytes = n;
    const IbmFormula f = ibm_formula(k, m);
    EXPECT_NEAR(f.total_ns, 2 * n / 150.0 + 0.00574 * n, 1e-6 * f.total_ns);
    // IBM's balanced copy: ~105 GB/s; write-only: the 150 GB/s peak.
    EXPECT_NEAR(2 * n / f.total_ns, 104.86, 0.01);
    EXPECT_DOUBLE_EQ(ibm_channel_ns(0, n, m), n / 150.0);
    EXPECT_DOUBLE_EQ(f.compute_ns, 0);
    EXPECT_DOUBLE_EQ(f.overlap_lo_ns, f.overlap_hi_ns);
}

TEST(IbmFormula, RowReductionRateFallsWithRowsAndFewerCores) {
    const MachineDesc m;
    EXPECT_DOUBLE_EQ(ibm_row_reduction_rate(1024, 32, m), 150.0);  // 114 + 61 e^-0.28 = 160 -> peak
    EXPECT_NEAR(ibm_row_reduction_rate(4096, 32, m), 114 + 61 * std::exp(-4096 / 3700.0), 1e-9);
    EXPECT_NEAR(ibm_row_reduction_rate(16384, 32, m), 114.73, 0.01);
    const double r32 = ibm_row_reduction_rate(4096, 32, m);
    EXPECT_NEAR(ibm_row_reduction_rate(4096, 1, m), 0.11 * r32, 1e-9);
    EXPECT_NEAR(ibm_row_reduction_rate(4096, 4, m), 0.43 * r32, 1e-9);
    // Between the measured counts, log-linear: 3 cores between 2 (0.22) and 4 (0.43).
    EXPECT_NEAR(ibm_row_reduction_rate(4096, 3, m), (0.22 + 0.21 * std::log2(1.5)) * r32, 1e-9);
}

TEST(IbmFormula, ColumnReductionAndRestickifyAreFlatRates) {
    const MachineDesc m;
    IbmKernel k;
    k.cores = 32;
    k.read_bytes = 1e6;
    k.write_bytes = 1e3;
    k.kind = IbmKernelKind::ColumnReduction;
    EXPECT_NEAR(ibm_formula(k, m).total_ns, 1.001e6 / 113.0, 1e-6);
    k.kind = IbmKernelKind::Restickify;
    k.write_bytes = 1e6;
    EXPECT_NEAR(ibm_formula(k, m).total_ns, 2e6 / 116.0, 1e-6);
}

TEST(IbmFormula, BroadcastRateMatchesThePublishedSurfaces) {
    const MachineDesc m;
    // At 4096 x 4096: 183.5 - 2.8*12 - 2.6*12 = 118.7 (row), 162 - 1.8*12 - 2.2*12 = 114.0.
    EXPECT_NEAR(ibm_broadcast_rate(4096, 4096, true, m), 118.7, 1e-9);
    EXPECT_NEAR(ibm_broadcast_rate(4096, 4096, false, m), 114.0, 1e-9);
    EXPECT_DOUBLE_EQ(ibm_broadcast_rate(512, 4096, true, m), 118.0);  // short tensors: the flat rate
}

TEST(IbmFormula, UnderfillMatchesTheTiledSoftmaxSweep) {
    const MachineDesc m;
    EXPECT_NEAR(ibm_underfill_eff(2, 2048, m), std::sqrt(2 / 7.9), 1e-12);
    EXPECT_NEAR(ibm_underfill_eff(4, 1024, m), std::sqrt(4 / 7.9) * std::pow(0.5, 0.38), 1e-12);
    EXPECT_DOUBLE_EQ(ibm_underfill_eff(64, 2048, m), 1.08);  // the cap
    EXPECT_DOUBLE_EQ(ibm_underfill_eff(0, 2048, m), 1.0);    // untiled
    // Below the smallest fitted value (0.248) the power law is not extrapolated.
    const double raw = std::sqrt(1 / 7.9) * std::pow(128 / 2048.0, 0.38);
    EXPECT_NEAR(ibm_underfill_eff(1, 128, m), 0.248 * std::pow(raw / 0.248, 0.1), 1e-12);
    // The memory term of a tiled kernel is divided by it.
    IbmKernel k;
    k.cores = 32;
    k.read_bytes = k.write_bytes = 1 << 20;
    k.cols = 2048;
    k.tile_rows = 2;
    EXPECT_NEAR(ibm_formula(k, m).total_ns, ibm_channel_ns(1 << 20, 1 << 20, m) / std::sqrt(2 / 7.9), 1e-6);
}

TEST(IbmFormula, WorkingSetAbove512KiBSlowsTheMemoryTerm) {
    const MachineDesc m;
    EXPECT_DOUBLE_EQ(ibm_working_set_factor(256 * 1024, m), 1.0);
    EXPECT_NEAR(ibm_working_set_factor(1024 * 1024, m), std::pow(0.5, 0.06), 1e-12);
    IbmKernel k;
    k.kind = IbmKernelKind::FusedReduction;
    k.cores = 32;
    k.read_bytes = k.write_bytes = 1 << 24;
    k.cols = 8192;
    k.tile_rows = 32;  // full fill: (32/7.9)^0.5 (4)^0.38 > 1.08
    k.working_set_bytes = 2 << 20;
    const double channel = ibm_channel_ns(1 << 24, 1 << 24, m);
    EXPECT_NEAR(ibm_formula(k, m).total_ns, channel / 1.08 / std::pow(0.25, 0.06), 1e-6);
    // The 1.08 plateau is the fused softmax's: a tiled pointwise kernel is never priced faster
    // than the channel law (IBM's copy), only slower for short tiles.
    k.kind = IbmKernelKind::Pointwise;
    EXPECT_NEAR(ibm_formula(k, m).total_ns, channel / std::pow(0.25, 0.06), 1e-6);
    // Standalone reductions keep their fitted rate whatever their tiles.
    k.kind = IbmKernelKind::RowReduction;
    k.rows = 4096;
    EXPECT_NEAR(ibm_formula(k, m).total_ns, 2.0 * (1 << 24) / ibm_row_reduction_rate(4096, 32, m), 1e-6);
}

TEST(IbmFormula, PeComputeIsTheRealMacsAtTheFillEfficiencyBelow64Rows) {
    const MachineDesc m;
    EXPECT_NEAR(ibm_matmul_ns(256, 256, 256, m), 256.0 * 256 * 256 / 1140.0, 1e-9);
    EXPECT_NEAR(ibm_matmul_ns(64, 256, 256, m), 64.0 * 256 * 256 / 1140.0, 1e-9);
    // 32 rows: (32/64)^0.35 of the rate, IBM's 894 MAC/ns.
    EXPECT_NEAR(32.0 * 256 * 256 / ibm_matmul_ns(32, 256, 256, m), 1140 * std::pow(0.5, 0.35), 1e-9);
    // IBM prices the real MACs (cost_model.py predict_ops: MACs / cores / (mac_peak * pt_eff)), with
    // no padding to a pass of 8 rows: 1 row (a decode step) at (1/64)^0.35, 4 rows at (4/64)^0.35.
    EXPECT_NEAR(ibm_matmul_ns(4, 128, 64, m), 4.0 * 128 * 64 / (1140 * std::pow(4 / 64.0, 0.35)), 1e-9);
    EXPECT_NEAR(ibm_matmul_ns(1, 3072, 4096, m), 3072.0 * 4096 / (1140 * std::pow(1 / 64.0, 0.35)), 1e-6);
}

TEST(IbmFormula, MatmulRereadPastA64KElementTile) {
    const MachineDesc m;
    EXPECT_DOUBLE_EQ(ibm_reread_fraction(65536, m), 0);
    EXPECT_NEAR(ibm_reread_fraction(4 * 65536, m), 0.9, 1e-12);
    EXPECT_DOUBLE_EQ(ibm_reread_fraction(1e9, m), 1.5);  // the cap
    IbmKernel k;
    k.kind = IbmKernelKind::Matmul;
    k.cores = 32;
    k.operand_bytes = 1e6;
    k.output_tile_elems = 4 * 65536;
    EXPECT_NEAR(ibm_formula(k, m).reread_ns, 0.9e6 / 150.0, 1e-9);
    // Re-reads the program already makes (and pays in R) are not charged twice.
    k.program_reread_bytes = 0.5e6;
    EXPECT_NEAR(ibm_formula(k, m).reread_ns, 0.4e6 / 150.0, 1e-9);
    k.program_reread_bytes = 2e6;
    EXPECT_DOUBLE_EQ(ibm_formula(k, m).reread_ns, 0);
}

TEST(IbmFormula, ReplicatedOperandReadsRunAt2p3GBpsPerCore) {
    const MachineDesc m;
    IbmKernel k;
    k.kind = IbmKernelKind::Matmul;
    k.cores = 32;
    k.replicated_bytes_per_core = 1 << 20;
    EXPECT_NEAR(ibm_formula(k, m).replicated_ns, (1 << 20) / 2.3, 1e-9);
}

TEST(IbmFormula, MatmulTimeLiesBetweenMaxAndSumOfComputeAndMemory) {
    const MachineDesc m;
    IbmKernel k;
    k.kind = IbmKernelKind::Matmul;
    k.cores = 2;
    k.core_matmuls = {{{{64, 256, 256}, 10}}, {{{64, 256, 256}, 20}}};  // the busier core counts
    k.read_bytes = k.write_bytes = 1e6;
    const IbmFormula f = ibm_formula(k, m);
    const double compute = 20 * 64.0 * 256 * 256 / 1140.0, memory = ibm_channel_ns(1e6, 1e6, m);
    EXPECT_NEAR(f.compute_ns, compute, 1e-6);
    EXPECT_NEAR(f.memory_ns, memory, 1e-6);
    EXPECT_NEAR(f.overlap_lo_ns, std::max(compute, memory), 1e-6);
    EXPECT_NEAR(f.overlap_hi_ns, compute + memory, 1e-6);
    EXPECT_NEAR(f.total_ns, std::max(compute, memory) + 0.5 * std::min(compute, memory), 1e-6);
}

TEST(IbmFormula, EveryConstantComesFromTheMachineDescription) {
    MachineDesc m;
    IbmKernel k;
    k.cores = 32;
    k.read_bytes = k.write_bytes = 1e6;
    const double base = ibm_formula(k, m).total_ns;
    m.dram_bytes_per_ns = 300;
    m.dram_turnaround_ns_per_byte = 0;
    EXPECT_NEAR(ibm_formula(k, m).total_ns, 2e6 / 300, 1e-9);
    EXPECT_GT(base, 2e6 / 150);
    m.ibm_pe_macs_per_ns = 2280;
    EXPECT_NEAR(ibm_matmul_ns(64, 64, 64, m), 64.0 * 64 * 64 / 2280, 1e-9);
}

}  // namespace
}  // namespace spyre
