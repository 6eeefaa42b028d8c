// The compile-time bounds proof (backend/compiler/prove_bounds.h): a pipeline whose algorithm reads
// an input outside its extent, or writes the output outside its own, is refused before it runs, with
// a message naming the Func, the buffer, the dimension, the range and the extent. Pipelines that
// stay inside run as before, including those whose schedule rounds rows up to whole sticks.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "auto_schedule.h"
#include "directives.h"

namespace spyre::testing {
namespace {

using namespace Halide;


bool has(const std::string &msg, const std::string &part) { return msg.find(part) != std::string::npos; }

// The stencil of the issue that found this: on the CPU Halide refuses it ("accessed at -1"); the
// device used to read in(-1, y) as 0 and in(4096, y) as the next row's first element.
TEST(ProveBounds, StencilWithoutBoundaryConditionIsRefusedNamingFuncInputDimRangeAndExtent) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func out("diff");
    out(x, y) = in(x + 1, y) - in(x - 1, y);
    spyre::schedule(out).ring_split(y, 4).stick_vectorize(x);
    std::string msg = error_of([&] { compile_for_spyre(out, {in}, kernel_options({{4096, 64}}, {4096, 64})); });
    EXPECT_TRUE(has(msg, "Func 'diff' reads input 'in' over [-1, 4096] in dimension 0")) << msg;
    EXPECT_TRUE(has(msg, "outside its extent [0, 4095] (4096 elements)")) << msg;
    EXPECT_TRUE(has(msg, "boundary condition")) << msg;
}

TEST(ProveBounds, ReadPastTheLastRowThroughAnIntermediateNamesTheReadingFunc) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func shifted("shifted"), out("out");
    shifted(x, y) = in(x, y + 2);
    out(x, y) = shifted(x, y) * cast<float16_t>(2.0f);
    spyre::schedule(out).stick_vectorize(x);
    std::string msg = error_of([&] { compile_for_spyre(out, {in}, kernel_options({{64, 10}}, {64, 10})); });
    EXPECT_TRUE(has(msg, "Func 'shifted' reads input 'in' over [2, 11] in dimension 1")) << msg;
    EXPECT_TRUE(has(msg, "outside its extent [0, 9]")) << msg;
}

// A gather through data the compiler cannot bound: on a card it reads any address.
TEST(ProveBounds, GatherThroughAnUnclampedIndexIsRefused) {
    ImageParam table(Float(16), 2, "table");
    ImageParam ids(Int(32), 1, "ids");
    Var x("x"), y("y");
    Func out("embed");
    out(x, y) = table(x, ids(y));
    spyre::schedule(out).stick_vectorize(x);
    std::string msg = error_of([&] { compile_for_spyre(out, {table, ids}, kernel_options({{64, 100}, {8}}, {64, 8})); });
    EXPECT_TRUE(has(msg, "Func 'embed' reads input 'table' in dimension 1 at an index the compiler cannot bound"))
        << msg;
    EXPECT_TRUE(has(msg, "clamp(i, 0, 99)")) << msg;
}

// It passes the proof and compiles (tests/compiler/test_gather.cpp runs such gathers).
TEST(ProveBounds, GatherThroughAClampedIndexPassesTheProofAndCompiles) {
    ImageParam table(Float(16), 2, "table");
    ImageParam ids(Int(32), 1, "ids");
    Var x("x"), y("y");
    Func out("embed");
    out(x, y) = table(x, clamp(ids(y), 0, 99));
    spyre::schedule(out).stick_vectorize(x);
    std::string msg = error_of([&] { compile_for_spyre(out, {table, ids}, kernel_options({{64, 100}, {8}}, {64, 8})); });
    EXPECT_EQ(msg, "(no error)");
}

TEST(ProveBounds, UpdateWritingPastTheOutputIsRefused) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    RDom r(0, 12, "r");
    Func out("acc");
    out(x, y) = in(x, y);
    out(x, r) += cast<float16_t>(1.0f);
    spyre::schedule(out).stick_vectorize(x);
    std::string msg = error_of([&] { compile_for_spyre(out, {in}, kernel_options({{64, 10}}, {64, 10})); });
    EXPECT_TRUE(has(msg, "the update of output Func 'acc' writes over [0, 11] in dimension 1")) << msg;
    EXPECT_TRUE(has(msg, "outside the output's extent [0, 9]")) << msg;
}

// The autoscheduler refuses it once, with the proof's message, before it builds any candidate.
TEST(ProveBounds, AutoScheduleOfAStencilWithoutBoundaryConditionIsRefusedWithTheProofsMessage) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func out("diff");
    out(x, y) = in(x + 1, y) - in(x - 1, y);
    AutoOptions ao;
    ao.progress = false;
    std::string msg = error_of([&] { auto_schedule(out, {in}, kernel_options({{256, 64}}, {256, 64}), ao); });
    EXPECT_TRUE(has(msg, "auto_schedule: kernel k: Func 'diff' reads input 'in' over [-1, 256] in dimension 0"))
        << msg;
}

// Reads that stay inside: a boundary condition, and a row that is not whole sticks (the schedule
// computes the padding; the algorithm needs only the 100 elements that exist).
TEST(ProveBounds, StencilWithRepeatEdgeOnAnOddRowRunsAndMatchesTheCpu) {
    auto alg = [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func e = BoundaryConditions::repeat_edge(in);
        Func out("diff");
        out(x, y) = e(x + 1, y) - e(x - 1, y);
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    auto sched = [](Kernel &k) { spyre::schedule(k.output).ring_split(k.vars["y"], 2).stick_vectorize(k.vars["x"]); };
    DiffResult r = run_differential(alg, sched, {{100, 6}}, {100, 6});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing
