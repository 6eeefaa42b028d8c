// Per-row statistics into 1-D outputs, written as a user writes them from the docs: a mean with
// no schedule at all (its inline sum's accumulator expanded to one LX slot per row by
// fold_accumulators), a variance around a mean in device memory or LX, split over the cores, and
// chosen by the autoscheduler. Each matches Halide's CPU realisation exactly; a mean inlined into
// the variance's reduction is refused with a hint.
#include <gtest/gtest.h>

#include "auto_schedule.h"
#include "compiler_test_util.h"
#include "device/error.h"
#include "reductions.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct RowStatsCase {
    std::string stat;      // "mean" or "var"
    std::string schedule;  // "none", "cores", "mean_root", "mean_lx" (the mean's placement), "auto"
    int cols, rows, cores;
};
void PrintTo(const RowStatsCase &c, std::ostream *os) {
    *os << c.stat << "_" << c.schedule << "_" << c.cols << "x" << c.rows << "c" << c.cores;
}

Algorithm row_stats_alg(const RowStatsCase &c) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var y("y");
        RDom r(0, c.cols, "r");
        Func mean("mean"), var("var");
        mean(y) = sum(cast<float>(in(r, y))) / float(c.cols);
        Expr d = cast<float>(in(r, y)) - mean(y);
        var(y) = sum(d * d) / float(c.cols);
        k.inputs = {in};
        k.output = c.stat == "mean" ? mean : var;
        k.funcs = {{"mean", mean}};
        k.vars = {{"y", y}};
        return k;
    };
}

Schedule row_stats_sched(const RowStatsCase &c) {
    return [=](Kernel &k) {
        if (c.schedule == "cores") spyre::schedule(k.output).ring_split(k.vars.at("y"), c.cores);
        if (c.schedule == "mean_root" || (c.schedule == "cores" && c.stat == "var"))
            spyre::schedule(k.funcs.at("mean")).device_root();
        if (c.schedule == "mean_lx") spyre::schedule(k.funcs.at("mean")).scratchpad_root();
    };
}

class RowStats : public ::testing::TestWithParam<RowStatsCase> {};

// The variance of a row around a mean Func with no schedule: Halide inlines the mean, so its sum
// runs inside the variance's loop over the row, once per element. The back end refuses it and says
// what to do.
TEST(RowStats, InlinedMeanInsideAReductionIsRefusedWithAHint) {
    const RowStatsCase c{"var", "none", 1000, 64, 1};
    try {
        run_differential(row_stats_alg(c), row_stats_sched(c), {{c.cols, c.rows}}, {c.rows});
        FAIL() << "compiled";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("sum is an inline reduction"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("device_root()"), std::string::npos) << e.what();
    }
}

TEST_P(RowStats, MatchesCpu) {
    const RowStatsCase c = GetParam();
    DiffResult r = run_differential(row_stats_alg(c), row_stats_sched(c), {{c.cols, c.rows}}, {c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Shapes, RowStats,
                         ::testing::Values(RowStatsCase{"mean", "none", 1000, 64, 1},
                                           RowStatsCase{"mean", "none", 4096, 7, 1},
                                           RowStatsCase{"var", "mean_root", 1000, 64, 1},
                                           RowStatsCase{"var", "mean_root", 4096, 7, 1},
                                           RowStatsCase{"var", "mean_lx", 1000, 70, 1},
                                           RowStatsCase{"var", "cores", 4096, 1024, 32},
                                           RowStatsCase{"mean", "cores", 4096, 1024, 32},
                                           RowStatsCase{"mean", "cores", 4096, 100, 32},
                                           RowStatsCase{"var", "cores", 1000, 100, 32}),
                         [](const auto &info) {
                             const RowStatsCase &c = info.param;
                             return c.stat + "_" + c.schedule + "_" + std::to_string(c.cols) + "x" +
                                    std::to_string(c.rows) + "c" + std::to_string(c.cores);
                         });


// The autoscheduler finds a schedule for the variance with no directive given: one row of the
// input fits LX many times over ("no candidate fits the usable LX" before).
class AutoRowStats : public ::testing::TestWithParam<RowStatsCase> {};

TEST_P(AutoRowStats, VarianceMatchesCpu) {
    const RowStatsCase c = GetParam();
    AutoResult result;
    auto sched = [&](Kernel &k) {
        CompileOptions o;
        o.inputs = {TensorSpec{{c.cols, c.rows}, {}}};
        o.output = TensorSpec{{c.rows}, {}};
        AutoOptions ao;
        ao.max_evaluations = 8;
        ao.progress = false;
        result = auto_schedule(k.output, k.inputs, o, ao);
    };
    DiffResult r = run_differential(row_stats_alg(c), sched, {{c.cols, c.rows}}, {c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch << "\n" << result.cpp;
}

INSTANTIATE_TEST_SUITE_P(Shapes, AutoRowStats,
                         ::testing::Values(RowStatsCase{"var", "auto", 1000, 64, 0},
                                           RowStatsCase{"var", "auto", 4096, 1024, 0}),
                         [](const auto &info) {
                             const RowStatsCase &c = info.param;
                             return c.stat + "_" + std::to_string(c.cols) + "x" + std::to_string(c.rows);
                         });

}  // namespace
}  // namespace spyre::testing
