// Column reductions (sum, max and mean over rows, acc(x) (+)= in(x, r)) from the DSL alone:
// stick_vectorize(x) on the Func applies to its update definitions too, so the reduction streams
// whole sticks of x without a Halide vectorize from the user. Checked against the CPU.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct ColCase {
    std::string op;
    int cols, rows;
};

Algorithm column_reduction(const ColCase &c) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x");
        RDom r(0, c.rows, "r");
        Func acc("acc"), out("out");
        if (c.op == "max") {
            acc(x) = Float(32).min();
            acc(x) = max(acc(x), cast<float>(in(x, r)));
        } else {
            acc(x) = 0.0f;
            acc(x) += cast<float>(in(x, r));
        }
        out(x) = cast<float16_t>(c.op == "mean" ? acc(x) / float(c.rows) : acc(x));
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"acc", acc}};
        k.vars = {{"x", x}};
        return k;
    };
}

// The fp32 accumulator takes two of its sticks per fp16 stick of the input: 64 columns at a time.
Schedule stick_only() {
    return [](Kernel &k) {
        Var x = k.vars.at("x");
        spyre::schedule(k.output).stick_vectorize(x);
        spyre::schedule(k.funcs.at("acc")).stick_vectorize(x, 2).scratchpad_store_at(k.output, x);
    };
}

class ColumnReduction : public ::testing::TestWithParam<ColCase> {};

TEST_P(ColumnReduction, StickVectorizeAloneMatchesCpu) {
    ColCase c = GetParam();
    DiffResult r = run_differential(column_reduction(c), stick_only(), {{c.cols, c.rows}}, {c.cols});
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    EXPECT_TRUE(meets_channel_floor(r));
}

INSTANTIATE_TEST_SUITE_P(Ops, ColumnReduction,
                         ::testing::Values(ColCase{"sum", 128, 16}, ColCase{"sum", 100, 7}, ColCase{"max", 64, 33},
                                           ColCase{"mean", 192, 1}, ColCase{"mean", 1000, 5}),
                         [](const auto &info) {
                             const ColCase &c = info.param;
                             return c.op + "_" + std::to_string(c.cols) + "x" + std::to_string(c.rows);
                         });

// The rows fold into the accumulator in one instruction (kFoldGroups) instead of a loop of one
// instruction per row.
TEST(ColumnReductionFold, TheRowsAreOneFoldInstruction) {
    ColCase c{"sum", 128, 16};
    DiffResult r = run_differential(column_reduction(c), stick_only(), {{c.cols, c.rows}}, {c.cols});
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    int folds = 0, row_loops = 0;
    for (const Instr &in : r.program.code) {
        if (op_info(in.op).form == VecForm::Map2 && (in.mode & kFoldGroups)) {
            folds++;
            EXPECT_EQ(in.a[8], c.rows);
        }
        row_loops += in.op == Opcode::LOOP && in.a[2] == c.rows;
    }
    EXPECT_GE(folds, 1);
    EXPECT_EQ(row_loops, 0);
}

// A fold adds the rows one after another, rounding after each as the CPU's loop does: in fp16,
// 2048 + 1 rounds back to 2048 (ties to even), so fifteen ones after it add nothing, where a sum of
// the ones first would give 2064.
TEST(ColumnReductionFold, AnFp16SumAddsTheRowsInOrder) {
    const int cols = 64, rows = 16;
    auto alg = [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x");
        RDom r(0, rows, "r");
        Func acc("acc");
        acc(x) = cast<float16_t>(0);
        acc(x) += in(x, r);
        k.inputs = {in};
        k.output = acc;
        k.vars = {{"x", x}};
        return k;
    };
    Schedule sched = [](Kernel &k) { spyre::schedule(k.output).stick_vectorize(k.vars.at("x")); };
    Runtime::Buffer<float16_t> in(cols, rows);
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) in(x, y) = float16_t(y == 0 ? 2048.0f : 1.0f);
    DiffResult r = run_differential_on(alg, sched, {Runtime::Buffer<>(in)}, {cols});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(float(static_cast<const float16_t *>(r.got.data())[0]), 2048.0f);
    int folds = 0;
    for (const Instr &i : r.program.code) folds += op_info(i.op).form == VecForm::Map2 && (i.mode & kFoldGroups);
    EXPECT_EQ(folds, 1);
}

// A select on the row inside a column reduction keeps the row loop (fuzz-diff seed 1, case 65).
TEST(ColumnReductionFold, ARowConditionKeepsTheRowLoopAndMatchesTheCpu) {
    auto alg = [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x");
        RDom r(0, 16, "r");
        Func acc("acc");
        acc(x) = cast<float16_t>(-1000);
        acc(x) = max(acc(x), select(r >= 6, in(x, r), -in(x, r)));
        k.inputs = {in};
        k.output = acc;
        k.vars = {{"x", x}};
        return k;
    };
    Schedule sched = [](Kernel &k) { spyre::schedule(k.output).stick_vectorize(k.vars.at("x")); };
    DiffResult r = run_differential(alg, sched, {{64, 16}}, {64});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    for (const Instr &i : r.program.code) EXPECT_FALSE(op_info(i.op).form == VecForm::Map2 && (i.mode & kFoldGroups));
}

