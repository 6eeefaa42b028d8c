// The device-program example of docs/device_model.md ("A device program by hand"), kept compiling
// and correct.
#include <gtest/gtest.h>

#include <algorithm>

#include "device/half.h"
#include "device/layout.h"
#include "device/program_builder.h"
#include "sim/simulator.h"

namespace spyre {
namespace {

TEST(DeviceModelDocExample, DoublesAStick) {
    uint16_t host_x[64];
    for (int i = 0; i < 64; i++) host_x[i] = float_to_half(float(i) * 0.5f);

    ProgramBuilder b("scale", /*cores=*/1);
    int x = b.buffer("x", BufferKind::Input, DType::F16, {64});
    int y = b.buffer("y", BufferKind::Output, DType::F16, {64});
    int one_stick = b.dma_desc(DmaDesc{});
    b.dma_ld(/*tag=*/0, x, kZero, 0, Lx(0), one_stick);
    b.wait_tag(0);
    b.vbin(Opcode::VADD, DType::F16, 1, Lx(128), Lx(0), Lx(0), /*sticks=*/1);
    b.wait_tag(1);
    b.dma_st(2, y, kZero, 0, Lx(128), one_stick);
    DeviceProgram prog = b.finish();

    SimResult r = simulate(prog, MachineDesc{}, {stickify(host_x, {64}, DType::F16, {}, 128), {}});
    uint16_t host_y[64];
    unstickify(r.buffers[1], host_y, {64}, DType::F16, {}, 128);
    for (int i = 0; i < 64; i++) EXPECT_EQ(half_to_float(host_y[i]), float(i)) << i;
    // The three steps wait for each other, so the time is at least the sum of what the machine
    // description charges each: a load and a store, each its descriptor's start latency and a
    // stick moved at one core's DMA rate or, with its run overhead, at the channel's peak; and
    // the add, its issue overhead and a stick at the add rate.
    const MachineDesc m;
    auto dma_ns = [&](double run_overhead) {
        return std::max(128 / m.dma_core_bytes_per_ns, (128 + run_overhead) / m.dram_bytes_per_ns);
    };
    const double chain_cycles = 2 * m.dma_setup_cycles + m.vec_op_overhead_cycles + 1 / m.vec_add_sticks_per_cycle +
                                m.ns_to_cycles(dma_ns(m.dram_read_run_overhead_bytes) + dma_ns(m.dram_write_run_overhead_bytes));
    EXPECT_GE(r.stats.cycles, chain_cycles);
    EXPECT_DOUBLE_EQ(r.stats.us, m.cycles_to_us(r.stats.cycles));
    EXPECT_EQ(r.stats.dram_read_bytes, 128);
    EXPECT_EQ(r.stats.dram_write_bytes, 128);
}

}  // namespace
}  // namespace spyre
