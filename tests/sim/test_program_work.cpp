// Static work (program_work.h) against what the simulator counts when it runs the program: equal
// when every loop count and branch is a constant, an upper bound over IF branches otherwise, and
// marked when a loop count is only known at run time. The static time bound against timing-only
// runs: never above them, and close where one engine is busy throughout.
#include <gtest/gtest.h>

#include "sim/program_work.h"
#include "sim_test_helpers.h"

namespace spyre {
namespace {

void expect_matches_run(const DeviceProgram &p, const ProgramWork &w) {
    std::vector<std::vector<uint8_t>> images(p.buffers.size());
    for (size_t i = 0; i < p.buffers.size(); i++)
        if (p.buffers[i].kind == BufferKind::Input) images[i].assign(size_t(p.buffer_bytes(i, 128)), 0);
    SimStats st = simulate(p, MachineDesc{}, images).stats;
    EXPECT_EQ(w.instructions, st.instructions);
    EXPECT_EQ(w.dma_bytes, st.dram_read_bytes + st.dram_write_bytes);
    EXPECT_EQ(w.vector_bytes, st.vector_sticks * 128);
    EXPECT_EQ(w.macs, st.pe_macs);
    EXPECT_EQ(w.ring_bytes, st.ring_bytes);
}

// Nested constant loops (one count from a folded register), a constant IF/ELSE, every engine.
TEST(ProgramWork, ConstantControlFlowMatchesTheSimulatedCounts) {
    ProgramBuilder b("work", 2);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * 8});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64 * 2});
    DmaDesc ld;
    ld.sticks = 4;
    ld.count = {2, 1, 1};
    ld.dram_stride = {512, 0, 0};
    ld.lx_stride = {512, 0, 0};
    int ld_desc = b.dma_desc(ld);
    DmaDesc st;
    int st_desc = b.dma_desc(st);
    MatmulDesc mm;
    mm.m = 8, mm.n = 64, mm.k = 64, mm.lda = 128, mm.ldb = 128, mm.ldc = 256;
    int mm_desc = b.mm_desc(mm);

    Reg n = b.alloc(), i = b.alloc(), j = b.alloc(), cond = b.alloc(), id = b.alloc();
    b.li(n, 1);
    b.muli(n, n, 3);  // 3, folded
    b.loop(i, 1, n);  // 4 iterations
    b.loop(j, 5);
    b.vbin(Opcode::VADD, DType::F16, 0, Lx(0), Lx(4096), Lx(8192), 2, 3);
    b.end_loop();
    b.dma_ld(1, in, kZero, 0, Lx(16384), ld_desc);
    b.wait(3);
    b.end_loop();
    b.li(cond, 0);
    b.if_(cond);
    b.vun(Opcode::VEXP, DType::F16, 0, Lx(0), Lx(4096), 1);
    b.else_();
    b.vfill(DType::F16, 0, Lx(0), 1.0f, 7);
    b.end_if();
    b.matmul(2, Lx(65536), Lx(131072), Lx(196608), mm_desc, false);
    b.core_id(id);  // unknown statically, but used by nothing that counts
    b.wait(7);
    b.ring_reduce(DType::F32, 3, RedOp::Sum, Lx(262144), 2);
    b.wait_tag(3);
    b.ring_send(4, 1, Lx(0), 1);
    b.ring_recv(5, -1, Lx(4096), 1);
    b.wait(0x30);
    b.dma_st(6, out, kZero, 0, Lx(0), st_desc);
    b.wait_tag(6);
    DeviceProgram p = b.finish();

    ProgramWork w = program_work(p, MachineDesc{});
    EXPECT_TRUE(w.counts_known);
    EXPECT_EQ(w.macs, 2 * 8 * 64 * 64);
    EXPECT_EQ(w.vector_bytes, 2 * (4 * 5 * 6 + 7) * 128);
    EXPECT_EQ(w.dma_bytes, 2 * (4 * 8 * 128 + 128));
    expect_matches_run(p, w);
}

