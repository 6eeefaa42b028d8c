// The autoscheduler's fold family (schedules/auto_fold.h) on Tuple states folded over a reduction:
// what it derives from flash attention's structure (per-iteration Funcs at the update's loop, the
// scores cloned for the causal diagonal update), how it prints, and the errors for Tuple pipelines
// it cannot fold. Numerics of the schedules it picks: test_flash_attention.cpp ("auto" cases).
#include <gtest/gtest.h>

#include "auto_fold.h"
#include "auto_print.h"
#include "auto_schedule.h"
#include "auto_structure.h"
#include "device/error.h"
#include "flash_attention.h"

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

const Candidate *find(const SpaceResult &r, const std::string &summary) {
    for (const Candidate &c : r.candidates)
        if (c.summary == summary) return &c;
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
    for (const Candidate &k : r.candidates) EXPECT_EQ(k.summary.find("v:tile"), std::string::npos) << k.summary;
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

}  // namespace
}  // namespace spyre::testing
