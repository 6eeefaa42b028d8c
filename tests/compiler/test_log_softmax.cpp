// log_softmax over Llama-3.1-8B's vocabulary (a row of 128256 logits, 250 KiB in fp16), written as
// the docs write a row reduction: the row's maximum, the sum of exponentials in fp32, and
// x - max - log(sum) per element, with a hand schedule (a row at a time, rows over the cores) and
// with auto. Both match Halide's CPU realisation.
#include <gtest/gtest.h>

#include "auto_schedule.h"
#include "compiler_test_util.h"

namespace spyre::testing {
namespace {

using namespace Halide;

Algorithm log_softmax(int cols) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "logits");
        Var x("x"), y("y");
        RDom r(0, cols, "r");
        Func mx("mx"), s("sum_exp"), lse("lse"), out("log_softmax");
        mx(y) = maximum(cast<float>(in(r, y)));
        s(y) = sum(exp(cast<float>(in(r, y)) - mx(y)));
        lse(y) = mx(y) + log(s(y));
        out(x, y) = cast<float16_t>(cast<float>(in(x, y)) - lse(y));
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"mx", mx}, {"sum_exp", s}, {"lse", lse}};
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

struct LogSoftmaxCase {
    std::string schedule;
    int cols, rows;
};

class LogSoftmax : public ::testing::TestWithParam<LogSoftmaxCase> {};

TEST_P(LogSoftmax, MatchesCpu) {
    const LogSoftmaxCase c = GetParam();
    AutoResult ar;
    DiffResult r = run_differential(
        log_softmax(c.cols),
        [&](Kernel &k) {
            if (c.schedule == "auto") {
                CompileOptions o;
                o.inputs = {TensorSpec{{c.cols, c.rows}, {}}};
                o.output = TensorSpec{{c.cols, c.rows}, {}};
                AutoOptions ao;
                ao.max_evaluations = 8;
                ao.progress = false;
                ar = auto_schedule(k.output, k.inputs, o, ao);
                return;
            }
            // A row at a time on each core: its statistics in LX, the row staged once.
            Var y = k.vars.at("y"), x = k.vars.at("x");
            spyre::schedule(k.output).ring_split(y, std::min(32, c.rows)).stick_vectorize(x);
            for (const char *f : {"mx", "sum_exp", "lse"}) spyre::schedule(k.funcs.at(f)).scratchpad_store_at(k.output, y);
            spyre::stage_all_in_lx(k.inputs[0], k.output, y);
        },
        {{c.cols, c.rows}}, {c.cols, c.rows}, -8, 8);
    // exp and log differ from the CPU's by a few fp32 ULPs: at most one fp16 ULP of the result.
    EXPECT_LE(r.cmp.max_ulp, 1) << r.cmp.first_mismatch << ar.cpp;
}

INSTANTIATE_TEST_SUITE_P(Shapes, LogSoftmax,
                         ::testing::Values(LogSoftmaxCase{"rows", 128256, 2}, LogSoftmaxCase{"rows", 1000, 33},
                                           LogSoftmaxCase{"auto", 128256, 1}),
                         [](const ::testing::TestParamInfo<LogSoftmaxCase> &i) {
                             return i.param.schedule + "_" + std::to_string(i.param.cols) + "x" +
                                    std::to_string(i.param.rows);
                         });

}  // namespace
}  // namespace spyre::testing
