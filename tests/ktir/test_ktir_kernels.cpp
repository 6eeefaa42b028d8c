// Hand-written KTIR kernels (tests/ktir/kernels, in the style of IBM's public examples) imported
// and run on the simulator, checked against Halide's CPU realisation of the same computation.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "Halide.h"
#include "cpu_reference.h"
#include "device/half.h"
#include "ktir_import.h"
#include "spyre.h"
#include "test_paths.h"
#include "ktir_test_util.h"

namespace {

using namespace spyre;
using Halide::Buffer;
using Halide::Expr;
using Halide::Func;
using Halide::RDom;
using Halide::Var;
using Halide::cast;
using Halide::float16_t;

using ktir_testing::kDir;

std::string error_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    return "no error";
}

DeviceProgram import(const std::string &file, std::map<std::string, std::string> args = {}) {
    ktir::ImportOptions o;
    o.args = std::move(args);
    return ktir::import_ktir_file(kDir + "/" + file, o);
}

Buffer<float16_t> random_f16(std::vector<int> shape, uint32_t seed, float lo = -1, float hi = 1) {
    Buffer<float16_t> b(shape);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    b.for_each_value([&](float16_t &v) { v = float16_t(d(rng)); });
    return b;
}

// Largest distance in fp16 units in the last place between the device's output and Halide's.
int64_t max_ulp(const Halide::Runtime::Buffer<> &got, const Buffer<float16_t> &want) {
    int64_t worst = 0;
    const uint16_t *g = reinterpret_cast<const uint16_t *>(got.data());
    const uint16_t *w = reinterpret_cast<const uint16_t *>(want.data());
    EXPECT_EQ(got.number_of_elements(), want.number_of_elements());
    auto ordered = [](uint16_t h) { return (h & 0x8000) ? -int64_t(h & 0x7fff) : int64_t(h); };
    for (size_t i = 0; i < want.number_of_elements(); i++) {
        if (std::isnan(half_to_float(g[i])) != std::isnan(half_to_float(w[i]))) return INT64_MAX;
        worst = std::max<int64_t>(worst, std::llabs(ordered(g[i]) - ordered(w[i])));
    }
    return worst;
}

double max_abs(const Halide::Runtime::Buffer<> &got, const Buffer<float16_t> &want) {
    double worst = 0;
    const uint16_t *g = reinterpret_cast<const uint16_t *>(got.data());
    for (size_t i = 0; i < want.number_of_elements(); i++)
        worst = std::max(worst, std::fabs(double(half_to_float(g[i])) - double(float(want.data()[i]))));
    return worst;
}

Buffer<float16_t> realize(Func f, std::vector<int> shape) {
    return f.realize(shape, cpu_reference_target());
}

TEST(KtirKernels, VectorAddOver32TilesMatchesHalide) {
    DeviceProgram p = import("vector_add.ktir");
    EXPECT_EQ(p.num_cores, 32);
    Buffer<float16_t> a = random_f16({64, 96}, 1), b = random_f16({64, 96}, 2);
    SpyreRun r = run_on_spyre(p, {a, b});
    Var x, y;
    Func c;
    c(x, y) = a(x, y) + b(x, y);
    EXPECT_EQ(max_ulp(r.output, realize(c, {64, 96})), 0);
}

// Sizes and strides given by values (ktir-cpu's dynamic kernels): the importer specialises the
// kernel to the --arg it is given, one program per row count, each matching Halide.
TEST(KtirKernels, VectorAddWithItsRowCountAnArgumentIsSpecialisedToEachValue) {
    for (int rows : {96, 160}) {
        DeviceProgram p = import("vector_add_dynamic.ktir", {{"rows_in", std::to_string(rows)}});
        ASSERT_EQ(p.buffers.size(), 3u);
        EXPECT_EQ(p.buffers[0].shape, (std::vector<int64_t>{64, rows}));
        Buffer<float16_t> a = random_f16({64, rows}, 1), b = random_f16({64, rows}, 2);
        SpyreRun r = run_on_spyre(p, {a, b});
        Var x, y;
        Func c;
        c(x, y) = a(x, y) + b(x, y);
        EXPECT_EQ(max_ulp(r.output, realize(c, {64, rows})), 0) << rows << " rows";
    }
}

// Two arguments as the halves of one tensor through a distributed view: the loop's tiles at run-time
// columns each read the half that holds them (an IF per half), the seam tile reads both.
TEST(KtirKernels, DistributedViewOfTwoArgumentsReadsEachTileFromTheHalvesHoldingIt) {
    for (int n : {64, 192}) {
        DeviceProgram p = import("distributed_halves.ktir", {{"n_in", std::to_string(n)}});
        ASSERT_EQ(p.buffers.size(), 3u);
        Buffer<float16_t> lo = random_f16({n, 8}, 11), hi = random_f16({n, 8}, 12);
        SpyreRun r = run_on_spyre(p, {lo, hi});
        ASSERT_EQ(r.output.dim(0).extent(), 2 * n + 128);
        int wrong = 0;
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 2 * n + 128; x++) {
                const int c = x < 2 * n ? x : n - 64 + (x - 2 * n);  // the tensor, then the seam
                const float16_t want = c < n ? lo(c, y) : hi(c - n, y);
                wrong += std::memcmp(&r.output.as<float16_t>()(x, y), &want, 2) != 0;
            }
        EXPECT_EQ(wrong, 0) << n << " columns a half";
    }
}

// A run-time tile position that would straddle the halves is refused at import, naming where.
TEST(KtirKernels, DistributedViewTileStraddlingItsPartitionsAtARunTimePositionIsRefused) {
    EXPECT_EQ(error_of([] { import("distributed_halves.ktir", {{"n_in", "96"}}); }),
              kDir + "/distributed_halves.ktir: line 37: ktdp.load: at 64 along dimension 1 the tile (64 wide) is not "
                     "inside one partition of the distributed view; a run-time position must not straddle partitions");
}

TEST(KtirKernels, SoftmaxOver4TilesMatchesHalideWithin2Ulp) {
    DeviceProgram p = import("softmax.ktir");
    Buffer<float16_t> in = random_f16({256, 64}, 3, -4, 4);
    SpyreRun r = run_on_spyre(p, {in});
    Var x, y;
    RDom k(0, 256);
    Func mx, e, s, out;
    mx(y) = Halide::maximum(in(k, y));
    e(x, y) = cast<float16_t>(Halide::exp(cast<float>(in(x, y) - mx(y))));  // the device's exp: in fp32
    s(y) = Halide::sum(cast<float>(e(k, y)));
    out(x, y) = e(x, y) / cast<float16_t>(s(y));
    for (Func f : {mx, e, s}) f.compute_root();  // not recomputed per element
    EXPECT_LE(max_ulp(r.output, realize(out, {256, 64})), 2);  // exp: the CPU's and the device's differ
}

TEST(KtirKernels, LayernormWithGammaAndBetaMatchesHalideExactly) {
    DeviceProgram p = import("layernorm.ktir");
    ASSERT_EQ(p.buffers.size(), 4u);
    Buffer<float16_t> x = random_f16({128, 32}, 4, -3, 3), g = random_f16({128}, 5), b = random_f16({128}, 6);
    SpyreRun r = run_on_spyre(p, {x, g, b});
    Var i, j;
    RDom k(0, 128);
    Func sum, mean, d, ss, rs, out;
    sum(j) = Halide::sum(cast<float>(x(k, j)));
    mean(j) = cast<float16_t>(sum(j) * 0.0078125f);
    d(i, j) = x(i, j) - mean(j);
    ss(j) = Halide::sum(cast<float>(d(k, j) * d(k, j)));
    rs(j) = cast<float16_t>(1.0f / Halide::sqrt(ss(j) * 0.0078125f + 1e-5f));
    out(i, j) = d(i, j) * rs(j) * g(i) + b(i);
    for (Func f : {sum, mean, d, ss, rs}) f.compute_root();
    EXPECT_EQ(max_ulp(r.output, realize(out, {128, 32})), 0);
}

TEST(KtirKernels, MatmulAccumulatingOverKChunksMatchesHalideExactly) {
    DeviceProgram p = import("matmul.ktir");
    EXPECT_EQ(p.num_cores, 2);
    Buffer<float16_t> a = random_f16({128, 64}, 7), b = random_f16({64, 128}, 8);
    SpyreRun r = run_on_spyre(p, {a, b});
    Var n, m;
    RDom k(0, 128);
    Func c;
    c(n, m) = cast<float16_t>(Halide::sum(cast<float>(a(k, m)) * cast<float>(b(n, k))));
    EXPECT_EQ(max_ulp(r.output, realize(c, {64, 64})), 0);
}

// A 32-column f16 result is one f32 stick a row, half of an f16 stick: each row converts on its
// own (this once stopped with an internal error, "odd f32 row").
TEST(KtirKernels, MatmulWithA32ColumnF16ResultMatchesHalideExactly) {
    const std::string text = R"(module {
  func.func @mm(%a_ptr: index, %b_ptr: index, %c_ptr: index) {
    %c0 = arith.constant 0 : index
    %av = ktdp.construct_memory_view %a_ptr, sizes: [4, 64], strides: [64, 1] {memory_space = #ktdp.memory_space<global>} : memref<4x64xf16>
    %bv = ktdp.construct_memory_view %b_ptr, sizes: [64, 32], strides: [32, 1] {memory_space = #ktdp.memory_space<global>} : memref<64x32xf16>
    %cv = ktdp.construct_memory_view %c_ptr, sizes: [4, 32], strides: [32, 1] {memory_space = #ktdp.memory_space<global>} : memref<4x32xf16>
    %at = ktdp.construct_access_tile %av[%c0, %c0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>} : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>
    %a = ktdp.load %at : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>
    %bt = ktdp.construct_access_tile %bv[%c0, %c0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 63 >= 0, d1 >= 0, -d1 + 31 >= 0)>} : memref<64x32xf16> -> !ktdp.access_tile<64x32xindex>
    %b = ktdp.load %bt : !ktdp.access_tile<64x32xindex> -> tensor<64x32xf16>
    %e = tensor.empty() : tensor<4x32xf16>
    %p = linalg.matmul ins(%a, %b : tensor<4x64xf16>, tensor<64x32xf16>) outs(%e : tensor<4x32xf16>) -> tensor<4x32xf16>
    %ct = ktdp.construct_access_tile %cv[%c0, %c0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 31 >= 0)>} : memref<4x32xf16> -> !ktdp.access_tile<4x32xindex>
    ktdp.store %p, %ct : tensor<4x32xf16>, !ktdp.access_tile<4x32xindex>
    return
  }
})";
    DeviceProgram p = ktir_testing::lower(text);
    Buffer<float16_t> a = random_f16({64, 4}, 21), b = random_f16({32, 64}, 22);
    SpyreRun r = run_on_spyre(p, {a, b});
    Var n, m;
    RDom k(0, 64);
    Func c;
    c(n, m) = cast<float16_t>(Halide::sum(cast<float>(a(k, m)) * cast<float>(b(n, k))));
    EXPECT_EQ(max_ulp(r.output, realize(c, {32, 4})), 0);
}

TEST(KtirKernels, AttentionHeadWithScalarArgumentMatchesHalide) {
    DeviceProgram p = import("attention.ktir", {{"scale", "0.125"}});
    Buffer<float16_t> q = random_f16({64, 64}, 9), k = random_f16({64, 64}, 10), v = random_f16({64, 64}, 11);
    SpyreRun r = run_on_spyre(p, {q, k, v});
    Var d, i, j;
    RDom rd(0, 64);
    Func s, mx, e, sum, pr, o;
    s(j, i) = Halide::sum(cast<float>(q(rd, i)) * cast<float>(k(rd, j))) * 0.125f;
    mx(i) = Halide::maximum(s(rd, i));
    e(j, i) = Halide::exp(s(j, i) - mx(i));
    sum(i) = Halide::sum(e(rd, i));
    pr(j, i) = cast<float16_t>(e(j, i) / sum(i));
    o(d, i) = cast<float16_t>(Halide::sum(cast<float>(pr(rd, i)) * cast<float>(v(d, rd))));
    for (Func f : {s, mx, e, sum, pr}) f.compute_root();
    EXPECT_LE(max_abs(r.output, realize(o, {64, 64})), 1e-3);
}

TEST(KtirKernels, ScalarArgumentChangesTheResult) {
    // The same kernel with another --arg value computes another softmax temperature.
    DeviceProgram a = import("attention.ktir", {{"scale", "0.125"}}), b = import("attention.ktir", {{"scale", "0.5"}});
    Buffer<float16_t> q = random_f16({64, 64}, 9), k = random_f16({64, 64}, 10), v = random_f16({64, 64}, 11);
    SpyreRun ra = run_on_spyre(a, {q, k, v}), rb = run_on_spyre(b, {q, k, v});
    EXPECT_NE(std::memcmp(ra.output.data(), rb.output.data(), ra.output.size_in_bytes()), 0);
}


// IBM's inter-tile all-reduce (ktdp.inter_tile_produce + ktdp.inter_tile_reduce, combiners
// linalg.add and arith.maximumf) is RING_REDUCE: every tile gets the sum and the maximum of the
// four tiles' rows. The device adds the partials in core order, rounding each sum to fp16.
TEST(KtirKernels, InterTileAllReduceGivesEveryTileTheSumAndMaximumOfTheTilesRows) {
    DeviceProgram p = import("tile_all_reduce.ktir");
    EXPECT_EQ(p.num_cores, 4);
    Buffer<float16_t> x = random_f16({64, 8}, 7);
    std::vector<Halide::Runtime::Buffer<>> outs = run_on_spyre(p, {x}).outputs;
    Var c, r;
    Func sum, mx;
    Expr row = r % 2;
    sum(c, r) = ((x(c, row) + x(c, row + 2)) + x(c, row + 4)) + x(c, row + 6);
    mx(c, r) = Halide::max(Halide::max(x(c, row), x(c, row + 2)), Halide::max(x(c, row + 4), x(c, row + 6)));
    ASSERT_EQ(outs.size(), 2u);
    EXPECT_EQ(max_ulp(outs[0], realize(sum, {64, 8})), 0);
    EXPECT_EQ(max_ulp(outs[1], realize(mx, {64, 8})), 0);
    EXPECT_EQ(std::count_if(p.code.begin(), p.code.end(), [](const Instr &in) { return in.op == Opcode::RING_REDUCE; }),
              2);
}

// An RMS norm split over 2 tiles: one-element partial sums all-reduced between the tiles, then float
// arithmetic on the run-time sum (divide, add eps, rsqrt) on one stick, splat over the row. Halide
// computes it with the device's roundings: squares and the sum of each half to fp16 (the sum itself
// in fp32), the partials added in fp16, each scalar step rounded to fp16.
TEST(KtirKernels, RmsNormOverTwoTilesDoesFloatArithmeticOnTheRunTimeSum) {
    DeviceProgram p = import("tile_rmsnorm.ktir", {{"eps", "0.001"}});
    EXPECT_EQ(p.num_cores, 2);
    Buffer<float16_t> x = random_f16({128, 1}, 11);
    SpyreRun r = run_on_spyre(p, {x});
    Var c, row;
    RDom k(0, 64);
    Func sq, half_sum, scale, y;
    sq(c, row) = x(c, row) * x(c, row);
    half_sum(c) = cast<float16_t>(Halide::sum(cast<float>(sq(c * 64 + k, 0))));
    Expr total = half_sum(0) + half_sum(1);
    Expr mean = total / float16_t(128.0f);
    Expr shifted = mean + float16_t(0.001f);
    scale() = cast<float16_t>(1.0f / Halide::sqrt(cast<float>(shifted)));
    y(c, row) = x(c, row) * scale();
    EXPECT_LE(max_ulp(r.output, realize(y, {128, 1})), 1);
}

// Indirect access (RFC 0682's construct_indirect_access_tile): rows of a table chosen by an index
// buffer, repeats and the first and last row among them, as Halide gathers them on the CPU.
TEST(KtirKernels, GatherOfRowsByAnIndexBufferMatchesHalide) {
    DeviceProgram p = import("gather_rows.ktir");
    ASSERT_EQ(p.buffers.size(), 3u);
    Buffer<float16_t> table = random_f16({128, 64}, 21);
    Buffer<int32_t> ids(8, 1);
    const int32_t pick[8] = {5, 63, 0, 17, 17, 2, 40, 9};
    for (int r = 0; r < 8; r++) ids(r, 0) = pick[r];
    SpyreRun run = run_on_spyre(p, {Halide::Buffer<>(table), Halide::Buffer<>(ids)});
    Var x, r;
    Func out;
    out(x, r) = table(x, Halide::clamp(ids(r, 0), 0, 63)) + table(x, Halide::clamp(ids(r, 0), 0, 63));
    EXPECT_EQ(max_ulp(run.output, realize(out, {128, 8})), 0);
}

// The scatter: rows stored at the slots an index buffer names; the cache's other rows keep their
// contents, so the cache is an in-out buffer.
TEST(KtirKernels, ScatterOfRowsToIndexedSlotsLeavesTheOtherRowsAsTheyWere) {
    DeviceProgram p = import("scatter_rows.ktir");
    ASSERT_EQ(p.buffers.size(), 3u);
    EXPECT_EQ(p.buffers[2].kind, BufferKind::InOut);
    Buffer<float16_t> x = random_f16({64, 8}, 22), cache = random_f16({64, 32}, 23);
    Buffer<int32_t> slots(8);
    const int32_t to[8] = {3, 30, 7, 0, 12, 31, 8, 20};
    for (int r = 0; r < 8; r++) slots(r) = to[r];
    SpyreRun run = run_on_spyre(p, {Halide::Buffer<>(x), Halide::Buffer<>(slots), Halide::Buffer<>(cache)});
    Buffer<float16_t> want = cache.copy();
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 64; c++) want(c, to[r]) = float16_t(-float(x(c, r)));
    EXPECT_EQ(max_ulp(run.output, want), 0);
}

// A paged KV cache (the K and V tiles of ktir-cpu's paged_attention): the block index is read at a
// loop variable, the head at the tile id, and each block of tokens moves as one DMA.
TEST(KtirKernels, PagedCacheReadByABlockTableInALoopMatchesHalide) {
    DeviceProgram p = import("paged_kv.ktir");
    Buffer<float16_t> cache = random_f16({64, 2, 4, 16}, 24);
    Buffer<int32_t> bt(8, 1);
    const int32_t block[8] = {15, 3, 3, 0, 9, 12, 1, 6};
    for (int j = 0; j < 8; j++) bt(j, 0) = block[j];
    SpyreRun run = run_on_spyre(p, {Halide::Buffer<>(cache), Halide::Buffer<>(bt)});
    Var d, h, t;
    Func out;
    out(d, h, t) = cache(d, h, t % 4, Halide::clamp(bt(t / 4, 0), 0, 15));
    EXPECT_EQ(max_ulp(run.output, realize(out, {64, 2, 32})), 0);
    // Only the blocks the table names move: per tile and block 4 token rows of 128 bytes and the
    // block table's one stick, which each load of the tile copies into LX.
    EXPECT_EQ(run.stats.dram_read_bytes, 2 * 8 * (4 * 128 + 128));
}

// int64 ids (torch's index type): the i64 view imports as its i32 words, low first, and each index
// is read whole, so an id past 32 bits is an error naming the DMA, not a wrapped-around row.
TEST(KtirKernels, GatherByInt64IdsReadsEachIdWholeAndMatchesHalide) {
    DeviceProgram p = import("embedding_i64.ktir");
    ASSERT_EQ(p.buffers.size(), 3u);
    EXPECT_EQ(p.buffers[1].type, DType::I32);
    EXPECT_EQ(p.buffers[1].shape, (std::vector<int64_t>{8}));  // 4 ids, 2 words each
    Buffer<float16_t> table = random_f16({64, 32}, 25);
    const int64_t pick[4] = {31, 0, 7, 7};
    auto words = [](const int64_t (&ids)[4]) {
        Buffer<int32_t> w(8);
        for (int i = 0; i < 4; i++) {
            w(2 * i) = int32_t(uint32_t(uint64_t(ids[i])));
            w(2 * i + 1) = int32_t(uint32_t(uint64_t(ids[i]) >> 32));
        }
        return w;
    };
    SpyreRun run = run_on_spyre(p, {Halide::Buffer<>(table), Halide::Buffer<>(words(pick))});
    Var x, t;
    Func out;
    const Buffer<int32_t> lo = words(pick);
    out(x, t) = table(x, Halide::clamp(lo(2 * t), 0, 31));
    EXPECT_EQ(max_ulp(run.output, realize(out, {64, 4})), 0);
    const int64_t wide[4] = {5, (int64_t(1) << 32) + 5, 1, 2};  // row 5 in its low word
    EXPECT_NE(error_of([&] { run_on_spyre(p, {Halide::Buffer<>(table), Halide::Buffer<>(words(wide))}); })
                  .find("is outside buffer 'table'"),
              std::string::npos);
}

// Single elements along the stick (spyre-kernels' log_softmax top-k gather): each is read by a DMA of
// the stick holding it and a VSELIDX into its lane; ids at both ends of the row and repeated.
TEST(KtirKernels, GatherOfSingleElementsAlongTheStickMatchesHalide) {
    DeviceProgram p = import("gather_elements.ktir");
    Buffer<float16_t> logits = random_f16({200, 4}, 26);
    Buffer<int32_t> ids(8, 4);
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 8; k++) ids(k, r) = (r * 53 + k * 29) % 200;
    ids(0, 0) = 0;
    ids(7, 3) = 199;
    ids(3, 2) = ids(4, 2);
    SpyreRun run = run_on_spyre(p, {Halide::Buffer<>(logits), Halide::Buffer<>(ids)});
    Var k, r;
    Func out;
    out(k, r) = logits(Halide::clamp(ids(k, r), 0, 199), r) + logits(Halide::clamp(ids(k, r), 0, 199), r);
    EXPECT_EQ(max_ulp(run.output, realize(out, {8, 4})), 0);
}

// Compares and selects in LX (spyre-kernels' ranks and merge_attn_states): cmpi sge on f16 tensors
// as ktir-cpu reads it (false for NaN), cmpf une (true for NaN: the negated VCMPEQ, operands
// swapped at the select) and an element compared with +inf, with equal pairs, NaNs and +inf among
// the inputs, checked against the predicates evaluated here.
TEST(KtirKernels, CompareAndSelectOfTensorsAndElementsFollowTheirPredicates) {
    DeviceProgram p = import("compare_select.ktir");
    Buffer<float16_t> x = random_f16({64, 4}, 27), y = random_f16({64, 4}, 28);
    const float16_t inf = float16_t(INFINITY), nan = float16_t(NAN);
    x(0, 0) = inf;  // the element case's true branch
    for (int c = 1; c < 64; c += 7) y(c, 1) = x(c, 1);  // equal pairs
    x(3, 2) = nan;
    y(5, 2) = nan;
    x(9, 3) = nan;
    y(9, 3) = nan;
    SpyreRun run = run_on_spyre(p, {Halide::Buffer<>(x), Halide::Buffer<>(y)});
    ASSERT_EQ(run.outputs.size(), 3u);
    Buffer<float16_t> a(64, 4), b(64, 4), c(64, 1);
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 64; k++) {
            const float xv = float(x(k, r)), yv = float(y(k, r));
            a(k, r) = xv >= yv ? x(k, r) : y(k, r);
            b(k, r) = !(xv == yv) ? x(k, r) : inf;
        }
    for (int k = 0; k < 64; k++) c(k, 0) = float16_t(-INFINITY);
    EXPECT_EQ(max_ulp(run.outputs[0], a), 0);
    EXPECT_EQ(max_ulp(run.outputs[1], b), 0);
    EXPECT_EQ(max_ulp(run.outputs[2], c), 0);
}

// A slot read from data into a register (spyre-kernels' reshape_and_cache): the float element is
// converted by VCVT, which truncates toward zero as fptosi does (7.9 is row 7), then read by LDLX,
// and the row is stored at that row of the cache.
TEST(KtirKernels, RowStoredAtASlotReadFromDataLandsInThatRow) {
    DeviceProgram p = import("slot_write.ktir");
    Buffer<float16_t> x = random_f16({128, 4}, 29);
    Buffer<float16_t> slot(1, 4);  // each slot in a stick of its own (BufInfo::elem_sticks): an innermost 1
    const float at[4] = {3.0f, 15.0f, 7.9f, 0.5f};
    const int row[4] = {3, 15, 7, 0};
    for (int t = 0; t < 4; t++) slot(0, t) = float16_t(at[t]);
    SpyreRun run = run_on_spyre(p, {Halide::Buffer<>(x), Halide::Buffer<>(slot)});
    const Halide::Runtime::Buffer<float16_t> cache(run.output);
    int wrong = 0;
    for (int t = 0; t < 4; t++)
        for (int c = 0; c < 128; c++) wrong += std::memcmp(&cache(c, row[t]), &x(c, t), 2) != 0;
    EXPECT_EQ(wrong, 0);
}

// Half-stick tiles (spyre-kernels' mrope): loads of rows starting at lane 32 shift the sticks down,
// stores of half sticks read the sticks, merge and write them back, so the lanes a store does not
// name keep their values; the lane is known for a constant column and for h * 64 + 32 in a loop.
TEST(KtirKernels, HalfStickTilesSwapInPlaceAndLeaveTheRestOfTheirSticks) {
    DeviceProgram p = import("half_sticks.ktir");
    ASSERT_EQ(p.buffers.size(), 1u);
    EXPECT_EQ(p.buffers[0].kind, BufferKind::InOut);
    Buffer<float16_t> x = random_f16({128, 4}, 30);
    SpyreRun run = run_on_spyre(p, {Halide::Buffer<>(x)});
    Buffer<float16_t> want = x.copy();
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 32; c++) {
            want(c, r) = x(c + 32, r);
            want(c + 32, r) = x(c, r);
            if (r < 2) {
                want(c + 64, r) = x(c + 96, r);
                want(c + 96, r) = x(c + 64, r);
            }
        }
    EXPECT_EQ(max_ulp(run.output, want), 0);
}

// Masks generated on chip (spyre-kernels' prefill_attention): each is two fills and a VSELIDX whose
// limit grows with the row, for a compare either way round and signed or unsigned, over rows of
// two sticks; checked against the predicates evaluated here.
TEST(KtirKernels, GeneratedCausalMasksFollowTheirCompareOfTheIndices) {
    DeviceProgram p = import("causal_mask.ktir");
    SpyreRun run = run_on_spyre(p, std::vector<Halide::Buffer<>>{});
    ASSERT_EQ(run.outputs.size(), 2u);
    Buffer<float16_t> m1(80, 16), m2(80, 16);
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 80; j++) {
            m1(j, i) = float16_t(i >= j ? 0.0f : -10000.0f);
            m2(j, i) = float16_t(i < j ? 1.0f : 0.0f);
        }
    EXPECT_EQ(max_ulp(run.outputs[0], m1), 0);
    EXPECT_EQ(max_ulp(run.outputs[1], m2), 0);
}

// Tiles at a loop's columns whose lane varies (0 and 32 as k runs, spyre-kernels' matmul): one IF
// per lane, each with its load, so every tile arrives at lane 0.
TEST(KtirKernels, TilesAtLoopColumnsStartingAtDifferentLanesAreLoadedWhole) {
    DeviceProgram p = import("lane_loop.ktir");
    Buffer<float16_t> x = random_f16({128, 4}, 31);
    SpyreRun run = run_on_spyre(p, {Halide::Buffer<>(x)});
    Buffer<float16_t> want(32, 16);
    for (int b = 0; b < 4; b++)
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 32; c++) want(c, 4 * b + r) = x(32 * b + c, r);
    EXPECT_EQ(max_ulp(run.output, want), 0);
}

}  // namespace
