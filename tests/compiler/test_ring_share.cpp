// Ring sharing of operand tiles (the ring_share directive, plan_ring_shares): bmm's pe_ring
// schedule, where the cores of a run receive A's or W's K panels over the ring from the first core
// of their run, matches the CPU exactly and reads less device memory than pe; an odd number of panels and a run that spans all cores work too. Misuse is an error
// that names the loop or the directive.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>

#include "compiler_test_util.h"
#include "device/error.h"
#include "directives.h"
#include "matmul.h"
#include "plan_ring_shares.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct RingShareCase {
    std::string name;
    int batch, rows, inner, cols, cores;
    int64_t lx_usable = 0;  // 0: the default machine; smaller forces more, thinner K panels
};

Algorithm bmm_alg(const RingShareCase &c) {
    return [=] {
        MatmulKernel mk = make_bmm(c.batch, c.rows, c.inner, c.cols);
        Kernel k;
        k.inputs = {mk.a, mk.w};
        k.output = mk.out;
        k.funcs = {{"acc", mk.acc}};
        return k;
    };
}

Schedule bmm_sched(const RingShareCase &c, const std::string &schedule, const MachineDesc &m) {
    return [=](Kernel &k) {
        MatmulKernel mk;
        mk.batch = c.batch, mk.rows = c.rows, mk.inner = c.inner, mk.cols = c.cols;
        mk.a = k.inputs[0], mk.w = k.inputs[1], mk.out = k.output, mk.acc = k.funcs["acc"];
        mk.n = Var("n"), mk.m = Var("m"), mk.b = Var("b");
        mk.k = RDom(0, c.inner, "k");
        schedule_bmm(mk, schedule, c.cores, m);
    };
}

DiffResult run(const RingShareCase &c, const std::string &schedule) {
    MachineDesc m;
    if (c.lx_usable) m.lx_usable_bytes = c.lx_usable;
    return run_differential(bmm_alg(c), bmm_sched(c, schedule, m), {{c.inner, c.rows, c.batch}, {c.cols, c.inner}},
                            {c.cols, c.rows, c.batch}, -2, 2, m);
}

class RingShare : public ::testing::TestWithParam<RingShareCase> {};

TEST_P(RingShare, SharedPanelsMatchCpuAndReplaceDeviceReadsByRingTransfers) {
    const RingShareCase c = GetParam();
    DiffResult ring = run(c, "pe_ring");
    EXPECT_EQ(ring.cmp.max_ulp, 0) << ring.cmp.first_mismatch;
    DiffResult plain = run(c, "pe");
    EXPECT_EQ(plain.cmp.max_ulp, 0) << plain.cmp.first_mismatch;
    EXPECT_GT(ring.stats.ring_bytes, 0);
    EXPECT_EQ(plain.stats.ring_bytes, 0);
    // A byte a non-first core receives over the ring is one it does not read. The plain schedule's
    // panels are shared loads, which also cross device memory once, so the ring reads no more than
    // it (the two schedules may pick different core grids and tiles, each its fastest).
    EXPECT_LE(ring.stats.dram_read_bytes, plain.stats.dram_read_bytes);
    EXPECT_EQ(ring.stats.pe_macs, plain.stats.pe_macs);
}

// A run of every core is a closed ring: the head rotates, so each core reads its turn of the
// shared panels and forwards the others', and no core reads them all while the others wait.
TEST(RingShareRotation, ARunOfEveryCoreTakesTurnsReadingTheSharedPanels) {
    const RingShareCase c{"one_run_of_8", 1, 64, 1024, 512, 8, 160 * 1024};
    DiffResult ring = run(c, "pe_ring");
    EXPECT_EQ(ring.cmp.max_ulp, 0) << ring.cmp.first_mismatch;
    ASSERT_EQ(ring.stats.cores.size(), size_t(c.cores));
    int64_t lo = INT64_MAX, hi = 0;
    for (const CoreStats &cs : ring.stats.cores) {
        EXPECT_GT(cs.ring_bytes_sent, 0);
        lo = std::min(lo, cs.dram_read_bytes), hi = std::max(hi, cs.dram_read_bytes);
    }
    EXPECT_LE(double(hi), 1.25 * double(lo)) << "reads per core from " << lo << " to " << hi;
}

// Two runs of four on eight cores are chains: the last core of each passes nothing on.
TEST(RingShareRotation, RunsShorterThanTheRingKeepTheirHead) {
    const RingShareCase c{"runs_of_4_even_panels", 2, 64, 1024, 512, 8, 160 * 1024};
    DiffResult ring = run(c, "pe_ring");
    EXPECT_EQ(ring.cmp.max_ulp, 0) << ring.cmp.first_mismatch;
    ASSERT_EQ(ring.stats.cores.size(), size_t(c.cores));
    EXPECT_EQ(ring.stats.cores[3].ring_bytes_sent, 0);
    EXPECT_EQ(ring.stats.cores[7].ring_bytes_sent, 0);
    EXPECT_GT(ring.stats.cores[0].ring_bytes_sent, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, RingShare,
    ::testing::Values(RingShareCase{"runs_of_4_even_panels", 2, 64, 1024, 512, 8, 160 * 1024},
                      RingShareCase{"runs_of_4_three_panels", 2, 64, 192, 256, 8, 64 * 1024},
                      RingShareCase{"one_run_of_8", 1, 64, 1024, 512, 8, 160 * 1024},
                      // One core per batch: W is the same for all eight, A is not.
                      RingShareCase{"w_over_8_batches", 8, 64, 1024, 512, 8, 160 * 1024}),
    [](const ::testing::TestParamInfo<RingShareCase> &info) { return info.param.name; });

TEST(RingShareErrors, TheDirectiveNeedsARunOfTwoOrMoreCores) {
    MatmulKernel k = make_bmm(1, 64, 256, 256);
    RVar ko("ko");
    try {
        spyre::schedule(k.acc).ring_share(ko, 1);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        // The Func as written, even when Halide numbers a name already taken in this process ("acc$3").
        EXPECT_NE(std::string(e.what()).find("Func acc: ring_share(ko, 1): a run of sharing cores is 2 to 32 cores"),
                  std::string::npos)
            << e.what();
    }
}

TEST(RingShareErrors, TheDirectiveNeedsAnUpdateDefinition) {
    Func f("pure_only");
    Var x("x");
    f(x) = x;
    try {
        spyre::schedule(f).ring_share(RVar("ko"), 4);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("Func " + f.name().substr(0, f.name().find('$')) + ": ring_share(ko, 4): needs an update definition"),
                  std::string::npos)
            << e.what();
    }
}

TEST(RingShareErrors, PeRingNeedsTwoCoresReadingTheSameTiles) {
    MatmulKernel k = make_bmm(1, 64, 256, 256);
    try {
        schedule_bmm(k, "pe_ring", 1);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("bmm: schedule pe_ring shares A or W tiles between cores, but with 1 "
                                             "core(s) no two cores read the same tiles of either"),
                  std::string::npos)
            << e.what();
    }
}

// Runs of 8 cores over a split where every core reads its own A and W tiles: nothing to share.
TEST(RingShareErrors, NothingTheSameAcrossARunNamesTheLoop) {
    const RingShareCase c{"x", 2, 64, 1024, 512, 8, 160 * 1024};
    MachineDesc m;
    m.lx_usable_bytes = c.lx_usable;
    auto sched = [=](Kernel &k) {
        bmm_sched(c, "pe", m)(k);
        spyre::schedule(k.funcs["acc"]).ring_share(RVar("ko"), 8);
    };
    try {
        run_differential(bmm_alg(c), sched, {{c.inner, c.rows, c.batch}, {c.cols, c.inner}}, {c.cols, c.rows, c.batch},
                         -4, 4, m);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("ring_share on loop"), std::string::npos) << msg;
        EXPECT_NE(msg.find("ring_share on loop ko of acc"), std::string::npos) << msg;  // the user's loop
        EXPECT_EQ(msg.find("_share8"), std::string::npos) << msg;
        EXPECT_EQ(msg.find("loop loop"), std::string::npos) << msg;
        EXPECT_NE(msg.find("no tile staged at this loop is the same on every core of a run of 8 cores"),
                  std::string::npos)
            << msg;
    }
}

TEST(RingShareErrors, ARunThatDoesNotDivideTheCores) {
    const RingShareCase c{"x", 2, 64, 1024, 512, 8, 160 * 1024};
    MachineDesc m;
    m.lx_usable_bytes = c.lx_usable;
    auto sched = [=](Kernel &k) {
        bmm_sched(c, "pe", m)(k);
        spyre::schedule(k.funcs["acc"]).ring_share(RVar("ko"), 3);
    };
    try {
        run_differential(bmm_alg(c), sched, {{c.inner, c.rows, c.batch}, {c.cols, c.inner}}, {c.cols, c.rows, c.batch},
                         -4, 4, m);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("runs of 3 cores do not divide the kernel's 8 cores"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace spyre::testing
