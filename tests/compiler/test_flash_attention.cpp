// Multi-head attention with key tiles and an online softmax (schedules/flash_attention.h) matches
// Halide's CPU realisation of the same algorithm. As for single-head attention
// (test_attention.cpp), exp differs by a few fp32 ULPs between Halide's CPU code and the device,
// which can flip a probability's fp16 rounding; the rescaling by exp of the running maxima adds
// the same again. The bound is absolute: 2.5e-4, one fp16 ULP for outputs below 0.5 (values are in
// [-1, 1]).
#include <gtest/gtest.h>

#include <set>

#include "compiler_test_util.h"
#include "device/error.h"
#include "auto_schedule.h"
#include "flash_attention.h"
#include "normalize_stmt.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct FlashAttentionCase {
    std::string schedule;
    int dim, seq, heads, q_tile, k_tile, cores;
    bool causal = false;
};

class FlashAttention : public ::testing::TestWithParam<FlashAttentionCase> {};

TEST_P(FlashAttention, MatchesCpu) {
    const FlashAttentionCase c = GetParam();
    std::shared_ptr<FlashAttentionKernel> spyre_instance;
    AutoResult auto_result;
    DiffResult r = run_differential(
        [&] {
            auto a = std::make_shared<FlashAttentionKernel>(make_flash_attention(c.dim, c.seq, c.heads, c.q_tile, c.k_tile, c.causal));
            spyre_instance = a;  // the last instance built is the one the schedule gets
            Kernel k;
            k.inputs = {a->q, a->k, a->v};
            k.output = a->out;
            k.funcs = {{"scores", a->scores}, {"tile_max", a->tile_max}, {"exps", a->exps}, {"tile_sum", a->tile_sum},
                       {"probs", a->probs}, {"pv", a->pv}, {"state", a->state}};
            if (c.causal)  // the diagonal tile's stages, computed at root on the CPU like the others
                for (auto [n, f] : {std::pair{"diag_tile_max", a->diag.tile_max}, {"diag_exps", a->diag.exps},
                                    {"diag_probs", a->diag.probs}, {"diag_tile_sum", a->diag.tile_sum},
                                    {"diag_pv", a->diag.pv}})
                    k.funcs[n] = f;
            return k;
        },
        [&](Kernel &k) {
            if (c.schedule != "auto") return schedule_flash_attention(*spyre_instance, c.schedule, c.cores);
            // No directive: the autoscheduler's fold family (autoschedule/auto_fold.h).
            CompileOptions o;
            for (int i = 0; i < 3; i++) o.inputs.push_back(TensorSpec{{c.dim, c.seq, c.heads}, {}});
            o.output = TensorSpec{{c.dim, c.seq, c.heads}, {}};
            AutoOptions ao;
            // Correctness of what it picks, not the best pick: a few candidates, and no wall-clock
            // bound, so that the pick does not depend on the machine's load.
            ao.max_evaluations = 6;
            ao.max_cores = c.cores;
            ao.progress = false;
            auto_result = auto_schedule(k.output, k.inputs, o, ao);
        },
        {{c.dim, c.seq, c.heads}, {c.dim, c.seq, c.heads}, {c.dim, c.seq, c.heads}}, {c.dim, c.seq, c.heads}, -1, 1);
    EXPECT_LE(r.cmp.max_abs_error, 2.5e-4) << r.cmp.first_mismatch << auto_result.cpp;
    if (c.schedule == "auto") {
        EXPECT_EQ(auto_result.family, "fold") << auto_result.cpp;
        EXPECT_NEAR(r.stats.us, auto_result.us, 1e-6 * auto_result.us) << "the schedule applied is the one timed";
        EXPECT_LE(r.program.num_cores, c.cores);
    }
    int matmuls = 0;
    for (const Instr &in : r.program.code) matmuls += in.op == Opcode::MATMUL;
    EXPECT_GE(matmuls, 2);
    // The state's elements are updated an instruction each over all the tile's rows, not one per
    // query row (fold_accumulators splits the loop over the rows): a few dozen instructions per
    // pair of query and key tiles, where a loop over the rows runs thousands.
    const int64_t pairs = int64_t(c.seq / c.q_tile) * (c.seq / c.k_tile) * c.heads;
    EXPECT_LT(r.stats.instructions, 400 * pairs);
    // kv_resident's key-tile loop (innermost, with the MATMULs; in pairs of tiles, rotate_producers)
    // leaves the end of one tile's state update in flight while the next tile's scores MATMUL
    // starts: no WAIT at its back edge when it runs more than once.
    if (c.schedule == "kv_resident") {
        std::vector<size_t> open;
        int key_loops = 0;
        for (size_t i = 0; i < r.program.code.size(); i++) {
            const Opcode op = r.program.code[i].op;
            if (op == Opcode::LOOP) open.push_back(i);
            if (op != Opcode::ENDLOOP) continue;
            const size_t begin = open.back();
            open.pop_back();
            bool matmul = false, inner_loop = false;
            for (size_t j = begin + 1; j < i; j++) {
                matmul |= r.program.code[j].op == Opcode::MATMUL;
                inner_loop |= r.program.code[j].op == Opcode::LOOP;
            }
            const Instr &loop = r.program.code[begin];
            if (!matmul || inner_loop || loop.a[1] != 0 || loop.a[2] < 2) continue;
            key_loops++;
            EXPECT_NE(r.program.code[i - 1].op, Opcode::WAIT) << "the key-tile loop at " << begin << " waits at its end";
        }
        // (A causal key loop is counted by a register; two key tiles make one pair.)
        if (!c.causal && c.seq / c.k_tile >= 4) {
            EXPECT_GE(key_loops, 1);
        }
    }
}

