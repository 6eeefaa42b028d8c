// Tensor parallelism over several simulated cards (ModelOptions::cards, docs/llama.md "Several
// cards"): each card holds its heads' slices of the attention weights and its columns of the MLP,
// and the partial outputs of o_proj and down_proj are summed on the host (an all-reduce, timed by
// the machine's PCIe link model). A tiny checkpoint with 4 query and 4 KV heads gives the one-card
// greedy ids on 2 and 4 cards; a card count that does not divide the heads is refused by name; the
// 8b config's timing-only decode step counts the all-reduces in its time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "../tools/tool_test_util.h"
#include "device/error.h"
#include "llama_checkpoint.h"
#include "llama_figures.h"
#include "llama_generate.h"
#include "llama_model.h"
#include "tiny_checkpoint.h"

namespace spyre::llama {
namespace {

namespace fs = std::filesystem;

// 4 query and 4 KV heads of 64 (the default tiny checkpoint has 2 and 1), intermediate 512: each
// of 4 cards gets a head of each and 128 columns of the MLP.
test::TinyShape four_head_shape() {
    test::TinyShape s;
    s.heads = 4;
    s.kv_heads = 4;
    s.intermediate = 512;
    return s;
}

class LlamaCards : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new fs::path(fs::temp_directory_path() / ("spyre_cards_" + std::to_string(::getpid())));
        fs::remove_all(*dir_);
        test::write_checkpoint(*dir_, test::tiny_config(four_head_shape()), test::tiny_tensors(four_head_shape()));
        checkpoint_ = new LlamaCheckpoint(LlamaCheckpoint::open(dir_->string()));
    }
    static void TearDownTestSuite() {
        delete checkpoint_;
        fs::remove_all(*dir_);
        delete dir_;
    }
    static std::vector<int> greedy(int cards, int new_tokens = 4, Weights w = Weights::F16, int kv_block = 0) {
        ModelOptions o;
        o.checkpoint = checkpoint_;
        o.max_context = 16;
        o.cards = cards;
        o.weights = w;
        o.kv_block = kv_block;
        LlamaModel m(checkpoint_->config(), o);
        GenerateOptions g;
        g.max_new_tokens = new_tokens;
        bool first = true;
        return generate(
                   [&](const std::vector<int> &ids) {
                       if (first) m.prefill(ids);
                       else m.decode(ids);
                       first = false;
                       return m.logits(0);
                   },
                   checkpoint_->config().vocab, {1, 17, 200, 42, 9}, g)
            .ids;
    }
    static fs::path *dir_;
    static LlamaCheckpoint *checkpoint_;
};
fs::path *LlamaCards::dir_ = nullptr;
LlamaCheckpoint *LlamaCards::checkpoint_ = nullptr;

TEST_F(LlamaCards, TwoAndFourCardsGiveTheOneCardGreedyIds) {
    const std::vector<int> one = greedy(1);
    ASSERT_EQ(one.size(), 4u);
    EXPECT_EQ(greedy(2), one);
    EXPECT_EQ(greedy(4), one);
}

// A paged cache on two cards (each card its KV heads' pool, the same block tables; blocks of 64, so
// the decode steps read them in place): the one-card ids.
TEST_F(LlamaCards, APagedCacheOnTwoCardsGivesTheOneCardGreedyIds) {
    EXPECT_EQ(greedy(2, 4, Weights::F16, 64), greedy(1));
}

// int8 weights from the checkpoint on two cards (each card its columns of wqkv, w1 and w3 with their
// scales, its rows of wo and w2 with every column's scale): the one-card int8 ids. (On four cards a
// card's 64 query columns are not a whole int8 stick: refused by name.)
TEST_F(LlamaCards, Int8WeightsOnTwoCardsGiveTheOneCardGreedyIds) {
    const std::vector<int> one = greedy(1, 4, Weights::Int8);
    ASSERT_EQ(one.size(), 4u);
    EXPECT_EQ(greedy(2, 4, Weights::Int8), one);
    std::string msg = "(no error)";
    try {
        greedy(4, 4, Weights::Int8);
    } catch (const spyre::Error &e) {
        msg = e.what();
    }
    EXPECT_NE(msg.find("whole byte sticks of 128; heads x head_dim is 64 a card"), std::string::npos) << msg;
}

std::string refusal(const LlamaConfig &c, int cards) {
    ModelOptions o;
    o.timing_only = true;
    o.cards = cards;
    o.max_context = 64;
    try {
        LlamaModel m(c, o);
    } catch (const spyre::Error &e) {
        return e.what();
    }
    return "(no error)";
}

TEST(LlamaCardsRefusal, ACardCountThatDoesNotDivideTheHeadsIsRefusedNamingTheField) {
    LlamaConfig c = llama_tiny();  // 4 query heads, 2 KV heads, intermediate 704
    EXPECT_NE(refusal(c, 4).find("kv_heads"), std::string::npos) << refusal(c, 4);
    EXPECT_NE(refusal(c, 3).find("heads"), std::string::npos) << refusal(c, 3);
    c.kv_heads = 4;
    EXPECT_NE(refusal(c, 4).find("intermediate"), std::string::npos) << refusal(c, 4);
    EXPECT_NE(refusal(c, 0).find("cards"), std::string::npos) << refusal(c, 0);
}

TEST(LlamaCardsTiming, The8bDecodeStepOnTwoAndFourCardsCountsItsAllReduces) {
    const LlamaConfig c = llama31_8b();
    for (int cards : {2, 4}) {
        ModelOptions o;
        o.timing_only = true;
        o.layers = 1;
        o.max_context = 256;
        o.cards = cards;
        LlamaModel m(c, o);
        m.set_context(255);
        const StepResult r = m.decode({0});
        // Two all-reduces a layer (after o_proj and after down_proj), of the fp32 partials of one row.
        ASSERT_EQ(r.allreduces.size(), 2u) << cards;
        double kernels = 0, reduces = 0;
        for (const KernelRun &k : r.runs) kernels += k.stats.us;
        for (const AllReduceRun &a : r.allreduces) {
            EXPECT_EQ(a.bytes, int64_t(c.hidden) * 4);
            EXPECT_DOUBLE_EQ(a.us, allreduce_us(a.bytes, cards, o.machine));
            reduces += a.us;
        }
        EXPECT_DOUBLE_EQ(allreduce_us(4096, cards, o.machine),
                         (2.0 * (cards - 1) / cards * 4096 / o.machine.link_bytes_per_ns +
                          2.0 * (cards - 1) * o.machine.link_latency_ns) / 1000.0);
        EXPECT_GT(reduces, 0);
        EXPECT_NEAR(r.us, kernels + reduces, 1e-6 * r.us);
        // The model's figures: every layer's all-reduces counted in its time.
        const StepFigures f = step_figures(m.card_config(), {1, 1, 256}, r, o.machine);
        EXPECT_NEAR(f.allreduce_us, reduces * c.layers, 1e-9 * f.allreduce_us);
        double outside = 0;
        for (const Figure &g : f.outside) outside += g.us;
        EXPECT_NEAR(f.model_us, outside + f.layer.us * c.layers, 1e-9 * f.model_us);
        double stages = 0;
        for (const Figure &g : f.layer_stages) stages += g.us;
        EXPECT_NEAR(f.layer.us, stages + reduces, 1e-9 * f.layer.us);
    }
}

TEST_F(LlamaCards, SpyreLlamaGenerateOnTwoCardsPrintsTheOneCardIds) {
    using tools_testing::quote;
    using tools_testing::run_command;
    const std::vector<int> one = greedy(1, 3);
    std::string want;
    for (int id : one) want += (want.empty() ? "" : ",") + std::to_string(id);
    const std::string cmd = SPYRE_LLAMA + " generate --checkpoint " + quote(dir_->string()) +
                            " --prompt-ids 1,17,200,42,9 --max-new-tokens 3 --ignore-eos";
    const tools_testing::CommandResult r = run_command(cmd + " --cards 2");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.substr(0, r.output.find('\n')), want) << r.output;
    EXPECT_NE(r.output.find("2 cards"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("all-reduce"), std::string::npos) << r.output;
    const tools_testing::CommandResult bad = run_command(cmd + " --cards 3");
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.output.find("heads"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace spyre::llama
