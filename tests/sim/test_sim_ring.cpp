// The ring on up to 32 cores: neighbour transfers in both directions (each core's row selected by
// CORE_ID, sent to a neighbour, stored by the receiver) and RING_REDUCE sum / max / min in fp32 and
// fp16 against plain C++ combinations (fp16 combined in core order 0..n-1, rounding each step, the
// simulator's documented order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "sim_test_helpers.h"

namespace spyre {
namespace {

using simtest::from_bytes;
using simtest::to_bytes;

using simtest::kStick;

// Each core loads row CORE_ID (`sticks` sticks) of "in" into LX 0, sends it to the core `dir` away,
// receives from the core `-dir` away into LX 4096 and stores that to its row of "out". With `both`,
// it also sends the other way and stores what it got from that side to "out2".
DeviceProgram neighbour_program(int cores, int sticks, int dir, bool both, DType t) {
    const int64_t row = sticks * kStick;
    const int64_t lanes = kStick / dtype_bytes(t);
    ProgramBuilder b("ring_shift", cores);
    int in = b.buffer("in", BufferKind::Input, t, {sticks * lanes, cores});
    int out = b.buffer("out", BufferKind::Output, t, {sticks * lanes, cores});
    int out2 = both ? b.buffer("out2", BufferKind::Output, t, {sticks * lanes, cores}) : -1;
    DmaDesc d;
    d.sticks = sticks;
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), off = b.alloc();
    b.core_id(core);
    b.muli(off, core, int32_t(row));
    b.dma_ld(0, in, off, 0, Lx(0), desc);
    b.wait_tag(0);
    b.ring_send(1, dir, Lx(0), sticks);
    b.ring_recv(2, -dir, Lx(4096), sticks);
    if (both) {
        b.ring_send(3, -dir, Lx(0), sticks);
        b.ring_recv(4, dir, Lx(8192), sticks);
    }
    b.wait(both ? 0x1E : 0x6);
    b.dma_st(5, out, off, 0, Lx(4096), desc);
    if (both) b.dma_st(5, out2, off, 0, Lx(8192), desc);
    b.wait_tag(5);
    return b.finish();
}

// Row c of the input: every element distinct across rows and lanes.
std::vector<float> rows_f32(int cores, int64_t row_elems) {
    std::vector<float> v(size_t(cores * row_elems));
    for (size_t i = 0; i < v.size(); i++) v[i] = float(i) * 0.5f - 77.0f;
    return v;
}

std::vector<float> row_of(const std::vector<float> &v, int64_t row_elems, int r) {
    return std::vector<float>(v.begin() + r * row_elems, v.begin() + (r + 1) * row_elems);
}

class RingShift : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(RingShift, EachCoreGetsItsNeighboursRow) {
    auto [cores, dir] = GetParam();
    const int sticks = 2;
    const int64_t row = sticks * 32;
    DeviceProgram p = neighbour_program(cores, sticks, dir, false, DType::F32);
    std::vector<float> x = rows_f32(cores, row);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<float> y = from_bytes<float>(r.buffers[1]);
    for (int c = 0; c < cores; c++) {
        int from = ((c - dir) % cores + cores) % cores;  // the core that sent to c
        EXPECT_EQ(row_of(y, row, c), row_of(x, row, from)) << "core " << c;
    }
    EXPECT_EQ(r.stats.ring_bytes, int64_t(cores) * sticks * kStick);
    for (int c = 0; c < cores; c++) EXPECT_EQ(r.stats.cores[c].ring_bytes_sent, sticks * kStick) << "core " << c;
}

INSTANTIATE_TEST_SUITE_P(Directions, RingShift,
                         ::testing::Combine(::testing::Values(32, 5, 2), ::testing::Values(1, -1)),
                         [](const auto &info) {
                             return std::to_string(std::get<0>(info.param)) + "cores_" +
                                    (std::get<1>(info.param) > 0 ? "plus" : "minus");
                         });

TEST(Ring, BothDirectionsAtOnceOn32Cores) {
    const int cores = 32, sticks = 1;
    const int64_t row = 64;  // fp16 lanes
    DeviceProgram p = neighbour_program(cores, sticks, +1, true, DType::F16);
    std::vector<uint16_t> x(size_t(cores * row));
    for (size_t i = 0; i < x.size(); i++) x[i] = uint16_t(i * 2654435761u >> 7);  // arbitrary bits
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}, {}});
    std::vector<uint16_t> from_left = from_bytes<uint16_t>(r.buffers[1]);
    std::vector<uint16_t> from_right = from_bytes<uint16_t>(r.buffers[2]);
    for (int c = 0; c < cores; c++) {
        int left = (c + cores - 1) % cores, right = (c + 1) % cores;
        for (int i = 0; i < row; i++) {
            ASSERT_EQ(from_left[size_t(c * row + i)], x[size_t(left * row + i)]) << "core " << c << " lane " << i;
            ASSERT_EQ(from_right[size_t(c * row + i)], x[size_t(right * row + i)]) << "core " << c << " lane " << i;
        }
    }
    EXPECT_EQ(r.stats.ring_bytes, 2 * cores * kStick);
}