std::string flash_case_name(const ::testing::TestParamInfo<FlashAttentionCase> &info) {
    const FlashAttentionCase &c = info.param;
    return c.schedule + "_" + std::to_string(c.dim) + "x" + std::to_string(c.seq) + "x" + std::to_string(c.heads) + "_q" +
           std::to_string(c.q_tile) + "_k" + std::to_string(c.k_tile) + "_cores" + std::to_string(c.cores) +
           (c.causal ? "_causal" : "");
}

// `make test`: each schedule once, causal and not, one and several cores and query tiles.
INSTANTIATE_TEST_SUITE_P(Shapes, FlashAttention,
                         ::testing::Values(FlashAttentionCase{"kv_stream", 64, 256, 1, 64, 64, 1},
                                           FlashAttentionCase{"kv_resident", 64, 256, 1, 64, 64, 1},
                                           // Causal: key tiles after the query tile skipped, the
                                           // diagonal tiles masked; tiles of one or several query tiles.
                                           FlashAttentionCase{"kv_stream", 64, 192, 3, 32, 64, 2, true},
                                           // Causal, K and V a key tile at a time.
                                           FlashAttentionCase{"kv_chunked", 64, 256, 2, 64, 64, 2, true},
                                           // No directive: the autoscheduler folds the state too.
                                           FlashAttentionCase{"auto", 64, 256, 1, 64, 64, 1}),
                         flash_case_name);

// The rest (`make sweep`): wider heads, four cores, segments of two and four query tiles.
INSTANTIATE_TEST_SUITE_P(Sweep, FlashAttention,
                         ::testing::Values(FlashAttentionCase{"kv_stream", 128, 256, 4, 64, 128, 4},
                                           FlashAttentionCase{"kv_resident", 128, 512, 4, 64, 256, 2},
                                           FlashAttentionCase{"kv_stream", 64, 192, 3, 32, 64, 2},
                                           FlashAttentionCase{"kv_resident", 64, 256, 1, 64, 64, 1, true},
                                           FlashAttentionCase{"kv_resident", 128, 512, 4, 64, 256, 2, true},
                                           FlashAttentionCase{"kv_chunked", 64, 384, 3, 32, 64, 2, true},
                                           FlashAttentionCase{"kv_chunked", 128, 512, 4, 32, 128, 2, true},
                                           FlashAttentionCase{"auto", 128, 512, 4, 64, 256, 2},
                                           FlashAttentionCase{"auto", 64, 128, 2, 32, 64, 2, true}),
                         flash_case_name);

// Grouped-query attention (Llama 3's: query heads share KV heads) and decode steps (a few new
// queries against a cache of every earlier position), with the layouts a decoder gives them: q and
// out as the projections write them, {dim, seq, heads} stored head by head within a position (one
// {heads * dim, seq} matrix), and K and V as the KV cache holds them, {dim, kv_seq, kv_heads}
// stored the same way, so that a step appends its positions at the end.
struct GqaCase {
    std::string schedule;
    int dim, seq, heads, kv_seq, kv_heads, q_tile, k_tile, cores;
    bool causal;
};

class GqaAttention : public ::testing::TestWithParam<GqaCase> {};

TEST_P(GqaAttention, MatchesCpuInTheDecoderLayouts) {
    const GqaCase c = GetParam();
    const AttentionShape shape{c.dim, c.seq, c.heads, c.kv_seq, c.kv_heads, c.q_tile, c.k_tile, c.causal};
    std::shared_ptr<FlashAttentionKernel> spyre_instance;
    std::vector<Runtime::Buffer<>> inputs = {
        random_buffer(Float(16), {c.dim, c.seq, c.heads}, -1, 1, 1),
        random_buffer(Float(16), {c.dim, c.kv_seq, c.kv_heads}, -1, 1, 2),
        random_buffer(Float(16), {c.dim, c.kv_seq, c.kv_heads}, -1, 1, 3)};
    const DeviceLayout heads_inside{0, {1, 2, 0}};  // position outermost, then head, then d's sticks
    DiffResult r = run_differential_with_options(
        [&] {
            auto a = std::make_shared<FlashAttentionKernel>(make_flash_attention(shape));
            spyre_instance = a;
            Kernel k;
            k.inputs = {a->q, a->k, a->v};
            k.output = a->out;
            k.funcs = {{"scores", a->scores}, {"tile_max", a->tile_max}, {"exps", a->exps}, {"tile_sum", a->tile_sum},
                       {"probs", a->probs}, {"pv", a->pv}, {"state", a->state}};
            if (c.causal)
                for (auto [n, f] : {std::pair{"diag_tile_max", a->diag.tile_max}, {"diag_exps", a->diag.exps},
                                    {"diag_probs", a->diag.probs}, {"diag_tile_sum", a->diag.tile_sum},
                                    {"diag_pv", a->diag.pv}})
                    k.funcs[n] = f;
            return k;
        },
        [&](Kernel &, const CompileOptions &given) {
            schedule_flash_attention(*spyre_instance, c.schedule, c.cores);
            CompileOptions o = given;
            for (TensorSpec &t : o.inputs) t.layout = heads_inside;
            o.output.layout = heads_inside;
            return o;
        },
        inputs, {c.dim, c.seq, c.heads});
    EXPECT_LE(r.cmp.max_abs_error, 2.5e-4) << r.cmp.first_mismatch;
}

std::string gqa_case_name(const ::testing::TestParamInfo<GqaCase> &info) {
    const GqaCase &c = info.param;
    return c.schedule + "_" + std::to_string(c.dim) + "_q" + std::to_string(c.seq) + "x" + std::to_string(c.heads) +
           "_kv" + std::to_string(c.kv_seq) + "x" + std::to_string(c.kv_heads) + "_tiles" + std::to_string(c.q_tile) +
           "x" + std::to_string(c.k_tile) + "_cores" + std::to_string(c.cores) + (c.causal ? "_causal" : "");
}

INSTANTIATE_TEST_SUITE_P(Shapes, GqaAttention,
                         ::testing::Values(
                             // Prefill: causal over its own positions, two query heads per KV head.
                             GqaCase{"kv_resident", 64, 128, 4, 128, 2, 32, 64, 4, true},
                             // Decode: one new token against 192 cached positions (three key
                             // tiles, the last holding the query), four heads per KV head.
                             GqaCase{"kv_resident", 128, 1, 8, 192, 2, 1, 64, 8, true},
                             // Eight new tokens, streamed K and V, an odd cache length.
                             GqaCase{"kv_stream", 64, 8, 4, 72, 1, 8, 72, 2, true}),
                         gqa_case_name);

// A decode step reads its cache in whole key tiles of a window longer than its context
// (AttentionShape::valid_kv): the keys past the context must weigh nothing whatever the window
// holds there. Against attention over exactly the context's keys on the CPU, with large values in
// the padding (a key past the context let in moves the result far outside the bound).
struct DecodeWindowCase {
    std::string schedule;
    int window, valid, k_tile;
};

void PrintTo(const DecodeWindowCase &c, std::ostream *os) {
    *os << c.schedule << " " << c.valid << " of " << c.window << ", tiles of " << c.k_tile;
}

class DecodeWindow : public ::testing::TestWithParam<DecodeWindowCase> {};

TEST_P(DecodeWindow, KeysPastTheContextWeighNothing) {
    const DecodeWindowCase c = GetParam();
    const int dim = 64, rows = 4, heads = 2;
    Runtime::Buffer<> q = random_buffer(Float(16), {dim, rows, heads}, -1, 1, 11);
    Runtime::Buffer<> k = random_buffer(Float(16), {dim, c.window, heads}, -1, 1, 12);
    Runtime::Buffer<> v = random_buffer(Float(16), {dim, c.window, heads}, -1, 1, 13);
    // The padding: keys that would dominate the softmax, values far from the others.
    Runtime::Buffer<uint16_t> kp(k), vp(v);
    for (int h = 0; h < heads; h++)
        for (int p = c.valid; p < c.window; p++)
            for (int d = 0; d < dim; d++) kp(d, p, h) = 0x4900, vp(d, p, h) = 0x5800;  // 10.0 and 128.0
    FlashAttentionKernel dev = make_flash_attention(AttentionShape{dim, rows, heads, c.window, heads, rows, c.k_tile, false, c.valid});
    schedule_flash_attention(dev, c.schedule, 2);
    const CompileOptions o = kernel_options({{dim, rows, heads}, {dim, c.window, heads}, {dim, c.window, heads}}, {dim, rows, heads});
    const SpyreRun run = run_on_spyre(compile_for_spyre(dev.out, {dev.q, dev.k, dev.v}, o), {q, k, v});

    // The reference: the same attention over the first `valid` keys, one key tile, on the CPU.
    FlashAttentionKernel ref = make_flash_attention(AttentionShape{dim, rows, heads, c.valid, heads, rows, c.valid, false});
    schedule_flash_attention(ref, "cpu", 1);
    ref.q.set(Buffer<>(*q.raw_buffer()));
    ref.k.set(Buffer<>(*k.cropped(1, 0, c.valid).raw_buffer()));
    ref.v.set(Buffer<>(*v.cropped(1, 0, c.valid).raw_buffer()));
    Buffer<float16_t> want(dim, rows, heads);
    ref.out.realize(want, cpu_reference_target());
    const Comparison cmp = compare(run.output, *want.get());
    EXPECT_LE(cmp.max_abs_error, 2.5e-4) << cmp.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Shapes, DecodeWindow,
                         ::testing::Values(DecodeWindowCase{"kv_stream", 256, 65, 64}, DecodeWindowCase{"kv_stream", 256, 129, 128},
                                           DecodeWindowCase{"kv_resident", 256, 200, 64}, DecodeWindowCase{"kv_resident", 256, 256, 256},
                                           DecodeWindowCase{"kv_stream", 512, 257, 256}),
                         [](const auto &i) {
                             return i.param.schedule + "_" + std::to_string(i.param.valid) + "_of_" +
                                    std::to_string(i.param.window) + "_tiles" + std::to_string(i.param.k_tile);
                         });

TEST(FlashAttentionErrors, ADecodeWindowTooShortOrWithTheCausalMaskIsRefused) {
    auto msg = [](AttentionShape s) { return error_of([&] { make_flash_attention(s); }); };
    EXPECT_NE(msg({64, 4, 2, 256, 2, 4, 64, false, 300}).find("valid_kv (300) must be between 1 and kv_seq (256)"),
              std::string::npos);
    EXPECT_NE(msg({64, 4, 2, 256, 2, 4, 64, true, 200}).find("valid_kv (200) applies without the causal mask"),
              std::string::npos);
}

// A key bias decides which keys weigh 0 by data: with the causal mask or a compile-time valid_kv it
// is refused by name.
TEST(FlashAttentionErrors, AKeyBiasWithTheCausalMaskOrValidKvIsRefused) {
    auto msg = [](AttentionShape s, bool causal, int valid) {
        s.causal = causal, s.valid_kv = valid, s.key_bias = true;
        return error_of([&] { make_flash_attention(s); });
    };
    const AttentionShape s{64, 4, 2, 256, 2, 4, 64};
    EXPECT_NE(msg(s, true, 0).find("key_bias applies without the causal mask and without valid_kv"), std::string::npos);
    EXPECT_NE(msg(s, false, 200).find("key_bias applies without the causal mask and without valid_kv"), std::string::npos);
    EXPECT_EQ(msg(s, false, 0), "(no error)");
}

