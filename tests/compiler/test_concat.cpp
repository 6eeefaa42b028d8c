// Concatenation as a user writes it from the docs: out = a ++ b along the stick dimension (x) or
// along the rows (y), with select and clamped reads, stick vectorized and split over the cores.
// Each case matches the CPU exactly (a copy), or the compiler refuses it with an error naming the
// Func; never an invalid program (a+b of 100+92 columns on 32 cores once reached the verifier with
// "dma descriptor 1: sticks 0").
// Slices along either dimension (a window of columns from any offset, or of rows) match exactly too.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct ConcatCase {
    int wa, wb, rows, cores;
    bool along_x;
    // Compiles and runs (else refused with an error that names the Func): b's padded rows narrower
    // than the output's vectors have no vector form yet.
    bool runs = true;
    int split = 0;  // > 0: split x by this many lanes and stick vectorize the inner loop (two sticks at 128)
};
void PrintTo(const ConcatCase &c, std::ostream *os) {
    *os << (c.along_x ? "x" : "y") << c.wa << "+" << c.wb << "x" << c.rows << "c" << c.cores;
}

Algorithm concat_alg(const ConcatCase &c) {
    return [=] {
        Kernel k;
        ImageParam a(Float(16), 2, "a"), b(Float(16), 2, "b");
        Var x("x"), y("y");
        Func out("out");
        if (c.along_x)
            out(x, y) = select(x < c.wa, a(clamp(x, 0, c.wa - 1), y), b(clamp(x - c.wa, 0, c.wb - 1), y));
        else
            out(x, y) = select(y < c.wa, a(x, clamp(y, 0, c.wa - 1)), b(x, clamp(y - c.wa, 0, c.wb - 1)));
        k.inputs = {a, b};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

Schedule concat_sched(const ConcatCase &c) {
    return [=](Kernel &k) {
        SpyreSchedule s = spyre::schedule(k.output);
        if (c.split > 0) {
            Var xo("xo"), xi("xi");
            s.split(k.vars.at("x"), xo, xi, c.split).stick_vectorize(xi);
        } else {
            s.stick_vectorize(k.vars.at("x"));
        }
        if (c.cores > 1) s.ring_split(k.vars.at("y"), c.cores);
    };
}

class Concat : public ::testing::TestWithParam<ConcatCase> {};

TEST_P(Concat, MatchesCpuOrIsRefusedClearly) {
    const ConcatCase c = GetParam();
    const int w = c.along_x ? c.wa + c.wb : c.wa, h = c.along_x ? c.rows : c.wa + c.wb;
    const std::vector<std::vector<int>> in_shapes =
        c.along_x ? std::vector<std::vector<int>>{{c.wa, c.rows}, {c.wb, c.rows}}
                  : std::vector<std::vector<int>>{{c.rows, c.wa}, {c.rows, c.wb}};
    const int out_w = c.along_x ? w : c.rows;
    std::string err;
    DiffResult r;
    try {
        r = run_differential(concat_alg(c), concat_sched(c), in_shapes, {out_w, h});
    } catch (const Error &e) {
        err = e.what();
    }
    EXPECT_EQ(err.find("descriptor"), std::string::npos) << "an invalid program reached the verifier: " << err;
    if (!c.runs) {
        EXPECT_NE(err.find("Func out: "), std::string::npos) << "expected a refusal naming the Func, got: [" << err << "]";
        return;
    }
    ASSERT_TRUE(err.empty()) << err;
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Concat,
                         ::testing::Values(ConcatCase{64, 64, 32, 1, true}, ConcatCase{64, 64, 64, 32, true},
                                           ConcatCase{100, 60, 64, 32, true, false}, ConcatCase{128, 4096, 64, 32, true},
                                           // b read shifted back across its row start (clamped): the
                                           // read's row is the next one (infer_dma.cpp)
                                           ConcatCase{100, 92, 64, 32, true}, ConcatCase{100, 92, 7, 1, true},
                                           ConcatCase{70, 130, 33, 32, true}, ConcatCase{96, 160, 64, 32, true},
                                           ConcatCase{30, 34, 128, 32, true}, ConcatCase{4000, 96, 64, 32, true},
                                           ConcatCase{64, 64, 64, 1, false}, ConcatCase{33, 31, 64, 32, false},
                                           ConcatCase{7, 121, 100, 32, false},
                                           // two-stick vectors over 130 columns: b (67 wide, two sticks
                                           // a row) must not be read past its last row (fuzz-diff seed 94
                                           // case 136 read 128 bytes past the buffer)
                                           ConcatCase{63, 67, 16, 1, true, true, 128}),
                         [](const ::testing::TestParamInfo<ConcatCase> &i) {
                             const ConcatCase &c = i.param;
                             return std::string(c.along_x ? "AlongX_" : "AlongRows_") + std::to_string(c.wa) + "_" +
                                    std::to_string(c.wb) + "_rows" + std::to_string(c.rows) + "_cores" +
                                    std::to_string(c.cores) + (c.split ? "_split" + std::to_string(c.split) : "");
                         });

// Slices as a user writes them: a window of `w` columns from column `off` of each row, or of
// `h` rows from row `off`, stick vectorized and split over the cores. A slice is a copy: exact.
struct SliceCase {
    bool along_x;
    int off, w, h, in_w, in_h, cores;
};

class Slice : public ::testing::TestWithParam<SliceCase> {};

TEST_P(Slice, MatchesCpuExactly) {
    const SliceCase c = GetParam();
    auto alg = [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func out("slice");
        out(x, y) = c.along_x ? in(x + c.off, y) : in(x, y + c.off);
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    auto sched = [=](Kernel &k) {
        SpyreSchedule s = spyre::schedule(k.output);
        s.stick_vectorize(k.vars.at("x"));
        if (c.cores > 1) s.ring_split(k.vars.at("y"), c.cores);
    };
    DiffResult r = run_differential(alg, sched, {{c.in_w, c.in_h}}, {c.w, c.h});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Slice,
                         ::testing::Values(SliceCase{true, 3, 100, 8, 103, 8, 1}, SliceCase{true, 64, 128, 64, 256, 64, 32},
                                           SliceCase{true, 37, 200, 40, 300, 40, 32}, SliceCase{false, 5, 128, 64, 128, 80, 32},
                                           SliceCase{false, 1, 100, 7, 100, 8, 1}),
                         [](const ::testing::TestParamInfo<SliceCase> &i) {
                             const SliceCase &c = i.param;
                             return std::string(c.along_x ? "Columns" : "Rows") + std::to_string(c.off) + "_" +
                                    std::to_string(c.w) + "x" + std::to_string(c.h) + "_of_" + std::to_string(c.in_w) +
                                    "x" + std::to_string(c.in_h) + "_cores" + std::to_string(c.cores);
                         });

// A concat's tail tile (x from 128, 130 wide, split by 128): every lane reads the second input at
// x - 91, a shift back by 27 from a home vector past the end of its one-stick rows. The stick before
// the home (the row's own elements) must be staged: it was clipped as if it were padding before a
// row start, and the tail's valid lanes read stale LX (30 wrong elements with a 17-row input;
// random pipeline seed 5 case 963, where the 16-row input made the DMA leave the buffer instead).
TEST(ConcatTail, ShiftBackFromAHomePastItsRowReadsTheRowItself) {
    auto alg = [] {
        Kernel k;
        ImageParam in0(Float(16), 2, "in0"), in1(Float(16), 2, "in1");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = max(select(x < 91, in0(min(x, 90), y), in1(max(x - 91, 0), y)), cast(Float(16), -2.0f));
        k.inputs = {in0, in1};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    auto sched = [](Kernel &k) {
        Var xo("xo"), xi("xi");
        spyre::schedule(k.output).split(k.vars.at("x"), xo, xi, 128).stick_vectorize(xi);
    };
    DiffResult r = run_differential(alg, sched, {{91, 16}, {39, 17}}, {130, 16});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    // With 16 rows the home stick of the last row's tail lies past the buffer: only padding lanes
    // read it (valid lanes read inside their row), so it is not moved.
    DiffResult exact = run_differential(alg, sched, {{91, 16}, {39, 16}}, {130, 16});
    EXPECT_EQ(exact.cmp.mismatches, 0) << exact.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing
