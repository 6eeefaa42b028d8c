// LX images are recycled across simulations (lx_arena.h): every run must still start on an
// all-zero LX, after a clean run and after one that faulted with LX half written.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/lx_arena.h"
#include "sim_test_helpers.h"

namespace spyre {
namespace {

using simtest::from_bytes;

constexpr int64_t kSticks = 64;  // 8 KiB at LX 256 KiB
constexpr int32_t kLxAt = 256 * 1024;

// Stores kSticks sticks of LX at kLxAt to the output; with `fill`, writes 1.0 there first.
// With `fault_after_fill`, a register-addressed load then reads past its buffer.
DeviceProgram lx_program(bool fill, bool fault_after_fill = false) {
    ProgramBuilder b("lx_probe", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {32});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {kSticks * 32});
    DmaDesc d;
    d.sticks = int32_t(kSticks);
    int desc = b.dma_desc(d);
    if (fill) {
        b.vfill(DType::F32, 0, Lx(kLxAt), 1.0f, int32_t(kSticks));
        b.wait_tag(0);
    }
    if (fault_after_fill) {
        DmaDesc one;
        int one_desc = b.dma_desc(one);
        Reg r = b.alloc();
        b.li(r, 1 << 20);
        b.dma_ld(1, in, r, 0, Lx(0), one_desc);
        b.wait_tag(1);
    }
    b.dma_st(2, out, kZero, 0, Lx(kLxAt), desc);
    b.wait_tag(2);
    return b.finish();
}

std::vector<float> run_probe(const DeviceProgram &p) {
    SimResult r = simulate(p, MachineDesc{}, {std::vector<uint8_t>(128, 0), {}});
    return from_bytes<float>(r.buffers[1]);
}

TEST(LxArena, ARecycledArenaIsAllZero) {
    const size_t n = 1 << 20;
    LxArena a = LxArena::acquire(n);
    std::fill(a.data(), a.data() + 4096, uint8_t(0xab));
    LxArena::release(std::move(a), 4096);
    LxArena b = LxArena::acquire(n);
    ASSERT_EQ(b.size(), n);
    EXPECT_TRUE(std::all_of(b.begin(), b.end(), [](uint8_t v) { return v == 0; }));
}

TEST(LxArena, LxStartsZeroAfterARunThatWroteIt) {
    std::vector<float> filled = run_probe(lx_program(true));
    ASSERT_TRUE(std::all_of(filled.begin(), filled.end(), [](float v) { return v == 1.0f; }));
    std::vector<float> fresh = run_probe(lx_program(false));
    EXPECT_TRUE(std::all_of(fresh.begin(), fresh.end(), [](float v) { return v == 0.0f; }));
}

TEST(LxArena, LxStartsZeroAfterARunThatFaulted) {
    EXPECT_THROW(run_probe(lx_program(true, true)), Error);
    std::vector<float> fresh = run_probe(lx_program(false));
    EXPECT_TRUE(std::all_of(fresh.begin(), fresh.end(), [](float v) { return v == 0.0f; }));
}

}  // namespace
}  // namespace spyre
