// Timing properties of the simulator, each a stated inequality or an independent bound rather than a
// recorded number: overlap of independent engines, shared device-memory bandwidth under contention,
// the read/write turnaround, determinism, loop summaries against exact timing, and barriers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim_test_helpers.h"

namespace spyre {
namespace {

using simtest::StreamSpec;
using simtest::streaming_copy;
using simtest::to_bytes;

using simtest::timing_only;

// --- (a) overlap -----------------------------------------------------------------------------------

// A 512 KiB DMA_LD on tag 0 and an independent VEXP over 2048 sticks on tag 1, alone, overlapped
// (one WAIT for both) or serialised (a WAIT between them).
enum class Mix { DmaOnly, VecOnly, Overlapped, Serial };

DeviceProgram dma_and_vector(Mix mix) {
    ProgramBuilder b("overlap", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * 4096});
    DmaDesc d;
    d.sticks = 1024;
    int desc = b.dma_desc(d);
    const int32_t kVecSrc = 1 << 20, kVecDst = kVecSrc + 2048 * 128;
    bool dma = mix != Mix::VecOnly, vec = mix != Mix::DmaOnly;
    if (dma) b.dma_ld(0, in, kZero, 0, Lx(0), desc);
    if (mix == Mix::Serial) b.wait_tag(0);
    if (vec) b.vun(Opcode::VEXP, DType::F16, 1, Lx(kVecDst), Lx(kVecSrc), 2048);
    b.wait(0x3);
    return b.finish();
}

TEST(SimTiming, IndependentDmaAndVectorOverlap) {
    const MachineDesc m;
    auto cycles = [&](Mix mix) { return simulate(dma_and_vector(mix), m, {}, timing_only()).stats.cycles; };
    double dma = cycles(Mix::DmaOnly), vec = cycles(Mix::VecOnly);
    double both = cycles(Mix::Overlapped), serial = cycles(Mix::Serial);
    // The two halves are comparable, so overlap matters.
    ASSERT_GT(std::min(dma, vec), 0.5 * std::max(dma, vec)) << dma << " " << vec;
    EXPECT_LT(both, serial);
    EXPECT_LT(both, dma + vec);
    EXPECT_GE(both, std::max(dma, vec));
    // Independent engines: overlapping costs at most the extra issue slot.
    EXPECT_LE(both, std::max(dma, vec) + 2 * m.scalar_op_cycles);
    // Serialised, the second starts only after the first ends.
    EXPECT_GE(serial, dma + vec - 2 * m.scalar_op_cycles);
    // And each alone is bounded below by the machine description.
    EXPECT_GE(dma, m.dma_setup_cycles + 1024.0 * 128 / (m.dma_core_bytes_per_ns / m.clock_ghz));
    EXPECT_GE(vec, m.vec_op_overhead_cycles + 2048 / m.vec_transc_sticks_per_cycle);
}

TEST(SimTiming, FunctionalAndTimingOnlyAgreeWithoutLoops) {
    const MachineDesc m;
    for (Mix mix : {Mix::Overlapped, Mix::Serial}) {
        DeviceProgram p = dma_and_vector(mix);
        std::vector<std::vector<uint8_t>> images(1, std::vector<uint8_t>(size_t(p.buffer_bytes(0, m.stick_bytes))));
        double functional = simulate(p, m, images).stats.cycles;
        EXPECT_EQ(functional, simulate(p, m, {}, timing_only()).stats.cycles);
    }
}

// --- (c) contention --------------------------------------------------------------------------------

// Every core copies its own 4 MiB slice with 256 KiB DMAs. Per-core throughput falls as cores are
// added, and the aggregate never beats the channel's peak.
TEST(SimTiming, CoresShareDeviceMemoryBandwidth) {
    const MachineDesc m;
    const double peak = m.dram_bytes_per_ns / m.clock_ghz;  // bytes per cycle, one shared channel
    for (bool summarize : {false, true}) {
        double prev_per_core = INFINITY;
        for (int cores : {1, 2, 4, 8, 16, 32}) {
            StreamSpec s;
            s.cores = cores;
            SimResult r = simulate(streaming_copy(s), m, {}, timing_only(summarize));
            const SimStats &st = r.stats;
            double bytes = double(st.dram_read_bytes + st.dram_write_bytes);
            ASSERT_EQ(bytes, 2.0 * cores * s.bytes_per_core);
            double total = bytes / st.cycles, per_core = total / cores;
            EXPECT_LE(total, peak * (1 + 1e-9)) << cores << " cores, summarize " << summarize;
            EXPECT_LT(per_core, prev_per_core) << cores << " cores, summarize " << summarize;
            for (int c = 0; c < cores; c++) {
                EXPECT_EQ(st.cores[c].dram_read_bytes, s.bytes_per_core);
                EXPECT_EQ(st.cores[c].dram_write_bytes, s.bytes_per_core);
            }
            prev_per_core = per_core;
        }
    }
}

// Once the channel is the bottleneck, doubling the cores (and bytes) about doubles the time.
TEST(SimTiming, SaturatedChannelScalesTimeWithBytes) {
    const MachineDesc m;
    auto cycles = [&](int cores) {
        StreamSpec s;
        s.cores = cores;
        return simulate(streaming_copy(s), m, {}, timing_only()).stats.cycles;
    };
    double t8 = cycles(8), t16 = cycles(16), t32 = cycles(32);
    EXPECT_NEAR(t16 / t8, 2.0, 0.05);
    EXPECT_NEAR(t32 / t16, 2.0, 0.05);
}

// --- (d) turnaround --------------------------------------------------------------------------------

// Once the channel binds (two cores and up), a copy is slower than reading the same bytes.
TEST(SimTiming, MixingReadsAndWritesIsSlowerThanReadsOnly) {
    const MachineDesc m;
    const double peak = m.dram_bytes_per_ns / m.clock_ghz;
    for (int cores : {2, 8}) {
        StreamSpec copy;
        copy.cores = cores;
        StreamSpec reads = copy;
        reads.reads_only = true;
        for (bool summarize : {false, true}) {
            SimResult rc = simulate(streaming_copy(copy), m, {}, timing_only(summarize));
            SimResult rr = simulate(streaming_copy(reads), m, {}, timing_only(summarize));
            int64_t moved_c = rc.stats.dram_read_bytes + rc.stats.dram_write_bytes;
            int64_t moved_r = rr.stats.dram_read_bytes + rr.stats.dram_write_bytes;
            ASSERT_EQ(moved_c, moved_r);
            ASSERT_EQ(rr.stats.dram_write_bytes, 0);
            EXPECT_GT(rc.stats.cycles, rr.stats.cycles) << cores << " cores, summarize " << summarize;
            // Neither beats the peak.
            EXPECT_GE(rr.stats.cycles, double(moved_r) / peak) << cores << " cores, summarize " << summarize;
            EXPECT_GE(rc.stats.cycles, double(moved_c) / peak) << cores << " cores, summarize " << summarize;
            if (cores == 2) {
                // Each core's load and store overlap throughout, so the copy pays the turnaround
                // on (almost) every byte of the smaller direction.
                double penalty = m.dram_turnaround_ns_per_byte * m.clock_ghz;
                EXPECT_GE(rc.stats.cycles, 0.95 * (double(moved_c) / peak + double(moved_c) / 2 * penalty));
            }
        }
    }
}

// Every core loads its slice of `read_bytes` in chunks of `chunk`, all into LX, and only then (after
// a barrier: every read of every core is done) stores `write_bytes` of it: reads and writes never
// share the channel at the same instant.
DeviceProgram phased_copy(int cores, int64_t read_bytes, int64_t write_bytes, int64_t chunk) {
    ProgramBuilder b("phased", cores);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {read_bytes * cores / 2});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {write_bytes * cores / 2});
    DmaDesc d;
    d.sticks = int32_t(chunk / 128);
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), rin = b.alloc(), rout = b.alloc();
    b.core_id(core);
    b.muli(rin, core, int32_t(read_bytes));
    b.muli(rout, core, int32_t(write_bytes));
    for (int64_t at = 0; at < read_bytes; at += chunk) b.dma_ld(0, in, rin, int32_t(at), Lx(int32_t(at)), desc);
    b.wait(0x1);
    b.barrier();
    for (int64_t at = 0; at < write_bytes; at += chunk) b.dma_st(1, out, rout, int32_t(at), Lx(int32_t(at)), desc);
    b.wait(0x2);
    return b.finish();
}

// IBM fits the turnaround to a kernel's totals, (R + W) / peak + penalty x min(R, W), and no
// measurement shows a read+write kernel beating it. So separating the reads from the writes in
// time gains nothing: the phased copy takes the channel law, as the interleaved one does.
TEST(SimTiming, PhasedAndInterleavedCopiesBothTakeTheChannelLaw) {
    const MachineDesc m;
    const double peak = m.dram_bytes_per_ns / m.clock_ghz, penalty = m.dram_turnaround_ns_per_byte * m.clock_ghz;
    const int cores = 8;
    const int64_t per_core = 256 << 10, chunk = 64 << 10;
    auto law = [&](double r, double w) { return (r + w) / peak + penalty * std::min(r, w); };
    for (bool summarize : {false, true}) {
        StreamSpec s;
        s.cores = cores, s.bytes_per_core = per_core, s.chunk = chunk;
        SimStats inter = simulate(streaming_copy(s), m, {}, timing_only(summarize)).stats;
        SimStats phased = simulate(phased_copy(cores, per_core, per_core, chunk), m, {}, timing_only(summarize)).stats;
        ASSERT_EQ(inter.dram_read_bytes, phased.dram_read_bytes);
        ASSERT_EQ(inter.dram_write_bytes, phased.dram_write_bytes);
        const double t = law(double(phased.dram_read_bytes), double(phased.dram_write_bytes));
        // Within the DMA start latency, the per-run channel overheads and the pipeline's ends.
        EXPECT_NEAR(phased.cycles / t, 1.0, 0.03) << "summarize " << summarize;
        EXPECT_NEAR(inter.cycles / t, 1.0, 0.03) << "summarize " << summarize;
        EXPECT_NEAR(phased.cycles / inter.cycles, 1.0, 0.02) << "summarize " << summarize;
        // Neither can beat the law by reordering its transfers.
        EXPECT_GE(phased.cycles, t);
        EXPECT_GE(inter.cycles, t);
    }
    // Unbalanced: reading twice what is written pays the turnaround on the writes only.
    SimStats two_to_one = simulate(phased_copy(cores, per_core, per_core / 2, chunk), m, {}, timing_only()).stats;
    const double t21 = law(double(two_to_one.dram_read_bytes), double(two_to_one.dram_write_bytes));
    EXPECT_GE(two_to_one.cycles, t21);
    EXPECT_NEAR(two_to_one.cycles / t21, 1.0, 0.03);
}

// --- (e) determinism -------------------------------------------------------------------------------

// A multi-core program with DMAs, vector work, neighbour transfers and a reduction.
DeviceProgram mixed_program(int cores) {
    ProgramBuilder b("mixed", cores);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {32 * 8, cores});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {32 * 8, cores});
    DmaDesc d;
    d.sticks = 8;
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), off = b.alloc(), i = b.alloc();
    b.core_id(core);
    b.muli(off, core, 8 * 128);
    b.dma_ld(0, in, off, 0, Lx(0), desc);
    b.wait_tag(0);
    b.loop(i, 5);
    b.vun(Opcode::VEXP, DType::F32, 1, Lx(2048), Lx(0), 8);
    b.wait_tag(1);
    b.ring_send(2, 1, Lx(2048), 8);
    b.ring_recv(3, -1, Lx(4096), 8);
    b.wait(0xC);
    b.vbin(Opcode::VADD, DType::F32, 1, Lx(0), Lx(0), Lx(4096), 8);
    b.wait_tag(1);
    b.end_loop();
    b.ring_reduce(DType::F32, 4, RedOp::Max, Lx(0), 8);
    b.wait_tag(4);
    b.dma_st(5, out, off, 0, Lx(0), desc);
    b.wait_tag(5);
    return b.finish();
}

TEST(SimTiming, DeterministicAcrossRuns) {
    const MachineDesc m;
    const int cores = 8;
    DeviceProgram p = mixed_program(cores);
    std::vector<float> x(size_t(cores * 256));
    for (size_t k = 0; k < x.size(); k++) x[k] = float(int(k % 13)) * 0.125f - 0.75f;
    std::vector<std::vector<uint8_t>> images{to_bytes(x), {}};
    std::string t1 = ::testing::TempDir() + std::to_string(::getpid()) + "_det_trace_1.json",
                t2 = ::testing::TempDir() + std::to_string(::getpid()) + "_det_trace_2.json";
    SimOptions o1, o2;
    o1.trace_path = t1;
    o2.trace_path = t2;
    SimResult a = simulate(p, m, images, o1), b = simulate(p, m, images, o2);
    EXPECT_EQ(a.stats.cycles, b.stats.cycles);
    EXPECT_EQ(a.stats.to_json_text(), b.stats.to_json_text());
    EXPECT_EQ(a.buffers, b.buffers);
    EXPECT_EQ(simtest::read_text(t1), simtest::read_text(t2));
    // And timing-only gives the same cycles as the functional run.
    EXPECT_EQ(simulate(p, m, {}, timing_only()).stats.cycles, a.stats.cycles);
    std::remove(t1.c_str());
    std::remove(t2.c_str());
}

// Core 0 loads 256 KiB at once; core 1 first counts through a long scalar loop and then loads
// as much. The simulator lets a core run its scalar work ahead of the others; its load must still
// meet the shared channel at its own time: core 0's load runs alone, at one core's rate, and core
// 1's starts only after it, as each would alone.
TEST(SimTiming, ACoreAheadOnScalarWorkMeetsTheChannelAtItsOwnTime) {
    const MachineDesc m;
    auto program = [](int cores, bool scalar_first) {
        ProgramBuilder b("ahead", cores);
        int in = b.buffer("in", BufferKind::Input, DType::F16, {2 * 128 * 1024});
        DmaDesc d;
        d.sticks = 2048;
        int desc = b.dma_desc(d);
        Reg core = b.alloc(), i = b.alloc(), n = b.alloc(), off = b.alloc();
        b.core_id(core);
        b.muli(off, core, 256 * 1024);
        if (scalar_first) {
            b.if_(core);
            b.loop(i, 20000);
            b.addi(n, n, 1);
            b.end_loop();
            b.end_if();
        }
        b.dma_ld(0, in, off, 0, Lx(0), desc);
        b.wait_tag(0);
        return b.finish();
    };
    for (bool summarize : {false, true}) {
        const double alone = simulate(program(1, false), m, {}, timing_only(summarize)).stats.cycles;
        const SimResult r = simulate(program(2, true), m, {}, timing_only(summarize));
        const double scalar = 20000 * 2 * m.scalar_op_cycles;  // ADDI and ENDLOOP per iteration
        ASSERT_GT(scalar, 2 * alone) << "the scalar loop must outlast core 0's load";
        // (Core 0 issues one more instruction, the IF it skips.)
        EXPECT_NEAR(r.stats.cores[0].finish_cycles, alone, 2 * m.scalar_op_cycles) << "summarize " << summarize;
        EXPECT_GE(r.stats.cores[1].finish_cycles, scalar + alone - 16 * m.scalar_op_cycles) << "summarize " << summarize;
        EXPECT_LE(r.stats.cores[1].finish_cycles, scalar + alone + 16 * m.scalar_op_cycles) << "summarize " << summarize;
    }
}

// A run bounded by SimOptions::stop_after_us: below the program's time it stops there and says so;
// above it, it is the whole run.
TEST(SimTiming, StopAfterBoundsTheRunAndSaysSo) {
    const MachineDesc m;
    DeviceProgram p = mixed_program(8);
    for (bool summarize : {true, false}) {
        const SimResult whole = simulate(p, m, {}, timing_only(summarize));
        ASSERT_FALSE(whole.stopped);
        SimOptions half = timing_only(summarize);
        half.stop_after_us = whole.stats.us / 2;
        const SimResult cut = simulate(p, m, {}, half);
        EXPECT_TRUE(cut.stopped);
        EXPECT_GE(cut.stats.us, half.stop_after_us);
        EXPECT_LT(cut.stats.us, whole.stats.us);
        EXPECT_LT(cut.stats.stepped_instructions, whole.stats.stepped_instructions);
        SimOptions over = timing_only(summarize);
        over.stop_after_us = whole.stats.us * 2;
        const SimResult full = simulate(p, m, {}, over);
        EXPECT_FALSE(full.stopped);
        EXPECT_EQ(full.stats.to_json_text(), whole.stats.to_json_text());
    }
}

// Where the instruction stream waits, by cause: a core that loads, computes and stores in turn
// waits for each engine in turn, as long as the vector unit works (but for the cycle that issues the
// WAIT); its waits never
// exceed the run. Loop summaries book them as the iterations they stand for.
TEST(SimTiming, WaitsAreBookedToTheEngineWaitedFor) {
    const MachineDesc m;
    ProgramBuilder b("serial", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {32 * 64});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {32 * 64});
    DmaDesc d;
    d.sticks = 64;
    int desc = b.dma_desc(d);
    Reg zero = b.alloc();
    b.li(zero, 0);
    b.dma_ld(0, in, zero, 0, Lx(0), desc);
    b.wait_tag(0);
    b.vun(Opcode::VEXP, DType::F32, 1, Lx(8192), Lx(0), 64);
    b.wait_tag(1);
    b.dma_st(2, out, zero, 0, Lx(8192), desc);
    b.wait_tag(2);
    const SimStats s = simulate(b.finish(), m, {}, timing_only()).stats;
    const CoreStats &c = s.cores[0];
    EXPECT_NEAR(c.wait_cycles[kWaitVector], c.busy_cycles[kEngVector], 1.0);
    EXPECT_GT(c.wait_cycles[kWaitVector], 0);
    EXPECT_GT(c.wait_cycles[kWaitDmaLoad], 0);
    EXPECT_GT(c.wait_cycles[kWaitDmaStore], 0);
    for (int w : {kWaitPE, kWaitRing, kWaitDmaQueue, kWaitBarrier}) EXPECT_EQ(c.wait_cycles[size_t(w)], 0) << wait_cause_name(w);
    double total = 0;
    for (double w : c.wait_cycles) total += w;
    EXPECT_LE(total, s.cycles);
    EXPECT_GT(total, 0.9 * s.cycles);  // the stream does little but wait
    EXPECT_NE(s.to_json_text().find("\"mean_wait_fraction\""), std::string::npos);
    // As spyre-run and spyre-bench print them: largest first, whole percents, the rest left out.
    const std::string top = s.top_waits(kNumWaitCauses);
    EXPECT_NE(top.find("vector "), std::string::npos) << top;
    EXPECT_EQ(top.find("pe "), std::string::npos) << top;
    EXPECT_EQ(s.top_waits(0), "none");
    EXPECT_EQ(s.top_waits(1).find(' ', s.top_waits(1).find(' ') + 1), std::string::npos) << s.top_waits(1);

    StreamSpec st;
    st.cores = 4;
    st.chunk = 8 << 10;
    st.bytes_per_core = 400 * st.chunk;
    st.vector_sticks_per_chunk = 64;
    const DeviceProgram p = streaming_copy(st);
    const SimStats exact = simulate(p, m, {}, timing_only(false)).stats, summ = simulate(p, m, {}, timing_only(true)).stats;
    ASSERT_GT(summ.summarised_iterations, 0);
    for (int w = 0; w < kNumWaitCauses; w++)
        EXPECT_NEAR(summ.mean_wait_fraction(w), exact.mean_wait_fraction(w), 0.02) << wait_cause_name(w);
}

// --- (f) loop summaries ----------------------------------------------------------------------------

class LoopSummary : public ::testing::TestWithParam<int> {};

// 200 iterations of load / compute / store (two 8 KiB chunks per iteration): summarised timing is
// within 2% of exact timing and every counter agrees exactly.
TEST_P(LoopSummary, AgreesWithExactTimingOnStreamingLoop) {
    const int cores = GetParam();
    const MachineDesc m;
    StreamSpec s;
    s.cores = cores;
    s.chunk = 8 << 10;
    s.bytes_per_core = 400 * s.chunk;
    s.vector_sticks_per_chunk = 64;
    DeviceProgram p = streaming_copy(s);
    SimResult exact = simulate(p, m, {}, timing_only(false));
    SimResult summ = simulate(p, m, {}, timing_only(true));
    EXPECT_EQ(exact.stats.summarised_iterations, 0);
    EXPECT_GT(summ.stats.summarised_iterations, 0);
    EXPECT_NEAR(summ.stats.cycles / exact.stats.cycles, 1.0, 0.02);
    EXPECT_EQ(summ.stats.instructions, exact.stats.instructions);
    EXPECT_EQ(summ.stats.dram_read_bytes, exact.stats.dram_read_bytes);
    EXPECT_EQ(summ.stats.dram_write_bytes, exact.stats.dram_write_bytes);
    EXPECT_EQ(summ.stats.vector_sticks, exact.stats.vector_sticks);
    EXPECT_EQ(summ.stats.dram_read_bytes, int64_t(cores) * s.bytes_per_core);
    for (int c = 0; c < cores; c++) {
        EXPECT_EQ(summ.stats.cores[c].instructions, exact.stats.cores[c].instructions);
        for (int e = 0; e < kNumAsyncEngines; e++) {
            EXPECT_LE(summ.stats.busy_fraction(c, e), 1.0 + 1e-9) << "core " << c << " " << engine_index_name(e);
            EXPECT_NEAR(summ.stats.busy_fraction(c, e), exact.stats.busy_fraction(c, e), 0.02)
                << "core " << c << " " << engine_index_name(e);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Cores, LoopSummary, ::testing::Values(1, 32));

// Loops whose body issues asynchronous work faster than the engine drains it (no WAIT inside): the
// control unit runs ahead until the DMA queue fills (or forever, for the vector unit). A summary
// taken while the backlog is still growing would drop the queued work.
TEST(LoopSummaryBacklog, LoadsWithoutWaitInTheLoop) {
    const MachineDesc m;
    StreamSpec s;
    s.reads_only = true;
    DeviceProgram p = streaming_copy(s);
    SimResult exact = simulate(p, m, {}, timing_only(false));
    SimResult summ = simulate(p, m, {}, timing_only(true));
    EXPECT_NEAR(summ.stats.cycles / exact.stats.cycles, 1.0, 0.02);
    EXPECT_GE(summ.stats.cycles, double(summ.stats.dram_read_bytes) / (m.dram_bytes_per_ns / m.clock_ghz));
    EXPECT_EQ(summ.stats.dram_read_bytes, exact.stats.dram_read_bytes);
    EXPECT_LE(summ.stats.busy_fraction(0, kEngDMA), 1.0 + 1e-9);
}

TEST(LoopSummaryBacklog, VectorOpsWithoutWaitInTheLoop) {
    const MachineDesc m;
    ProgramBuilder b("vec_backlog", 1);
    Reg i = b.alloc();
    b.loop(i, 100);
    b.vun(Opcode::VEXP, DType::F16, 0, Lx(0), Lx(65536), 100);
    b.end_loop();
    b.wait_tag(0);
    DeviceProgram p = b.finish();
    SimResult exact = simulate(p, m, {}, timing_only(false));
    SimResult summ = simulate(p, m, {}, timing_only(true));
    double one = m.vec_op_overhead_cycles + 100 / m.vec_transc_sticks_per_cycle;
    EXPECT_GE(exact.stats.cycles, 100 * one);
    EXPECT_NEAR(summ.stats.cycles / exact.stats.cycles, 1.0, 0.02);
    EXPECT_LE(summ.stats.busy_fraction(0, kEngVector), 1.0 + 1e-9);
}

// A nested loop (outer 20 x inner 30 iterations of load / vector / store with WAITs): summaries of
// inner loop instances inside outer iterations still agree with exact timing.
TEST(LoopSummaryBacklog, NestedLoops) {
    const MachineDesc m;
    ProgramBuilder b("nested", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * 16 * 600});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64 * 16 * 600});
    DmaDesc d;
    d.sticks = 16;
    int desc = b.dma_desc(d);
    Reg i = b.alloc(), j = b.alloc(), off = b.alloc();
    b.li(off, 0);
    b.loop(i, 20);
    b.loop(j, 30);
    b.dma_ld(0, in, off, 0, Lx(0), desc);
    b.wait(0x5);  // the load, and the previous store still reading the VTANH destination
    b.vun(Opcode::VTANH, DType::F16, 1, Lx(4096), Lx(0), 16);
    b.wait_tag(1);
    b.dma_st(2, out, off, 0, Lx(4096), desc);
    b.addi(off, off, 16 * 128);
    b.end_loop();
    b.wait_tag(2);
    b.end_loop();
    DeviceProgram p = b.finish();
    SimResult exact = simulate(p, m, {}, timing_only(false));
    SimResult summ = simulate(p, m, {}, timing_only(true));
    EXPECT_GT(summ.stats.summarised_iterations, 0);
    EXPECT_NEAR(summ.stats.cycles / exact.stats.cycles, 1.0, 0.02);
    EXPECT_EQ(summ.stats.instructions, exact.stats.instructions);
    EXPECT_EQ(summ.stats.dram_write_bytes, exact.stats.dram_write_bytes);
}

// A loop whose body runs a long vector op only from its 40th iteration on (an IF on the counter,
// as Halide writes a causal query tile's one earlier key tile): the first iterations' steady state
// says nothing of the rest, so the loop runs exactly, and a guard that changes only at the last
// iteration (a pipeline's prefetch) still lets it be summarised.
TEST(LoopSummaryBacklog, AnIfThatChangesAfterTheFirstIterationsIsNotSummarised) {
    const MachineDesc m;
    auto program = [](int32_t from) {
        ProgramBuilder b("late_work", 1);
        Reg i = b.alloc(), c = b.alloc();
        b.loop(i, 100);
        b.li(c, from - 1);
        b.op3(Opcode::CMPLT, c, c, i);
        b.if_(c);
        b.vun(Opcode::VEXP, DType::F16, 0, Lx(0), Lx(65536), 200);
        b.end_if();
        b.vun(Opcode::VEXP, DType::F16, 0, Lx(0), Lx(65536), 10);
        b.wait_tag(0);
        b.end_loop();
        return b.finish();
    };
    for (int32_t from : {40, 99}) {
        DeviceProgram p = program(from);
        SimResult exact = simulate(p, m, {}, timing_only(false));
        SimResult summ = simulate(p, m, {}, timing_only(true));
        EXPECT_NEAR(summ.stats.cycles / exact.stats.cycles, 1.0, 0.02) << "work from iteration " << from;
        if (from == 40) EXPECT_EQ(summ.stats.summarised_iterations, 0);
        else EXPECT_GT(summ.stats.summarised_iterations, 0);
    }
}

// --- (g) barrier -----------------------------------------------------------------------------------

// Core 0 runs a long VEXP and waits for it before the BARRIER; the others reach the barrier at once.
// Every core's post-barrier VADD starts after core 0's VEXP has finished (plus the release latency).
TEST(SimTiming, BarrierWaitsForTheSlowestCore) {
    const MachineDesc m;
    const int cores = 4;
    ProgramBuilder b("barrier", cores);
    Reg core = b.alloc(), is0 = b.alloc();
    b.core_id(core);
    b.op3(Opcode::CMPEQ, is0, core, kZero);
    b.if_(is0);
    b.vun(Opcode::VEXP, DType::F16, 0, Lx(0), Lx(1 << 19), 4096);
    b.wait_tag(0);
    b.end_if();
    b.barrier();
    b.vbin(Opcode::VADD, DType::F16, 1, Lx(1 << 20), Lx(1 << 20), Lx(1 << 20), 1);
    b.wait_tag(1);
    DeviceProgram p = b.finish();
    std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "_barrier_trace.json";
    SimOptions o = timing_only();
    o.trace_path = path;
    SimResult r = simulate(p, m, {}, o);
    nlohmann::json trace = nlohmann::json::parse(simtest::read_text(path));
    std::remove(path.c_str());
    std::vector<simtest::TraceSpan> spans = simtest::trace_spans(trace);

    const double us_per_cycle = 1.0 / (m.clock_ghz * 1000.0);
    double vexp_end = -1;
    for (const auto &s : spans)
        if (s.name == "VEXP" && s.pid == 0) vexp_end = s.end();
    ASSERT_GT(vexp_end, 4096 / m.vec_transc_sticks_per_cycle * us_per_cycle * 0.99);
    int seen = 0;
    for (const auto &s : spans) {
        if (s.name != "VADD") continue;
        seen++;
        EXPECT_GE(s.ts + 1e-9, vexp_end + m.barrier_latency_cycles * us_per_cycle) << "core " << s.pid;
    }
    EXPECT_EQ(seen, cores);
    // The barrier spans of the waiting cores cover core 0's work.
    for (const auto &s : spans)
        if (s.name == "BARRIER" && s.pid != 0) {
            EXPECT_GE(s.end() + 1e-9, vexp_end) << "core " << s.pid;
        }
    for (int c = 0; c < cores; c++)
        EXPECT_GE(r.stats.cores[c].finish_cycles, 4096 / m.vec_transc_sticks_per_cycle + m.barrier_latency_cycles);

    // Without core 0's extra work, everyone is done long before.
    ProgramBuilder q("barrier_even", cores);
    q.barrier();
    q.vbin(Opcode::VADD, DType::F16, 1, Lx(1 << 20), Lx(1 << 20), Lx(1 << 20), 1);
    q.wait_tag(1);
    EXPECT_LT(simulate(q.finish(), m, {}, timing_only()).stats.cycles, r.stats.cycles / 10);
}

// Barriers in a loop: every round releases together, so the core with the longer per-round work
// sets the pace for all.
TEST(SimTiming, BarrierRoundsFollowTheSlowestCoreEachRound) {
    const MachineDesc m;
    const int cores = 3, rounds = 6;
    ProgramBuilder b("rounds", cores);
    Reg core = b.alloc(), i = b.alloc(), sel = b.alloc(), who = b.alloc();
    b.core_id(core);
    b.loop(i, rounds);
    // The slow core rotates: round i is slow on core i % cores.
    b.li(who, cores);
    b.op3(Opcode::REM, who, i, who);
    b.op3(Opcode::CMPEQ, sel, who, core);
    b.if_(sel);
    b.vun(Opcode::VLOG, DType::F16, 0, Lx(0), Lx(1 << 19), 1000);
    b.wait_tag(0);
    b.end_if();
    b.barrier();
    b.end_loop();
    SimResult r = simulate(b.finish(), m, {}, timing_only());
    double slow = m.vec_op_overhead_cycles + 1000 / m.vec_transc_sticks_per_cycle;
    EXPECT_GE(r.stats.cycles, rounds * (slow + m.barrier_latency_cycles));
    for (int c = 0; c < cores; c++) EXPECT_GE(r.stats.cores[c].finish_cycles, rounds * slow);
    EXPECT_EQ(r.stats.summarised_iterations, 0) << "a loop holding a BARRIER is never summarised";
}

}  // namespace
}  // namespace spyre
