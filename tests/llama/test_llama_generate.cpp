// Generation from a checkpoint (apps/llama/llama_generate.h): a tiny random Hugging Face checkpoint
// written to a temp dir, read, and run on the simulated device; the new ids, greedy and sampled
// with a seed, are the plain C++ decoder's from the same checkpoint, and EOS and stop ids end
// generation; spyre-llama generate prints the same ids. Also the sampler's own rules and its
// sequence for a seed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>

#include "../tools/tool_test_util.h"
#include "device/error.h"
#include "llama_checkpoint.h"
#include "llama_generate.h"
#include "llama_model.h"
#include "llama_reference.h"
#include "llama_test_util.h"
#include "tiny_checkpoint.h"

namespace spyre::llama {
namespace {

namespace fs = std::filesystem;

// One checkpoint and one device model for the suite: each generation starts the sequence again
// (LlamaModel::reset), and the kernels compiled for one run serve the next.
class LlamaGenerate : public ::testing::Test {
protected:
    static constexpr int kMaxNew = 6;
    static void SetUpTestSuite() {
        dir_ = new fs::path(fs::temp_directory_path() / ("spyre_generate_" + std::to_string(::getpid())));
        fs::remove_all(*dir_);
        test::write_checkpoint(*dir_, test::tiny_config(), test::tiny_tensors(), 2);
        checkpoint_ = new LlamaCheckpoint(LlamaCheckpoint::open(dir_->string()));
        ModelOptions o;
        o.checkpoint = checkpoint_;
        o.max_context = 16;
        device_ = new LlamaModel(checkpoint_->config(), o);
    }
    static void TearDownTestSuite() {
        delete device_;
        delete checkpoint_;
        fs::remove_all(*dir_);
        delete dir_;
    }
    static std::vector<int> prompt() { return {1, 17, 200, 42, 9}; }
    static Generated on_device(const GenerateOptions &g) {
        device_->reset();
        bool first = true;
        return generate(
            [&](const std::vector<int> &ids) {
                if (first) device_->prefill(ids);
                else device_->decode(ids);
                first = false;
                return device_->logits(0);
            },
            checkpoint_->config().vocab, prompt(), g);
    }
    static Generated on_plain_decoder(const GenerateOptions &g) {
        ReferenceLlama plain(*checkpoint_, device_->options().machine);
        return generate([&](const std::vector<int> &ids) { return plain.step(ids); }, checkpoint_->config().vocab,
                        prompt(), g);
    }
    static fs::path *dir_;
    static LlamaCheckpoint *checkpoint_;
    static LlamaModel *device_;
};
fs::path *LlamaGenerate::dir_ = nullptr;
LlamaCheckpoint *LlamaGenerate::checkpoint_ = nullptr;
LlamaModel *LlamaGenerate::device_ = nullptr;

TEST_F(LlamaGenerate, GreedyIdsOnTheDeviceAreThePlainDecodersFromTheSameCheckpoint) {
    GenerateOptions g;
    g.max_new_tokens = kMaxNew;
    const Generated d = on_device(g), p = on_plain_decoder(g);
    EXPECT_EQ(d.ids, p.ids);
    EXPECT_EQ(d.ids.size(), size_t(kMaxNew));
    EXPECT_FALSE(d.stopped);
    // Not a constant run: the random model's greedy ids vary.
    EXPECT_GT(std::set<int>(d.ids.begin(), d.ids.end()).size(), 1u) << ::testing::PrintToString(d.ids);
}

TEST_F(LlamaGenerate, SeededSamplingOnTheDeviceIsThePlainDecodersAndRepeatsForASeed) {
    for (const SamplingOptions &s : {SamplingOptions{0.8, 40, 0.9, 7}, SamplingOptions{1.5, 0, 1.0, 123}}) {
        GenerateOptions g;
        g.max_new_tokens = kMaxNew;
        g.sampling = s;
        const Generated d = on_device(g), p = on_plain_decoder(g), again = on_device(g);
        EXPECT_EQ(d.ids, p.ids) << "seed " << s.seed;
        EXPECT_EQ(d.ids, again.ids) << "seed " << s.seed;
        GenerateOptions greedy;
        greedy.max_new_tokens = kMaxNew;
        EXPECT_NE(d.ids, on_plain_decoder(greedy).ids) << "seed " << s.seed << " sampled the greedy ids";
    }
}

TEST_F(LlamaGenerate, EosFromTheConfigAndStopIdsEndGenerationAfterTheStopToken) {
    GenerateOptions g;
    g.max_new_tokens = kMaxNew;
    const std::vector<int> greedy = on_plain_decoder(g).ids;
    ASSERT_EQ(greedy.size(), size_t(kMaxNew));
    // The config's EOS, a list holding the third greedy id (the second's, if it repeats earlier).
    size_t at = 2;
    while (at > 0 && std::find(greedy.begin(), greedy.begin() + long(at), greedy[at]) != greedy.begin() + long(at)) at--;
    nlohmann::json c = test::tiny_config();
    c["eos_token_id"] = {255, greedy[at]};
    const LlamaCheckpoint eos =
        LlamaCheckpoint::from_memory(c.dump(), {{"model.safetensors", test::safetensors_bytes(test::tiny_tensors())}}, "");
    g.stop_ids = eos.eos_ids();
    const Generated d = on_device(g);
    EXPECT_TRUE(d.stopped);
    EXPECT_EQ(d.ids, std::vector<int>(greedy.begin(), greedy.begin() + long(at) + 1));
    // A user's stop id ends it the same way; max_new_tokens 1 gives one id.
    g.stop_ids = {greedy[0]};
    EXPECT_EQ(on_device(g).ids, std::vector<int>{greedy[0]});
    g.stop_ids = {};
    g.max_new_tokens = 1;
    EXPECT_EQ(on_device(g).ids, std::vector<int>{greedy[0]});
}

// The command line: the ids on the first line, as the library draws them (with the prompt prefilled
// in chunks of 2: the same ids); bad ids refused by name.
TEST_F(LlamaGenerate, SpyreLlamaGeneratePrintsTheSameIdsOnItsFirstLine) {
    using tools_testing::quote;
    using tools_testing::run_command;
    GenerateOptions g;
    g.max_new_tokens = 3;
    g.sampling = SamplingOptions{0.8, 40, 0.9, 7};
    const Generated d = on_device(g);
    const std::string cmd = SPYRE_LLAMA + " generate --checkpoint " + quote(dir_->string());
    const tools_testing::CommandResult r = run_command(
        cmd + " --prompt-ids 1,17,200,42,9 --max-new-tokens 3 --temperature 0.8 --top-k 40 --top-p 0.9 --seed 7 --ignore-eos --prefill-chunk 2");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::string want;
    for (int id : d.ids) want += (want.empty() ? "" : ",") + std::to_string(id);
    EXPECT_EQ(r.output.substr(0, r.output.find('\n')), want) << r.output;
    EXPECT_NE(r.output.find("prefill of 5 tokens, in chunks of 2:"), std::string::npos) << r.output;
    const tools_testing::CommandResult bad = run_command(cmd + " --prompt-ids 1,256");
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.output.find("--prompt-ids: 256 outside the vocabulary"), std::string::npos) << bad.output;
    // int8 weights need whole int8 sticks of a projection's columns: this model's 64 KV columns are not.
    const tools_testing::CommandResult narrow = run_command(cmd + " --prompt-ids 1,2 --weights int8");
    EXPECT_EQ(narrow.exit_code, 1);
    EXPECT_NE(narrow.output.find("kv_heads x head_dim is 64"), std::string::npos) << narrow.output;
    const tools_testing::CommandResult unknown = run_command(cmd + " --prompt-ids 1,2 --weights int4");
    EXPECT_EQ(unknown.exit_code, 1);
    EXPECT_NE(unknown.output.find("weights 'int4'; known: fp16, int8"), std::string::npos) << unknown.output;
}

TEST(LlamaSampler, GreedyTopKAndTopPFollowTheirRulesAndASeedGivesOneSequence) {
    const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 2.0f, -1.0f};
    Sampler greedy(SamplingOptions{});
    EXPECT_EQ(greedy.next(logits), 1);  // the first of the largest
    Sampler top1(SamplingOptions{1.0, 1, 1.0, 5});
    for (int i = 0; i < 20; i++) EXPECT_EQ(top1.next(logits), 1);
    // top_k 3 keeps ids 1, 2, 3; top_p 0.5 keeps 1 and 2 (each 0.40 of the whole).
    Sampler k3(SamplingOptions{1.0, 3, 1.0, 5}), p05(SamplingOptions{1.0, 0, 0.5, 5});
    std::set<int> seen_k, seen_p;
    for (int i = 0; i < 200; i++) seen_k.insert(k3.next(logits)), seen_p.insert(p05.next(logits));
    EXPECT_EQ(seen_k, (std::set<int>{1, 2, 3}));
    EXPECT_EQ(seen_p, (std::set<int>{1, 2}));
    // The sequence of seed 42 (mt19937_64 and explicit arithmetic: the same on every platform).
    Sampler s(SamplingOptions{1.0, 0, 1.0, 42});
    std::vector<int> seq;
    for (int i = 0; i < 12; i++) seq.push_back(s.next(logits));
    EXPECT_EQ(seq, (std::vector<int>{2, 2, 2, 1, 3, 1, 2, 1, 1, 1, 1, 2}));
}

TEST(LlamaSampler, BadOptionsPromptsAndIdListsAreRefusedByName) {
    auto has = [](const std::string &msg, const std::string &word) {
        EXPECT_NE(msg.find(word), std::string::npos) << "'" << word << "' not in: " << msg;
    };
    has(test::refusal_of([] { Sampler(SamplingOptions{-1, 0, 1, 0}); }), "temperature");
    has(test::refusal_of([] { Sampler(SamplingOptions{1, -2, 1, 0}); }), "top_k");
    has(test::refusal_of([] { Sampler(SamplingOptions{1, 0, 0, 0}); }), "top_p");
    has(test::refusal_of([] { Sampler(SamplingOptions{1, 0, 1.5, 0}); }), "top_p");
    auto step = [](const std::vector<int> &) { return std::vector<float>(8, 0.0f); };
    has(test::refusal_of([&] { generate(step, 8, {}, GenerateOptions{}); }), "prompt");
    has(test::refusal_of([&] { generate(step, 8, {1, 8}, GenerateOptions{}); }), "8");
    GenerateOptions neg;
    neg.max_new_tokens = -1;
    has(test::refusal_of([&] { generate(step, 8, {1}, neg); }), "max_new_tokens");
    EXPECT_EQ(parse_ids("1, 2,3", "--prompt-ids"), (std::vector<int>{1, 2, 3}));
    has(test::refusal_of([] { parse_ids("1,x,3", "--prompt-ids"); }), "--prompt-ids");
    has(test::refusal_of([] { parse_ids("1,,3", "--stop-ids"); }), "--stop-ids");
    has(test::refusal_of([] { parse_ids("99999999999", "--prompt-ids"); }), "99999999999");
}

}  // namespace
}  // namespace spyre::llama