// Each core loads row CORE_ID of "in" (`sticks` sticks of t), reduces it across all cores (or its
// group of `group_size` cores `group_stride` apart) with `op` and stores the result to its row of "out".
DeviceProgram reduce_program(int cores, int sticks, DType t, RedOp op, int group_size = 0, int group_stride = 0) {
    const int64_t row = sticks * kStick;
    const int64_t lanes = kStick / dtype_bytes(t);
    ProgramBuilder b("ring_reduce", cores);
    int in = b.buffer("in", BufferKind::Input, t, {sticks * lanes, cores});
    int out = b.buffer("out", BufferKind::Output, t, {sticks * lanes, cores});
    DmaDesc d;
    d.sticks = sticks;
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), off = b.alloc();
    b.core_id(core);
    b.muli(off, core, int32_t(row));
    b.dma_ld(0, in, off, 0, Lx(256), desc);
    b.wait_tag(0);
    b.ring_reduce(t, 1, op, Lx(256), sticks, group_size, group_stride);
    b.wait_tag(1);
    b.dma_st(2, out, off, 0, Lx(256), desc);
    b.wait_tag(2);
    return b.finish();
}

float combine(RedOp op, float a, float b) {
    switch (op) {
    case RedOp::Sum: return a + b;
    case RedOp::Max: return a > b ? a : b;
    case RedOp::Min: return a < b ? a : b;
    }
    return 0;
}

std::string red_name(RedOp op) { return op == RedOp::Sum ? "sum" : op == RedOp::Max ? "max" : "min"; }

class RingReduceF32 : public ::testing::TestWithParam<std::tuple<int, RedOp>> {};

// Small integers: every fp32 combination is exact, so any order gives the same answer.
TEST_P(RingReduceF32, EveryCoreHoldsTheCombination) {
    auto [cores, op] = GetParam();
    const int sticks = 2;
    const int64_t row = sticks * 32;
    DeviceProgram p = reduce_program(cores, sticks, DType::F32, op);
    std::vector<float> x(size_t(cores * row));
    for (int c = 0; c < cores; c++)
        for (int i = 0; i < row; i++) x[size_t(c * row + i)] = float((c * 7 + i * 3) % 23 - 11);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<float> y = from_bytes<float>(r.buffers[1]);
    std::vector<float> want = std::vector<float>(size_t(row));
    for (int i = 0; i < row; i++) {
        double acc = x[size_t(i)];
        for (int c = 1; c < cores; c++) acc = combine(op, float(acc), x[size_t(c * row + i)]);
        want[size_t(i)] = float(acc);
    }
    if (op == RedOp::Sum) {  // and independently: the exact integer sum
        for (int i = 0; i < row; i++) {
            long s = 0;
            for (int c = 0; c < cores; c++) s += (c * 7 + i * 3) % 23 - 11;
            ASSERT_EQ(want[size_t(i)], float(s));
        }
    }
    for (int c = 0; c < cores; c++) EXPECT_EQ(row_of(y, row, c), want) << "core " << c;
    if (cores == 1) {
        EXPECT_EQ(y, x) << "a one-core reduction leaves the data as it was";
    }
}

// RING_REDUCE over groups (isa.h): 8 cores in groups of `size` cores `stride` apart; each core's
// row becomes the sum over its group, computed here from the members' rows.
class RingReduceGroups : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(RingReduceGroups, EveryCoreHoldsItsGroupsSum) {
    const auto [size, stride] = GetParam();
    const int cores = 8;
    const int64_t row = 32;
    DeviceProgram p = reduce_program(cores, 1, DType::F32, RedOp::Sum, size, stride);
    std::vector<float> x(size_t(cores * row));
    for (int c = 0; c < cores; c++)
        for (int i = 0; i < row; i++) x[size_t(c * row + i)] = float((c * 5 + i) % 17 - 8) * (c % 2 ? 1 : 16);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<float> y = from_bytes<float>(r.buffers[1]);
    const int span = size * std::max(1, stride);
    for (int c = 0; c < cores; c++) {
        std::vector<float> want(size_t(row), 0.0f);
        int members = 0;
        for (int m = 0; m < cores; m++) {
            if (m / span != c / span || m % std::max(1, stride) != c % std::max(1, stride)) continue;
            members++;
            for (int i = 0; i < row; i++) want[size_t(i)] += x[size_t(m * row + i)];
        }
        ASSERT_EQ(members, size);
        EXPECT_EQ(row_of(y, row, c), want) << "core " << c;
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, RingReduceGroups,
                         ::testing::Values(std::pair{4, 1}, std::pair{4, 2}, std::pair{2, 4}, std::pair{8, 0},
                                           std::pair{1, 1}),
                         [](const auto &info) {
                             return std::to_string(info.param.first) + "cores_" + std::to_string(info.param.second) +
                                    "apart";
                         });

INSTANTIATE_TEST_SUITE_P(Ops, RingReduceF32,
                         ::testing::Combine(::testing::Values(32, 2, 1),
                                            ::testing::Values(RedOp::Sum, RedOp::Max, RedOp::Min)),
                         [](const auto &info) {
                             return std::to_string(std::get<0>(info.param)) + "cores_" +
                                    red_name(std::get<1>(info.param));
                         });

class RingReduceF16 : public ::testing::TestWithParam<int> {};

// fp16 sum: rounding after each step makes the order visible. The reference adds core 0's row,
// then core 1's, ... rounding to fp16 after every addition.
TEST_P(RingReduceF16, SumRoundsInCoreOrder) {
    const int cores = GetParam(), sticks = 1;
    const int64_t row = 64;
    DeviceProgram p = reduce_program(cores, sticks, DType::F16, RedOp::Sum);
    std::mt19937 rng{uint32_t(cores)};
    std::uniform_real_distribution<float> dist(0.0f, 60.0f);
    std::vector<uint16_t> x(size_t(cores * row));
    for (auto &v : x) v = float_to_half(dist(rng));
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<uint16_t> y = from_bytes<uint16_t>(r.buffers[1]);

    int order_sensitive = 0;
    for (int i = 0; i < row; i++) {
        float acc = half_to_float(x[size_t(i)]);
        double exact = acc;
        float rev = half_to_float(x[size_t((cores - 1) * row + i)]);
        for (int c = 1; c < cores; c++) {
            acc = round_to_half(acc + half_to_float(x[size_t(c * row + i)]));
            exact += half_to_float(x[size_t(c * row + i)]);
            rev = round_to_half(rev + half_to_float(x[size_t((cores - 1 - c) * row + i)]));
        }
        if (float_to_half(acc) != float_to_half(float(exact)) || acc != rev) order_sensitive++;
        for (int c = 0; c < cores; c++)
            ASSERT_EQ(y[size_t(c * row + i)], float_to_half(acc)) << "core " << c << " lane " << i;
    }
    // The data is chosen so that the reference is distinguishable from other orders.
    if (cores == 32) {
        EXPECT_GT(order_sensitive, 0);
    }
}

TEST_P(RingReduceF16, MaxIsExact) {
    const int cores = GetParam();
    const int64_t row = 64;
    DeviceProgram p = reduce_program(cores, 1, DType::F16, RedOp::Max);
    std::mt19937 rng{uint32_t(cores) + 99};
    std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
    std::vector<uint16_t> x(size_t(cores * row));
    for (auto &v : x) v = float_to_half(dist(rng));
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<uint16_t> y = from_bytes<uint16_t>(r.buffers[1]);
    for (int i = 0; i < row; i++) {
        float mx = -INFINITY;
        for (int c = 0; c < cores; c++) mx = std::max(mx, half_to_float(x[size_t(c * row + i)]));
        for (int c = 0; c < cores; c++) ASSERT_EQ(y[size_t(c * row + i)], float_to_half(mx)) << c << "," << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Cores, RingReduceF16, ::testing::Values(32, 2, 1));

// Two reductions back to back on different buffers, with the second issued before the first is
// waited for: they pair up across cores in issue order.
TEST(Ring, ConsecutiveReductionsPairInOrder) {
    const int cores = 8;
    ProgramBuilder b("two_reduce", cores);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {32, cores});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {32, 2 * cores});
    DmaDesc d;
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), off = b.alloc(), off2 = b.alloc();
    b.core_id(core);
    b.muli(off, core, int32_t(kStick));
    b.muli(off2, core, int32_t(2 * kStick));
    b.dma_ld(0, in, off, 0, Lx(0), desc);
    b.dma_ld(0, in, off, 0, Lx(kStick), desc);
    b.wait_tag(0);
    b.ring_reduce(DType::F32, 1, RedOp::Sum, Lx(0), 1);
    b.ring_reduce(DType::F32, 2, RedOp::Max, Lx(kStick), 1);
    b.wait(0x6);
    DmaDesc two;
    two.sticks = 2;
    int d2 = b.dma_desc(two);
    b.dma_st(3, out, off2, 0, Lx(0), d2);
    b.wait_tag(3);
    DeviceProgram p = b.finish();
    std::vector<float> x(size_t(cores * 32));
    for (size_t i = 0; i < x.size(); i++) x[i] = float(int(i * 37 % 101) - 50);
    SimResult r = simulate(p, MachineDesc{}, {to_bytes(x), {}});
    std::vector<float> y = from_bytes<float>(r.buffers[1]);
    for (int i = 0; i < 32; i++) {
        float s = 0, mx = -INFINITY;
        for (int c = 0; c < cores; c++) s += x[size_t(c * 32 + i)], mx = std::max(mx, x[size_t(c * 32 + i)]);
        for (int c = 0; c < cores; c++) {
            EXPECT_EQ(y[size_t(c * 64 + i)], s) << "sum, core " << c;
            EXPECT_EQ(y[size_t(c * 64 + 32 + i)], mx) << "max, core " << c;
        }
    }
}

// A reduction costs ring time that grows with the data and with the number of cores, and a
// one-core reduction costs none.
TEST(Ring, ReduceTimeGrowsWithBytesAndCores) {
    SimOptions o;
    o.timing_only = true;
    auto cycles = [&](int cores, int sticks) {
        ProgramBuilder b("red_t", cores);
        b.ring_reduce(DType::F32, 0, RedOp::Sum, Lx(0), sticks);
        b.wait_tag(0);
        return simulate(b.finish(), MachineDesc{}, {}, o).stats.cycles;
    };
    EXPECT_LT(cycles(32, 1), cycles(32, 64));
    EXPECT_LT(cycles(2, 64), cycles(32, 64));
    EXPECT_LT(cycles(1, 64), cycles(2, 64));
    // Moving the data at all takes at least (n-1)/n of it over one 128 B/cycle link.
    const MachineDesc m;
    EXPECT_GE(cycles(32, 64), 31.0 / 32.0 * 64 * kStick / m.ring_bytes_per_cycle);
}

}  // namespace
}  // namespace spyre
