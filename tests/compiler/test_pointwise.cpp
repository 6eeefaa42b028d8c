// Pointwise kernels (schedules/pointwise.h) compiled for Spyre with each named schedule match
// Halide's CPU realisation (strict floats on both sides, rounded op by op): exactly for add_mul,
// fma, relu and gelu; within 1 fp16 / 2 fp32 ULPs for exp and silu, whose exp is Halide's own on
// the CPU and libm's expf in the simulator (gelu's tanh is libm's tanhf in both).
// Measured at the shapes below: exp 1 fp16 / 2 fp32 ULPs, silu 0 / 2, every other op 0.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler_test_util.h"
#include "cpu_reference.h"
#include "device/error.h"
#include "pointwise.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// The CPU reference is realised for spyre::cpu_reference_target() (dsl/cpu_reference.h):
// strict floats, op by op, like the device.

Kernel pointwise_to_kernel(const PointwiseKernel &pk) {
    Kernel k;
    k.inputs = pk.inputs;
    k.output = pk.out;
    k.vars = {{"x", pk.x}, {"y", pk.y}};
    return k;
}

Algorithm pointwise_alg(const std::string &op, Type t, int cols, int rows) {
    return [=] { return pointwise_to_kernel(make_pointwise(op, t, cols, rows)); };
}

Schedule pointwise_sched(const std::string &op, Type t, const std::string &name, int cols, int rows) {
    return [=](Kernel &k) {
        PointwiseKernel pk;
        pk.inputs = k.inputs;
        pk.out = k.output;
        pk.x = k.vars.at("x"), pk.y = k.vars.at("y");
        pk.op = op, pk.type = t, pk.cols = cols, pk.rows = rows;
        schedule_pointwise(pk, name);
    };
}

// An fp16 add/mul chain with an fp32 literal: x*x in fp16, then x*2.0f and the sum in fp32, rounded
// to fp16 at the end; stick vectorized, whole sticks.
TEST(Pointwise, AddMulF16) {
    auto alg = [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = cast(Float(16), in(x, y) * in(x, y) + in(x, y) * 2.0f);
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    Schedule sticks = [](Kernel &k) { spyre::schedule(k.output).stick_vectorize(k.vars["x"]); };
    auto r = run_differential(alg, sticks, {{128, 4}}, {128, 4});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// A bias row read by every row of a tile is staged once, outside the row loop: with LX too small
// for the whole image, the rows are staged one at a time, and the bias is still read once.
TEST(Pointwise, ARowInvariantReadIsStagedOnceOutsideTheRowLoop) {
    const int cols = 256, rows = 64;
    auto alg = [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in"), bias(Float(16), 1, "bias");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = in(x, y) + bias(x);
        k.inputs = {in, bias};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    MachineDesc m;
    m.lx_usable_bytes = 16 * 1024;  // half of it (the staging budget) holds a few rows, not 64
    Schedule sticks = [m](Kernel &k) { spyre::schedule(k.output, m).stick_vectorize(k.vars["x"]); };
    DiffResult r = run_differential(alg, sticks, {{cols, rows}, {cols}}, {cols, rows}, -4, 4, m);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.stats.dram_read_bytes, int64_t(cols) * rows * 2 + cols * 2);
}

// A row read by every row (a bias, a gamma, a column maximum) is one instruction's row operand
// (kSrc1Row): the rows of a tile are the groups of one instruction instead of a loop of one
// instruction per row. Where the row comes first in an operation that does not commute, it is
// written out to every row first (a copy, then copies doubling what is written).
struct RowOperandCase {
    std::string name;
    std::function<Expr(Func, Func, Var, Var)> value;
    Type type;
    int row_ops;     // instructions with a row operand the program should hold
    int row_copies;  // VCOPYs writing the row out to every row
};

class RowOperand : public ::testing::TestWithParam<RowOperandCase> {};

TEST_P(RowOperand, TheRowsOfATileAreOneInstructionsGroupsAndMatchTheCpu) {
    const RowOperandCase c = GetParam();
    const int rows = 16, cols = c.type.bits() == 16 ? 128 : 64;
    auto alg = [c] {
        Kernel k;
        ImageParam in(c.type, 2, "in"), row(c.type, 1, "row");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = c.value(in, row, x, y);
        k.inputs = {in, row};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    Schedule sticks = [](Kernel &k) { spyre::schedule(k.output).stick_vectorize(k.vars["x"]); };
    DiffResult r = run_differential(alg, sticks, {{cols, rows}, {cols}}, {cols, rows}, 0.5f, 4);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    int row_ops = 0, copies = 0, loops = 0;
    for (const Instr &in : r.program.code) {
        row_ops += op_info(in.op).form == VecForm::Map2 && (in.mode & kSrc1Row);
        copies += in.op == Opcode::VCOPY;
        loops += in.op == Opcode::LOOP;
        if (op_info(in.op).form == VecForm::Map2 && (in.mode & kSrc1Row)) {
            EXPECT_EQ(in.a[8], rows) << c.name;
        }
    }
    EXPECT_EQ(row_ops, c.row_ops);
    EXPECT_EQ(copies, c.row_copies);  // 1 + log2(16) when written out, else none
    EXPECT_EQ(loops, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Pointwise, RowOperand,
    ::testing::Values(
        RowOperandCase{"bias_add", [](Func in, Func b, Var x, Var y) { return in(x, y) + b(x); }, Float(16), 1, 0},
        RowOperandCase{"bias_first", [](Func in, Func b, Var x, Var y) { return b(x) + in(x, y); }, Float(16), 1, 0},
        RowOperandCase{"gamma_f32", [](Func in, Func b, Var x, Var y) { return in(x, y) * b(x); }, Float(32), 1, 0},
        RowOperandCase{"minus_column_max", [](Func in, Func b, Var x, Var y) { return in(x, y) - b(x); },
                       Float(16), 1, 0},
        RowOperandCase{"row_over_input", [](Func in, Func b, Var x, Var y) { return b(x) / in(x, y); }, Float(16),
                       0, 5},
        RowOperandCase{"int32_max", [](Func in, Func b, Var x, Var y) { return max(in(x, y), b(x)); }, Int(32), 1,
                       0},
        RowOperandCase{"mask", [](Func in, Func b, Var x, Var y) { return select(in(x, y) < b(x), in(x, y), 0.0f); },
                       Float(32), 1, 1},  // the copy: VSELM's result into the output
        // A value computed from the row alone is computed once, as a row.
        RowOperandCase{"widened_gamma",
                       [](Func in, Func b, Var x, Var y) { return cast<float>(in(x, y)) * cast<float>(b(x)); },
                       Float(16), 1, 0},
        RowOperandCase{"sqrt_of_row", [](Func in, Func b, Var x, Var y) { return in(x, y) * sqrt(b(x)); },
                       Float(32), 1, 0},
        RowOperandCase{"row_times_two", [](Func in, Func b, Var x, Var y) { return in(x, y) - b(x) * 2.0f; },
                       Float(32), 1, 0}),
    [](const ::testing::TestParamInfo<RowOperandCase> &i) { return i.param.name; });

// A condition on the row keeps the row loop: a step of rows sharing a row operand would evaluate
// it once for all of them. A concatenation along the rows (fuzz-diff seed 1, case 129, refused it
// instead).
TEST(Pointwise, ARowConditionBesideARowOperandKeepsTheRowLoopAndMatchesTheCpu) {
    auto alg = [] {
        Kernel k;
        ImageParam a(Float(16), 2, "a"), b(Float(16), 2, "b");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = select(y < 1, a(x, min(y, 0)), b(x, max(y - 1, 0)));
        k.inputs = {a, b};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    Schedule sched = [](Kernel &k) {
        Var yo("yo"), yi("yi");
        spyre::schedule(k.output).stick_vectorize(k.vars["x"]).split(k.vars["y"], yo, yi, 3);
    };
    DiffResult r = run_differential(alg, sched, {{128, 1}, {128, 1}}, {128, 2});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

TEST(Pointwise, UnknownNamesAreListed) {
    try {
        make_pointwise("cube", Float(16), 64, 1);
        FAIL() << "no error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("add_mul, fma, relu, gelu, silu, exp"), std::string::npos) << e.what();
    }
    PointwiseKernel k = make_pointwise("relu", Float(16), 64, 1);
    try {
        schedule_pointwise(k, "stage9");
        FAIL() << "no error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("root, tiles, cores32"), std::string::npos) << e.what();
    }
}

struct PointwiseCase {
    std::string op;
    int bits;
    std::string schedule;
    int cols, rows;
    int cores;  // cores the program should use
};

// ULPs allowed per op, in the output type (see the header).
int64_t tolerance(const std::string &op, int bits) {
    if (op == "exp" || op == "silu") return bits == 16 ? 1 : 2;
    return 0;
}

class PointwiseSchedules : public ::testing::TestWithParam<PointwiseCase> {
};

TEST_P(PointwiseSchedules, MatchesCpu) {
    PointwiseCase c = GetParam();
    Type t = Float(c.bits);
    int n_in = c.op == "fma" ? 3 : 1;
    std::vector<std::vector<int>> shapes(n_in, {c.cols, c.rows});
    DiffResult r = run_differential(pointwise_alg(c.op, t, c.cols, c.rows),
                                    pointwise_sched(c.op, t, c.schedule, c.cols, c.rows), shapes, {c.cols, c.rows});
    EXPECT_LE(r.cmp.max_ulp, tolerance(c.op, c.bits))
        << r.cmp.first_mismatch << " (" << r.cmp.mismatches << " elements differ)";
    EXPECT_TRUE(meets_channel_floor(r));
    EXPECT_EQ(r.program.num_cores, c.cores);
}

std::vector<PointwiseCase> pointwise_cases() {
    std::vector<PointwiseCase> out;
    for (const std::string &op : pointwise_ops()) {
        for (int bits : {16, 32}) {
            out.push_back({op, bits, "root", 1000, 7, 1});
            out.push_back({op, bits, "root", 100, 1, 1});
            out.push_back({op, bits, "tiles", 1000, 128, 1});
            out.push_back({op, bits, "tiles", 100, 1, 1});
            out.push_back({op, bits, "tiles", 100, 100, 1});  // a partial last tile of 36 rows
            out.push_back({op, bits, "cores32", 100, 1, 1});
            out.push_back({op, bits, "cores32", 1000, 32, 32});
            out.push_back({op, bits, "cores32", 100, 100, 25});  // 4 rows a core
            out.push_back({op, bits, "cores32", 100, 2048, 32});
            out.push_back({op, bits, "cores32", 100, 1000, 32});  // 32 rows a core, 8 on the last
            out.push_back({op, bits, "cores32", 100, 4096, 32});  // 2 tiles a core
        }
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, PointwiseSchedules, ::testing::ValuesIn(pointwise_cases()), [](const auto &info) {
    const PointwiseCase &c = info.param;
    return c.op + "_f" + std::to_string(c.bits) + "_" + c.schedule + "_" + std::to_string(c.cols) + "x" +
           std::to_string(c.rows);
});

// A reference's fp16 arithmetic keeps a NaN a NaN, as IEEE arithmetic and the device do (Halide 14
// narrows it to an infinity: -inf - -inf gave -inf, the one mismatch of seed 7's 3000 random
// pipelines); finite values are narrowed as before.
TEST(CpuReference, Fp16ArithmeticThatMakesANaNGivesANaN) {
    ImageParam p(Float(16), 1, "p");
    Var x("x");
    // (Not exp: Halide's own exp_f32 gives 0 for a NaN, in fp32 too, a matter of its exp.)
    Func diff("diff"), through_sqrt("through_sqrt"), narrowed("narrowed");
    diff(x) = p(x) - p(x);
    through_sqrt(x) = sqrt(p(x) - p(x)) + p(x);
    narrowed(x) = cast<float16_t>(cast<float>(p(x)) * 0.0f);
    Buffer<float16_t> in(4);
    in(0) = float16_t(-INFINITY), in(1) = float16_t(INFINITY), in(2) = float16_t(1.5f), in(3) = float16_t(NAN);
    p.set(in);
    for (Func f : {diff, through_sqrt, narrowed}) {
        keep_fp16_nans(f);
        Buffer<float16_t> out = f.realize({4}, cpu_reference_target());
        for (int i : {0, 1, 3}) EXPECT_TRUE(std::isnan(float(out(i)))) << f.name() << " at " << i << ": " << float(out(i));
    }
    Buffer<float16_t> d = diff.realize({4}, cpu_reference_target());
    EXPECT_EQ(float(d(2)), 0.0f);
    Buffer<float16_t> e = through_sqrt.realize({4}, cpu_reference_target());
    EXPECT_EQ(float(e(2)), 1.5f);
}

}  // namespace
}  // namespace spyre::testing
