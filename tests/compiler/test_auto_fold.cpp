// The autoscheduler's fold family (autoschedule/auto_fold.h) on Tuple states folded over a reduction:
// what it derives from flash attention's structure (per-iteration Funcs at the update's loop, the
// scores cloned for the causal diagonal update), how it prints, and the errors for Tuple pipelines
// it cannot fold. Numerics of the schedules it picks: test_flash_attention.cpp ("auto" cases).
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "auto_directives.h"
#include "auto_fold.h"
#include "auto_print.h"
#include "auto_schedule.h"
#include "auto_search.h"
#include "auto_structure.h"
#include "compiler_test_util.h"
#include "device/error.h"
#include "flash_attention.h"
#include "sim/program_work.h"
#include "sim/simulator.h"

namespace spyre::testing {
namespace {

using namespace Halide;
using namespace spyre::autosched;

SpaceShapes flash_shapes(int dim, int seq, int heads) {
    SpaceShapes s;
    s.inputs = {{dim, seq, heads}, {dim, seq, heads}, {dim, seq, heads}};
    s.output = {dim, seq, heads};
    return s;
}

// The fold family's space for a small flash attention (64 x 256, 2 heads, 64-row tiles).
SpaceResult small_flash_space(bool causal) {
    FlashAttentionKernel a = make_flash_attention(64, 256, 2, 64, 64, causal);
    PipelineInfo info = analyse_pipeline(a.out, {a.q, a.k, a.v});
    SpaceResult r;
    EXPECT_EQ(fold_family(info, flash_shapes(64, 256, 2), MachineDesc{}, 2, r), "");
    return r;
}

const Candidate *find(const SpaceResult &r, const std::string &summary) {
    for (const Candidate &c : r.candidates)
        if (c.summary() == summary) return &c;
    return nullptr;
}

TEST(AutoFold, FlashAttentionGivesTheHandScheduleAmongItsCandidates) {
    FlashAttentionKernel a = make_flash_attention(128, 512, 4, 64, 256);
    PipelineInfo info = analyse_pipeline(a.out, {a.q, a.k, a.v});
    SpaceResult r;
    ASSERT_EQ(fold_family(info, flash_shapes(128, 512, 4), MachineDesc{}, 4, r), "");
    // kv_resident's choices: K restickified once per head, V copied per head, the exponentials
    // inlined, everything else of a key tile at the key-tile loop.
    const Candidate *c = find(r, "fold cores=4 tile=64 inner=2 fa_exps:inline fa_kt:head inputs=k:none,q:none,v:head");
    ASSERT_NE(c, nullptr);
    const std::string cpp = print_cpp(c->directives, info, "m");
    for (const char *line : {"fa_scores.compute_at(fa_state, rj.x)", "pe_matmul(rd.x)", "pe_matmul(rt.x)",
                             "fa_state.update().reorder(d, qi, rj.x)", "fa_kt.compute_at(flash_attention, h)",
                             "spyre::stage_all_in_lx(v, flash_attention, h, m)"})
        EXPECT_NE(cpp.find(line), std::string::npos) << line << "\n" << cpp;
    // No candidate reads V again per tile while copying it per tile: inputs that differ per key
    // tile are copied once per head or not at all.
    for (const Candidate &k : r.candidates)
        EXPECT_FALSE(k.choice("v") && k.choice("v")->value == "tile") << k.summary();
}

TEST(AutoFold, CausalScoresAreClonedForTheDiagonalUpdate) {
    FlashAttentionKernel a = make_flash_attention(64, 256, 2, 64, 64, true);
    PipelineInfo info = analyse_pipeline(a.out, {a.q, a.k, a.v});
    SpaceResult r;
    ASSERT_EQ(fold_family(info, flash_shapes(64, 256, 2), MachineDesc{}, 2, r), "");
    ASSERT_FALSE(r.candidates.empty());
    const std::string cpp = print_cpp(r.candidates[0].directives, info, "m");
    // The scores of the diagonal key tile are a copy computed at the second update's loop; K,
    // read by both, once per head (no loop of one update holds both).
    for (const char *line : {"Halide::Func fa_scores_u1 = fa_scores.clone_in(fa_masked);",
                             "fa_scores_u1.compute_at(fa_state, rdiag.x)", "fa_state.update(1).reorder(",
                             "fa_kt.compute_at(flash_attention, h)"})
        EXPECT_NE(cpp.find(line), std::string::npos) << line << "\n" << cpp;
}

// With the causal mask the tiles may also go in segments (kv_chunked): each segmented candidate
// refines the same choices unsegmented, which the search times first (Candidate::refines). Without
// the mask there are no segments.
TEST(AutoFold, SegmentedCandidatesRefineTheirUnsegmentedBases) {
    const SpaceResult causal = small_flash_space(true);
    int segmented = 0;
    for (const Candidate &c : causal.candidates) {
        const bool seg = c.choice("segmented") != nullptr;
        if (!seg) {
            EXPECT_EQ(c.refines, "") << c.summary();
            continue;
        }
        segmented++;
        std::string base = c.summary();
        base.erase(base.find(" segmented"), std::string(" segmented").size());
        EXPECT_EQ(c.refines, base);
        EXPECT_NE(find(causal, base), nullptr) << "the base of " << c.summary() << " is in the space";
    }
    EXPECT_GT(segmented, 0);
    for (const Candidate &c : small_flash_space(false).candidates) EXPECT_EQ(c.refines, "") << c.summary();
}

// At 2048 keys a head's K and V take most of LX, and the largest query tiles overflow it. The shared
// lowering's refusal is taken as it is (no plain lowering of its own): it is the one a plain
// lowering gives, number for number, while a smaller tile of the same structure still compiles.
TEST(AutoFold, ASharedLoweringsLxOverflowIsThePlainOne) {
    FlashAttentionKernel a = make_flash_attention(128, 2048, 2, 64, 256);  // flash_attention_tiles' choice
    SpaceResult space;
    ASSERT_EQ(fold_family(analyse_pipeline(a.out, {a.q, a.k, a.v}), flash_shapes(128, 2048, 2), MachineDesc{}, 2, space), "");
    const Candidate *big = find(space, "fold cores=2 tile=256 inner=2 fa_exps:inline fa_kt:head inputs=k:none,q:none,v:head");
    const Candidate *small = find(space, "fold cores=2 tile=128 inner=2 fa_exps:inline fa_kt:head inputs=k:none,q:none,v:head");
    ASSERT_NE(big, nullptr);
    ASSERT_NE(small, nullptr);
    CompileOptions o;
    const SpaceShapes shapes = flash_shapes(128, 2048, 2);
    for (const auto &in : shapes.inputs) o.inputs.push_back(TensorSpec{in, {}});
    o.output = TensorSpec{shapes.output, {}};
    LoweringCache cache;
    const std::string shared = error_of([&] { lower_candidate(a.out, {a.q, a.k, a.v}, *big, o, &cache); });
    EXPECT_NE(shared.find(": LX overflow: "), std::string::npos) << "[" << shared << "]";
    EXPECT_EQ(cache.lowerings(), 1) << "no plain lowering after the shared one's LX overflow";
    EXPECT_EQ(error_of([&] { lower_candidate(a.out, {a.q, a.k, a.v}, *big, o, nullptr); }), shared);
    EXPECT_NO_THROW(lower_candidate(a.out, {a.q, a.k, a.v}, *small, o, &cache));
    EXPECT_EQ(cache.shared_hits(), 1);
}

// The search skips simulating candidates whose static time bound rules them out
// (time_lower_bound_us): no flash candidate, causal or not, is timed faster than its bound.
TEST(AutoFold, NoFlashCandidateIsTimedFasterThanItsBound) {
    for (bool causal : {false, true}) {
        FlashAttentionKernel a = make_flash_attention(64, 256, 2, 64, 64, causal);
        SpaceResult space;
        ASSERT_EQ(fold_family(analyse_pipeline(a.out, {a.q, a.k, a.v}), flash_shapes(64, 256, 2), MachineDesc{}, 2, space), "");
        CompileOptions o;
        const SpaceShapes shapes = flash_shapes(64, 256, 2);
        for (const auto &in : shapes.inputs) o.inputs.push_back(TensorSpec{in, {}});
        o.output = TensorSpec{shapes.output, {}};
        LoweringCache cache;
        int checked = 0;
        RefusalLog refusals({});  // every flash candidate walked compiles
        const size_t step = std::max<size_t>(1, space.candidates.size() / 8);
        for (size_t i = 0; i < space.candidates.size(); i += step) {
            const Candidate &c = space.candidates[i];
            DeviceProgram p;
            try {
                p = lower_candidate(a.out, {a.q, a.k, a.v}, c, o, &cache);
            } catch (const std::exception &x) {
                refusals.add(x, c.summary());
                continue;
            }
            SimOptions so;
            so.timing_only = true;
            const double us = simulate(p, o.machine, {}, so).stats.us;
            EXPECT_LE(time_lower_bound_us(p, o.machine), us * (1 + 1e-9)) << c.summary();
            checked++;
        }
        EXPECT_GT(checked, 3) << (causal ? "causal" : "full");
    }
}

// A shared lowering can fit LX where the candidate's own lowering does not (causal attention at
// 2048 keys, 256-row tiles: Halide's loop partitioning with constant tiles leaves more expression
// temporaries). The search lowers its winner on its own at the end: such a winner gives way to the
// next best, whose time is then that of its own lowering.
TEST(AutoFold, AWinnerItsOwnLoweringRefusesGivesWayToTheNext) {
    const FlashTiles t = flash_attention_tiles(2048, true);
    FlashAttentionKernel a = make_flash_attention(128, 2048, 32, t.q_tile, t.k_tile, true);
    const std::vector<Halide::ImageParam> ins{a.q, a.k, a.v};
    SpaceResult space;
    ASSERT_EQ(fold_family(analyse_pipeline(a.out, ins), flash_shapes(128, 2048, 32), MachineDesc{}, 32, space), "");
    CompileOptions o;
    o.kernel_name = "causal";
    for (const auto &in : flash_shapes(128, 2048, 32).inputs) o.inputs.push_back(TensorSpec{in, {}});
    o.output = TensorSpec{flash_shapes(128, 2048, 32).output, {}};
    auto find = [&](const std::string &summary) {
        for (const Candidate &c : space.candidates)
            if (c.summary() == summary) return c;
        ADD_FAILURE() << "no candidate " << summary;
        return Candidate{};
    };
    const Candidate refused = find("fold cores=32 tile=256 inner=2 fa_exps:iter fa_exps_diag:iter inputs=k:none,q:none,v:head");
    const Candidate next = find("fold cores=32 tile=4 inner=2 fa_exps:iter fa_exps_diag:iter inputs=k:none,q:none,v:none");
    LoweringCache cache;
    const double shared = time_candidate(a.out, ins, refused, o, int64_t(1) << 20, false, &cache);
    const std::string e = error_of([&] { time_candidate(a.out, ins, refused, o, int64_t(1) << 20, false); });
    ASSERT_NE(e.find("LX overflow"), std::string::npos) << e;
    const double own = time_candidate(a.out, ins, next, o, int64_t(1) << 20, false);
    ASSERT_LT(shared, own) << "the shared lowering ranks the refused candidate first";
    SearchOptions so;
    so.progress = false;
    const SearchResult r = search(a.out, ins, {refused, next}, o, so);
    EXPECT_EQ(r.best, 1u);
    EXPECT_EQ(r.best_us, own);
}

// The causal mask (rj.where(... <= i * q_tile)) reads the query tile i: with i inside the key-tile
// loop, the loops at that level would change size with it, which the back end refuses. The family
// keeps i outside (inner=2) and offers the whole-state order only where no predicate reads an arg.
TEST(AutoFold, ACausalMaskKeepsTheArgsItReadsOutsideTheReductionLoop) {
    auto inners = [](bool causal) {
        std::set<std::string> seen;
        for (const Candidate &c : small_flash_space(causal).candidates) {
            EXPECT_NE(c.choice("inner"), nullptr) << c.summary();
            if (c.choice("inner")) seen.insert("inner=" + c.choice("inner")->value);
        }
        return seen;
    };
    EXPECT_EQ(inners(true), (std::set<std::string>{"inner=2"}));
    EXPECT_EQ(inners(false), (std::set<std::string>{"inner=2", "inner=4"}));
}

TEST(AutoFold, ATupleStateReadByAnotherFuncThanTheOutputIsNamed) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    RDom r(0, 8, "r");
    Func st("st"), other("other"), out("out");
    st(x, y) = Tuple(0.0f, 0.0f);
    st(x, y) = Tuple(st(x, y)[0] + in(x, r), max(st(x, y)[1], in(x, r)));
    other(x, y) = st(x, y)[0] * 2.0f;
    out(x, y) = other(x, y) + st(x, y)[1];
    CompileOptions o;
    o.inputs = {TensorSpec{{64, 8}, {}}};
    o.output = TensorSpec{{64, 8}, {}};
    try {
        auto_schedule(out, {in}, o);
        FAIL() << "scheduled";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("Func st is a Tuple state the autoscheduler cannot fold: the Tuple Func st is "
                                             "read by another Func than the output"),
                  std::string::npos)
            << e.what();
    }
}

