// The timing mechanisms the calibration suite fits (docs/device_model.md), each shown in
// isolation: the per-core DMA limit, the per-run channel cost, the LX working-set derate, PE
// passes and fill, and the launch time. Each test changes one thing and checks the direction and
// the size the machine description predicts.
#include <gtest/gtest.h>

#include <cmath>

#include "device/program_builder.h"
#include "sim/op_cost.h"
#include "sim/simulator.h"

namespace spyre {
namespace {

SimOptions exact_timing() {
    SimOptions o;
    o.timing_only = true;
    o.summarize_loops = false;
    return o;
}

// Each core loads (or stores) `sticks` sticks of its own slice as one DMA of `runs` runs (stride 2
// runs, so runs never merge when there are several).
DeviceProgram strided(int cores, int sticks, int runs, bool store = false, int32_t lx_base = 0) {
    ProgramBuilder b("strided", cores);
    int64_t per_core = int64_t(sticks) * 128 * 2;
    int in = b.buffer("t", store ? BufferKind::Output : BufferKind::Input, DType::F16, {64, int64_t(sticks) * 2 * cores});
    DmaDesc d;
    d.sticks = sticks / runs;
    d.count[0] = runs;
    d.dram_stride[0] = runs > 1 ? int64_t(d.sticks) * 128 * 2 : 0;
    d.lx_stride[0] = d.sticks * 128;
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), off = b.alloc();
    b.core_id(core);
    b.li(off, per_core);
    b.mul(off, off, core);
    if (store) b.dma_st(0, in, off, 0, Lx(lx_base), desc);
    else b.dma_ld(0, in, off, 0, Lx(lx_base), desc);
    b.wait_tag(0);
    return b.finish();
}

double bytes_per_ns(const DeviceProgram &p, const MachineDesc &m) {
    SimStats st = simulate(p, m, {}, exact_timing()).stats;
    return double(st.dram_read_bytes + st.dram_write_bytes) / (st.us * 1000);
}

TEST(SimMechanisms, OneCoreCannotDriveTheChannelAloneTwoCan) {
    const MachineDesc m;
    double one = bytes_per_ns(strided(1, 4096, 1), m);
    double two = bytes_per_ns(strided(2, 4096, 1), m);
    EXPECT_NEAR(one, m.dma_core_bytes_per_ns, 0.05 * m.dma_core_bytes_per_ns);
    EXPECT_LT(one, m.dram_bytes_per_ns);
    EXPECT_NEAR(two, m.dram_bytes_per_ns, 0.05 * m.dram_bytes_per_ns);
}

// Every core loads `bytes` of one input: at the same address on every core (a replicated operand)
// or, with `own_slice`, at its own CORE_ID-derived offset.
DeviceProgram same_or_own_bytes(int cores, int64_t bytes, bool own_slice, bool shared = false, int times = 1) {
    ProgramBuilder b("replicated", cores);
    int in = b.buffer("x", BufferKind::Input, DType::F16, {bytes / 2 * cores});
    DmaDesc d;
    d.sticks = int32_t(bytes / 128);
    int desc = b.dma_desc(d);
    Reg off = b.alloc();
    if (own_slice) {
        Reg core = b.alloc();
        b.core_id(core);
        b.muli(off, core, int32_t(bytes));
    } else {
        b.li(off, 0);
    }
    for (int t = 0; t < times; t++) {
        b.dma_ld(0, in, off, 0, Lx(0), desc, shared);
        b.wait_tag(0);
    }
    return b.finish();
}

// A shared load (kDmaShared) of the bytes every core loads crosses the channel once: the first core
// to issue it moves them at one core's rate, the others receive their copies over the ring's
// bandwidth as they arrive, far faster than each loading its own copy at the replicated rate.
TEST(SimMechanisms, SharedLoadCrossesTheChannelOnceForEveryCore) {
    const MachineDesc m;
    const int64_t bytes = 256 << 10;
    for (int cores : {2, 8, 32}) {
        SimStats shared = simulate(same_or_own_bytes(cores, bytes, false, true), m, {}, exact_timing()).stats;
        SimStats separate = simulate(same_or_own_bytes(cores, bytes, false, false), m, {}, exact_timing()).stats;
        EXPECT_EQ(shared.dram_read_bytes, bytes) << cores << " cores";
        EXPECT_EQ(separate.dram_read_bytes, bytes * cores);
        const double one_core_ns = double(bytes) / m.dma_core_bytes_per_ns + m.dma_setup_cycles / m.clock_ghz;
        EXPECT_NEAR(shared.us * 1000, one_core_ns, 0.03 * one_core_ns) << cores << " cores";
        EXPECT_LT(shared.us * 10, separate.us) << cores << " cores";
    }
}

// A copy arrives no faster than the ring delivers it: on a machine whose ring is slower than one
// core's DMA, the receiving cores finish after the leader, at the ring's rate.
TEST(SimMechanisms, SharedLoadCopiesArriveAtTheRingsRate) {
    MachineDesc m;
    m.ring_bytes_per_cycle = 8;  // 12 GB/s at 1.5 GHz, well below one core's DMA
    const int64_t bytes = 256 << 10;
    SimStats st = simulate(same_or_own_bytes(4, bytes, false, true), m, {}, exact_timing()).stats;
    const double ring_ns = double(bytes) / (m.ring_bytes_per_cycle * m.clock_ghz);
    EXPECT_NEAR(st.us * 1000, ring_ns + m.dma_setup_cycles / m.clock_ghz, 0.03 * ring_ns);
}

// A core that loads the same bytes again is not sharing them with itself: each of its loads is a
// new transfer that the other cores' next loads receive.
TEST(SimMechanisms, SharedLoadRepeatedByTheSameCoresCrossesTheChannelEachTime) {
    const MachineDesc m;
    const int64_t bytes = 64 << 10;
    SimStats st = simulate(same_or_own_bytes(4, bytes, false, true, 3), m, {}, exact_timing()).stats;
    EXPECT_EQ(st.dram_read_bytes, 3 * bytes);
}

// Every core gets the bytes: a shared load is a load in what it computes.
TEST(SimMechanisms, SharedLoadGivesEveryCoreTheBytes) {
    const int cores = 4;
    const int64_t bytes = 4096;
    ProgramBuilder b("shared_copy", cores);
    int in = b.buffer("x", BufferKind::Input, DType::F16, {bytes / 2});
    int out = b.buffer("y", BufferKind::Output, DType::F16, {bytes / 2 * cores});
    DmaDesc d;
    d.sticks = int32_t(bytes / 128);
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), off = b.alloc();
    b.core_id(core);
    b.muli(off, core, int32_t(bytes));
    b.dma_ld(0, in, kZero, 0, Lx(0), desc, true);
    b.wait_tag(0);
    b.dma_st(1, out, off, 0, Lx(0), desc);
    b.wait_tag(1);
    DeviceProgram p = b.finish();
    std::vector<uint8_t> x(bytes);
    for (size_t i = 0; i < x.size(); i++) x[i] = uint8_t(i * 7 + 3);
    SimResult r = simulate(p, MachineDesc{}, {x, {}});
    for (int c = 0; c < cores; c++)
        EXPECT_TRUE(std::equal(x.begin(), x.end(), r.buffers[1].begin() + c * bytes)) << "core " << c;
    EXPECT_EQ(r.stats.dram_read_bytes, bytes);
}

// Bytes that other cores load at the same instruction come at the replicated-read rate per core
// (IBM's ~2.3 GB/s for operands each consumer core loads itself); the first core to load them, and
// loads of each core's own slice, share the channel as usual.
TEST(SimMechanisms, ReplicatedReadsRunAtTheirPerCoreRate) {
    const MachineDesc m;
    const int64_t bytes = 256 << 10;  // below the LX working-set knee
    for (int cores : {2, 8}) {
        SimStats same = simulate(same_or_own_bytes(cores, bytes, false), m, {}, exact_timing()).stats;
        SimStats own = simulate(same_or_own_bytes(cores, bytes, true), m, {}, exact_timing()).stats;
        ASSERT_EQ(same.dram_read_bytes, own.dram_read_bytes);
        const double replicated_ns = double(bytes) / m.dma_replicated_read_bytes_per_ns;
        EXPECT_NEAR(same.us * 1000, replicated_ns, 0.02 * replicated_ns) << cores << " cores";
        EXPECT_LT(own.us * 4, same.us) << cores << " cores";
        // The first core to issue the load is not slowed; every other one is.
        int fast = 0;
        for (const CoreStats &c : same.cores) fast += c.finish_cycles * 4 < same.cycles;
        EXPECT_EQ(fast, 1) << cores << " cores";
    }
    // On one core nothing is replicated.
    SimStats one = simulate(same_or_own_bytes(1, bytes, false), m, {}, exact_timing()).stats;
    EXPECT_LT(one.us * 1000, double(bytes) / m.dma_core_bytes_per_ns * 1.05 + m.dma_setup_cycles / m.clock_ghz);
}

class ShortRuns : public ::testing::TestWithParam<bool> {};

TEST_P(ShortRuns, CostChannelTimeAtEqualBytes) {
    const bool store = GetParam();
    const MachineDesc m;
    double contiguous = bytes_per_ns(strided(32, 1024, 1, store), m);
    double runs8 = bytes_per_ns(strided(32, 1024, 128, store), m);  // 1 KiB runs
    double runs1 = bytes_per_ns(strided(32, 1024, 1024, store), m); // 128 B runs
    EXPECT_GT(contiguous, runs8);
    EXPECT_GT(runs8, runs1);
    // On a saturated channel a run of L bytes moves at peak * L / (L + overhead).
    double l = 128, ovh = store ? m.dram_write_run_overhead_bytes : m.dram_read_run_overhead_bytes;
    double expect = m.dram_bytes_per_ns * l / (l + ovh);
    EXPECT_NEAR(runs1, expect, 0.05 * expect);
}

INSTANTIATE_TEST_SUITE_P(SimMechanisms, ShortRuns, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &i) { return i.param ? "Writes" : "Reads"; });

TEST(SimMechanisms, ContiguousDimensionsMergeIntoOneRun) {
    const MachineDesc m;
    DmaDesc d;
    d.sticks = 2;
    d.count = {4, 3, 1};
    d.dram_stride = {256, 2048, 0};  // dim 0 continues the run; dim 1 jumps
    EXPECT_EQ(dma_runs(d, m), 3);
    d.dram_stride = {256, 4 * 256, 0};  // both continue it
    EXPECT_EQ(dma_runs(d, m), 1);
    d.dram_stride = {512, 4 * 256, 0};  // dim 0 jumps, so dim 1 cannot merge either
    EXPECT_EQ(dma_runs(d, m), 12);
}

TEST(SimMechanisms, LargeLxWorkingSetSlowsStreaming) {
    const MachineDesc m;
    double small = bytes_per_ns(strided(32, 1024, 1), m);
    // The same load landing 1.5 MiB into LX: the core's working set is about 3x the knee.
    double large = bytes_per_ns(strided(32, 1024, 1, false, 3 * 512 * 1024 - 1024 * 128), m);
    double ws = 3.0 * 512 * 1024;
    EXPECT_NEAR(small / large, std::pow(ws / double(m.lx_ws_knee_bytes), m.lx_ws_exponent), 0.01);
}

TEST(SimMechanisms, MatmulRowsRoundToPassesAndPayTheFill) {
    MachineDesc m;
    MatmulDesc d;
    d.n = 64, d.k = 64;
    auto cycles = [&](int rows) {
        d.m = rows;
        return matmul_cycles(d, m);
    };
    EXPECT_EQ(cycles(1), cycles(m.pe_pass_rows));  // a partial pass costs a whole one
    double per_row = 64.0 * 64 / (m.pe_macs_per_ns / m.clock_ghz);
    EXPECT_DOUBLE_EQ(cycles(64), (64 + m.pe_fill_rows) * per_row);
    // Short matmuls run at m / (m + fill) of the rate.
    double eff8 = 8 * per_row / cycles(8), eff256 = 256 * per_row / cycles(256);
    EXPECT_NEAR(eff8, 8 / (8 + m.pe_fill_rows), 1e-12);
    EXPECT_GT(eff256, 0.95);
}

TEST(SimMechanisms, LaunchTimeDelaysEveryCore) {
    MachineDesc m;
    DeviceProgram p = strided(4, 64, 1);
    double base = simulate(p, m, {}, exact_timing()).stats.us;
    m.kernel_launch_ns = 2000;
    SimStats st = simulate(p, m, {}, exact_timing()).stats;
    EXPECT_NEAR(st.us - base, 2.0, 1e-9);
}

}  // namespace
}  // namespace spyre
