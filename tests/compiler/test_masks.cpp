// select() on the stick index against a row index or a value of the loops outside (a causal mask, a
// tail mask, a constant pad other than zero) compiles to VSELIDX, one per step (select_masks.cpp),
// and matches Halide's CPU realisation bit for bit; a condition with no such form is refused by
// name. A reduction over a triangle (RDom::where, which Halide makes a loop bound that depends on
// the loops outside) runs as a loop counted by a register, on one core or split over cores.
#include <gtest/gtest.h>

#include "compiler_test_util.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct MaskCase {
    std::string name;
    std::function<Expr(ImageParam, Var, Var)> value;
    int cols, rows;
    int row_tile;  // > 0: rows split by this (the mask's limit then comes from the outer loop)
};

class Masks : public ::testing::TestWithParam<MaskCase> {};

TEST_P(Masks, MatchCpuBitExactlyWithOneIndexSelectPerStep) {
    const MaskCase c = GetParam();
    DiffResult r = run_differential(
        [&] {
            Kernel k;
            ImageParam in(Float(16), 2, "in");
            Var x("x"), y("y");
            Func out("masked");
            out(x, y) = c.value(in, x, y);
            k.inputs = {in};
            k.output = out;
            k.vars = {{"x", x}, {"y", y}};
            return k;
        },
        [&](Kernel &k) {
            Var yo("yo"), yi("yi");
            if (c.row_tile > 0) k.output.split(k.vars["y"], yo, yi, c.row_tile);
            spyre::schedule(k.output).stick_vectorize(k.vars["x"]);
        },
        {{c.cols, c.rows}}, {c.cols, c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    int selects = 0;
    for (const Instr &in : r.program.code) selects += in.op == Opcode::VSELIDX;
    EXPECT_GE(selects, 1);
}

std::vector<MaskCase> masks_cases() {
    const Expr zero = cast<float16_t>(0);
    return {
        // Causal: lane x of row y kept where x <= y (the limit grows by one per row).
        {"causal_rows_as_groups", [=](ImageParam in, Var x, Var y) { return select(x <= y, in(x, y), zero); }, 128, 64, 0},
        {"causal_strict", [=](ImageParam in, Var x, Var y) { return select(x < y + 3, in(x, y), zero); }, 192, 40, 0},
        // The stick index on the right: the sources swap.
        {"anti_causal", [=](ImageParam in, Var x, Var y) { return select(y >= x, zero, in(x, y) * 2); }, 128, 64, 0},
        {"upper_triangle", [=](ImageParam in, Var x, Var y) { return select(x > y, in(x, y), -in(x, y)); }, 64, 100, 0},
        // A fixed limit (a tail mask) and a limit from the loop over row tiles.
        {"tail", [=](ImageParam in, Var x, Var y) { return select(x < 100, in(x, y), in(x, y) * 2); }, 256, 8, 0},
        // A limit that moves by two per row: the rows are not one instruction's groups, each row a step.
        {"row_step_two", [=](ImageParam in, Var x, Var y) { return select(x <= 2 * y, in(x, y), in(x, y) * 2); }, 128, 16, 0},
        {"causal_row_tiles", [=](ImageParam in, Var x, Var y) { return select(x <= y, in(x, y), zero); }, 128, 128, 16},
        // constant_exterior with a value other than 0: the zero-padded shift, then the pad value.
        {"constant_exterior_one",
         [](ImageParam in, Var x, Var y) {
             Func c = BoundaryConditions::constant_exterior(in, cast<float16_t>(1), {{0, 256}, {Expr(), Expr()}});
             return c(x - 1, y) + c(x, y);
         },
         256, 4, 0},
    };
}

INSTANTIATE_TEST_SUITE_P(Conditions, Masks, ::testing::ValuesIn(masks_cases()),
                         [](const ::testing::TestParamInfo<MaskCase> &i) { return i.param.name; });

struct TriangleCase {
    std::string name;
    int cores;
};

class TriangularLoops : public ::testing::TestWithParam<TriangleCase> {};

TEST_P(TriangularLoops, PrefixSumsOverRowsMatchCpu) {
    const TriangleCase c = GetParam();
    DiffResult r = run_differential(
        [&] {
            Kernel k;
            ImageParam in(Float(32), 2, "in");
            Var x("x"), y("y");
            Func out("prefix");
            RDom rr(0, 64, "r");
            rr.where(rr.x <= y);  // row y sums rows 0..y
            out(x, y) = 0.0f;
            out(x, y) += in(x, rr);
            k.inputs = {in};
            k.output = out;
            k.vars = {{"x", x}, {"y", y}};
            return k;
        },
        [&](Kernel &k) {
            auto s = spyre::schedule(k.output);
            if (c.cores > 1) s.ring_split(k.vars["y"], c.cores);
            s.stick_vectorize(k.vars["x"]);
        },
        {{64, 64}}, {64, 64});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    bool counted_by_register = false;
    for (const Instr &in : r.program.code) counted_by_register |= in.op == Opcode::LOOP && in.a[1] != 0;
    EXPECT_TRUE(counted_by_register);
}

INSTANTIATE_TEST_SUITE_P(Schedules, TriangularLoops,
                         ::testing::Values(TriangleCase{"one_core", 1}, TriangleCase{"four_cores", 4}),
                         [](const ::testing::TestParamInfo<TriangleCase> &i) { return i.param.name; });

std::string mask_error(const std::function<Expr(ImageParam, Var, Var)> &value) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func out("masked");
    out(x, y) = value(in, x, y);
    spyre::schedule(out).stick_vectorize(x);
    CompileOptions o;
    o.inputs = {TensorSpec{{128, 8}, {}}};
    o.output = TensorSpec{{128, 8}, {}};
    return error_of([&] { compile_for_spyre(out, {in}, o); });
}

// A condition on values compiles (a mask and VSELM: test_data_select.cpp).
TEST(MaskErrors, ConditionOnValuesCompiles) {
    EXPECT_EQ(mask_error([](ImageParam in, Var x, Var y) { return select(in(x, y) > 0, in(x, y), -in(x, y)); }),
              "(no error)");
}

TEST(MaskErrors, StickIndexScaledIsRefused) {
    std::string msg = mask_error([](ImageParam in, Var x, Var y) { return select(2 * x <= y, in(x, y), in(x, y) * 2); });
    EXPECT_NE(msg.find("Func masked"), std::string::npos) << msg;
    EXPECT_NE(msg.find("an index used as a value"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("ramp("), std::string::npos) << msg;  // no IR text
}

// constant_exterior on both dimensions with the rows split over cores: the row test lands inside
// the vector's condition as one value for every lane (a broadcast of y < 0 || y >= rows). It is a
// limit past every element or none (VSELIDX), per row: the result matches the CPU. (It was refused
// with "an operation of type uint8x64_t"; found writing the unseen pipelines.)
TEST(RowSelect, ABoundaryConditionOnTheRowsWithTheRowsSplitMatchesCpu) {
    for (int cores : {15, 32}) {
        Algorithm alg = [] {
            Kernel k;
            ImageParam in(Float(16), 2, "in");
            Var x("x"), y("y");
            Func c = BoundaryConditions::constant_exterior(in, cast<float16_t>(0.0f));
            Func out("laplacian");
            out(x, y) = c(x, y) * cast<float16_t>(4.0f) - c(x - 1, y) - c(x + 1, y) - c(x, y - 1) - c(x, y + 1);
            k.inputs = {in};
            k.output = out;
            k.vars = {{"x", x}, {"y", y}};
            return k;
        };
        DiffResult r = run_differential(
            alg, [=](Kernel &k) { spyre::schedule(k.output).ring_split(k.vars.at("y"), cores).stick_vectorize(k.vars.at("x")); },
            {{200, 60}}, {200, 60}, -2, 2);
        EXPECT_EQ(r.cmp.mismatches, 0) << cores << " cores: " << r.cmp.first_mismatch;
        EXPECT_GT(r.program.num_cores, 1);
    }
}

// A select on the row alone, as a scalar (Halide broadcasts select(y >= 10, a, b) over the
// vector), where a core's rows are back to back: the rows cannot be merged into one step's
// lanes, which evaluate the scalar once. Found by fuzz-diff (seed 2, case 387): rows 10 and 11 of
// core 2 took the value of row 8.
TEST(RowSelect, AScalarSelectOnTheRowIsEvaluatedForEveryRow) {
    Algorithm alg = [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = min(in(x, y), select(y >= 10, cast<float16_t>(3.0f), cast<float16_t>(1.5f)));
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    for (int cores : {1, 4}) {
        Schedule sched = [=](Kernel &k) {
            spyre::schedule(k.output).stick_vectorize(k.vars.at("x")).ring_split(k.vars.at("y"), cores, 16);
        };
        DiffResult r = run_differential(alg, sched, {{192, 16}}, {192, 16});
        EXPECT_EQ(r.cmp.mismatches, 0) << cores << " cores: " << r.cmp.first_mismatch;
    }
}

// A select on the row alone between two vectors, its condition a scalar (Halide keeps
// select(y >= 1, p - p, p) so, hoisted into a let): evaluated once per row, the rows it tells
// apart kept a loop rather than merged into one step's groups. It was refused with "an operation
// of type int32_t" (seed 21 case 785 of the random pipelines).
TEST(RowSelect, AScalarSelectBetweenTwoVectorsIsEvaluatedForEveryRow) {
    Algorithm alg = [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func p("p"), out("out");
        p(x, y) = cast<float>(in(x, y));
        out(x, y) = select(y >= 1, p(x, y) - p(x, y), p(x, y)) * p(x, y);
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        k.funcs = {{"p", p}};
        return k;
    };
    Schedule sched = [](Kernel &k) {
        spyre::schedule(k.output).stick_vectorize(k.vars.at("x")).ring_split(k.vars.at("y"), 2, 7);
        spyre::schedule(k.funcs.at("p")).scratchpad_root().stick_vectorize(k.vars.at("x"), 2);
    };
    DiffResult r = run_differential(alg, sched, {{64, 7}}, {64, 7});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing
