// Transposes and permutes: a Func that reads its producer across the producer's sticks,
// out(x, y) = in(y, x), is restickified on the vector unit. stick_vectorize(x) takes one stick of x
// per row with the rows innermost, infer_dma stages the producer's tile row by row, and
// instruction selection turns each step's strided read into one VTRANSPOSE of that tile. Checked
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
        s.stick_vectorize(k.vars.at("x"));
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
                      TransposeCase{"fp32", 128, 96, 1, true}, TransposeCase{"inside_an_expression", 192, 128, 1, false, true}),
    [](const auto &info) { return info.param.name; });

// A permute of the two inner dimensions of a batch, out(x, y, b) = in(y, x, b), batches over cores.
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

// A schedule that tiles the rows itself keeps its loop order, which writes rows of several sticks:
// the error says which loop to split and where to put it.
TEST(TransposeErrors, RowsTiledByTheUserNameTheSplitToMake) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func out("flip");
    out(x, y) = in(y, x);
    spyre::schedule(out).split(y, yo, yi, 64).stick_vectorize(x);
    CompileOptions o;
    o.inputs = {{{256, 512}}};
    o.output = {{512, 256}};
    try {
        compile_for_spyre(out, {in}, o);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("Func flip: reads a tile across its sticks (a transpose)"), std::string::npos) << m;
        EXPECT_NE(m.find("split(x, xo, xi, lanes).reorder(xi, y, xo)"), std::string::npos) << m;
    }
}

}  // namespace
}  // namespace spyre::testing
