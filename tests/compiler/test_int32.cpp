// int32 arithmetic on the vector unit: pointwise add, sub, mul, min, max and neg with integer
// constants, compiled from ordinary Halide pipelines and compared exactly with Halide's CPU
// realisation (wrapping arithmetic on both sides). int32 row reductions and the conversion to fp32
// are covered by test_pipeline_hazards.cpp. Integer division, which has no vector form, is an error.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"
#include "directives.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct Int32Case {
    std::string name;
    int cols, rows, cores;
};

class Int32Pointwise : public ::testing::TestWithParam<Int32Case> {};

TEST_P(Int32Pointwise, MatchesCpuExactly) {
    const Int32Case c = GetParam();
    auto alg = [=] {
        ImageParam a(Int(32), 2, "a"), b(Int(32), 2, "b");
        Var x("x"), y("y");
        Func out("int_ops");
        Expr p = a(x, y) * 3 - 7;
        out(x, y) = max(p, -b(x, y)) + min(max(a(x, y), 0 - a(x, y)), b(x, y) * b(x, y)) - 100000;
        Kernel k;
        k.inputs = {a, b};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    auto sched = [=](Kernel &k) {
        SpyreSchedule s = schedule(k.output);
        if (c.cores > 1) s.ring_split(k.vars["y"], c.cores, c.rows);
        s.stick_vectorize(k.vars["x"]);
    };
    DiffResult r = run_differential(alg, sched, {{c.cols, c.rows}, {c.cols, c.rows}}, {c.cols, c.rows}, -50000, 50000);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, c.cores);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Int32Pointwise,
                         ::testing::Values(Int32Case{"sticks_1c", 128, 16, 1}, Int32Case{"part_stick_1c", 100, 7, 1},
                                           Int32Case{"rows_over_4c", 96, 64, 4}),
                         [](const auto &info) { return info.param.name; });

TEST(Int32, IntegerDivisionIsAnErrorThatSaysWhatToDo) {
    auto alg = [] {
        ImageParam a(Int(32), 2, "a");
        Var x("x"), y("y");
        Func out("int_div");
        out(x, y) = a(x, y) / 3;
        Kernel k;
        k.inputs = {a};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    auto sched = [](Kernel &k) { schedule(k.output).stick_vectorize(k.vars["x"]); };
    try {
        run_differential(alg, sched, {{64, 4}}, {64, 4});
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("Func int_div"), std::string::npos) << msg;
        EXPECT_NE(msg.find("integer division"), std::string::npos) << msg;
    }
}

// A vector fill carries an fp32 value: an int32 literal it cannot hold exactly is refused.
TEST(Int32, ALiteralNotExactInFp32IsAnError) {
    auto alg = [] {
        ImageParam a(Int(32), 2, "a");
        Var x("x"), y("y");
        Func out("int_big");
        out(x, y) = a(x, y) + 16777217;
        Kernel k;
        k.inputs = {a};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    auto sched = [](Kernel &k) { schedule(k.output).stick_vectorize(k.vars["x"]); };
    try {
        run_differential(alg, sched, {{64, 4}}, {64, 4});
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("Func int_big"), std::string::npos) << msg;
        EXPECT_NE(msg.find("the integer constant 16777217 is not exact in fp32"), std::string::npos) << msg;
    }
}

TEST(Int32, StickVectorizeOfAnotherIntegerTypeNamesTheTypesThatWork) {
    Func f("words"), shorts("shorts");
    Var x("x");
    f(x) = cast<uint32_t>(x);
    // A 16-bit Func is taken: it is stored in int32 (legalise_types).
    shorts(x) = cast<uint16_t>(x);
    schedule(shorts).stick_vectorize(x);
    try {
        schedule(f).stick_vectorize(x);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("Func " + f.name().substr(0, f.name().find('$')) + ": stick_vectorize(x): type uint32 has no stick "
                                                                  "operations (float16, float32, int32, int8, uint8 do)"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace spyre::testing