// A branch on CORE_ID: each core takes one side, the bound charges every core the costlier one.
TEST(ProgramWork, AnUnknownConditionChargesTheCostlierBranch) {
    ProgramBuilder b("branch", 4);
    Reg id = b.alloc();
    b.core_id(id);
    b.if_(id);
    b.vfill(DType::F16, 0, Lx(0), 1.0f, 10);
    b.else_();
    b.vfill(DType::F16, 0, Lx(0), 1.0f, 3);
    b.end_if();
    b.wait_tag(0);
    DeviceProgram p = b.finish();
    ProgramWork w = program_work(p, MachineDesc{});
    EXPECT_TRUE(w.counts_known);
    EXPECT_EQ(w.vector_bytes, 4 * 10 * 128);
    SimStats st = simulate(p, MachineDesc{}, std::vector<std::vector<uint8_t>>{}).stats;
    EXPECT_EQ(st.vector_sticks * 128, (3 * 10 + 3) * 128);
    EXPECT_GE(w.instructions, st.instructions);
}

TEST(ProgramWork, ALoopCountFromARunTimeValueIsMarkedAndCountedOnce) {
    ProgramBuilder b("dynamic", 1);
    Reg id = b.alloc(), i = b.alloc(), k = b.alloc(), j = b.alloc();
    b.core_id(id);
    b.loop(i, 3, id);
    b.vfill(DType::F16, 0, Lx(0), 1.0f, 2);
    b.end_loop();
    // A loop variable is not a constant either, even when the loop count is.
    b.loop(k, 4);
    b.loop(j, 1, k);
    b.vfill(DType::F16, 0, Lx(0), 1.0f, 1);
    b.end_loop();
    b.end_loop();
    b.wait_tag(0);
    ProgramWork w = program_work(b.finish(), MachineDesc{});
    EXPECT_FALSE(w.counts_known);
    EXPECT_EQ(w.vector_bytes, (2 + 4) * 128);
    EXPECT_TRUE(w.to_string().find("known only at run time") != std::string::npos);
}

TEST(ProgramWork, HugeCountsSaturateInsteadOfOverflowing) {
    ProgramBuilder b("saturate", 1);
    Reg r[5];
    for (Reg &x : r) x = b.alloc();
    for (Reg &x : r) b.loop(x, 2000000000);
    b.vfill(DType::F16, 0, Lx(0), 1.0f, 1000);
    for (int k = 0; k < 5; k++) b.end_loop();
    b.wait_tag(0);
    ProgramWork w = program_work(b.finish(), MachineDesc{});
    EXPECT_EQ(w.vector_bytes, std::numeric_limits<int64_t>::max());
    EXPECT_EQ(w.data_work(), std::numeric_limits<int64_t>::max());
    EXPECT_EQ(w.instructions, std::numeric_limits<int64_t>::max());
}

double timed_us(const DeviceProgram &p) {
    SimOptions so;
    so.timing_only = true;
    return simulate(p, MachineDesc{}, {}, so).stats.us;
}

// One engine busy back to back: the bound is that engine's time, which is what the run takes.
TEST(TimeLowerBound, AVectorLoopIsTimedAtItsBound) {
    ProgramBuilder b("vec", 1);
    Reg i = b.alloc();
    b.loop(i, 50);
    b.vbin(Opcode::VADD, DType::F16, 0, Lx(0), Lx(4096), Lx(8192), 2, 8);
    b.end_loop();
    b.wait_tag(0);
    DeviceProgram p = b.finish();
    const double bound = time_lower_bound_us(p, MachineDesc{}), us = timed_us(p);
    EXPECT_LE(bound, us);
    EXPECT_GT(bound, 0.95 * us);
}

// 32 cores load 64 KiB four times; with `groups`, at an address of CORE_ID / 4, so the cores share
// the bytes in groups of four.
// With `runs`, the 64 KiB come in one-stick runs two sticks apart (a copy delivers the bytes, not
// the runs' channel cost).
DeviceProgram shared_loads(bool groups, bool runs = false) {
    ProgramBuilder b("shared", 32);
    const int64_t bytes = 64 << 10;
    int in = b.buffer("x", BufferKind::Input, DType::F16, {bytes / 2 * 16});
    DmaDesc d;
    d.sticks = int32_t(bytes / 128);
    if (runs) {
        d.sticks = 1;
        d.count[0] = int32_t(bytes / 128);
        d.dram_stride[0] = 256;
        d.lx_stride[0] = 128;
    }
    int desc = b.dma_desc(d);
    Reg off = b.alloc(), four = b.alloc(), i = b.alloc();
    b.li(off, 0);
    if (groups) {
        b.core_id(off);
        b.li(four, 4);
        b.op3(Opcode::DIV, off, off, four);
        b.muli(off, off, int32_t(bytes));
    }
    b.loop(i, 4);
    b.dma_ld(0, in, off, 0, Lx(0), desc, true);
    b.wait_tag(0);
    b.end_loop();
    return b.finish();
}

// The cores that share a shared load's bytes are found from the loops' first iterations, and each
// core's traffic counts its part of the group's bytes, so the kernel's reads are its physical ones.
TEST(ProgramTraffic, AGroupSharedLoadCountsEachCoresPartOfTheGroupsBytes) {
    const DeviceProgram p = shared_loads(true);
    const std::vector<std::vector<int>> g = shared_load_groups(p, MachineDesc{});
    size_t pc = 0;
    while (p.code[pc].op != Opcode::DMA_LD) pc++;
    for (int c = 0; c < 32; c++) EXPECT_EQ(g[size_t(c)][pc], 4) << "core " << c;
    int64_t reads = 0;
    for (const CoreTraffic &t : program_traffic(p, MachineDesc{})) reads += CoreTraffic::total(t.load_bytes);
    EXPECT_EQ(reads, 8 * 4 * (64 << 10));  // 8 groups, 4 loads each
}

// Shared loads cross device memory once for the cores that share them: the bound stays below the run
// whether every core shares the bytes or groups of cores do (an address of CORE_ID / 4).
TEST(TimeLowerBound, SharedLoadsStayBelowTheRunForEveryCoreAndForGroups) {
    for (bool groups : {false, true})
        for (bool runs : {false, true}) {
            DeviceProgram p = shared_loads(groups, runs);
            const double bound = time_lower_bound_us(p, MachineDesc{}), us = timed_us(p);
            EXPECT_LE(bound, us) << (groups ? "groups" : "every core") << (runs ? ", one-stick runs" : "");
            EXPECT_GT(bound, 0);
        }
}

// CORE_ID is folded per core: the core that loops longest sets the bound, and an IF on it takes
// each core's own branch, not the costlier one on every core.
TEST(TimeLowerBound, TheBusiestCoreSetsTheBound) {
    auto program = [](bool branch) {
        ProgramBuilder b("cores", 4);
        Reg id = b.alloc(), i = b.alloc(), n = b.alloc();
        b.core_id(id);
        if (branch) {
            b.if_(id);  // cores 1..3: 10 sticks; core 0: 400 sticks
            b.vfill(DType::F16, 0, Lx(0), 1.0f, 10);
            b.else_();
            b.vfill(DType::F16, 0, Lx(0), 1.0f, 400);
            b.end_if();
        } else {
            b.muli(n, id, 100);  // core c: 100 c sticks
            b.loop(i, 1, n);
            b.vfill(DType::F16, 0, Lx(0), 1.0f, 1);
            b.end_loop();
        }
        b.wait_tag(0);
        return b.finish();
    };
    for (bool branch : {true, false}) {
        DeviceProgram p = program(branch);
        const double bound = time_lower_bound_us(p, MachineDesc{}), us = timed_us(p);
        EXPECT_LE(bound, us) << (branch ? "branch" : "loop");
        EXPECT_GT(bound, 0.9 * us) << (branch ? "branch" : "loop");
    }
}

// A loop whose count is only known at run time (here a loop variable) counts no iteration: the
// bound stays below the run, however many iterations it takes.
TEST(TimeLowerBound, ALoopOfUnknownCountCountsNothing) {
    ProgramBuilder b("dynamic", 1);
    Reg k = b.alloc(), j = b.alloc();
    b.loop(k, 8);
    b.loop(j, 1, k);
    b.vfill(DType::F16, 0, Lx(0), 1.0f, 64);
    b.end_loop();
    b.end_loop();
    b.wait_tag(0);
    DeviceProgram p = b.finish();
    EXPECT_LE(time_lower_bound_us(p, MachineDesc{}), timed_us(p));
    EXPECT_LT(time_lower_bound_us(p, MachineDesc{}), 0.1 * timed_us(p));
}

// Many cores loading at once share device memory: the bound is the chip's peak, not one core's cap.
TEST(TimeLowerBound, CoresLoadingTogetherAreBoundByDeviceMemory) {
    const int cores = 32;
    const int64_t sticks = 256;
    ProgramBuilder b("loads", cores);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * sticks * 16});
    DmaDesc ld;
    ld.sticks = int32_t(sticks);
    int desc = b.dma_desc(ld);
    Reg i = b.alloc();
    b.loop(i, 16);
    b.dma_ld(1, in, kZero, 0, Lx(0), desc);
    b.wait_tag(1);
    b.end_loop();
    DeviceProgram p = b.finish();
    const MachineDesc m;
    const double bound = time_lower_bound_us(p, m), us = timed_us(p);
    EXPECT_LE(bound, us);
    const double bytes = double(cores) * 16 * sticks * m.stick_bytes;
    EXPECT_GE(bound, m.cycles_to_us(m.ns_to_cycles(bytes / m.dram_bytes_per_ns)));
}

// Per-core traffic by buffer (program_traffic, what IBM's formula reads): loads at an address
// derived from CORE_ID are each core's own; a load at the same address on every core is
// replicated, also when the address passes through loop-carried registers; ring receives count.
TEST(ProgramTraffic, SeparatesEachCoresOwnLoadsFromReplicatedOnes) {
    ProgramBuilder b("traffic", 4);
    int x = b.buffer("x", BufferKind::Input, DType::F16, {64, 4 * 8});
    int w = b.buffer("w", BufferKind::Input, DType::F16, {64, 8});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64, 4 * 8});
    DmaDesc d;
    d.sticks = 4;
    int desc = b.dma_desc(d);
    Reg off = b.alloc(), t = b.alloc(), i = b.alloc(), woff = b.alloc();
    b.core_id(off);
    b.muli(off, off, 8 * 128);  // each core's 8 rows
    b.li(woff, 0);
    b.loop(i, 2);
    b.dma_ld(0, x, off, 0, Lx(0), desc);        // own: 4 rows per iteration
    b.dma_ld(1, w, woff, 0, Lx(4096), desc);    // every core the same 4 rows, then the next 4
    b.wait(3);
    b.dma_st(2, out, off, 0, Lx(0), desc);
    b.wait_tag(2);
    b.addi(off, off, 4 * 128);
    b.addi(woff, woff, 4 * 128);
    b.end_loop();
    b.li(t, 0);
    b.ring_send(3, 1, Lx(0), 2);
    b.ring_recv(4, -1, Lx(8192), 2);
    b.wait(3u << 3);
    const std::vector<CoreTraffic> cores = program_traffic(b.finish(), MachineDesc{});
    ASSERT_EQ(cores.size(), 4u);
    for (const CoreTraffic &c : cores) {
        EXPECT_EQ(c.load_bytes[size_t(x)], 8 * 128);
        EXPECT_EQ(c.loads[size_t(x)], 2);
        EXPECT_EQ(c.replicated_load_bytes[size_t(x)], 0);
        EXPECT_EQ(c.load_bytes[size_t(w)], 8 * 128);
        EXPECT_EQ(c.replicated_load_bytes[size_t(w)], 8 * 128);
        EXPECT_EQ(c.store_bytes[size_t(out)], 8 * 128);
        EXPECT_EQ(c.ring_recv_bytes, 2 * 128);
    }
}

}  // namespace
}  // namespace spyre
