// Row reductions (schedules/reductions.h) compiled for Spyre with each named schedule match
// Halide's CPU realisation exactly (max_ulp == 0; measured 0 in every case). max is exact by
// nature; the device sums a row in fp32 in index order (fp16 values widen exactly), the order of
// the CPU's serial loop under strict floats; mean's division by cols is the IEEE quotient on both.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"
#include "reductions.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// The CPU reference is realised for spyre::cpu_reference_target() (dsl/cpu_reference.h):
// strict floats, op by op, like the device.

Kernel reductions_to_kernel(const ReductionKernel &rk) {
    Kernel k;
    k.inputs = {rk.in};
    k.output = rk.out;
    if (rk.s.defined()) k.funcs = {{"s", rk.s}};
    k.vars = {{"y", rk.y}};
    return k;
}

Algorithm reduction_alg(const std::string &op, Type t, int cols, int rows) {
    return [=] { return reductions_to_kernel(make_reduction(op, t, cols, rows)); };
}

ReductionKernel from_kernel(Kernel &k, const std::string &op, Type t, int cols, int rows) {
    ReductionKernel rk;
    rk.in = k.inputs[0];
    rk.out = k.output;
    if (k.funcs.count("s")) rk.s = k.funcs.at("s");
    rk.y = k.vars.at("y");
    rk.op = op, rk.type = t, rk.cols = cols, rk.rows = rows;
    return rk;
}

Schedule reduction_sched(const std::string &op, Type t, const std::string &name, int cols, int rows) {
    return [=](Kernel &k) {
        ReductionKernel rk = from_kernel(k, op, t, cols, rows);
        schedule_reduction(rk, name);
    };
}

struct ReductionsCase {
    std::string op;
    int bits;
    std::string schedule;
    int cols, rows;
    int cores;
};

class ReductionSchedules : public ::testing::TestWithParam<ReductionsCase> {
};

TEST_P(ReductionSchedules, MatchesCpu) {
    ReductionsCase c = GetParam();
    Type t = Float(c.bits);
    DiffResult r = run_differential(reduction_alg(c.op, t, c.cols, c.rows),
                                    reduction_sched(c.op, t, c.schedule, c.cols, c.rows), {{c.cols, c.rows}}, {c.rows});
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch << " (" << r.cmp.mismatches << " rows differ)";
    EXPECT_TRUE(meets_channel_floor(r));
    EXPECT_EQ(r.program.num_cores, c.cores);
}

std::vector<ReductionsCase> reductions_cases() {
    std::vector<ReductionsCase> out;
    for (const std::string &op : reduction_ops()) {
        for (int bits : {16, 32}) {
            // Rows a core for whole sticks of output on 32 cores: 64 for fp16, 32 for fp32.
            int lanes = reduction_output_type(op, Float(bits)).bits() == 16 ? 64 : 32;
            out.push_back({op, bits, "root", 1000, 64, 1});
            out.push_back({op, bits, "root", 100, 128, 1});
            out.push_back({op, bits, "root", 1024, 64, 1});
            out.push_back({op, bits, "root", 1000, 7, 1});  // rows not whole sticks of the output
            out.push_back({op, bits, "root", 100, 1, 1});
            out.push_back({op, bits, "cores32", 100, 1, 1});
            out.push_back({op, bits, "cores32", 1000, 32 * lanes, 32});
            out.push_back({op, bits, "cores32", 100, 64 * lanes, 32});  // two sticks a core
            out.push_back({op, bits, "cores32", 1024, 32 * lanes, 32});
        }
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, ReductionSchedules, ::testing::ValuesIn(reductions_cases()), [](const auto &info) {
    const ReductionsCase &c = info.param;
    return c.op + "_f" + std::to_string(c.bits) + "_" + c.schedule + "_" + std::to_string(c.cols) + "x" +
           std::to_string(c.rows);
});

// ring_split of a 1-D output over 32 cores gives each core whole sticks of it: 100 fp16 row maxima
// (ceil(100 / 32) = 4 a core, which no DMA could store alone) are split 64 and 36 over 2 cores, and
// match the CPU. Before, the compile stopped: "access to row_max does not start on a stick boundary".
TEST(Reductions, CoreSharesOfAOneDimensionalOutputAreWholeSticks) {
    DiffResult r = run_differential(reduction_alg("max", Float(16), 100, 100),
                                    reduction_sched("max", Float(16), "cores32", 100, 100), {{100, 100}}, {100});
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, 2);
}

TEST(Reductions, UnknownNamesAreListed) {
    try {
        make_reduction("prod", Float(16), 64, 1);
        FAIL() << "no error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("max, sum, mean"), std::string::npos) << e.what();
    }
    ReductionKernel k = make_reduction("sum", Float(16), 64, 1);
    try {
        schedule_reduction(k, "tiles");
        FAIL() << "no error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("root, cores32"), std::string::npos) << e.what();
    }
}

// A sum of fp16 values written as such (no cast to float) adds in fp16 on Halide's CPU, rounding
// after every addition; the device must do the same, not sum in fp32 and round once. Ones make the
// difference plain: an fp16 running sum stops growing at 2048 (2048 + 1 rounds back to 2048), an
// fp32 one reaches 4096. Before the kAccF16 mode the device returned 4096 here.
Algorithm fp16_row_sum() {
    return [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var y("y");
        RDom r(0, 4096, "r");
        Func out("row_sum");
        out(y) = sum(in(r, y));
        k.inputs = {in};
        k.output = out;
        k.vars = {{"y", y}};
        return k;
    };
}

TEST(Reductions, Fp16SumRoundsEveryAdditionAsHalideDoes) {
    Halide::Runtime::Buffer<Halide::float16_t> ones(4096, 64);
    ones.fill(Halide::float16_t(1.0f));
    DiffResult r = run_differential_on(fp16_row_sum(), [](Kernel &) {}, {Halide::Runtime::Buffer<>(ones)}, {64});
    EXPECT_EQ(float(r.want.as<Halide::float16_t>()(0)), 2048.0f);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;

    Halide::Runtime::Buffer<> noisy = random_buffer(halide_type_t(halide_type_float, 16), {4096, 64}, -4, 4, 7);
    DiffResult n = run_differential_on(fp16_row_sum(), [](Kernel &) {}, {noisy}, {64});
    EXPECT_EQ(n.cmp.max_ulp, 0) << n.cmp.first_mismatch;
}

// Row sums stored to device memory just before the loop that prefetches them back (the minimum
// over rows of max(in, m)): the loop's first load waits for the store. Found by fuzz-diff (seed 9,
// case 195): the simulator caught the load racing the store.
TEST(Reductions, AFuncStoredToDeviceMemoryIsWaitedForBeforeAPipelinedLoopReadsIt) {
    Algorithm alg = [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func m("m"), out("out");
        RDom r(0, 130, "r"), ry(0, 3, "ry");
        m(y) = sum(cast<float>(in(r, y)));
        out(x) = minimum(max(in(x, ry), cast<float16_t>(m(ry))));
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"m", m}};
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    Schedule sched = [](Kernel &k) {
        spyre::schedule(k.output).stick_vectorize(k.vars.at("x"));
        spyre::schedule(k.funcs.at("m")).device_root();
    };
    DiffResult r = run_differential(alg, sched, {{130, 3}}, {130});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing
