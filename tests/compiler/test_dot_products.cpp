// Dot products per element: a Func whose every element is a reduction along the sticks of another
// tensor's row, indexed by the Func's own x (scores(t, h) = sum(q(d, h) * k(d, t, h)): one query
// against a cache of keys). Written as a new user writes decode attention from the docs, with
// inline sum() and maximum(), by hand and under auto_schedule, checked against Halide's CPU
// realisation. Before, auto_schedule had no candidate for either: it read Halide's inline
// reductions' args in the order Halide made them, took a column reduction for a transpose, and
// offered a transposing stage only in tiles of whole sticks of rows.
#include <gtest/gtest.h>

#include "auto_schedule.h"
#include "auto_structure.h"
#include "compiler_test_util.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// out(t, h) = sum over d of q(d, h) * k(d, t, h): H heads, T keys of D elements each.
Algorithm row_dots() {
    return [] {
        Kernel k;
        ImageParam q(Float(16), 2, "q"), keys(Float(16), 3, "keys");
        Var t("t"), h("h");
        Func out("out");
        RDom rd(0, q.dim(0).extent(), "rd");
        out(t, h) = cast<float16_t>(sum(cast<float>(q(rd, h)) * cast<float>(keys(rd, t, h))));
        k.inputs = {q, keys};
        k.output = out;
        k.vars = {{"t", t}, {"h", h}};
        return k;
    };
}

// Decode attention with grouped queries (GQA): one query per head, `group` query heads per head of
// the cache, a softmax over the context in three passes (max, sum, weighted sum of values).
Algorithm gqa_decode(int group) {
    return [=] {
        Kernel k;
        ImageParam q(Float(16), 2, "q"), kc(Float(16), 3, "kc"), vc(Float(16), 3, "vc");
        Var d("d"), t("t"), h("h");
        Func scores("scores"), mx("mx"), e("e"), den("den"), out("out");
        RDom rd(0, q.dim(0).extent(), "rd"), rt(0, kc.dim(1).extent(), "rt");
        scores(t, h) = sum(cast<float>(q(rd, h)) * cast<float>(kc(rd, t, h / group))) * 0.125f;
        mx(h) = maximum(scores(rt, h));
        e(t, h) = exp(scores(t, h) - mx(h));
        den(h) = sum(e(rt, h));
        out(d, h) = cast<float16_t>(sum(e(rt, h) * cast<float>(vc(d, rt, h / group))) / den(h));
        k.inputs = {q, kc, vc};
        k.output = out;
        k.vars = {{"d", d}, {"h", h}, {"t", t}};
        k.funcs = {{"scores", scores}, {"mx", mx}, {"e", e}, {"den", den}};
        return k;
    };
}

TEST(DotProducts, OneDotProductPerElementMatchesCpuByHandAndUnderAuto) {
    const std::vector<std::vector<int64_t>> ins = {{64, 8}, {64, 64, 8}};
    const DiffResult hand = run_differential(row_dots(), [](Kernel &k) {
        spyre::schedule(k.output).ring_split(k.vars.at("h"), 8);  // each element reduced on its own
    }, {{64, 8}, {64, 64, 8}}, {64, 8}, -1, 1);
    EXPECT_EQ(hand.cmp.mismatches, 0) << hand.cmp.first_mismatch;
    const DiffResult a = run_differential(row_dots(), auto_scheduled(ins, {64, 8}), {{64, 8}, {64, 64, 8}}, {64, 8}, -1, 1);
    EXPECT_EQ(a.cmp.mismatches, 0) << a.cmp.first_mismatch;
    EXPECT_LE(a.stats.us, hand.stats.us * 1.001);
}

// Llama-3.1-8B's grouping (4 query heads per KV head) at a small head size and context. The device
// and Halide's CPU code differ in fp32 exp and in the order the dot products' sums meet, so up to
// 1 ULP of the fp16 result (most elements are equal).
TEST(DotProducts, GqaDecodeAttentionFromTheDocsMatchesCpuByHandAndUnderAuto) {
    const int D = 64, H = 32, G = 4, T = 64;
    const std::vector<std::vector<int64_t>> ins = {{D, H}, {D, T, H / G}, {D, T, H / G}};
    const DiffResult hand = run_differential(gqa_decode(G), [](Kernel &k) {
        const Var h = k.vars.at("h");
        spyre::schedule(k.output).ring_split(h, 32).stick_vectorize(k.vars.at("d"));
        for (const char *f : {"scores", "mx", "den"}) spyre::schedule(k.funcs.at(f)).scratchpad_store_at(k.output, h);
        spyre::schedule(k.funcs.at("e")).scratchpad_store_at(k.output, h).stick_vectorize(k.vars.at("t"));
    }, {{D, H}, {D, T, H / G}, {D, T, H / G}}, {D, H}, -1, 1);
    EXPECT_LE(hand.cmp.max_ulp, 1) << hand.cmp.first_mismatch;
    const DiffResult a = run_differential(gqa_decode(G), auto_scheduled(ins, {D, H}), {{D, H}, {D, T, H / G}, {D, T, H / G}},
                                          {D, H}, -1, 1);
    EXPECT_LE(a.cmp.max_ulp, 1) << a.cmp.first_mismatch;
    EXPECT_LE(a.stats.us, hand.stats.us * 1.001);
}

// stick_vectorize(t) on the dot products puts different keys in one vector's lanes, a transpose of
// the keys inside the reduction: the refusal says so, and what to write instead.
TEST(DotProducts, VectorizingAcrossTheKeysIsRefusedSayingToLeaveItUnvectorized) {
    Kernel k = row_dots()();
    spyre::schedule(k.output).ring_split(k.vars.at("h"), 8).stick_vectorize(k.vars.at("t"));
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{64, 8}, {64, 64, 8}}, {64, 8})); });
    EXPECT_NE(e.find("a dot product per element"), std::string::npos) << e;
    EXPECT_NE(e.find("no stick_vectorize"), std::string::npos) << e;
}

// The analysis behind it: out(d, h) = sum(e(r, h) * v(d, r)) streams along d (Halide names its
// inline sum's args (h, d), in the order it met them), while scores(t, h) reads the keys across
// their sticks.
TEST(DotProducts, TheAnalysisReadsInlineReductionsAtTheirConsumersArgs) {
    Kernel k = gqa_decode(4)();
    const autosched::PipelineInfo info = autosched::analyse_pipeline(k.output, k.inputs);
    EXPECT_FALSE(info.output().reads_across_sticks);
    const autosched::StageInfo *scores = info.find(k.funcs.at("scores").name());
    ASSERT_NE(scores, nullptr);
    EXPECT_TRUE(scores->reads_across_sticks);
    EXPECT_FALSE(info.find(k.funcs.at("e").name())->reads_across_sticks);
}

}  // namespace
}  // namespace spyre::testing