// A paged pool read in place takes no causal mask and at least one block.
TEST(FlashAttentionErrors, APagedPoolWithTheCausalMaskOrNoBlocksIsRefused) {
    AttentionShape s{64, 4, 2, 256, 2, 4, 64};
    s.pool_blocks = -1;
    EXPECT_NE(error_of([&] { make_flash_attention(s); }).find("pool_blocks (-1) reads a paged cache without the causal mask, 1 or more blocks"),
              std::string::npos);
    s.pool_blocks = 8;
    s.causal = true;
    s.seq = 4, s.kv_seq = 256;
    EXPECT_NE(error_of([&] { make_flash_attention(s); }).find("pool_blocks (8) reads a paged cache without the causal mask"),
              std::string::npos);
}

TEST(FlashAttentionErrors, GqaShapesThatCannotWorkAreRefusedByName) {
    auto msg = [](AttentionShape s) { return error_of([&] { make_flash_attention(s); }); };
    EXPECT_NE(msg({64, 8, 6, 64, 4, 8, 64, true}).find("6 query heads do not share 4 KV heads evenly"),
              std::string::npos);
    EXPECT_NE(msg({64, 128, 4, 64, 2, 32, 64, true}).find("128 queries against 64 keys"), std::string::npos);
    EXPECT_NE(msg({64, 8, 4, 100, 2, 8, 64, true}).find("kv_seq 100 is not a whole number of k_tiles of 64"),
              std::string::npos);
    FlashAttentionKernel a = make_flash_attention(AttentionShape{64, 32, 2, 64, 2, 32, 64, true});
    EXPECT_NE(error_of([&] { schedule_flash_attention(a, "kv_chunked", 2); }).find("needs a prefill (seq == kv_seq)"),
              std::string::npos);
}

TEST(FlashAttentionErrors, SequenceNotWholeTilesNamesTheTile) {
    try {
        make_flash_attention(64, 200, 1, 64, 100);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("seq 200 is not a whole number of q_tiles of 64"), std::string::npos)
            << e.what();
    }
}

TEST(FlashAttentionErrors, CausalKeyTileNotAMultipleOfTheQueryTileNamesBoth) {
    const std::string msg = error_of([] { make_flash_attention(64, 192, 1, 64, 96, true); });
    EXPECT_NE(msg.find("causal attention needs k_tile (96) a multiple of q_tile (64)"), std::string::npos) << msg;
    EXPECT_EQ(error_of([] { make_flash_attention(64, 192, 1, 64, 96, false); }), "(no error)");  // not causal: fine
}

TEST(FlashAttentionTiles, CausalKeyTilesAreMultiplesOfTheQueryTile) {
    for (int seq : {2048, 1152, 320, 100, 33, 1}) {
        const FlashTiles t = flash_attention_tiles(seq, true);
        EXPECT_EQ(seq % t.q_tile, 0) << seq;
        EXPECT_EQ(seq % t.k_tile, 0) << seq;
        EXPECT_EQ(t.k_tile % t.q_tile, 0) << seq;
    }
    EXPECT_EQ(flash_attention_tiles(320, false).k_tile, 160);  // 160 is not a multiple of 64,
    EXPECT_EQ(flash_attention_tiles(320, true).q_tile, 32);    // but of the causal query tile
    EXPECT_EQ(flash_attention_tiles(320, true).k_tile, 160);
    EXPECT_EQ(flash_attention_tiles(192, true).k_tile, 192);
    EXPECT_EQ(flash_attention_tiles(2048, true).q_tile, 32);  // room for kv_chunked (flash_attention.h)
}

TEST(FlashAttentionErrors, KvChunkedWithoutTheCausalMaskIsRefused) {
    FlashAttentionKernel a = make_flash_attention(64, 256, 1, 64, 64);
    const std::string msg = error_of([&] { schedule_flash_attention(a, "kv_chunked", 1); });
    EXPECT_NE(msg.find("kv_chunked needs the causal mask (mask=causal)"), std::string::npos) << msg;
}

// kv_chunked loads K and V a key tile per segment of query tiles, inside the loop that computes
// (the next segment's tile while this one computes), where kv_resident loads the head's before
// its first MATMUL; the segment's query tiles are double-buffered by a pipeline of their own.
TEST(FlashAttentionChunked, KeyTilesAreLoadedInsideTheLoopThatComputes) {
    auto program = [](const std::string &schedule) {
        FlashAttentionKernel a = make_flash_attention(128, 1024, 4, 32, 128, true);
        schedule_flash_attention(a, schedule, 4);
        CompileOptions o;
        for (int i = 0; i < 3; i++) o.inputs.push_back(TensorSpec{{128, 1024, 4}, {}});
        o.output = TensorSpec{{128, 1024, 4}, {}};
        return compile_for_spyre(a.out, {a.q, a.k, a.v}, o);
    };
    // Whether a loop holds both a load from `buffer` and a MATMUL; the tags the loads use.
    auto shape = [](const DeviceProgram &p, const std::string &buffer, std::set<int> *tags) {
        int index = -1;
        for (size_t b = 0; b < p.buffers.size(); b++)
            if (p.buffers[b].name == buffer) index = int(b);
        std::vector<std::pair<bool, bool>> open;  // per open loop: (loads buffer, has MATMUL)
        bool both = false;
        for (const Instr &in : p.code) {
            if (in.op == Opcode::LOOP) open.push_back({false, false});
            if (in.op == Opcode::ENDLOOP) {
                both |= open.back().first && open.back().second;
                auto inner = open.back();
                open.pop_back();
                if (!open.empty()) open.back().first |= inner.first, open.back().second |= inner.second;
            }
            if (in.op == Opcode::DMA_LD) tags->insert(in.a[0]);
            if (!open.empty() && in.op == Opcode::DMA_LD && in.a[1] == index) open.back().first = true;
            if (!open.empty() && in.op == Opcode::MATMUL) open.back().second = true;
        }
        return both;
    };
    std::set<int> chunked_tags, resident_tags;
    const DeviceProgram chunked = program("kv_chunked"), resident = program("kv_resident");
    EXPECT_TRUE(shape(chunked, "k", &chunked_tags));
    EXPECT_TRUE(shape(chunked, "v", &chunked_tags));
    EXPECT_FALSE(shape(resident, "k", &resident_tags));
    EXPECT_FALSE(shape(resident, "v", &resident_tags));
    EXPECT_TRUE(chunked_tags.count(13) && chunked_tags.count(14)) << "the query tiles' loads use the inner pipeline's tags";
}

TEST(FlashAttentionErrors, UnknownScheduleListsTheKnownOnes) {
    FlashAttentionKernel a = make_flash_attention(64, 128, 1, 64, 64);
    try {
        schedule_flash_attention(a, "kv_everywhere", 1);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("kv_resident"), std::string::npos) << e.what();
    }
}

// A Tuple update whose elements each read the other's old value: Halide keeps a loaded value in a
// let across the other element's store. normalize_stmt, which substitutes lets, cannot keep it and
// says so, instead of reading the new value (a silently different result).
TEST(TupleUpdates, ALoadedValueUsedAfterItsBufferIsOverwrittenIsRefused) {
    using namespace Halide::Internal;
    Expr old_b = Load::make(Float(32), "swap_state.1", 0, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
    Stmt body = Block::make(Store::make("swap_state.1", 1.0f, 0, Parameter(), const_true(), ModulusRemainder()),
                            Store::make("swap_state.0", Variable::make(Float(32), "t"), 0, Parameter(), const_true(),
                                        ModulusRemainder()));
    KernelPlan plan;
    try {
        normalize_stmt(LetStmt::make("t", old_b, body), plan);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("Func swap_state: a value read from swap_state[1] is used after "
                                             "swap_state[1] is overwritten"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("order the Tuple's elements"), std::string::npos) << e.what();
    }
    // Used before the store, the same let is substituted.
    Stmt fine = Block::make(Store::make("swap_state.0", Variable::make(Float(32), "t"), 0, Parameter(), const_true(),
                                        ModulusRemainder()),
                            Store::make("swap_state.1", 1.0f, 0, Parameter(), const_true(), ModulusRemainder()));
    EXPECT_NO_THROW(normalize_stmt(LetStmt::make("t", old_b, fine), plan));
}

}  // namespace
}  // namespace spyre::testing

