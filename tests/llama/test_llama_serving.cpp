// Serving shapes of the llama app (apps/llama/llama_model.h): a prompt prefilled in chunks, and a
// batch whose sequences are prefilled one by one (different prompts, different lengths) and then
// decoded together at their different contexts. Each gives the tokens of the plain run: the
// whole prompt at once, each sequence alone (the plain C++ decoder, llama_reference.h).
#include <gtest/gtest.h>

#include <cmath>

#include "device/error.h"
#include "llama_config.h"
#include "llama_model.h"
#include "llama_reference.h"

namespace spyre::llama {
namespace {

std::vector<int> serving_prompt(int seed, int n, int vocab) {
    std::vector<int> ids;
    for (int i = 0; i < n; i++) ids.push_back(int((uint32_t(i + 97 * seed) * 2654435761u >> 7) % uint32_t(vocab)));
    return ids;
}

double logit_gap(const std::vector<float> &a, const std::vector<float> &b) {
    double worst = 0;
    for (size_t i = 0; i < a.size(); i++) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
    return worst;
}

int launches_of(const StepResult &r, const std::string &stage) {
    int n = 0;
    for (const KernelRun &k : r.runs) n += k.stage == stage;
    return n;
}

std::string serving_refusal(const std::function<void()> &f) {
    try {
        f();
    } catch (const spyre::Error &e) {
        return e.what();
    }
    return "(no error)";
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
        EXPECT_LE(logit_gap(chunked.logits(0), whole.logits(0)), 2e-3) << "step " << s;
        EXPECT_LE(logit_gap(chunked.logits(0), p), 4e-3) << "step " << s;
        ASSERT_EQ(b, a) << "step " << s;
        EXPECT_EQ(b[0], argmax_of(p)) << "step " << s;
        p = plain.step(b);
        a = whole.decode(a).tokens;
        b = chunked.decode(b).tokens;
    }
}

// Two sequences of one batch, prefilled one after the other (24 tokens, and 9 in chunks of 4: the
// last chunk one token, a decode step's attention), then
// decoded together for 3 steps at contexts 24.. and 9..: each sequence's tokens and logits are what
// the plain decoder gives that sequence alone.
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
    EXPECT_LE(logit_gap(device.logits(0), a), 4e-3);
    EXPECT_NE(serving_refusal([&] { device.logits(1); }).find("no logits for sequence 1"), std::string::npos);
    next[1] = device.prefill(p1, PrefillOptions{1, 4}).tokens.at(0);
    std::vector<float> b = second.step(p1);
    EXPECT_LE(logit_gap(device.logits(1), b), 4e-3);
    EXPECT_EQ(device.position(0), 24);
    EXPECT_EQ(device.position(1), 9);
    for (int s = 0; s < 3; s++) {
        EXPECT_EQ(next[0], argmax_of(a)) << "step " << s;
        EXPECT_EQ(next[1], argmax_of(b)) << "step " << s;
        a = first.step({next[0]});
        b = second.step({next[1]});
        next = device.decode(next).tokens;
        EXPECT_LE(logit_gap(device.logits(0), a), 4e-3) << "step " << s;
        EXPECT_LE(logit_gap(device.logits(1), b), 4e-3) << "step " << s;
    }
    EXPECT_EQ(device.position(1), 12);
}

TEST(LlamaServingErrors, APrefillOfASequenceOutsideTheBatchOrANegativeChunkIsRefusedByName) {
    const LlamaConfig c = llama_tiny();
    ModelOptions o;
    o.timing_only = true;
    o.max_context = 16;
    o.batch = 2;
    LlamaModel m(c, o);
    EXPECT_NE(serving_refusal([&] { m.prefill({1, 2}, PrefillOptions{2, 0}); })
                  .find("llama: prefill of sequence 2, but the batch holds 2 (sequences 0 to 1)"),
              std::string::npos);
    EXPECT_NE(serving_refusal([&] { m.prefill({1, 2}, PrefillOptions{0, -1}); })
                  .find("llama: prefill chunk -1 (0: the whole prompt at once; or the tokens of each chunk)"),
              std::string::npos);
    EXPECT_NE(serving_refusal([&] { m.prefill(std::vector<int>(17, 1), PrefillOptions{1, 4}); })
                  .find("sequence 1 at position 0 has no room for 17 more in a cache of 16"),
              std::string::npos);
    EXPECT_EQ(m.position(1), 0) << "a refused prefill fills nothing";
}

}  // namespace
}  // namespace spyre::llama
