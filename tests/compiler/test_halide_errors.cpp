// Halide's own errors never reach the user raw: a schedule Halide cannot lower is refused in the
// user's terms (the Func and the directive), and a failure inside Halide is reported as an
// internal compiler error.
#include <gtest/gtest.h>

#include <set>

#include "compiler_test_util.h"
#include "device/error.h"
#include "halide_errors.h"
#include "user_terms.h"

namespace spyre::testing {
namespace {

using namespace Halide;

CompileOptions opts(std::vector<int64_t> in, std::vector<int64_t> out) { return kernel_options({in}, out); }

// ring_split(v, n) takes v's extent from the Func's output buffer, which only the pipeline's output
// has: on an intermediate it says to give the extent.
TEST(HalideErrors, RingSplitWithoutExtentOnAnIntermediateSaysToGiveTheExtent) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func hn("hn"), out("out");
    hn(x, y) = in(x, y) * cast<float16_t>(2.0f);
    out(x, y) = hn(x, y) + cast<float16_t>(1.0f);
    spyre::schedule(hn).device_root().ring_split(y, 4).stick_vectorize(x);
    spyre::schedule(out).ring_split(y, 4).stick_vectorize(x);
    std::string msg = error_of([&] { compile_for_spyre(out, {in}, opts({64, 100}, {64, 100})); });
    EXPECT_NE(msg.find("Func hn: ring_split(y, 4)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not the pipeline's output"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ring_split(y, cores, extent)"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("Internal Error"), std::string::npos) << msg;

    // With the extent given, the same schedule compiles.
    Func hn2("hn2"), out2("out2");
    hn2(x, y) = in(x, y) * cast<float16_t>(2.0f);
    out2(x, y) = hn2(x, y) + cast<float16_t>(1.0f);
    spyre::schedule(hn2).device_root().ring_split(y, 4, 100).stick_vectorize(x);
    spyre::schedule(out2).ring_split(y, 4).stick_vectorize(x);
    EXPECT_EQ(error_of([&] { compile_for_spyre(out2, {in}, opts({64, 100}, {64, 100})); }), "(no error)");
}

// A Halide CompileError from the user's schedule (a wrapper of an input the Func does not read)
// comes out as a spyre::Error in the user's names, without Halide's unique suffixes.
TEST(HalideErrors, ARefusedScheduleIsASpyreErrorInTheUsersNames) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func mid("mid"), out("out");
    mid(x, y) = in(x, y) * cast<float16_t>(2.0f);
    out(x, y) = mid(x, y) + cast<float16_t>(1.0f);
    spyre::schedule(out).split(y, yo, yi, 4).stick_vectorize(x);
    spyre::stage_in_lx(in, out, yo);  // out reads mid, not in
    std::string msg = error_of([&] { compile_for_spyre(out, {in}, opts({64, 16}, {64, 16})); });
    EXPECT_NE(msg.find("kernel k: Halide refused the pipeline or its schedule while lowering the schedule: "),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("\"out\" does not call"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('$'), std::string::npos) << msg;
}

// The bordered blur (compiler_test_util.h): the Funcs Halide makes for the condition are named by
// the condition and the input they wrap.
TEST(HalideErrors, ABoundaryConditionScheduledOnTheUsersVarsNamesTheConditionAndItsInput) {
    BorderedBlur b;
    const std::string msg = error_of([&] { spyre::schedule(b.edge).stick_vectorize(b.x); });
    EXPECT_EQ(msg.find("the repeat_edge boundary condition of input 'in': stick_vectorize(x): "), 0u) << msg;
    EXPECT_NE(msg.find("implicit Vars _0, _1"), std::string::npos) << msg;
    const std::set<std::string> declared = b.declared();
    EXPECT_EQ(generated_name_in(msg, &declared), "") << msg;
}

// A split Halide refuses is named whole: the Var split, both new loops and the factor.
TEST(HalideErrors, ARefusedSplitNamesTheWholeSplit) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func out("out");
    out(x, y) = in(x, y) * cast<float16_t>(2.0f);
    spyre::schedule(out).split(x, xo, xi, 64);
    const std::string msg = error_of([&] { spyre::schedule(out).split(y, xo, xi, 4); });
    EXPECT_EQ(msg.find("Func out: split(y, xo, xi, 4): "), 0u) << msg;
    EXPECT_NE(msg.find("its loops: xi, xo, y"), std::string::npos) << msg;
    const std::set<std::string> declared = {"in", "x", "y", "xo", "xi", "out"};
    EXPECT_EQ(generated_name_in(msg, &declared), "") << msg;
}

// Halide's list of legal places for a producer names every loop of its consumers; stick_vectorize's
// lanes are the loop of the Var they were split from (spyre-fuzz-diff --seed 1 --case 4 named v0).
TEST(HalideErrors, AnInvalidComputeAtNamesTheVectorLanesByTheirVar) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func p("p"), out0("out0"), out1("out1");
    p(x, y) = in(x, y) * cast<float16_t>(2.0f);
    out0(x, y) = p(x, y) + cast<float16_t>(1.0f);
    out1(x, y) = p(x, y) - cast<float16_t>(1.0f);
    spyre::schedule(out0).stick_vectorize(x);
    spyre::schedule(out1).stick_vectorize(x);
    spyre::schedule(p).scratchpad_store_at(out0, x).stick_vectorize(x);
    CompileOptions opt = opts({64, 4}, {64, 4});
    opt.outputs = {opt.output, opt.output};
    const std::string msg = error_of([&] { compile_for_spyre(Pipeline({out0, out1}), {in}, opt); });
    EXPECT_NE(msg.find("is computed at the following invalid location"), std::string::npos) << msg;
    EXPECT_NE(msg.find("loop x of out1 (its vector lanes)"), std::string::npos) << msg;
    const std::set<std::string> declared = {"in", "x", "y", "p", "out0", "out1", "k"};
    EXPECT_EQ(generated_name_in(msg, &declared), "") << msg;
}

// A failure inside Halide is a compiler bug, reported as one; a refusal is the user's to fix.
TEST(HalideErrors, InternalErrorsAreInternalCompilerErrors) {
    std::string msg = error_of([] {
        with_halide_errors("k", "lowering the schedule",
                           []() -> int { throw Halide::InternalError("Internal Error at Simplify_Let.cpp:68"); });
    });
    EXPECT_EQ(msg.find("kernel k: internal compiler error while lowering the schedule"), 0u) << msg;
    EXPECT_NE(msg.find("Simplify_Let.cpp:68"), std::string::npos) << msg;
    msg = error_of([] {
        with_halide_errors("k", "lowering the schedule",
                           []() -> int { throw Halide::CompileError("Error: Func f$12 is not defined\n"); });
    });
    EXPECT_EQ(msg, "kernel k: Halide refused the pipeline or its schedule while lowering the schedule: Func f is "
                   "not defined");
}

// The kind is chosen where Halide's error is caught: a caller that retries or skips refusals (the
// back end's retries, the autoscheduler's candidates) lets a Halide bug out instead.
TEST(HalideErrors, HalidesInternalErrorIsOfKindInternalAndItsCompileErrorRefused) {
    auto kind_of = [](auto thrown) {
        try {
            with_halide_errors("k", "lowering the schedule", [&]() -> int { throw thrown; });
        } catch (const Error &e) {
            return e.kind();
        }
        ADD_FAILURE() << "nothing thrown";
        return ErrorKind::Refused;
    };
    EXPECT_EQ(kind_of(Halide::InternalError("Internal Error at Simplify_Let.cpp:68")), ErrorKind::Internal);
    EXPECT_EQ(kind_of(Halide::CompileError("Error: Func f$12 is not defined\n")), ErrorKind::Refused);
}

}  // namespace
}  // namespace spyre::testing
