// Layernorm and rmsnorm (schedules/norms.h) compiled for Spyre with each named schedule match
// Halide's CPU realisation exactly (max_ulp == 0; measured 0 in every case): the row sums agree
// bit for bit (fp32, index order, on both sides; fp16 values widen exactly), and the divisions,
// sqrt and the fp16 rounding are IEEE ops, rounded op by op on both sides under strict floats.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"
#include "norms.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// The CPU reference is realised for spyre::cpu_reference_target() (dsl/cpu_reference.h):
// strict floats, op by op, like the device.

Kernel norms_to_kernel(const NormKernel &nk) {
    Kernel k;
    k.inputs = nk.inputs;
    k.output = nk.out;
    for (auto &s : nk.stats) k.funcs[s.first] = s.second;
    k.vars = {{"x", nk.x}, {"y", nk.y}};
    return k;
}

Algorithm norm_alg(const std::string &op, int cols, int rows) {
    return [=] { return norms_to_kernel(make_norm(op, cols, rows)); };
}

Schedule norm_sched(const std::string &op, const std::string &name, int cols, int rows) {
    return [=](Kernel &k) {
        // The statistics in the algorithm's order, found by name.
        NormKernel order = make_norm(op, cols, rows);
        NormKernel nk;
        nk.inputs = k.inputs;
        nk.out = k.output;
        for (auto &s : order.stats) nk.stats.push_back({s.first, k.funcs.at(s.first)});
        nk.x = k.vars.at("x"), nk.y = k.vars.at("y");
        nk.op = op, nk.cols = cols, nk.rows = rows;
        schedule_norm(nk, name);
    };
}

struct NormsCase {
    std::string op;
    std::string schedule;
    int cols, rows;
    int cores;
};

class NormSchedules : public ::testing::TestWithParam<NormsCase> {
};

TEST_P(NormSchedules, MatchesCpu) {
    NormsCase c = GetParam();
    std::vector<std::vector<int>> shapes = {{c.cols, c.rows}, {c.cols}};
    if (c.op == "layernorm") shapes.push_back({c.cols});
    DiffResult r = run_differential(norm_alg(c.op, c.cols, c.rows), norm_sched(c.op, c.schedule, c.cols, c.rows),
                                    shapes, {c.cols, c.rows});
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch << " (" << r.cmp.mismatches << " elements differ)";
    EXPECT_TRUE(meets_channel_floor(r));
    EXPECT_EQ(r.program.num_cores, c.cores);
}

std::vector<NormsCase> norms_cases() {
    std::vector<NormsCase> out;
    for (const std::string &op : norm_ops()) {
        out.push_back({op, "tiles", 1000, 128, 1});
        out.push_back({op, "tiles", 100, 64, 1});
        out.push_back({op, "tiles", 1024, 64, 1});
        out.push_back({op, "tiles", 100, 2, 1});
        // One row per tile: the statistics are stores with no loop around them ("mu[0] = ...").
        out.push_back({op, "tiles", 100, 1, 1});
        out.push_back({op, "tiles", 100, 100, 1});       // a partial last tile of 36 rows
        out.push_back({op, "cores32", 100, 1, 1});       // 1 core
        out.push_back({op, "cores32", 1000, 32, 32});    // 1 row a core
        out.push_back({op, "cores32", 1000, 64, 32});    // 2 rows a core
        out.push_back({op, "cores32", 1000, 1024, 32});  // 32 rows a core
        out.push_back({op, "cores32", 100, 2048, 32});   // one tile of 64 rows a core
        out.push_back({op, "cores32", 1024, 2048, 32});
        // Wide rows: the tile shrinks to fit LX (8192 columns: 9 rows a tile or fewer).
        out.push_back({op, "tiles", 8192, 20, 1});       // tiles of 9, 9 and a partial 2
        out.push_back({op, "cores32", 8192, 64, 32});    // 2 rows a core in one tile
        out.push_back({op, "cores32", 8192, 1151, 32});  // 36 rows a core, 35 on the last: 1-row tiles
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, NormSchedules, ::testing::ValuesIn(norms_cases()), [](const auto &info) {
    const NormsCase &c = info.param;
    return c.op + "_" + c.schedule + "_" + std::to_string(c.cols) + "x" + std::to_string(c.rows);
});

TEST(Norms, UnknownNamesAreListed) {
    try {
        make_norm("batchnorm", 64, 1);
        FAIL() << "no error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("layernorm, rmsnorm"), std::string::npos) << e.what();
    }
    NormKernel k = make_norm("rmsnorm", 64, 1);
    try {
        schedule_norm(k, "root");
        FAIL() << "no error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("tiles, cores32"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace spyre::testing
