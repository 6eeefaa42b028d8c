// The device-program example of docs/device_model.md ("A device program by hand"), kept compiling
// and correct.
#include <gtest/gtest.h>

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
    EXPECT_GT(r.stats.us, 0);
    EXPECT_EQ(r.stats.dram_read_bytes, 128);
    EXPECT_EQ(r.stats.dram_write_bytes, 128);
}

}  // namespace
}  // namespace spyre