// What the fold family refuses, each named: the pipelines are small Tuple states over `in`.
std::string fold_error(Func out, ImageParam in) {
    CompileOptions o;
    o.inputs = {TensorSpec{{64, 32}, {}}};
    o.output = TensorSpec{{64, 8}, {}};
    AutoOptions ao;
    ao.progress = false;
    try {
        auto_schedule(out, {in}, o, ao);
    } catch (const Error &e) {
        return e.what();
    }
    return "(scheduled)";
}

struct FoldRefusal {
    std::string name, expected;
    std::function<std::pair<Func, ImageParam>()> pipeline;
};

class AutoFoldRefuses : public ::testing::TestWithParam<FoldRefusal> {};

TEST_P(AutoFoldRefuses, NamesWhatDoesNotFold) {
    auto [out, in] = GetParam().pipeline();
    const std::string msg = fold_error(out, in);
    EXPECT_NE(msg.find(GetParam().expected), std::string::npos) << msg;
}

Var x("x"), y("y"), j("j");

INSTANTIATE_TEST_SUITE_P(
    Pipelines, AutoFoldRefuses,
    ::testing::Values(
        FoldRefusal{"TwoTupleStates", "it has two Tuple Funcs (s1, s2)",
                    [] {
                        ImageParam in(Float(32), 2, "in");
                        RDom r(0, 4, "r");
                        Func s1("s1"), s2("s2"), out("out");
                        for (Func s : {s1, s2}) {
                            s(x, y) = Tuple(0.0f, 0.0f);
                            s(x, y) = Tuple(s(x, y)[0] + in(x, y * 4 + r), s(x, y)[1]);
                        }
                        out(x, y) = s1(x, y)[0] + s2(x, y)[1];
                        return std::pair{out, in};
                    }},
        FoldRefusal{"TheStateIsTheOutput", "the Tuple Func out is the output",
                    [] {
                        ImageParam in(Float(32), 2, "in");
                        RDom r(0, 4, "r");
                        Func out("out");
                        out(x, y) = Tuple(0.0f, 0.0f);
                        out(x, y) = Tuple(out(x, y)[0] + in(x, y * 4 + r), out(x, y)[1]);
                        return std::pair{out, in};
                    }},
        FoldRefusal{"TheOutputReadsMoreThanTheState", "the output out does more than read the state st",
                    [] {
                        ImageParam in(Float(32), 2, "in");
                        RDom r(0, 4, "r");
                        Func st("st"), out("out");
                        st(x, y) = Tuple(0.0f, 0.0f);
                        st(x, y) = Tuple(st(x, y)[0] + in(x, y * 4 + r), st(x, y)[1]);
                        out(x, y) = st(x, y)[0] + in(x, y);
                        return std::pair{out, in};
                    }},
        FoldRefusal{"AnUpdateThatReadsNothingPerIteration", "update 0 of st reads nothing per iteration of r$x",
                    [] {
                        ImageParam in(Float(32), 2, "in");
                        RDom r(0, 4, "r");
                        Func st("st"), out("out");
                        st(x, y) = Tuple(in(x, y), 0.0f);
                        st(x, y) = Tuple(st(x, y)[0] + cast<float>(r), st(x, y)[1]);
                        out(x, y) = st(x, y)[0] + st(x, y)[1];
                        return std::pair{out, in};
                    }},
        FoldRefusal{"APredicateOnTheStickArg", "the reduction's predicate reads st's innermost args, so no loop order "
                                               "keeps its bounds fixed",
                    [] {
                        ImageParam in(Float(32), 2, "in");
                        RDom r(0, 4, "r");
                        r.where(r <= x % 4);  // the stick dimension, always inside the reduction loop
                        Func st("st"), out("out");
                        st(x, y) = Tuple(0.0f, 0.0f);
                        st(x, y) = Tuple(st(x, y)[0] + in(x, y * 4 + r), st(x, y)[1]);
                        out(x, y) = st(x, y)[0] + st(x, y)[1];
                        return std::pair{out, in};
                    }},
        FoldRefusal{"TheStateReadsAReductionInTwoUpdates", "the state st reads g in two updates",
                    [] {
                        ImageParam in(Float(32), 2, "in");
                        RDom r(0, 4, "r"), r2(0, 4, "r2"), k(0, 4, "k");
                        Func g("g"), st("st"), out("out");
                        g(x, j) = 0.0f;
                        g(x, j) += in(x, j * 4 + k);
                        st(x, y) = Tuple(0.0f, 0.0f);
                        st(x, y) = Tuple(st(x, y)[0] + g(x, r), st(x, y)[1]);
                        st(x, y) = Tuple(st(x, y)[0], st(x, y)[1] + g(x, r2));
                        out(x, y) = st(x, y)[0] + st(x, y)[1];
                        return std::pair{out, in};
                    }},
        FoldRefusal{"AFuncBothUpdatesNeedReadsAReduction", "h needs g per iteration of two updates",
                    [] {
                        ImageParam in(Float(32), 2, "in");
                        RDom r(0, 4, "r"), r2(0, 4, "r2"), k(0, 4, "k");
                        Func g("g"), h("h"), st("st"), out("out");
                        g(x, j) = 0.0f;
                        g(x, j) += in(x, j * 4 + k);
                        h(x, j) = g(x, j) * 2.0f;
                        st(x, y) = Tuple(0.0f, 0.0f);
                        st(x, y) = Tuple(st(x, y)[0] + h(x, r), st(x, y)[1]);
                        st(x, y) = Tuple(st(x, y)[0], st(x, y)[1] + h(x, r2));
                        out(x, y) = st(x, y)[0] + st(x, y)[1];
                        return std::pair{out, in};
                    }},
        FoldRefusal{"AnInlineSumBothUpdatesNeed",
                    "p is needed per iteration of two updates and can be neither inlined nor computed per outer iteration",
                    [] {
                        ImageParam in(Float(32), 2, "in");
                        RDom r(0, 4, "r"), r2(0, 4, "r2"), k(0, 4, "k");
                        Func p("p"), st("st"), out("out");
                        p(x, j) = sum(in(x, j * 4 + k));
                        st(x, y) = Tuple(0.0f, 0.0f);
                        st(x, y) = Tuple(st(x, y)[0] + p(x, r), st(x, y)[1]);
                        st(x, y) = Tuple(st(x, y)[0], st(x, y)[1] + p(x, r2));
                        out(x, y) = st(x, y)[0] + st(x, y)[1];
                        return std::pair{out, in};
                    }}),
    [](const auto &info) { return info.param.name; });

TEST(AutoFold, ACloneNamedLikeAFuncOfThePipelineIsRefused) {
    ImageParam in(Float(32), 2, "in");
    Func g("g"), h("h");
    g(x, y) = in(x, y) * 2.0f;
    h(x, y) = g(x, y) + 1.0f;
    std::map<std::string, Func> funcs{{g.name(), g}, {h.name(), h}};
    try {
        apply_directives({{Directive::CloneIn, g.name(), {h.name()}, {}, h.name()}}, funcs, {}, MachineDesc{});
        FAIL() << "applied";
    } catch (const Error &e) {
        // (Halide names it h$<n> when an earlier test of the process made an "h".)
        EXPECT_NE(std::string(e.what()).find("clone name '" + h.name() + "' is already a Func of the pipeline"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace spyre::testing
