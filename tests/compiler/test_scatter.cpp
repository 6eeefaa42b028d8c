// Scatters: an update that writes at positions given by data, a histogram as Halide's tutorials
// write it (`hist(clamp(in(r.x, r.y), 0, bins - 1)) += 1`). The written Func is kept whole in LX
// (copied out at the end when it is the output), each position read into a register from the
// positions' LX copy, and each element read, updated and written back in Halide's order, so the
// result matches Halide's CPU realisation exactly (also for weighted sums in floating point). What
// has no such form is refused by name.
#include <gtest/gtest.h>

#include "auto_schedule.h"
#include "compiler_test_util.h"
#include "device/error.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// Values in [-3, bins + 3): most inside the bins, a few past either end (the clamp's).
Halide::Runtime::Buffer<> values_for(int w, int h, int bins) {
    Halide::Runtime::Buffer<int32_t> b(w, h);
    uint32_t s = 4242;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            s = s * 1664525u + 1013904223u;
            b(x, y) = int32_t((s >> 8) % uint32_t(bins + 6)) - 3;
        }
    return Halide::Runtime::Buffer<>(b);
}

Algorithm histogram(int w, int h, int bins) {
    return [=] {
        Kernel k;
        ImageParam in(Int(32), 2, "in");
        Var b("b");
        RDom r(0, w, 0, h, "r");
        Func hist("hist");
        hist(b) = 0;
        hist(clamp(in(r.x, r.y), 0, bins - 1)) += 1;
        k.inputs = {in};
        k.output = hist;
        k.vars = {{"b", b}};
        return k;
    };
}

struct HistogramCase {
    int w, h, bins;
};

class Histogram : public ::testing::TestWithParam<HistogramCase> {};

TEST_P(Histogram, CountsMatchCpuExactly) {
    const HistogramCase c = GetParam();
    DiffResult r = run_differential_on(histogram(c.w, c.h, c.bins), [](Kernel &) {},
                                       {values_for(c.w, c.h, c.bins)}, {c.bins});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    int ldlx = 0;
    for (const Instr &in : r.program.code) ldlx += in.op == Opcode::LDLX;
    EXPECT_GT(ldlx, 0) << "each position is read from LX into a register";
}

INSTANTIATE_TEST_SUITE_P(Shapes, Histogram,
                         ::testing::Values(HistogramCase{64, 16, 64}, HistogramCase{100, 7, 256},
                                           HistogramCase{37, 5, 10}),
                         [](const ::testing::TestParamInfo<HistogramCase> &i) {
                             return std::to_string(i.param.w) + "x" + std::to_string(i.param.h) + "_bins" +
                                    std::to_string(i.param.bins);
                         });

// auto_schedule finds the one-core schedule a scatter has, and it matches the CPU.
TEST(HistogramAuto, CountsMatchCpuUnderAuto) {
    DiffResult r = run_differential_on(
        histogram(64, 16, 64),
        [](Kernel &k) {
            AutoOptions ao;
            ao.max_evaluations = 8;
            ao.progress = false;
            auto_schedule(k.output, k.inputs, kernel_options({{64, 16}}, {64}), ao);
        },
        {values_for(64, 16, 64)}, {64});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// One histogram per row (the pure dimension y in the update), its init vectorized, and a weighted
// histogram in fp32 (the sums in Halide's order, so bit for bit).
TEST(HistogramRows, PerRowCountsAndWeightedSumsMatchCpuExactly) {
    auto rows = [] {
        Kernel k;
        ImageParam in(Int(32), 2, "in");
        Var x("x"), y("y");
        RDom r(0, 128, "r");
        Func hist("hist");
        hist(x, y) = 0;
        hist(clamp(in(r, y), 0, 63), y) += 1;
        k.inputs = {in};
        k.output = hist;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    DiffResult r = run_differential_on(rows, [](Kernel &k) { spyre::schedule(k.output).stick_vectorize(k.vars.at("x")); },
                                       {values_for(128, 4, 64)}, {64, 4});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;

    auto weighted = [] {
        Kernel k;
        ImageParam in(Int(32), 1, "in"), w(Float(32), 1, "weight");
        Var b("b");
        RDom r(0, 300, "r");
        Func hist("hist");
        hist(b) = 0.0f;
        hist(clamp(in(r), 0, 31)) += w(r);
        k.inputs = {in, w};
        k.output = hist;
        k.vars = {{"b", b}};
        return k;
    };
    Halide::Runtime::Buffer<float> weights(300);
    for (int i = 0; i < 300; i++) weights(i) = float((i * 37) % 101) / 7.0f - 3.0f;
    Halide::Runtime::Buffer<> ids = values_for(300, 1, 32);
    ids.raw_buffer()->dimensions = 1;
    DiffResult wr = run_differential_on(weighted, [](Kernel &) {}, {ids, Halide::Runtime::Buffer<>(weights)}, {32});
    EXPECT_EQ(wr.cmp.mismatches, 0) << wr.cmp.first_mismatch;
}

// A histogram over several cores would need each core's partial counts combined: refused by name.
TEST(ScatterErrors, AScatterOverSeveralCoresIsRefusedByName) {
    Kernel k = histogram(64, 16, 64)();
    spyre::schedule(k.output).ring_split(k.vars.at("b"), 4);
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{64, 16}}, {64})); });
    EXPECT_NE(e.find("writing 'hist' at positions given by 'in'"), std::string::npos) << e;
    EXPECT_NE(e.find("one core"), std::string::npos) << e;
}

// The written Func is kept whole in LX: more than its budget is refused with the sizes.
TEST(ScatterErrors, AScatterTargetOverItsLxBudgetIsRefusedByName) {
    Kernel k = histogram(64, 16, 20000)();
    const std::string e = error_of([&] { compile_for_spyre(k.output, k.inputs, kernel_options({{64, 16}}, {20000})); });
    EXPECT_NE(e.find("writing 'hist' at positions given by 'in'"), std::string::npos) << e;
    EXPECT_NE(e.find("80000 bytes"), std::string::npos) << e;
}

// Positions of a narrower type (a uint8 image cast to int32 in the index) say how to index by
// int32 positions: a Func of them; that way out compiles and matches the CPU.
TEST(ScatterErrors, NarrowPositionsSayHowToIndexByInt32) {
    ImageParam in(UInt(8), 2, "image");
    Var b("b");
    RDom r(0, 64, 0, 8, "r");
    Func hist("hist");
    hist(b) = 0;
    hist(cast<int32_t>(in(r.x, r.y))) += 1;
    const std::string e = error_of([&] { compile_for_spyre(hist, {in}, kernel_options({{64, 8}}, {256})); });
    EXPECT_NE(e.find("writing 'hist' at positions given by 'image'"), std::string::npos) << e;
    EXPECT_NE(e.find("the positions are uint8"), std::string::npos) << e;
    EXPECT_NE(e.find("bin(x, y) = cast<int32_t>(image(x, y))"), std::string::npos) << e;

    auto alg = [] {
        Kernel k;
        ImageParam in(UInt(8), 2, "image");
        Var b("b"), x("x"), y("y");
        RDom r(0, 64, 0, 8, "r");
        Func bin("bin"), hist("hist");
        bin(x, y) = cast<int32_t>(in(x, y));
        hist(b) = 0;
        hist(clamp(bin(r.x, r.y), 0, 255)) += 1;
        k.inputs = {in};
        k.output = hist;
        k.vars = {{"b", b}, {"x", x}, {"y", y}};
        k.funcs = {{"bin", bin}};
        return k;
    };
    auto sched = [](Kernel &k) {
        spyre::schedule(k.funcs.at("bin")).scratchpad_root().stick_vectorize(k.vars.at("x"));
    };
    Halide::Runtime::Buffer<uint8_t> image(64, 8);
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 64; x++) image(x, y) = uint8_t((x * 53 + y * 29) % 256);
    DiffResult res = run_differential_on(alg, sched, {Halide::Runtime::Buffer<>(image)}, {256});
    EXPECT_EQ(res.cmp.mismatches, 0) << res.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing

namespace spyre::testing {
namespace {

using namespace Halide;

// The remaining refusals of a scatter, each by name: positions read through other positions, and a
// written Func in a device layout of its own.
TEST(ScatterErrors, PositionsReadThroughPositionsAreRefusedByName) {
    ImageParam in(Int(32), 1, "in"), perm(Int(32), 1, "perm");
    Var b("b");
    RDom r(0, 16, "r");
    Func hist("hist");
    hist(b) = 0;
    hist(clamp(in(clamp(perm(r), 0, 15)), 0, 63)) += 1;
    const std::string e = error_of([&] { compile_for_spyre(hist, {in, perm}, kernel_options({{16}, {16}}, {64})); });
    EXPECT_NE(e.find("writing 'hist' at positions given by 'in'"), std::string::npos) << e;
    EXPECT_NE(e.find("the position of 'in' is itself read from memory"), std::string::npos) << e;
}

TEST(ScatterErrors, ATargetInALayoutOfItsOwnIsRefusedByName) {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    RDom r(0, 64, "r");
    Func hist("hist");
    hist(x, y) = 0;
    hist(clamp(in(r, y), 0, 63), y) += 1;
    CompileOptions o = kernel_options({{64, 4}}, {64, 4});
    o.output.layout.order = {0, 1};
    const std::string e = error_of([&] { compile_for_spyre(hist, {in}, o); });
    EXPECT_NE(e.find("'hist' has a device layout of its own; a scatter writes the default"), std::string::npos) << e;
}

}  // namespace
}  // namespace spyre::testing
