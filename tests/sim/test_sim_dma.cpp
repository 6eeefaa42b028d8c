// DMA patterns run through the whole simulator (functional mode), each checked against a plain C++
// computation of where every stick should land: contiguous round trips, strided 2-D/3-D/4-D
// descriptors, negative and zero device strides, scattered stores, padded rows of a layout and
// register-addressed DMAs advanced in a loop.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "sim_test_helpers.h"

namespace spyre {
namespace {

using simtest::from_bytes;
using simtest::to_bytes;

using simtest::kStick;
constexpr int kF32Lanes = 32;

// n sticks of fp32, element i = i + offset (distinct in every lane, exact in fp32).
std::vector<float> iota_f32(int64_t sticks, float offset = 1.0f) {
    std::vector<float> v(size_t(sticks * kF32Lanes));
    for (size_t i = 0; i < v.size(); i++) v[i] = float(i) + offset;
    return v;
}

// Stick s of a flat fp32 array.
std::vector<float> stick_of(const std::vector<float> &v, int64_t s) {
    return std::vector<float>(v.begin() + s * kF32Lanes, v.begin() + (s + 1) * kF32Lanes);
}

TEST(SimDma, ContiguousRoundTrip) {
    const int64_t sticks = 24;
    ProgramBuilder b("roundtrip", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {sticks * kF32Lanes});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {sticks * kF32Lanes});
    DmaDesc d;
    d.sticks = int32_t(sticks);
    int desc = b.dma_desc(d);
    b.dma_ld(0, in, kZero, 0, Lx(4096), desc);
    b.wait_tag(0);
    b.dma_st(1, out, kZero, 0, Lx(4096), desc);
    b.wait_tag(1);
    DeviceProgram p = b.finish();

    std::vector<float> x = iota_f32(sticks);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    EXPECT_EQ(from_bytes<float>(r.buffers[out]), x);
    EXPECT_EQ(r.buffers[in], to_bytes(x)) << "a load must not modify its source";
    EXPECT_EQ(r.stats.dram_read_bytes, sticks * kStick);
    EXPECT_EQ(r.stats.dram_write_bytes, sticks * kStick);
    EXPECT_EQ(r.stats.lx_peak_bytes, 4096 + sticks * kStick);
    EXPECT_GT(r.stats.cycles, 2 * MachineDesc{}.dma_setup_cycles) << "two dependent DMAs each pay their setup";
}

// 2-D: gather every other row (one stick per row) into consecutive LX sticks.
TEST(SimDma, Strided2DGathersEveryOtherRow) {
    const int rows = 10;
    ProgramBuilder b("gather", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {kF32Lanes, rows});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {kF32Lanes, rows / 2});
    DmaDesc g;
    g.sticks = 1;
    g.count = {rows / 2, 1, 1};
    g.dram_stride = {2 * kStick, 0, 0};
    g.lx_stride = {int32_t(kStick), 0, 0};
    int dg = b.dma_desc(g);
    DmaDesc flat;
    flat.sticks = rows / 2;
    int df = b.dma_desc(flat);
    b.dma_ld(0, in, kZero, 0, Lx(0), dg);
    b.wait_tag(0);
    b.dma_st(1, out, kZero, 0, Lx(0), df);
    b.wait_tag(1);
    DeviceProgram p = b.finish();

    std::vector<float> x = iota_f32(rows);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<float> y = from_bytes<float>(r.buffers[out]);
    for (int i = 0; i < rows / 2; i++) EXPECT_EQ(stick_of(y, i), stick_of(x, 2 * i)) << "row " << i;
    EXPECT_EQ(r.stats.dram_read_bytes, rows / 2 * kStick) << "only the gathered rows are read";
}

// 2-D scatter on the store side: consecutive LX sticks to every third device row; the rows in
// between keep their (zero) initial contents.
TEST(SimDma, Strided2DStoreScattersRows) {
    const int n = 4, rows = 3 * n;
    ProgramBuilder b("scatter", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {kF32Lanes, n});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {kF32Lanes, rows});
    DmaDesc flat;
    flat.sticks = n;
    int df = b.dma_desc(flat);
    DmaDesc s;
    s.count = {n, 1, 1};
    s.dram_stride = {3 * kStick, 0, 0};
    s.lx_stride = {int32_t(kStick), 0, 0};
    int ds = b.dma_desc(s);
    b.dma_ld(0, in, kZero, 0, Lx(0), df);
    b.wait_tag(0);
    b.dma_st(1, out, kZero, int32_t(kStick), Lx(0), ds);  // rows 1, 4, 7, 10
    b.wait_tag(1);
    DeviceProgram p = b.finish();

    std::vector<float> x = iota_f32(n);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<float> y = from_bytes<float>(r.buffers[out]);
    for (int row = 0; row < rows; row++) {
        std::vector<float> want(kF32Lanes, 0.0f);
        if (row % 3 == 1) want = stick_of(x, row / 3);
        EXPECT_EQ(stick_of(y, row), want) << "row " << row;
    }
}

// 3-D: a 3 x 4 grid of 2-stick tiles, loaded with the tile order transposed (tile (a, b) lands at
// LX tile b * 3 + a), then stored back contiguously.
TEST(SimDma, Strided3DTransposesTileOrder) {
    const int A = 3, B = 4, tile_sticks = 2;
    const int64_t tile = tile_sticks * kStick;
    const int64_t sticks = A * B * tile_sticks;
    ProgramBuilder b("tile_t", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {sticks * kF32Lanes});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {sticks * kF32Lanes});
    DmaDesc t;
    t.sticks = tile_sticks;
    t.count = {B, A, 1};
    t.dram_stride = {tile, B * tile, 0};
    t.lx_stride = {int32_t(A * tile), int32_t(tile), 0};
    int dt = b.dma_desc(t);
    DmaDesc flat;
    flat.sticks = int32_t(sticks);
    int df = b.dma_desc(flat);
    b.dma_ld(0, in, kZero, 0, Lx(0), dt);
    b.wait_tag(0);
    b.dma_st(1, out, kZero, 0, Lx(0), df);
    b.wait_tag(1);
    DeviceProgram p = b.finish();

    std::vector<float> x = iota_f32(sticks);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<float> y = from_bytes<float>(r.buffers[out]);
    std::vector<float> want(y.size());
    const size_t tile_elems = size_t(tile_sticks * kF32Lanes);
    for (int a = 0; a < A; a++)
        for (int bb = 0; bb < B; bb++)
            std::copy_n(x.begin() + (a * B + bb) * tile_elems, tile_elems, want.begin() + (bb * A + a) * tile_elems);
    EXPECT_EQ(y, want);
    EXPECT_EQ(r.stats.dram_read_bytes, sticks * kStick);
}

// 4-D: every outer dimension used. Source S[i2][i1][i0] (sizes 2, 3, 4; one stick each, contiguous)
// lands at LX D[i0][i1][i2], a full permutation of the three outer dims.
TEST(SimDma, Strided4DPermutesAllOuterDims) {
    const int n0 = 4, n1 = 3, n2 = 2;
    const int64_t sticks = n0 * n1 * n2;
    ProgramBuilder b("perm4d", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {kF32Lanes, n0, n1, n2});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {sticks * kF32Lanes});
    DmaDesc d;
    d.sticks = 1;
    d.count = {n0, n1, n2};
    d.dram_stride = {kStick, n0 * kStick, n0 * n1 * kStick};
    d.lx_stride = {int32_t(n1 * n2 * kStick), int32_t(n2 * kStick), int32_t(kStick)};
    int dp = b.dma_desc(d);
    DmaDesc flat;
    flat.sticks = int32_t(sticks);
    int df = b.dma_desc(flat);
    b.dma_ld(3, in, kZero, 0, Lx(kStick * 8), dp);
    b.wait_tag(3);
    b.dma_st(4, out, kZero, 0, Lx(kStick * 8), df);
    b.wait_tag(4);
    DeviceProgram p = b.finish();

    std::vector<float> x = iota_f32(sticks);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<float> y = from_bytes<float>(r.buffers[out]);
    for (int i2 = 0; i2 < n2; i2++)
        for (int i1 = 0; i1 < n1; i1++)
            for (int i0 = 0; i0 < n0; i0++) {
                int src = (i2 * n1 + i1) * n0 + i0;
                int dst = (i0 * n1 + i1) * n2 + i2;
                EXPECT_EQ(stick_of(y, dst), stick_of(x, src)) << i0 << "," << i1 << "," << i2;
            }
}

// A negative device stride walks the rows backwards from a base at the last row.
TEST(SimDma, NegativeDeviceStrideReversesRows) {
    const int rows = 7;
    ProgramBuilder b("reverse", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {kF32Lanes, rows});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {kF32Lanes, rows});
    DmaDesc rev;
    rev.count = {rows, 1, 1};
    rev.dram_stride = {-kStick, 0, 0};
    rev.lx_stride = {int32_t(kStick), 0, 0};
    int dr = b.dma_desc(rev);
    DmaDesc flat;
    flat.sticks = rows;
    int df = b.dma_desc(flat);
    b.dma_ld(0, in, kZero, int32_t((rows - 1) * kStick), Lx(0), dr);
    b.wait_tag(0);
    b.dma_st(1, out, kZero, 0, Lx(0), df);
    b.wait_tag(1);
    DeviceProgram p = b.finish();

    std::vector<float> x = iota_f32(rows);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<float> y = from_bytes<float>(r.buffers[out]);
    for (int i = 0; i < rows; i++) EXPECT_EQ(stick_of(y, i), stick_of(x, rows - 1 - i)) << "row " << i;
}

// Device stride 0 on a load broadcasts the same sticks into several LX places (2-D), and into a
// 2-D grid of LX places (a zero stride on two dims at once).
TEST(SimDma, ZeroDeviceStrideBroadcasts) {
    const int copies = 4, run = 2, rows2 = 3;
    ProgramBuilder b("bcast", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {run * kF32Lanes, 2});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {run * kF32Lanes, copies + copies * rows2});
    DmaDesc bc;
    bc.sticks = run;
    bc.count = {copies, 1, 1};
    bc.dram_stride = {0, 0, 0};
    bc.lx_stride = {int32_t(run * kStick), 0, 0};
    int dbc = b.dma_desc(bc);
    DmaDesc grid;  // the second row of `in`, copies x rows2 times
    grid.sticks = run;
    grid.count = {copies, rows2, 1};
    grid.dram_stride = {0, 0, 0};
    grid.lx_stride = {int32_t(run * kStick), int32_t(copies * run * kStick), 0};
    int dgrid = b.dma_desc(grid);
    DmaDesc flat;
    flat.sticks = run * (copies + copies * rows2);
    int df = b.dma_desc(flat);
    b.dma_ld(0, in, kZero, 0, Lx(0), dbc);
    b.dma_ld(0, in, kZero, int32_t(run * kStick), Lx(int32_t(copies * run * kStick)), dgrid);
    b.wait_tag(0);
    b.dma_st(1, out, kZero, 0, Lx(0), df);
    b.wait_tag(1);
    DeviceProgram p = b.finish();

    std::vector<float> x = iota_f32(2 * run);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<float> y = from_bytes<float>(r.buffers[out]);
    const size_t row = size_t(run * kF32Lanes);
    std::vector<float> row0(x.begin(), x.begin() + row), row1(x.begin() + row, x.end());
    for (int c = 0; c < copies + copies * rows2; c++) {
        std::vector<float> got(y.begin() + c * row, y.begin() + (c + 1) * row);
        EXPECT_EQ(got, c < copies ? row0 : row1) << "copy " << c;
    }
    // A broadcast load still moves every stick it delivers.
    EXPECT_EQ(r.stats.dram_read_bytes, int64_t(copies + copies * rows2) * run * kStick);
}

// A {100, 3} fp16 tensor: each row of 100 elements is two sticks, the second one padded with 28
// lanes. Rows are loaded with a 2-D descriptor, 1 is added to every lane with VADD, the result is
// stored and unstickified. The padding lanes of the output image hold what the program wrote there
// (0 + 1), not zero: the device image is the program's, only unstickify drops the padding.
TEST(SimDma, PaddedRowsThroughLayout) {
    const int64_t cols = 100, rows = 3, lanes = 64, row_sticks = 2;
    const MachineDesc m;
    ProgramBuilder b("pad", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {cols, rows});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {cols, rows});
    DmaDesc rowd;
    rowd.sticks = int32_t(row_sticks);
    rowd.count = {int32_t(rows), 1, 1};
    rowd.dram_stride = {row_sticks * kStick, 0, 0};
    rowd.lx_stride = {int32_t(row_sticks * kStick), 0, 0};
    int dr = b.dma_desc(rowd);
    const int32_t kX = 0, kOnes = 8192, kY = 16384;
    const int32_t all = int32_t(rows * row_sticks);
    b.dma_ld(0, in, kZero, 0, Lx(kX), dr);
    b.vfill(DType::F16, 1, Lx(kOnes), 1.0f, all);
    b.wait(0x3);
    b.vbin(Opcode::VADD, DType::F16, 1, Lx(kY), Lx(kX), Lx(kOnes), int32_t(row_sticks), int32_t(rows));
    b.wait_tag(1);
    b.dma_st(2, out, kZero, 0, Lx(kY), dr);
    b.wait_tag(2);
    DeviceProgram p = b.finish();
    ASSERT_EQ(p.buffer_bytes(size_t(in), m.stick_bytes), rows * row_sticks * kStick);

    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-50.0f, 50.0f);
    std::vector<uint16_t> x(size_t(cols * rows));
    for (auto &v : x) v = float_to_half(dist(rng));
    std::vector<uint8_t> img = stickify(x.data(), p.buffers[in].shape, DType::F16, p.buffers[in].layout, m.stick_bytes);
    SimResult r = simulate(p, m, {img, {}});

    std::vector<uint16_t> y(x.size());
    unstickify(r.buffers[out], y.data(), p.buffers[out].shape, DType::F16, p.buffers[out].layout, m.stick_bytes);
    for (size_t i = 0; i < x.size(); i++)
        ASSERT_EQ(y[i], float_to_half(half_to_float(x[i]) + 1.0f)) << "element " << i;

    // Raw device image: row r occupies 2 sticks = 128 halves; lanes 100..127 are padding.
    std::vector<uint16_t> raw = from_bytes<uint16_t>(r.buffers[out]);
    ASSERT_EQ(raw.size(), size_t(rows * row_sticks * lanes));
    for (int64_t row = 0; row < rows; row++)
        for (int64_t lane = cols; lane < row_sticks * lanes; lane++)
            EXPECT_EQ(raw[size_t(row * row_sticks * lanes + lane)], float_to_half(1.0f))
                << "padding lane " << lane << " of row " << row;
    // The input's padding lanes were zero (stickify) and stay so.
    std::vector<uint16_t> raw_in = from_bytes<uint16_t>(r.buffers[in]);
    for (int64_t lane = cols; lane < row_sticks * lanes; lane++) EXPECT_EQ(raw_in[size_t(lane)], 0);
}

// Register-addressed DMAs in a LOOP: iteration i loads row i (device base register advanced by a
// row each iteration), negates it, and stores it to row rows-1-i of the output (a second base
// register walking backwards), one row in flight per tag parity.
TEST(SimDma, RegisterBaseAdvancedInLoop) {
    const int rows = 12;
    ProgramBuilder b("loopdma", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {kF32Lanes, rows});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {kF32Lanes, rows});
    DmaDesc one;
    one.sticks = 1;
    int d1 = b.dma_desc(one);
    Reg i = b.alloc(), src = b.alloc(), dst = b.alloc(), lxr = b.alloc();
    b.li(src, 0);
    b.li(dst, (rows - 1) * kStick);
    b.loop(i, rows);
    b.muli(lxr, i, int32_t(2 * kStick));  // each iteration its own pair of LX sticks
    b.dma_ld(0, in, src, 0, Lx(lxr, 0), d1);
    b.wait_tag(0);
    b.vun(Opcode::VNEG, DType::F32, 1, Lx(lxr, int32_t(kStick)), Lx(lxr, 0), 1);
    b.wait_tag(1);
    b.dma_st(2, out, dst, 0, Lx(lxr, int32_t(kStick)), d1);
    b.addi(src, src, int32_t(kStick));
    b.addi(dst, dst, -int32_t(kStick));
    b.end_loop();
    b.wait_tag(2);
    DeviceProgram p = b.finish();

    std::vector<float> x = iota_f32(rows, -100.0f);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<float> y = from_bytes<float>(r.buffers[out]);
    for (int row = 0; row < rows; row++) {
        std::vector<float> want = stick_of(x, rows - 1 - row);
        for (float &v : want) v = -v;
        EXPECT_EQ(stick_of(y, row), want) << "row " << row;
    }
    EXPECT_EQ(r.stats.dram_read_bytes, rows * kStick);
    EXPECT_EQ(r.stats.dram_write_bytes, rows * kStick);
    EXPECT_EQ(r.stats.lx_peak_bytes, 2 * rows * kStick);
}

// More DMAs than the queue holds: the control unit stalls on a full queue and resumes, and every
// DMA still lands (functional results unaffected by the back-pressure).
TEST(SimDma, QueueBackPressureKeepsEveryTransfer) {
    MachineDesc m;
    m.dma_queue_depth = 2;
    const int rows = 9;
    ProgramBuilder b("qfull", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {kF32Lanes, rows});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {kF32Lanes, rows});
    DmaDesc one;
    int d1 = b.dma_desc(one);
    for (int r = 0; r < rows; r++) b.dma_ld(0, in, kZero, int32_t(r * kStick), Lx(int32_t(r * kStick)), d1);
    b.wait_tag(0);
    for (int r = 0; r < rows; r++) b.dma_st(1, out, kZero, int32_t(r * kStick), Lx(int32_t(r * kStick)), d1);
    b.wait_tag(1);
    DeviceProgram p = b.finish();
    std::vector<float> x = iota_f32(rows);
    SimResult r = simulate(p, m, {to_bytes(x), {}});
    EXPECT_EQ(from_bytes<float>(r.buffers[out]), x);
    // With two descriptors in flight per direction, at most two setups overlap: each direction
    // needs at least rows / 2 setup periods; a deep queue overlaps all of them and is faster.
    EXPECT_GE(r.stats.cycles, 2 * (rows / 2) * m.dma_setup_cycles);
    SimResult deep = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    EXPECT_EQ(from_bytes<float>(deep.buffers[out]), x);
    EXPECT_LT(deep.stats.cycles, r.stats.cycles);
}

}  // namespace
}  // namespace spyre
