// Shifted reads along the stick dimension: in(x + c) with c not a multiple of the lanes, through
// Halide's boundary conditions (repeat_edge, constant_exterior with 0) or none. lower_shifted_loads
// turns each into a shifted read of a stick-aligned home vector, infer_dma stages the home rows
// with their halo, and instruction selection emits one VSHIFT per read. Checked against the CPU
// (bit-exact) at widths that are and are not whole sticks, staged by the back end or in LX.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"

namespace spyre::testing {
namespace {

using namespace Halide;

enum class ShiftedReadsForm { RepeatEdge3, ConstantZeroCausal, PlainShift, RepeatEdge5f32, ConstantZeroCentred };

struct ShiftCase {
    std::string name;
    ShiftedReadsForm form;
    int cols, rows;
    bool in_lx = false;  // rows over cores, each core's rows staged in LX; else staged by infer_dma
    bool x_tiles = false;  // the stick dimension in tiles of two sticks, outside the rows
};

void PrintTo(const ShiftCase &c, std::ostream *os) { *os << c.name; }

// Columns of input a plain shift needs beyond the output's.
int extra_cols(ShiftedReadsForm f) { return f == ShiftedReadsForm::PlainShift ? 3 : 0; }

Algorithm shift_alg(const ShiftCase &c) {
    return [=] {
        Kernel k;
        const Type t = c.form == ShiftedReadsForm::RepeatEdge5f32 ? Float(32) : Float(16);
        ImageParam in(t, 2, "in");
        Var x("x"), y("y");
        Func out("out");
        auto h = [&](float v) { return cast(t, v); };
        switch (c.form) {
        case ShiftedReadsForm::RepeatEdge3: {
            Func e = BoundaryConditions::repeat_edge(in);
            out(x, y) = (e(x - 1, y) + h(2) * e(x, y) + e(x + 1, y)) * h(0.25f);
            break;
        }
        case ShiftedReadsForm::RepeatEdge5f32: {
            Func e = BoundaryConditions::repeat_edge(in);
            out(x, y) = e(x - 2, y) + e(x - 1, y) * h(3) + e(x, y) + e(x + 1, y) * h(0.5f) - e(x + 2, y);
            break;
        }
        case ShiftedReadsForm::ConstantZeroCausal: {
            Func e = BoundaryConditions::constant_exterior(in, cast(t, 0), {{0, c.cols}, {Expr(), Expr()}});
            out(x, y) = e(x - 2, y) * h(0.5f) + e(x - 1, y) + e(x, y) * h(2);
            break;
        }
        case ShiftedReadsForm::PlainShift: out(x, y) = in(x, y) + in(x + 1, y) * h(2) - in(x + 3, y); break;
        case ShiftedReadsForm::ConstantZeroCentred: {
            Func e = BoundaryConditions::constant_exterior(in, cast(t, 0), {{0, c.cols}, {Expr(), Expr()}});
            out(x, y) = e(x - 1, y) * h(0.5f) + e(x, y) + e(x + 1, y) * h(2);
            break;
        }
        }
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

Schedule shift_sched(const ShiftCase &c) {
    return [=](Kernel &k) {
        Var x = k.vars.at("x"), y = k.vars.at("y"), yo("yo"), yi("yi");
        SpyreSchedule s = spyre::schedule(k.output);
        if (c.x_tiles) {
            Var xo("xo"), xi("xi");
            s.split(x, xo, xi, 128).stick_vectorize(xi);
            k.output.reorder(xi, y, xo);
        } else if (c.in_lx) {
            int cores = std::min(c.rows, 8);
            s.ring_split(y, cores).split(y, yo, yi, 2).stick_vectorize(x);
            spyre::stage_all_in_lx(k.inputs[0], k.output, yo);
        } else {
            s.stick_vectorize(x);
        }
    };
}

class ShiftedReads : public ::testing::TestWithParam<ShiftCase> {};

TEST_P(ShiftedReads, MatchCpuBitExactly) {
    const ShiftCase &c = GetParam();
    DiffResult r = run_differential(shift_alg(c), shift_sched(c), {{c.cols + extra_cols(c.form), c.rows}},
                                    {c.cols, c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    int shifts = 0;
    for (const Instr &in : r.program.code) shifts += in.op == Opcode::VSHIFT;
    EXPECT_GE(shifts, 1);
}

// `make test` runs three of the row shapes (odd rows and columns, one row, a long row) and the
// column tiles; the sweep (`make sweep`) the other two row shapes.
std::vector<ShiftCase> shifted_reads_cases(bool sweep) {
    std::vector<ShiftCase> v;
    struct F {
        ShiftedReadsForm f;
        const char *n;
    };
    for (F f : {F{ShiftedReadsForm::RepeatEdge3, "repeat_edge3"}, F{ShiftedReadsForm::ConstantZeroCausal, "causal_zero"},
                F{ShiftedReadsForm::PlainShift, "plain"}, F{ShiftedReadsForm::RepeatEdge5f32, "repeat_edge5_f32"},
                F{ShiftedReadsForm::ConstantZeroCentred, "centred_zero"}})
        for (auto [cols, rows] : std::vector<std::pair<int, int>>{{100, 7}, {1000, 2}, {16, 1}, {64, 3}, {130, 5}})
            for (bool lx : {false, true}) {
                if (sweep != (cols == 64 || cols == 130)) continue;
                v.push_back({std::string(f.n) + "_" + std::to_string(cols) + "x" + std::to_string(rows) +
                                 (lx ? "_lx" : "_staged"),
                             f.f, cols, rows, lx});
            }
    if (sweep) return v;
    // Tiles of the stick dimension: Halide splits the tiles at the row ends off, so each window
    // is fixed within its loop; the halo of the inner tiles is staged with them.
    for (F f : {F{ShiftedReadsForm::RepeatEdge3, "repeat_edge3"}, F{ShiftedReadsForm::ConstantZeroCausal, "causal_zero"}, F{ShiftedReadsForm::PlainShift, "plain"}})
        for (auto [cols, rows] : std::vector<std::pair<int, int>>{{1024, 2}, {384, 3}})  // whole tiles
            v.push_back({std::string(f.n) + "_" + std::to_string(cols) + "x" + std::to_string(rows) + "_xtiles", f.f,
                         cols, rows, false, true});
    return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ShiftedReads, ::testing::ValuesIn(shifted_reads_cases(false)),
                         [](const ::testing::TestParamInfo<ShiftCase> &i) { return i.param.name; });
INSTANTIATE_TEST_SUITE_P(Sweep, ShiftedReads, ::testing::ValuesIn(shifted_reads_cases(true)),
                         [](const ::testing::TestParamInfo<ShiftCase> &i) { return i.param.name; });

}  // namespace
}  // namespace spyre::testing

namespace spyre::testing {
namespace {

// A read a whole stick further along the row under a clamp (RoPE's rotate-half partner at
// head_dim 128 is one): the last stick's lanes all read the row's last element, as on the CPU, on
// rows of whole sticks and of part sticks.
TEST(ShiftedReadsByAStick, ClampedReadOneStickOnMatchesCpu) {
    for (int cols : {256, 200}) {
        Algorithm alg = [=] {
            Kernel k;
            ImageParam in(Float(16), 2, "in");
            Var x("x"), y("y");
            Func out("out");
            out(x, y) = in(min(x + 64, cols - 1), y) + in(max(x - 64, 0), y);
            k.inputs = {in};
            k.output = out;
            k.vars = {{"x", x}, {"y", y}};
            return k;
        };
        Schedule s = [](Kernel &k) { spyre::schedule(k.output).stick_vectorize(k.vars.at("x")); };
        DiffResult r = run_differential(alg, s, {{cols, 5}}, {cols, 5});
        EXPECT_EQ(r.cmp.mismatches, 0) << cols << ": " << r.cmp.first_mismatch;
    }
}

}  // namespace
}  // namespace spyre::testing

namespace spyre::testing {
namespace {

// A plain shift in x tiles of two sticks, with rows in tiles too: Halide peels the last row (its
// row tile shifted inwards) into a loop over the row's sticks whose last stick is an else branch,
// `if (stick <= 3) ... else if (stick*32 <= 129)`. That stick ends the row and the buffer, so its
// halo must not be loaded (fuzz-diff seed 7 case 1933 read 128 bytes past in0).
struct TiledShiftCase {
    int cols, rows, x_split, y_split, shift;
    Type type;
};
void PrintTo(const TiledShiftCase &c, std::ostream *os) {
    *os << c.cols << "x" << c.rows << " split " << c.x_split << "x" << c.y_split << " shift " << c.shift;
}

class ShiftedReadsInTiles : public ::testing::TestWithParam<TiledShiftCase> {};

TEST_P(ShiftedReadsInTiles, LastRowsHaloStaysInTheBuffer) {
    const TiledShiftCase c = GetParam();
    Algorithm alg = [=] {
        Kernel k;
        ImageParam in(c.type, 2, "in");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = in(x, y) * cast(c.type, -2.0f) + in(x + c.shift, y);
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    Schedule s = [=](Kernel &k) {
        Var xo("xo"), xi("xi"), yo("yo"), yi("yi");
        spyre::schedule(k.output).split(k.vars.at("x"), xo, xi, c.x_split).stick_vectorize(xi);
        spyre::schedule(k.output).split(k.vars.at("y"), yo, yi, c.y_split);
    };
    DiffResult r = run_differential(alg, s, {{c.cols + c.shift, c.rows}}, {c.cols, c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ShiftedReadsInTiles,
                         ::testing::Values(TiledShiftCase{130, 7, 64, 3, 2, Float(32)},
                                           TiledShiftCase{258, 5, 128, 2, 1, Float(16)}),
                         [](const ::testing::TestParamInfo<TiledShiftCase> &i) {
                             const TiledShiftCase &c = i.param;
                             return std::string(c.type.bits() == 32 ? "f32_" : "f16_") + std::to_string(c.cols) +
                                    "x" + std::to_string(c.rows) + "_split" + std::to_string(c.x_split) + "x" +
                                    std::to_string(c.y_split) + "_shift" + std::to_string(c.shift);
                         });

}  // namespace
}  // namespace spyre::testing
