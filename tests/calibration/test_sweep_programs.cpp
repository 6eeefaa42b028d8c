// The sweep programs (apps/calibration/sweep_programs.h) compute what they claim on a few cores at
// small shapes: each runs in the functional simulator (with its race checks) on random fp16
// inputs and is compared with a plain C++ reference; each rejects a shape it cannot tile with a
// spyre::Error naming the field; and every default shape builds and runs timing-only.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "../channel_floor.h"
#include "../sim/sim_test_helpers.h"
#include "device/half.h"
#include "device/layout.h"
#include "sim/simulator.h"
#include "sweep_programs.h"
#include "tile_stream.h"

namespace spyre {
namespace {

using simtest::contains;
using simtest::error_of;

using Halves = std::vector<uint16_t>;

Halves random_halves(size_t n, unsigned seed, float lo = -4.0f, float hi = 4.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    Halves v(n);
    for (auto &h : v) h = float_to_half(dist(rng));
    return v;
}

float f(uint16_t h) { return half_to_float(h); }

// Runs `p` with `inputs` (dense host arrays, buffer order) and returns the last buffer, dense.
Halves run(const DeviceProgram &p, const std::vector<Halves> &inputs) {
    const MachineDesc m;
    std::vector<std::vector<uint8_t>> images(p.buffers.size());
    for (size_t i = 0; i < inputs.size(); i++)
        images[i] = stickify(inputs[i].data(), p.buffers[i].shape, DType::F16, p.buffers[i].layout, m.stick_bytes);
    SimResult r = simulate(p, m, images);
    EXPECT_LE(r.stats.lx_peak_bytes, m.lx_usable_bytes);
    const BufferDecl &out = p.buffers.back();
    int64_t n = 1;
    for (int64_t e : out.shape) n *= e;
    Halves y(static_cast<size_t>(n));
    unstickify(r.buffers.back(), y.data(), out.shape, DType::F16, out.layout, m.stick_bytes);
    return y;
}

void expect_bits_equal(const Halves &got, const Halves &want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) ASSERT_EQ(got[i], want[i]) << "element " << i;
}

// |got - want| within a few fp16 roundings of a sum of `mass` (the sum of the magnitudes).
void expect_sum_close(float got, float want, float mass, const std::string &where) {
    EXPECT_NEAR(got, want, 2e-3f * mass + 1e-3f) << where;
}

// --- pointwise ---

PointwiseShape small_pointwise(int inputs, Broadcast bc = Broadcast::None) {
    PointwiseShape s;
    s.rows = 256, s.cols = 192, s.cores = 2, s.tile_rows = 16, s.inputs = inputs, s.broadcast = bc;
    return s;
}

TEST(SweepPointwise, FillWritesOneToEveryElement) {
    PointwiseShape s = small_pointwise(0);
    Halves y = run(build_pointwise(s), {});
    expect_bits_equal(y, Halves(size_t(s.rows) * s.cols, float_to_half(1.0f)));
}

TEST(SweepPointwise, CopyReproducesInputExactly) {
    PointwiseShape s = small_pointwise(1);
    Halves x = random_halves(size_t(s.rows) * s.cols, 1);
    expect_bits_equal(run(build_pointwise(s), {x}), x);
}

TEST(SweepPointwise, AddOfTwoInputsMatchesFp16Sum) {
    PointwiseShape s = small_pointwise(2);
    Halves a = random_halves(size_t(s.rows) * s.cols, 2), b = random_halves(a.size(), 3), want(a.size());
    for (size_t i = 0; i < a.size(); i++) want[i] = float_to_half(f(a[i]) + f(b[i]));
    expect_bits_equal(run(build_pointwise(s), {a, b}), want);
}

TEST(SweepPointwise, RowBroadcastAddsOperandToEveryRow) {
    PointwiseShape s = small_pointwise(1, Broadcast::Row);
    Halves x = random_halves(size_t(s.rows) * s.cols, 4), row = random_halves(size_t(s.cols), 5), want(x.size());
    for (int r = 0; r < s.rows; r++)
        for (int c = 0; c < s.cols; c++) {
            size_t i = size_t(r) * s.cols + c;
            want[i] = float_to_half(f(x[i]) + f(row[size_t(c)]));
        }
    expect_bits_equal(run(build_pointwise(s), {x, row}), want);
}

TEST(SweepPointwise, ScalarBroadcastAddsOperandToEveryElement) {
    PointwiseShape s = small_pointwise(1, Broadcast::Scalar);
    Halves x = random_halves(size_t(s.rows) * s.cols, 6), scalar{float_to_half(0.8125f)}, want(x.size());
    for (size_t i = 0; i < x.size(); i++) want[i] = float_to_half(f(x[i]) + 0.8125f);
    expect_bits_equal(run(build_pointwise(s), {x, scalar}), want);
}

TEST(SweepPointwise, RejectsBadShapesNamingTheField) {
    PointwiseShape s = small_pointwise(1);
    s.rows = 100;
    EXPECT_TRUE(contains(error_of([&] { build_pointwise(s); }), "rows (100)"));
    s = small_pointwise(3);
    EXPECT_TRUE(contains(error_of([&] { build_pointwise(s); }), "inputs (3)"));
    s = small_pointwise(2, Broadcast::Row);
    EXPECT_TRUE(contains(error_of([&] { build_pointwise(s); }), "inputs (2)"));
    s = small_pointwise(1);
    s.cols = 100;
    EXPECT_TRUE(contains(error_of([&] { build_pointwise(s); }), "cols (100)"));
    s = small_pointwise(2);
    s.cols = 8192, s.tile_rows = 64, s.rows = 256;  // six 1 MiB tiles
    EXPECT_TRUE(contains(error_of([&] { build_pointwise(s); }), "tile_rows (64)"));
}

// --- row reduction ---

void check_row_reduction(const RowReductionShape &s, unsigned seed) {
    Halves x = random_halves(size_t(s.rows) * s.cols, seed);
    Halves y = run(build_row_reduction(s), {x});
    ASSERT_EQ(y.size(), size_t(s.rows));
    for (int r = 0; r < s.rows; r++) {
        float sum = 0, mass = 0;
        for (int c = 0; c < s.cols; c++) sum += f(x[size_t(r) * s.cols + c]), mass += std::fabs(f(x[size_t(r) * s.cols + c]));
        expect_sum_close(f(y[size_t(r)]), round_to_half(sum), mass, "row " + std::to_string(r));
    }
}

TEST(SweepRowReduction, SumsEachRowIntoLaneZeroOfItsStick) {
    RowReductionShape s;
    s.rows = 256, s.cols = 256, s.cores = 4, s.tile_rows = 16;
    check_row_reduction(s, 10);
}

TEST(SweepRowReduction, SumsRowsThatAreNotWholeSticks) {
    RowReductionShape s;
    s.rows = 128, s.cols = 100, s.cores = 2, s.tile_rows = 8;
    check_row_reduction(s, 11);
}

TEST(SweepRowReduction, RejectsBadShapesNamingTheField) {
    RowReductionShape s;
    s.rows = 100, s.cols = 256, s.cores = 2, s.tile_rows = 16;
    EXPECT_TRUE(contains(error_of([&] { build_row_reduction(s); }), "rows (100)"));
    s.rows = 256, s.cols = 16384, s.tile_rows = 64;  // two 2 MiB tiles
    EXPECT_TRUE(contains(error_of([&] { build_row_reduction(s); }), "tile_rows (64)"));
}

// --- column reduction ---

TEST(SweepColReduction, SumsEachColumnOverAllRows) {
    ColReductionShape s;
    s.rows = 384, s.cols = 256, s.cores = 2, s.tile_rows = 24;  // 16 tiles; tile_rows not a power of two
    Halves x = random_halves(size_t(s.rows) * s.cols, 20);
    Halves y = run(build_col_reduction(s), {x});
    ASSERT_EQ(y.size(), size_t(s.cols));
    for (int c = 0; c < s.cols; c++) {
        float sum = 0, mass = 0;
        for (int r = 0; r < s.rows; r++) sum += f(x[size_t(r) * s.cols + c]), mass += std::fabs(f(x[size_t(r) * s.cols + c]));
        expect_sum_close(f(y[size_t(c)]), round_to_half(sum), mass, "column " + std::to_string(c));
    }
}

TEST(SweepColReduction, RejectsBadShapesNamingTheField) {
    ColReductionShape s;
    s.rows = 384, s.cols = 100, s.cores = 2, s.tile_rows = 24;
    EXPECT_TRUE(contains(error_of([&] { build_col_reduction(s); }), "cols (100)"));
    s.cols = 256, s.rows = 100;
    EXPECT_TRUE(contains(error_of([&] { build_col_reduction(s); }), "rows (100)"));
}

// --- restickify ---

TEST(SweepRestickify, TransposesEveryTileExactly) {
    RestickifyShape s;
    s.rows = 256, s.cols = 384, s.cores = 2, s.tile_rows = 64;  // 4 tiles of 64 x 192 per core
    Halves x = random_halves(size_t(s.rows) * s.cols, 30), want(x.size());
    for (int r = 0; r < s.rows; r++)
        for (int c = 0; c < s.cols; c++) want[size_t(c) * s.rows + r] = x[size_t(r) * s.cols + c];
    expect_bits_equal(run(build_restickify(s), {x}), want);
}

TEST(SweepRestickify, RejectsBadShapesNamingTheField) {
    RestickifyShape s;
    s.rows = 256, s.cols = 192, s.cores = 2, s.tile_rows = 64;
    EXPECT_TRUE(contains(error_of([&] { build_restickify(s); }), "cols (192)"));
    s.cols = 256, s.tile_rows = 96;
    EXPECT_TRUE(contains(error_of([&] { build_restickify(s); }), "tile_rows (96)"));
    s.tile_rows = 64, s.rows = 64;  // one tile: odd
    EXPECT_TRUE(contains(error_of([&] { build_restickify(s); }), "rows (64)"));
    s.rows = 8192, s.cols = 4096, s.cores = 1, s.tile_rows = 1024;  // four 8 MiB tiles
    EXPECT_TRUE(contains(error_of([&] { build_restickify(s); }), "tile_rows (1024)"));
}

// --- stick-plane transport ---

class SweepPlaneTransport : public ::testing::TestWithParam<int> {};

TEST_P(SweepPlaneTransport, SwapsRowAndPlaneDimensionsExactly) {
    PlaneTransportShape s;
    s.rows = 64, s.planes = 3, s.cores = 2, s.run_sticks = GetParam();
    Halves x = random_halves(size_t(s.rows) * s.planes * 64, 40), want(x.size());
    for (int r = 0; r < s.rows; r++)
        for (int p = 0; p < s.planes; p++)
            for (int l = 0; l < 64; l++)
                want[(size_t(p) * s.rows + r) * 64 + l] = x[(size_t(r) * s.planes + p) * 64 + l];
    expect_bits_equal(run(build_plane_transport(s), {x}), want);
}

INSTANTIATE_TEST_SUITE_P(RunSticks, SweepPlaneTransport, ::testing::Values(1, 2, 8));

TEST(SweepPlaneTransportShape, RejectsBadShapesNamingTheField) {
    PlaneTransportShape s;
    s.rows = 100, s.planes = 3, s.cores = 2, s.run_sticks = 8;
    EXPECT_TRUE(contains(error_of([&] { build_plane_transport(s); }), "rows (100)"));
    s.rows = 64, s.run_sticks = 0;
    EXPECT_TRUE(contains(error_of([&] { build_plane_transport(s); }), "run_sticks (0)"));
}

// --- matmul in LX ---

TEST(SweepLxMatmul, EachCoreStoresRepsAccumulatedProductsOfItsOwnOperands) {
    LxMatmulShape s;
    s.m = 16, s.n = 64, s.k = 128, s.cores = 2, s.reps = 3;
    // Each core has its own A and B (core c's at c times their size).
    const size_t a_size = size_t(s.m) * s.k, b_size = size_t(s.k) * s.n;
    Halves A = random_halves(a_size * s.cores, 50, -1, 1), B = random_halves(b_size * s.cores, 51, -1, 1);
    Halves C = run(build_lx_matmul(s), {A, B});
    ASSERT_EQ(C.size(), size_t(s.m) * s.cores * s.n);
    for (int core = 0; core < s.cores; core++)
        for (int i = 0; i < s.m; i++)
            for (int j = 0; j < s.n; j++) {
                float acc = 0, mass = 0;
                for (int rep = 0; rep < s.reps; rep++)
                    for (int kk = 0; kk < s.k; kk++) {
                        float pr = f(A[core * a_size + size_t(i) * s.k + kk]) *
                                   f(B[core * b_size + size_t(kk) * s.n + j]);
                        acc += pr, mass += std::fabs(pr);
                    }
                expect_sum_close(f(C[(size_t(core) * s.m + i) * s.n + j]), round_to_half(acc), mass,
                                 "core " + std::to_string(core) + " (" + std::to_string(i) + "," + std::to_string(j) + ")");
            }
}

TEST(SweepLxMatmul, RejectsBadShapesNamingTheField) {
    LxMatmulShape s;
    s.n = 100;
    EXPECT_TRUE(contains(error_of([&] { build_lx_matmul(s); }), "n (100)"));
    s = LxMatmulShape{};
    s.reps = 0;
    EXPECT_TRUE(contains(error_of([&] { build_lx_matmul(s); }), "reps (0)"));
    s = LxMatmulShape{};
    s.m = 1024, s.n = 512, s.k = 512;  // a 2 MiB fp32 C
    EXPECT_TRUE(contains(error_of([&] { build_lx_matmul(s); }), "m (1024)"));
}

// --- fused row-tiled softmax ---

// Same rounding as the programs: fp16 max, sub and exp, fp32 sum narrowed to fp16, fp16 divide.
Halves reference_softmax(const Halves &x, int rows, int cols) {
    Halves y(x.size());
    for (int r = 0; r < rows; r++) {
        const uint16_t *row = &x[size_t(r) * cols];
        float mx = -INFINITY;
        for (int c = 0; c < cols; c++) mx = std::max(mx, f(row[c]));
        std::vector<float> e(static_cast<size_t>(cols));
        float sum = 0;
        for (int c = 0; c < cols; c++) {
            e[size_t(c)] = round_to_half(std::exp(round_to_half(f(row[c]) - mx)));
            sum += e[size_t(c)];
        }
        float s = round_to_half(sum);
        for (int c = 0; c < cols; c++) y[size_t(r) * cols + c] = float_to_half(e[size_t(c)] / s);
    }
    return y;
}

class SweepFusedSoftmax : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(SweepFusedSoftmax, MatchesReferenceWithRowsPerTile) {
    auto [h, cols] = GetParam();
    FusedSoftmaxShape s;
    s.cores = 2, s.tiles = 4, s.cols = cols, s.rows = s.cores * s.tiles * h;
    Halves x = random_halves(size_t(s.rows) * cols, unsigned(60 + h), -6, 6);
    Halves y = run(build_fused_softmax(s), {x});
    Halves want = reference_softmax(x, s.rows, cols);
    for (size_t i = 0; i < y.size(); i++) ASSERT_NEAR(f(y[i]), f(want[i]), 1e-3f * f(want[i]) + 1e-7f) << "element " << i;
}

// h = rows / (cores * tiles): tiny tiles, a tile more than 64 rows, rows that are not whole sticks.
INSTANTIATE_TEST_SUITE_P(Tiles, SweepFusedSoftmax,
                         ::testing::Values(std::tuple{2, 128}, std::tuple{4, 100}, std::tuple{96, 256}));

TEST(SweepFusedSoftmaxShape, RejectsBadShapesNamingTheField) {
    FusedSoftmaxShape s;
    s.rows = 64, s.cols = 128, s.cores = 2, s.tiles = 3;
    EXPECT_TRUE(contains(error_of([&] { build_fused_softmax(s); }), "tiles (3)"));
    s.tiles = 4, s.rows = 100;
    EXPECT_TRUE(contains(error_of([&] { build_fused_softmax(s); }), "rows (100)"));
    s.rows = 2 * 4 * 128, s.cols = 4096;  // h = 128: four 1 MiB tiles
    EXPECT_TRUE(contains(error_of([&] { build_fused_softmax(s); }), "(128) x cols (4096)"));
}

// Every builder's default (full-size, 32-core) shape is valid and runs through the timing model.
// --- replicated load ---

TEST(SweepReplicatedLoad, EveryCoreReadsTheWholeOperand) {
    SimOptions o;
    o.timing_only = true;
    SimResult r = simulate(build_replicated_load({4096, 4}), MachineDesc{}, {}, o);
    EXPECT_EQ(r.stats.dram_read_bytes, 4 * 4096);
    for (const CoreStats &c : r.stats.cores) EXPECT_EQ(c.dram_read_bytes, 4096);
}

TEST(SweepReplicatedLoad, RejectsBadShapesNamingTheField) {
    EXPECT_TRUE(contains(error_of([] { build_replicated_load({100, 4}); }), "bytes (100)"));
    EXPECT_TRUE(contains(error_of([] { build_replicated_load({4096, 0}); }), "cores (0)"));
    EXPECT_TRUE(contains(error_of([] { build_replicated_load({1 << 22, 1}); }), "bytes (4194304)"));
}

// A tile moved in pieces (a scattered write) needs a linear walk: stream_tiles says so.
TEST(TileStream, PiecesWithATwoDimensionalWalkAreRejected) {
    ProgramBuilder b("pieces", 1);
    int y = b.buffer("y", BufferKind::Output, DType::F16, {64, 16});
    TileStream st;
    st.buffer = y, st.desc = b.dma_desc(DmaDesc{}), st.tile_bytes = 128;
    st.grid_cols = 2, st.grid_row_bytes = 256;
    st.pieces = 2, st.piece_bytes = 128, st.piece_lx_bytes = 128;
    EXPECT_TRUE(contains(error_of([&] { stream_tiles(b, 2, {}, {st}, [](int, Reg) {}); }),
                         "pieces need a linear walk"));
}

TEST(SweepPrograms, DefaultShapesBuildAndRunTimingOnly) {
    SimOptions o;
    o.timing_only = true;
    const MachineDesc m;
    std::vector<DeviceProgram> programs = {
        build_pointwise({}),           build_row_reduction({}),  build_col_reduction({}),
        build_restickify({}),          build_plane_transport({}), build_lx_matmul({}),
        build_fused_softmax({}),       build_replicated_load({}),
    };
    PointwiseShape bc;
    bc.broadcast = Broadcast::Row;
    programs.push_back(build_pointwise(bc));
    for (const DeviceProgram &p : programs) {
        SimResult r = simulate(p, m, {}, o);
        // Each moves data through device memory, and takes at least the channel's time for what it moved.
        EXPECT_GT(r.stats.dram_read_bytes + r.stats.dram_write_bytes, 0) << p.kernel_name;
        EXPECT_GE(r.stats.us, testing_floor::channel_floor_us(r.stats.dram_read_bytes, r.stats.dram_write_bytes, m))
            << p.kernel_name;
        EXPECT_LE(r.stats.lx_peak_bytes, m.lx_usable_bytes) << p.kernel_name;
    }
}

}  // namespace
}  // namespace spyre
