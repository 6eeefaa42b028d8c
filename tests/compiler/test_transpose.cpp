// Transposes and permutes: a Func that reads its producer across the producer's sticks,
// out(x, y) = in(y, x), is restickified on the vector unit. stick_vectorize(x, n) takes n sticks of
// x per row with the rows innermost, infer_dma stages the producer's tile row by row, and
// instruction selection turns each step's strided read into one VTRANSPOSE of that tile, writing
// output rows of n sticks (or more, when a loop over the row's next sticks sits inside the rows). Checked
// against the CPU (bit-exact: a transpose moves values), on one core and split over cores along
// the output's rows.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct TransposeCase {
    std::string name;
    int cols, rows;  // of the input {cols, rows}; the output is {rows, cols}
    int cores = 1;
    bool f32 = false;
    bool with_math = false;  // out = in(y, x) * 2 + b(x, y): the transposed read inside an expression
    int sticks = 1;          // stick_vectorize(x, sticks): output rows of several sticks per step
};

Algorithm transpose_alg(const TransposeCase &c) {
    return [=] {
        Kernel k;
        const Type t = c.f32 ? Float(32) : Float(16);
        ImageParam in(t, 2, "in"), b(t, 2, "b");
        Var x("x"), y("y");
        Func out("out");
        if (c.with_math) out(x, y) = in(y, x) * cast(t, 2.0f) + b(x, y);
        else out(x, y) = in(y, x);
        k.inputs = {in};
        if (c.with_math) k.inputs.push_back(b);
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

Schedule transpose_sched(const TransposeCase &c) {
    return [=](Kernel &k) {
        SpyreSchedule s = spyre::schedule(k.output);
        if (c.cores > 1) s.ring_split(k.vars.at("y"), c.cores);
        s.stick_vectorize(k.vars.at("x"), c.sticks);
    };
}

class Transpose : public ::testing::TestWithParam<TransposeCase> {};

TEST_P(Transpose, MatchesCpu) {
    const TransposeCase &c = GetParam();
    std::vector<std::vector<int>> in_shapes{{c.cols, c.rows}};
    if (c.with_math) in_shapes.push_back({c.rows, c.cols});
    DiffResult r = run_differential(transpose_alg(c), transpose_sched(c), in_shapes, {c.rows, c.cols});
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, c.cores);
    int transposes = 0;
    for (const Instr &in : r.program.code) transposes += in.op == Opcode::VTRANSPOSE;
    EXPECT_GE(transposes, 1);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Transpose,
    ::testing::Values(TransposeCase{"square", 256, 256}, TransposeCase{"wide_to_tall", 512, 256},
                      TransposeCase{"rows_not_whole_sticks", 100, 128}, TransposeCase{"one_stick_out", 33, 64},
                      TransposeCase{"one_column_in", 1, 64}, TransposeCase{"long_rows", 64, 4096},
                      TransposeCase{"split_over_4_cores", 256, 512, 4},
                      TransposeCase{"split_over_32_cores", 4096, 64, 32},
                      TransposeCase{"fp32", 128, 96, 1, true}, TransposeCase{"inside_an_expression", 192, 128, 1, false, true},
                      TransposeCase{"four_sticks_per_row", 256, 512, 1, false, false, 4},
                      TransposeCase{"two_sticks_per_row_over_4_cores", 512, 128, 4, false, false, 2},
                      TransposeCase{"four_sticks_per_row_inside_an_expression", 128, 256, 1, false, true, 4},
                      TransposeCase{"two_sticks_per_row_fp32", 96, 64, 1, true, false, 2}),
    [](const auto &info) { return info.param.name; });

// A permute of the two inner dimensions of a batch, out(x, y, b) = in(y, x, b), batches over cores.
// Split over the cores along the output's sticks (the input's rows), as a user splitting a wide
// transpose over 32 cores writes it: ring_split(x) puts a loop over the cores outside x, and the
// restickify's loop over x's sticks, outside the rows, stays inside it (before, it moved the cores'
// loop inward and the split was refused as not outermost).
TEST(Transpose, ARingSplitAlongTheOutputsSticksKeepsTheCoresOutermost) {
    const TransposeCase c{"split_x_over_32_cores", 256, 4096};  // two sticks of x per core
    const DiffResult r = run_differential(transpose_alg(c), [](Kernel &k) {
        spyre::schedule(k.output).ring_split(k.vars.at("x"), 32).stick_vectorize(k.vars.at("x"));
    }, {{c.cols, c.rows}}, {c.rows, c.cols});
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, 32);
}

TEST(Permute, InnerDimensionsOfEachBatchMatchCpu) {
    const int W = 128, H = 192, B = 4;
    DiffResult r = run_differential(
        [] {
            Kernel k;
            ImageParam in(Float(16), 3, "in");
            Var x("x"), y("y"), b("b");
            Func out("out");
            out(x, y, b) = in(y, x, b);
            k.inputs = {in};
            k.output = out;
            k.vars = {{"x", x}, {"b", b}};
            return k;
        },
        [](Kernel &k) { spyre::schedule(k.output).ring_split(k.vars.at("b"), 4).stick_vectorize(k.vars.at("x")); },
        {{W, H, B}}, {H, W, B});
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, 4);
}

// A schedule that tiles the rows itself keeps its loop order: the output's sticks inside the row
// loop, so each tile of 64 rows is one VTRANSPOSE writing whole output rows (eight sticks).
TEST(Transpose, RowsTiledByTheUserTransposeWholeOutputRows) {
    DiffResult r = run_differential(
        [] {
            Kernel k;
            ImageParam in(Float(16), 2, "in");
            Var x("x"), y("y");
            Func out("flip");
            out(x, y) = in(y, x);
            k.inputs = {in};
            k.output = out;
            k.vars = {{"x", x}, {"y", y}};
            return k;
        },
        [](Kernel &k) {
            Var yo("yo"), yi("yi");
            spyre::schedule(k.output).split(k.vars.at("y"), yo, yi, 64).stick_vectorize(k.vars.at("x"));
        },
        {{256, 512}}, {512, 256});
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    int transposes = 0;
    for (const Instr &in : r.program.code)
        if (in.op == Opcode::VTRANSPOSE) {
            transposes++;
            EXPECT_EQ(in.a[7], 8 * 64) << "input rows per VTRANSPOSE: the output row's eight sticks";
            EXPECT_EQ(in.a[8], 64) << "columns per VTRANSPOSE: a tile's 64 output rows";
        }
    EXPECT_GE(transposes, 1);
}

}  // namespace
}  // namespace spyre::testing
