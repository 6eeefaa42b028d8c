// The speed-of-light figure (apps/report/speed_of_light.h): its memory term is IBM's channel law
// on the compulsory traffic of the program's inputs and outputs, whatever the program moves, so a
// read+write kernel at IBM's measured copy_program rate is at 1.0; re-reading an input lowers sol_frac;
// the PE term counts every core of the machine.
#include <gtest/gtest.h>

#include "device/program_builder.h"
#include "sim/simulator.h"
#include "speed_of_light.h"

namespace spyre::report {
namespace {

// Each of `cores` cores copies its slice of a 64 x (rows) fp16 tensor, reading it `passes` times.
DeviceProgram copy_program(int cores, int rows_per_core, int passes) {
    ProgramBuilder b("copy_program", cores);
    int64_t rows = int64_t(rows_per_core) * cores;
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64, rows});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64, rows});
    DmaDesc d;
    d.sticks = rows_per_core;
    int desc = b.dma_desc(d);
    Reg off = b.alloc(), t = b.alloc();
    b.core_id(off);
    b.li(t, int64_t(rows_per_core) * 128);
    b.mul(off, off, t);
    for (int i = 0; i < passes; i++) {
        b.dma_ld(0, in, off, 0, Lx(0), desc);
        b.wait_tag(0);
    }
    b.dma_st(1, out, off, 0, Lx(0), desc);
    b.wait_tag(1);
    return b.finish();
}

SimStats run_on(const DeviceProgram &p, const MachineDesc &m) {
    SimOptions o;
    o.timing_only = true;
    return simulate(p, m, {}, o).stats;
}

TEST(SpeedOfLight, MemoryTermIsTheChannelLawOnCompulsoryTraffic) {
    const MachineDesc m;
    DeviceProgram p = copy_program(32, 256, 1);
    SpeedOfLight s = speed_of_light(p, run_on(p, m), m);
    const double bytes = 32.0 * 256 * 128;  // each of input and output
    EXPECT_DOUBLE_EQ(s.mem_ns, 2 * bytes / m.dram_bytes_per_ns + m.dram_turnaround_ns_per_byte * bytes);
    EXPECT_STREQ(s.limiter, "memory");
    EXPECT_GT(s.frac, 0.0);
}

TEST(SpeedOfLight, ACopyAtIbmsMeasuredCopyRateIsAtOne) {
    const MachineDesc m;
    DeviceProgram p = copy_program(32, 256, 1);
    const double bytes = 32.0 * 256 * 128;
    SimStats st;
    st.us = 2 * bytes / 104.86 / 1000.0;  // IBM's balanced copy_program, ~105 GB/s
    EXPECT_NEAR(speed_of_light(p, st, m).frac, 1.0, 1e-4);
}

TEST(SpeedOfLight, RereadingAnInputLowersTheFraction) {
    const MachineDesc m;
    DeviceProgram once = copy_program(32, 256, 1), thrice = copy_program(32, 256, 3);
    SpeedOfLight a = speed_of_light(once, run_on(once, m), m), b = speed_of_light(thrice, run_on(thrice, m), m);
    EXPECT_DOUBLE_EQ(a.bound_ns, b.bound_ns);  // same compulsory traffic
    EXPECT_LT(b.frac, 0.75 * a.frac);
}

TEST(SpeedOfLight, OneCoreOfThirtyTwoIsFarFromTheChipsLimit) {
    const MachineDesc m;
    DeviceProgram one = copy_program(1, 8192, 1), all = copy_program(32, 256, 1);
    SpeedOfLight a = speed_of_light(one, run_on(one, m), m), b = speed_of_light(all, run_on(all, m), m);
    EXPECT_DOUBLE_EQ(a.bound_ns, b.bound_ns);
    EXPECT_LT(a.frac, b.frac);
}

TEST(SpeedOfLight, PeTermUsesEveryCoreOfTheMachine) {
    MachineDesc m;
    SimStats st;
    st.pe_macs = int64_t(32) * 1000 * 1000;
    st.us = 10;
    DeviceProgram empty = ProgramBuilder("empty", 1).finish();
    SpeedOfLight s = speed_of_light(empty, st, m);
    EXPECT_DOUBLE_EQ(s.pe_ns, 1e6 / m.pe_macs_per_ns);
    EXPECT_STREQ(s.limiter, "pe");
    EXPECT_DOUBLE_EQ(s.frac, s.pe_ns / 10000.0);
}

}  // namespace
}  // namespace spyre::report