// stick_vectorize(x) with no count on an fp32 accumulator of fp16 values takes two of its sticks,
// one whole stick of the input per vector, as the schedule above asks by hand; so does an inline
// sum() of them that the output reads.
TEST(ColumnReduction, StickVectorizeWithNoCountCoversAStickOfTheInput) {
    const DiffResult named = run_differential(column_reduction({"sum", 200, 9}), [](Kernel &k) {
        const Var x = k.vars.at("x");
        spyre::schedule(k.output).stick_vectorize(x);
        spyre::schedule(k.funcs.at("acc")).stick_vectorize(x).scratchpad_store_at(k.output, x);
    }, {{200, 9}}, {200});
    EXPECT_EQ(named.cmp.max_ulp, 0) << named.cmp.first_mismatch;
    const DiffResult inline_sum = run_differential([] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x");
        RDom r(0, 16, "r");
        Func out("out");
        out(x) = sum(cast<float>(in(x, r)));
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}};
        return k;
    }, [](Kernel &k) { spyre::schedule(k.output).ring_split(k.vars.at("x"), 2).stick_vectorize(k.vars.at("x")); },
                                                   {{256, 16}}, {256});
    EXPECT_EQ(inline_sum.cmp.max_ulp, 0) << inline_sum.cmp.first_mismatch;
}

// A negative count is refused by the directive, naming the Func and what the count means.
TEST(ColumnReductionErrors, ANegativeStickCountIsRefusedByName) {
    Kernel k = column_reduction({"sum", 128, 4})();
    const std::string e = error_of([&] { spyre::schedule(k.funcs.at("acc")).stick_vectorize(k.vars.at("x"), -1); });
    EXPECT_NE(e.find("Func acc"), std::string::npos) << e;
    EXPECT_NE(e.find("stick_vectorize(x, -1): sticks must be at least 1 (or 0, the default"), std::string::npos) << e;
}

// An fp32 accumulator vectorized by one of its own sticks, asked for by count, covers half a stick
// of its fp16 input; the error says how many sticks to ask for.
TEST(ColumnReductionErrors, HalfStickOfTheInputSaysHowManySticks) {
    Kernel k = column_reduction({"sum", 128, 4})();
    Var x = k.vars.at("x");
    spyre::schedule(k.output).stick_vectorize(x);
    spyre::schedule(k.funcs.at("acc")).stick_vectorize(x, 1).scratchpad_store_at(k.output, x);
    CompileOptions o;
    o.inputs = {TensorSpec{{128, 4}, {}}};
    o.output = TensorSpec{{128}, {}};
    try {
        compile_for_spyre(k.output, k.inputs, o);
        FAIL() << "compiled";
    } catch (const spyre::Error &e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("Func acc"), std::string::npos) << msg;
        EXPECT_NE(msg.find("stick_vectorize(x, 2)"), std::string::npos) << msg;
    }
}

}  // namespace
}  // namespace spyre::testing

namespace spyre::testing {
namespace {

using namespace Halide;

// The same reductions with no schedule at all (out(x) = sum(in(x, r)), Halide's loops x outside r):
// each element's sum runs down a column, across sticks. The two loops trade places, so a row of
// elements accumulates together, a vector per step, each element's sum in Halide's order (random
// pipeline seed 6 cases 372, 424 and 739, refused before as reads out of stick order).
TEST(UnvectorizedColumnReduction, SumMaximumAndMinimumMatchCpuExactly) {
    struct Case {
        const char *op;
        Type type;
        int w, h;
    };
    for (const Case &c : {Case{"sum", Float(32), 7, 5}, Case{"maximum", Float(16), 130, 16},
                          Case{"minimum", Float(32), 128, 5}, Case{"sum", Float(16), 100, 9}, Case{"sum", Int(32), 70, 3}}) {
        auto alg = [&] {
            Kernel k;
            ImageParam in(c.type, 2, "in");
            Var x("x");
            RDom r(0, c.h, "r");
            Func out("out");
            const std::string op = c.op;
            out(x) = op == "sum" ? sum(in(x, r)) : op == "maximum" ? maximum(in(x, r)) : minimum(in(x, r));
            k.inputs = {in};
            k.output = out;
            return k;
        };
        DiffResult r = run_differential(alg, [](Kernel &) {}, {{c.w, c.h}}, {c.w});
        EXPECT_EQ(r.cmp.mismatches, 0) << c.op << " " << c.type << " " << c.w << "x" << c.h << ": " << r.cmp.first_mismatch;
    }
}

}  // namespace
}  // namespace spyre::testing
