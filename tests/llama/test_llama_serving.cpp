// Serving shapes of the llama app (apps/llama/llama_model.h): a prompt prefilled in chunks, a
// batch whose sequences are prefilled one by one (different prompts, different lengths) and then
// decoded together at their different contexts, and a paged KV cache. Each gives the tokens of the
// plain run: the whole prompt at once, each sequence alone (the plain C++ decoder,
// llama_reference.h), the contiguous caches.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "device/error.h"
#include "llama_config.h"
#include "llama_model.h"
#include "llama_reference.h"
#include "llama_test_util.h"

namespace spyre::llama {
namespace {

std::vector<int> serving_prompt(int seed, int n, int vocab) {
    std::vector<int> ids;
    for (int i = 0; i < n; i++) ids.push_back(int((uint32_t(i + 97 * seed) * 2654435761u >> 7) % uint32_t(vocab)));
    return ids;
}

int launches_of(const StepResult &r, const std::string &stage) {
    int n = 0;
    for (const KernelRun &k : r.runs) n += k.stage == stage;
    return n;
}

// A 40-token prompt in chunks of 24 (24 tokens, then 16 whose queries attend to the 24 cached
// positions and to themselves causally, in two query tiles of 8) gives the whole prompt's next token
// and logits within one fp16 ULP (2e-3 at the logits' size), and the same greedy decode after it;
// the head runs once, after the last chunk.
TEST(LlamaServing, AChunkedPrefillGivesTheWholePromptsTokensAndLogits) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.max_context = 48;
    LlamaModel whole(c, o), chunked(c, o);
    ReferenceLlama plain(c, whole);
    const std::vector<int> prompt = serving_prompt(1, 40, c.vocab);
    std::vector<int> a = whole.prefill(prompt).tokens;
    const StepResult cr = chunked.prefill(prompt, PrefillOptions{0, 24});
    std::vector<int> b = cr.tokens;
    EXPECT_EQ(launches_of(cr, "qkv_proj"), 2 * c.layers);
    EXPECT_EQ(launches_of(cr, "argmax"), 1);
    EXPECT_EQ(chunked.position(0), 40);
    std::vector<float> p = plain.step(prompt);
    for (int s = 0; s < 4; s++) {
        EXPECT_LE(test::max_abs_diff(chunked.logits(0), whole.logits(0)), 2e-3) << "step " << s;
        EXPECT_LE(test::max_abs_diff(chunked.logits(0), p), 4e-3) << "step " << s;
        ASSERT_EQ(b, a) << "step " << s;
        EXPECT_EQ(b[0], argmax_of(p)) << "step " << s;
        p = plain.step(b);
        a = whole.decode(a).tokens;
        b = chunked.decode(b).tokens;
    }
}

// Two sequences of one batch, prefilled one after the other (24 tokens, and 9 in chunks of 4: the
// last chunk one token, a decode step's attention), then decoded together for 3 steps at contexts
// 24.. and 9..: each sequence's tokens and logits are what the plain decoder gives that sequence
// alone.
TEST(LlamaServing, ABatchPrefilledSequenceBySequenceDecodesAtMixedContextsAsEachAloneWould) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.max_context = 32;
    o.batch = 2;
    LlamaModel device(c, o);
    ReferenceLlama first(c, device), second(c, device);
    const std::vector<int> p0 = serving_prompt(2, 24, c.vocab), p1 = serving_prompt(3, 9, c.vocab);
    std::vector<int> next = {device.prefill(p0, PrefillOptions{0, 0}).tokens.at(0), 0};
    std::vector<float> a = first.step(p0);
    EXPECT_LE(test::max_abs_diff(device.logits(0), a), 4e-3);
    EXPECT_NE(test::refusal_of([&] { device.logits(1); }).find("no logits for sequence 1"), std::string::npos);
    next[1] = device.prefill(p1, PrefillOptions{1, 4}).tokens.at(0);
    std::vector<float> b = second.step(p1);
    EXPECT_LE(test::max_abs_diff(device.logits(1), b), 4e-3);
    EXPECT_EQ(device.position(0), 24);
    EXPECT_EQ(device.position(1), 9);
    for (int s = 0; s < 3; s++) {
        EXPECT_EQ(next[0], argmax_of(a)) << "step " << s;
        EXPECT_EQ(next[1], argmax_of(b)) << "step " << s;
        a = first.step({next[0]});
        b = second.step({next[1]});
        next = device.decode(next).tokens;
        EXPECT_LE(test::max_abs_diff(device.logits(0), a), 4e-3) << "step " << s;
        EXPECT_LE(test::max_abs_diff(device.logits(1), b), 4e-3) << "step " << s;
    }
    EXPECT_EQ(device.position(1), 12);
}

// A paged KV cache (kv_block 8: each layer's keys and values in a pool of 8-position blocks that
// the batch shares, taken as the sequences grow) gives the contiguous caches' logits bit for bit:
// the same rows reach the attention kernel, gathered through the block tables. Two sequences,
// prefilled (24 tokens; 9 in chunks of 4: runs that straddle blocks) and decoded together.
TEST(LlamaServing, APagedCacheGivesTheContiguousCachesLogitsBitForBit) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.max_context = 32;
    o.batch = 2;
    LlamaModel contiguous(c, o);
    o.kv_block = 8;
    LlamaModel paged(c, o);
    const std::vector<int> p0 = serving_prompt(4, 24, c.vocab), p1 = serving_prompt(5, 9, c.vocab);
    std::vector<int> a = {contiguous.prefill(p0).tokens.at(0), 0}, b = {paged.prefill(p0).tokens.at(0), 0};
    EXPECT_EQ(test::max_abs_diff(paged.logits(0), contiguous.logits(0)), 0.0);
    a[1] = contiguous.prefill(p1, PrefillOptions{1, 4}).tokens.at(0);
    const StepResult second = paged.prefill(p1, PrefillOptions{1, 4});
    b[1] = second.tokens.at(0);
    EXPECT_EQ(test::max_abs_diff(paged.logits(1), contiguous.logits(1)), 0.0);
    EXPECT_GT(launches_of(second, "k_gather"), 0);
    // Blocks come from the back of the pool: sequence 0's first three, then sequence 1's two.
    EXPECT_EQ(paged.block_table(0), (std::vector<int>{7, 6, 5}));
    EXPECT_EQ(paged.block_table(1), (std::vector<int>{4, 3}));
    EXPECT_TRUE(contiguous.block_table(0).empty());
    for (int s = 0; s < 3; s++) {
        ASSERT_EQ(b, a) << "step " << s;
        a = contiguous.decode(a).tokens;
        b = paged.decode(b).tokens;
        EXPECT_EQ(test::max_abs_diff(paged.logits(0), contiguous.logits(0)), 0.0) << "step " << s;
        EXPECT_EQ(test::max_abs_diff(paged.logits(1), contiguous.logits(1)), 0.0) << "step " << s;
    }
    EXPECT_EQ(paged.block_table(0).size(), 4u) << "position 24 took a fourth block";
    paged.reset();
    EXPECT_TRUE(paged.block_table(0).empty());
}

// Decode steps at contexts 9 to 14 compile one attention kernel (the window of 256 positions, its
// keys weighed by a bias) where one per context compiled six; the logits are the same bit for bit.
TEST(LlamaServing, DecodeStepsShareOneAttentionKernelPerWindowBitForBit) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.max_context = 16;
    LlamaModel bucketed(c, o);
    o.decode_buckets = false;
    LlamaModel per_context(c, o);
    const std::vector<int> prompt = serving_prompt(6, 8, c.vocab);
    std::vector<int> a = bucketed.prefill(prompt).tokens, b = per_context.prefill(prompt).tokens;
    std::set<const DeviceProgram *> bucket_kernels, context_kernels;
    for (int s = 0; s < 6; s++) {
        ASSERT_EQ(a, b) << "step " << s;
        const StepResult ra = bucketed.decode(a), rb = per_context.decode(b);
        for (const KernelRun &k : ra.runs)
            if (k.stage == "attention") bucket_kernels.insert(k.program);
        for (const KernelRun &k : rb.runs)
            if (k.stage == "attention") context_kernels.insert(k.program);
        a = ra.tokens, b = rb.tokens;
        EXPECT_EQ(test::max_abs_diff(bucketed.logits(0), per_context.logits(0)), 0.0) << "step " << s;
    }
    EXPECT_EQ(bucket_kernels.size(), 1u);
    EXPECT_EQ(context_kernels.size(), 6u);
}

// Two sequences' prompts (12 tokens each) prefilled in one step, each kernel one launch for both
// (in chunks of 8 too): each sequence's logits and tokens are those of prefilling it alone, and the
// batch decodes on from there as the one prefilled sequence by sequence does.
TEST(LlamaServing, ABatchedPrefillGivesEachSequencesOwnPrefill) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.max_context = 24;
    o.batch = 2;
    LlamaModel one_by_one(c, o), batched(c, o), chunked(c, o);
    const std::vector<int> p0 = serving_prompt(7, 12, c.vocab), p1 = serving_prompt(8, 12, c.vocab);
    std::vector<int> a = {one_by_one.prefill(p0, PrefillOptions{0, 0}).tokens.at(0), 0};
    const std::vector<float> a0 = one_by_one.logits(0);
    a[1] = one_by_one.prefill(p1, PrefillOptions{1, 0}).tokens.at(0);
    const StepResult br = batched.prefill_batch({p0, p1});
    EXPECT_EQ(launches_of(br, "qkv_proj"), c.layers) << "one launch a layer for both sequences";
    std::vector<int> b = br.tokens, ch = chunked.prefill_batch({p0, p1}, 8).tokens;
    EXPECT_LE(test::max_abs_diff(batched.logits(0), a0), 2e-3);
    EXPECT_LE(test::max_abs_diff(batched.logits(1), one_by_one.logits(1)), 2e-3);
    EXPECT_LE(test::max_abs_diff(chunked.logits(1), one_by_one.logits(1)), 2e-3);
    for (int s = 0; s < 2; s++) {
        ASSERT_EQ(b, a) << "step " << s;
        ASSERT_EQ(ch, a) << "step " << s;
        a = one_by_one.decode(a).tokens;
        b = batched.decode(b).tokens;
        ch = chunked.decode(ch).tokens;
    }
    EXPECT_EQ(batched.position(1), 14);
}

// Blocks of 64 positions, a decode attention's key tile: a single-token step's attention reads the
// pool in place, a key tile per block through the block table (no gather). Two sequences (70
// tokens over two blocks, and 9) decode together as the plain decoder decodes each alone.
TEST(LlamaServing, ADecodeReadsAPagedCacheOfKeyTileBlocksInPlace) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.max_context = 80;
    o.batch = 2;
    o.kv_block = 64;
    LlamaModel paged(c, o);
    ReferenceLlama first(c, paged), second(c, paged);
    const std::vector<int> p0 = serving_prompt(9, 70, c.vocab), p1 = serving_prompt(10, 9, c.vocab);
    std::vector<int> next = {paged.prefill(p0, PrefillOptions{0, 0}).tokens.at(0),
                             paged.prefill(p1, PrefillOptions{1, 0}).tokens.at(0)};
    std::vector<float> a = first.step(p0), b = second.step(p1);
    EXPECT_EQ(paged.block_table(0), (std::vector<int>{3, 2}));
    for (int s = 0; s < 3; s++) {
        EXPECT_EQ(next[0], argmax_of(a)) << "step " << s;
        EXPECT_EQ(next[1], argmax_of(b)) << "step " << s;
        a = first.step({next[0]});
        b = second.step({next[1]});
        const StepResult r = paged.decode(next);
        next = r.tokens;
        EXPECT_EQ(launches_of(r, "k_gather"), 0) << "step " << s;
        int in_place = 0;
        for (const KernelRun &k : r.runs)
            in_place += k.stage == "attention" && k.schedule.find("read in place from the paged pool") != std::string::npos;
        EXPECT_EQ(in_place, 2 * c.layers) << "step " << s;
        EXPECT_LE(test::max_abs_diff(paged.logits(0), a), 4e-3) << "step " << s;
        EXPECT_LE(test::max_abs_diff(paged.logits(1), b), 4e-3) << "step " << s;
    }
}

// A paged cache decoded from position 0, no prefill (the first step's one key is gathered, the
// next ones read in place: blocks of 64): the plain decoder's tokens.
TEST(LlamaServing, APagedCacheDecodesFromAnEmptyCache) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.max_context = 8;
    o.kv_block = 64;
    LlamaModel paged(c, o);
    ReferenceLlama plain(c, paged);
    std::vector<int> t = {5};
    for (int s = 0; s < 3; s++) {
        const std::vector<float> p = plain.step(t);
        t = paged.decode(t).tokens;
        EXPECT_EQ(t[0], argmax_of(p)) << "step " << s;
        EXPECT_LE(test::max_abs_diff(paged.logits(0), p), 4e-3) << "step " << s;
    }
}

TEST(LlamaServingErrors, APrefillOfASequenceOutsideTheBatchOrANegativeChunkIsRefusedByName) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.timing_only = true;
    o.max_context = 16;
    o.batch = 2;
    LlamaModel m(c, o);
    EXPECT_NE(test::refusal_of([&] { m.prefill({1, 2}, PrefillOptions{2, 0}); })
                  .find("llama: prefill of sequence 2, but the batch holds 2 (sequences 0 to 1)"),
              std::string::npos);
    EXPECT_NE(test::refusal_of([&] { m.prefill({1, 2}, PrefillOptions{0, -1}); })
                  .find("llama: prefill chunk -1 (0: the whole prompt at once; or the tokens of each chunk)"),
              std::string::npos);
    EXPECT_NE(test::refusal_of([&] { m.prefill(std::vector<int>(17, 1), PrefillOptions{1, 4}); })
                  .find("sequence 1 at position 0 has no room for 17 more in a cache of 16"),
              std::string::npos);
    EXPECT_EQ(m.position(1), 0) << "a refused prefill fills nothing";
    EXPECT_NE(test::refusal_of([&] { m.prefill_batch({{1, 2}}); })
                  .find("prefill_batch takes a prompt for each of the batch's 2 sequences, got 1"),
              std::string::npos);
    EXPECT_NE(test::refusal_of([&] { m.prefill_batch({{1, 2}, {3}}); })
                  .find("prompts of one length: sequence 1 has 1 tokens, sequence 0 has 2"),
              std::string::npos);
    ModelOptions bad = o;
    bad.kv_block = -8;
    EXPECT_NE(test::refusal_of([&] { LlamaModel x(c, bad); }).find("llama: kv_block -8 (0: a contiguous cache per sequence"),
              std::string::npos);
}

}  // namespace
}  // namespace spyre::llama
