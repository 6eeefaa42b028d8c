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

// An fp32 accumulator vectorized by one of its own sticks covers half a stick of its fp16 input;
// the error says how many sticks to ask for.
TEST(ColumnReductionErrors, HalfStickOfTheInputSaysHowManySticks) {
    Kernel k = column_reduction({"sum", 128, 4})();
    Var x = k.vars.at("x");
    spyre::schedule(k.output).stick_vectorize(x);
    spyre::schedule(k.funcs.at("acc")).stick_vectorize(x).scratchpad_store_at(k.output, x);
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
