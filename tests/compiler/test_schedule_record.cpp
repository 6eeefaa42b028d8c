// The schedule record (backend/compiler/schedule_record.h): pe_matmul, on_pe, ring_share,
// dma_phases and ring_split_reduction on the PE record each loop's role on its Func, under the
// name the loop has in the lowered statement, and the back end acts on the record alone: a loop
// that only carries a directive's name (Halide's rename to pe_loop(k)) is not a PE loop.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "compile.h"
#include "compile_kernel.h"
#include "compiler_test_util.h"
#include "directives.h"
#include "matmul.h"
#include "norms.h"
#include "schedule_record.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// The records of a compiled kernel, and the names of the loops of its captured statement.
struct Compiled {
    BackendResult r;
    std::set<std::string> loops;
};

Compiled compile(Func out, const std::vector<ImageParam> &inputs, const CompileOptions &o) {
    BackendOptions bo;
    bo.keep_stmt = true;
    Compiled c{compile_kernel(out, inputs, kernel_signature(out, inputs, o), o.machine, bo), {}};
    EXPECT_FALSE(c.r.stmts.empty());
    const std::string &captured = c.r.stmts.at(0).second;
    static const std::regex for_loop(R"((?:for|parallel) \(([^,\s]+),)");
    for (auto it = std::sregex_iterator(captured.begin(), captured.end(), for_loop); it != std::sregex_iterator(); ++it)
        c.loops.insert((*it)[1].str());
    return c;
}

// Every record names a loop the statement has, with the role the directive gave it.
void expect_records(const Compiled &c, const std::map<std::string, LoopDirective> &want) {
    ASSERT_EQ(c.r.plan.loops.all().size(), want.size());
    for (const auto &[loop, d] : want) {
        EXPECT_TRUE(c.loops.count(loop)) << loop << " is not a loop of the captured statement";
        auto it = c.r.plan.loops.all().find(loop);
        ASSERT_NE(it, c.r.plan.loops.all().end()) << "no record of " << loop;
        EXPECT_EQ(int(it->second.role), int(d.role)) << loop;
        EXPECT_EQ(it->second.group, d.group) << loop;
    }
}

int count_op(const DeviceProgram &p, Opcode op) {
    int n = 0;
    for (const Instr &in : p.code) n += in.op == op;
    return n;
}

TEST(LoopDirectives, PeRingScheduleRecordsItsPeAndRingShareLoopsUnderTheirLoweredNames) {
    MatmulKernel k = make_bmm(1, 64, 256, 128);
    schedule_bmm(k, "pe_ring", 4);
    Compiled c = compile(k.out, {k.a, k.w}, kernel_options({{256, 64, 1}, {128, 256}}, {128, 64, 1}));
    // The accumulator's name depends on the Funcs made before it ("acc$3"): taken from the PE
    // record, which must sit on its update's loop k$x.ki.ki_pe (Halide qualifies a split's and a
    // rename's loops by the loop they came from).
    std::string acc;
    int share = 0;
    for (const auto &[loop, d] : c.r.plan.loops.all()) {
        if (d.role == LoopRole::Pe) acc = loop.substr(0, loop.find(".s1."));
        share = std::max(share, d.group);
    }
    ASSERT_FALSE(acc.empty());
    ASSERT_GT(share, 1);
    const std::string k_loop = acc + ".s1." + k.k.x.name();
    expect_records(c, {{k_loop + ".ki.ki_pe", {LoopRole::Pe}},
                       {k_loop + ".ko.ko_share" + std::to_string(share), {LoopRole::RingShare, share}}});
    EXPECT_GT(count_op(c.r.program, Opcode::MATMUL), 0);
    EXPECT_GT(count_op(c.r.program, Opcode::RING_SEND), 0);
}

TEST(LoopDirectives, PhasedNormRecordsItsTileLoop) {
    // 4096 rows: 128 a core, in tiles, so that the tile loop runs more than once (Halide drops a
    // loop of one iteration, and its record with it has nothing to name).
    NormKernel k = make_norm("rmsnorm", 1024, 4096);
    schedule_norm(k, "phased", MachineDesc{});
    Compiled c = compile(k.out, k.inputs, kernel_options({{1024, 4096}, {1024}}, {1024, 4096}));
    ASSERT_EQ(c.r.plan.loops.all().size(), 1u);
    const auto &[loop, d] = *c.r.plan.loops.all().begin();
    EXPECT_EQ(int(d.role), int(LoopRole::DmaPhases));
    EXPECT_TRUE(c.loops.count(loop)) << loop;
    // The output's pure definition, on the loop dma_phases renamed.
    EXPECT_EQ(loop.rfind(k.out.name() + ".s0.", 0), 0u) << loop;
    EXPECT_NE(loop.find("_phased"), std::string::npos) << loop;
    EXPECT_GT(count_op(c.r.program, Opcode::BARRIER), 0);
}

// ring_split_reduction on the PE records the loop on the Func rfactor makes, with and without K panels.
TEST(LoopDirectives, RingSplitReductionOnPeRecordsThePartialsPeLoop) {
    for (int panel : {0, 128}) {
        ImageParam a(Float(16), 2, "a"), b(Float(16), 2, "b");
        Var n("n"), m("m");
        RDom r(0, 8192, "r");
        Func c("c"), out("out");
        c(n, m) = 0.0f;
        c(n, m) += cast<float>(a(r, m)) * cast<float>(b(n, r));
        out(n, m) = cast<float16_t>(c(n, m));
        spyre::schedule(c).scratchpad_root().ring_split_reduction(r.x, 32, 8192, /*on_pe=*/true, panel);
        spyre::schedule(out).stick_vectorize(n);
        Compiled got = compile(out, {a, b}, kernel_options({{8192, 8}, {64, 8192}}, {64, 8}));
        ASSERT_EQ(got.r.plan.loops.all().size(), 1u) << "panel " << panel;
        const auto &[loop, d] = *got.r.plan.loops.all().begin();
        EXPECT_EQ(int(d.role), int(LoopRole::Pe));
        EXPECT_TRUE(got.loops.count(loop)) << loop;
        EXPECT_GT(count_op(got.r.program, Opcode::MATMUL), 0) << "panel " << panel;
    }
}

// The same nest, ordered by hand: marked by on_pe it runs on the PE array; renamed to the same
// name by Halide's rename it is an ordinary loop nest, which the vector unit computes.
TEST(LoopDirectives, OnlyTheDirectiveMarksAPeLoopNotItsName) {
    for (bool directive : {true, false}) {
        ImageParam a(Float(16), 2, "a"), w(Float(16), 2, "w");
        Var n("n"), m("m");
        RDom k(0, 128, "k");
        Func acc("acc"), out("out");
        acc(n, m) = 0.0f;
        acc(n, m) += cast<float>(a(k, m)) * cast<float>(w(n, k));
        out(n, m) = cast<float16_t>(acc(n, m));
        spyre::schedule(out).stick_vectorize(n);
        acc.compute_at(out, m).store_in(MemoryType::VTCM).vectorize(n, 32, TailStrategy::RoundUp);
        if (directive) spyre::schedule(acc).on_pe(k.x);
        else acc.update().rename(k.x, pe_loop(k.x));
        acc.update().reorder(pe_loop(k.x), n, m);
        if (!directive) acc.update().vectorize(n, 64, TailStrategy::RoundUp);
        Compiled c = compile(out, {a, w}, kernel_options({{128, 8}, {64, 128}}, {64, 8}));
        EXPECT_EQ(c.r.plan.loops.all().size(), directive ? 1u : 0u);
        EXPECT_EQ(count_op(c.r.program, Opcode::MATMUL) > 0, directive);
    }
}

// The record's own invariants (a directive naming a loop it did not make, a record written by hand)
// are internal errors that name the Func and what is wrong.
TEST(LoopDirectives, InternalChecksNameTheFuncAndTheRecord) {
    Var x("x");
    Func f("recorded"), g("tagged"), h("tagged_role");
    f(x) = x;
    g(x) = x;
    h(x) = x;
    EXPECT_EQ(error_of([&] { record_loop_directive(f.function(), 0, "nope", {LoopRole::Pe}); }),
              "internal: pe on Func " + f.name() + ": definition 0 has no loop nope");
    EXPECT_EQ(error_of([&] { record_loop_directive(f.function(), 2, "x", {LoopRole::DmaPhases}); }),
              "internal: dma_phases on Func " + f.name() + ": it has no definition 2");
    g.add_trace_tag("spyre.loop=0,pe");
    EXPECT_EQ(error_of([&] { LoopDirectives::of({{g.name(), g.function()}}); }),
              "internal: Func " + g.name() + ": malformed loop record 'spyre.loop=0,pe'");
    h.add_trace_tag("spyre.loop=0,spin,0,x");
    EXPECT_EQ(error_of([&] { LoopDirectives::of({{h.name(), h.function()}}); }),
              "internal: Func " + h.name() + ": loop record of unknown role 'spyre.loop=0,spin,0,x'");
}

TEST(LoopDirectives, OnPeNamesAMissingUpdate) {
    Func f("plain");
    Var x("x");
    RVar r("r");
    f(x) = x;
    EXPECT_NE(error_of([&] { spyre::schedule(f).on_pe(r); })
                  .find("Func plain: on_pe(r): it has 0 update definitions, no update 0"),
              std::string::npos);
}

}  // namespace
}  // namespace spyre::testing
