// Run-time rejections: every spyre::Error the simulator throws names what is wrong and where (core,
// instruction index and opcode, buffer), and no failing program hangs.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "sim_test_helpers.h"

namespace spyre {
namespace {

using simtest::contains;
using simtest::error_of;
using simtest::to_bytes;

using simtest::kStick;

using simtest::timing_only;

// Zeroed images of the right size for every input (outputs and temporaries left empty).
std::vector<std::vector<uint8_t>> zero_inputs(const DeviceProgram &p, const MachineDesc &m = {}) {
    std::vector<std::vector<uint8_t>> images(p.buffers.size());
    for (size_t i = 0; i < p.buffers.size(); i++)
        if (p.buffers[i].kind == BufferKind::Input) images[i].assign(size_t(p.buffer_bytes(i, m.stick_bytes)), 0);
    return images;
}

// Runs functional and timing-only: both must reject with a message containing every part.
void expect_rejected(const DeviceProgram &p, const std::vector<std::string> &parts, bool also_timing = true) {
    const MachineDesc m;
    std::string msg = error_of([&] { simulate(p, m, zero_inputs(p)); });
    for (const auto &part : parts) EXPECT_TRUE(contains(msg, part)) << "functional";
    if (!also_timing) return;
    std::string tmsg = error_of([&] { simulate(p, m, {}, timing_only()); });
    for (const auto &part : parts) EXPECT_TRUE(contains(tmsg, part)) << "timing-only";
}

// Core `who` (selected with CORE_ID) runs `body`; every other core skips it.
void only_core(ProgramBuilder &b, int who, const std::function<void()> &body) {
    Reg core = b.alloc(), want = b.alloc(), is = b.alloc();
    b.core_id(core);
    b.li(want, who);
    b.op3(Opcode::CMPEQ, is, core, want);
    b.if_(is);
    body();
    b.end_if();
    for (Reg r : {core, want, is}) b.release(r);
}

// --- races -----------------------------------------------------------------------------------------

TEST(SimErrors, VectorReadsLxADmaIsStillWriting) {
    ProgramBuilder b("lx_race", 4);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * 8});
    DmaDesc d;
    d.sticks = 8;
    int desc = b.dma_desc(d);
    only_core(b, 2, [&] {
        b.dma_ld(0, in, kZero, 0, Lx(0), desc);                               // pc 4
        b.vbin(Opcode::VADD, DType::F16, 1, Lx(4096), Lx(512), Lx(8192), 1);  // pc 5
        b.wait(0x3);
    });
    DeviceProgram p = b.finish();
    ASSERT_EQ(p.code[4].op, Opcode::DMA_LD);
    expect_rejected(p, {"core 2", "instruction 5 (VADD)", "race", "LX [512, 640)", "instruction 4 (DMA_LD)",
                        "tag 0"});
}

TEST(SimErrors, DmaOverwritesLxAVectorOpIsReading) {
    ProgramBuilder b("lx_war", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64});
    DmaDesc d;
    int desc = b.dma_desc(d);
    b.vun(Opcode::VEXP, DType::F16, 3, Lx(4096), Lx(0), 4);  // reads [0, 512)
    b.dma_ld(0, in, kZero, 0, Lx(256), desc);                // writes [256, 384)
    b.wait(0x9);
    expect_rejected(b.finish(), {"core 0", "instruction 1 (DMA_LD)", "overwrites LX [256, 384)",
                                 "instruction 0 (VEXP)", "tag 3"});
}

TEST(SimErrors, WaitOnTheRightTagRemovesTheRace) {
    ProgramBuilder b("no_race", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * 8});
    DmaDesc d;
    d.sticks = 8;
    int desc = b.dma_desc(d);
    b.dma_ld(0, in, kZero, 0, Lx(0), desc);
    b.wait_tag(1);  // the wrong tag: still a race
    b.vbin(Opcode::VADD, DType::F16, 1, Lx(4096), Lx(0), Lx(0), 1);
    b.wait(0x3);
    expect_rejected(b.finish(), {"instruction 2 (VADD)", "race"});

    ProgramBuilder ok("no_race_ok", 1);
    in = ok.buffer("in", BufferKind::Input, DType::F16, {64 * 8});
    desc = ok.dma_desc(d);
    ok.dma_ld(0, in, kZero, 0, Lx(0), desc);
    ok.wait_tag(0);
    ok.vbin(Opcode::VADD, DType::F16, 1, Lx(4096), Lx(0), Lx(0), 1);
    ok.wait(0x3);
    DeviceProgram p = ok.finish();
    EXPECT_NO_THROW(simulate(p, MachineDesc{}, zero_inputs(p)));
}

TEST(SimErrors, DeviceMemoryStoreThenLoadWithoutWait) {
    ProgramBuilder b("dram_race", 1);
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64 * 8});
    DmaDesc d;
    d.sticks = 2;
    int desc = b.dma_desc(d);
    b.dma_st(0, out, kZero, 256, Lx(0), desc);     // writes device [256, 512)
    b.dma_ld(1, out, kZero, 384, Lx(8192), desc);  // reads [384, 640): overlaps, different LX
    b.wait(0x3);
    expect_rejected(b.finish(), {"core 0", "instruction 1 (DMA_LD)", "race", "device-memory range [384, 640)",
                                 "buffer 'out'", "instruction 0 (DMA_ST)", "tag 0"});
}

TEST(SimErrors, TwoLoadsOfOneRangeDoNotRace) {
    ProgramBuilder b("dram_rr", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * 8});
    DmaDesc d;
    d.sticks = 2;
    int desc = b.dma_desc(d);
    b.dma_ld(0, in, kZero, 0, Lx(0), desc);
    b.dma_ld(1, in, kZero, 0, Lx(8192), desc);
    b.wait(0x3);
    DeviceProgram p = b.finish();
    EXPECT_NO_THROW(simulate(p, MachineDesc{}, zero_inputs(p)));
}

// --- out of range at run time ----------------------------------------------------------------------

TEST(SimErrors, DmaPastTheEndOfTheBufferWithRegisterBase) {
    // A loop walks a register base one stick at a time over a 4-stick buffer, one step too far.
    ProgramBuilder b("dram_oob", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * 4});
    DmaDesc d;
    int desc = b.dma_desc(d);
    Reg i = b.alloc(), off = b.alloc();
    b.li(off, 0);
    b.loop(i, 5);
    b.dma_ld(0, in, off, 0, Lx(0), desc);  // pc 2
    b.wait_tag(0);
    b.addi(off, off, int32_t(kStick));
    b.end_loop();
    expect_rejected(b.finish(), {"core 0", "instruction 2 (DMA_LD)", "device-memory range [512, 640)",
                                 "outside buffer 'in' (512 bytes)"});
}

TEST(SimErrors, DmaNegativeDeviceAddress) {
    ProgramBuilder b("dram_neg", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * 4});
    DmaDesc d;
    int desc = b.dma_desc(d);
    Reg off = b.alloc();
    b.li(off, -2 * kStick);
    b.dma_ld(0, in, off, 0, Lx(0), desc);
    b.wait_tag(0);
    expect_rejected(b.finish(), {"instruction 1 (DMA_LD)", "[-256, -128)", "buffer 'in'"});
}

TEST(SimErrors, DmaDeviceAddressNotStickAligned) {
    ProgramBuilder b("dram_align", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * 4});
    DmaDesc d;
    int desc = b.dma_desc(d);
    Reg off = b.alloc();
    b.li(off, 64);
    b.dma_ld(0, in, off, 0, Lx(0), desc);
    b.wait_tag(0);
    expect_rejected(b.finish(), {"core 0", "instruction 1 (DMA_LD)", "device-memory address 64", "stick-aligned"});
}

TEST(SimErrors, LxOutOfRangeAtRunTimeNamesTheCore) {
    // LX base = CORE_ID * 1 MiB: core 0 and 1 fit, core 2 runs past the 2 MiB LX.
    ProgramBuilder b("lx_oob", 4);
    Reg core = b.alloc(), base = b.alloc();
    b.core_id(core);
    b.muli(base, core, 1 << 20);
    b.vun(Opcode::VEXP, DType::F16, 0, Lx(base, 0), Lx(0), 8);  // pc 2
    b.wait_tag(0);
    expect_rejected(b.finish(), {"core 2", "instruction 2 (VEXP)", "dst", "LX range [2097152, 2098176)",
                                 "outside LX (2097152 bytes)"});
}

TEST(SimErrors, DmaLxRangeOutOfRangeAtRunTime) {
    ProgramBuilder b("lx_oob_dma", 2);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64 * 4});
    DmaDesc d;
    d.sticks = 4;
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), lx = b.alloc();
    b.core_id(core);
    b.muli(lx, core, 2 * 1024 * 1024 - 256);  // core 1: 256 bytes before the end, needs 512
    b.dma_ld(0, in, kZero, 0, Lx(lx, 0), desc);
    b.wait_tag(0);
    expect_rejected(b.finish(), {"core 1", "instruction 2 (DMA_LD)", "outside LX"});
}

// --- ring ------------------------------------------------------------------------------------------

TEST(SimErrors, RingTransferSizeMismatch) {
    ProgramBuilder b("ring_size", 2);
    Reg core = b.alloc();
    b.core_id(core);
    b.if_(core);                      // core 1
    b.ring_recv(0, -1, Lx(0), 1);     // pc 2: expects one stick
    b.else_();
    b.ring_send(0, 1, Lx(0), 2);      // pc 4: core 0 sends two
    b.end_if();
    b.wait_tag(0);
    expect_rejected(b.finish(), {"ring transfer size mismatch", "core 0 instruction 4 (RING_SEND) sends 256 bytes",
                                 "core 1 instruction 2 (RING_RECV) receives 128"});
}

TEST(SimErrors, RingReduceMismatch) {
    ProgramBuilder b("reduce_mismatch", 3);
    only_core(b, 2, [&] { b.ring_reduce(DType::F32, 0, RedOp::Sum, Lx(0), 2); });
    Reg core = b.alloc(), two = b.alloc(), lt = b.alloc();
    b.core_id(core);
    b.li(two, 2);
    b.op3(Opcode::CMPLT, lt, core, two);
    b.if_(lt);
    b.ring_reduce(DType::F32, 0, RedOp::Sum, Lx(0), 1);
    b.end_if();
    b.wait_tag(0);
    expect_rejected(b.finish(), {"RING_REDUCE mismatch", "core 2", "does not match core 0"});
}

// Cores 0 and 1 reduce in a group of 2, cores 2 and 3 in a group of 4: both groups start at core 0,
// so their first turns meet in one collective that has the shape of neither.
TEST(SimErrors, RingReduceGroupMismatch) {
    ProgramBuilder b("group_mismatch", 4);
    Reg core = b.alloc(), two = b.alloc(), lt = b.alloc();
    b.core_id(core);
    b.li(two, 2);
    b.op3(Opcode::CMPLT, lt, core, two);
    b.if_(lt);
    b.ring_reduce(DType::F32, 0, RedOp::Sum, Lx(0), 1, 2, 1);
    b.else_();
    b.ring_reduce(DType::F32, 0, RedOp::Sum, Lx(0), 1, 4, 1);
    b.end_if();
    b.wait_tag(0);
    expect_rejected(b.finish(), {"RING_REDUCE mismatch: core 0", "reduces over a group of 2 cores 1 apart",
                                 "(core 3 instruction 6 (RING_REDUCE))"});
}

TEST(SimErrors, RingReceiveWithNoSenderDeadlocks) {
    ProgramBuilder b("no_sender", 3);
    only_core(b, 1, [&] {
        b.ring_recv(0, -1, Lx(0), 1);  // pc 4
        b.wait_tag(0);                 // pc 5
    });
    expect_rejected(b.finish(), {"deadlock", "core 1 waits at instruction 5 (WAIT)",
                                 "core 1 instruction 4 (RING_RECV) was never sent to by core 0"});
}

TEST(SimErrors, UnmatchedSendWithoutWaitIsStillReported) {
    // Nobody waits, so every core finishes; the dangling send is still an error.
    ProgramBuilder b("dangling", 2);
    only_core(b, 0, [&] { b.ring_send(0, 1, Lx(0), 1); });
    expect_rejected(b.finish(), {"deadlock", "core 0 instruction 4 (RING_SEND) was never received by core 1"});
}

TEST(SimErrors, BothCoresReceiveFirstDeadlock) {
    // Each core waits for its receive before it sends: a cycle.
    ProgramBuilder b("cycle", 2);
    b.ring_recv(0, -1, Lx(0), 1);
    b.wait_tag(0);
    b.ring_send(1, 1, Lx(0), 1);
    b.wait_tag(1);
    expect_rejected(b.finish(), {"deadlock", "core 0 waits at instruction 1 (WAIT)",
                                 "core 1 waits at instruction 1 (WAIT)"});
}

TEST(SimErrors, BarrierNotReachedByEveryCoreDeadlocks) {
    ProgramBuilder b("half_barrier", 4);
    Reg core = b.alloc(), two = b.alloc(), lt = b.alloc();
    b.core_id(core);
    b.li(two, 2);
    b.op3(Opcode::CMPLT, lt, core, two);
    b.if_(lt);
    b.barrier();  // pc 4: only cores 0 and 1
    b.end_if();
    DeviceProgram p = b.finish();
    expect_rejected(p, {"deadlock", "core 0 waits at instruction 4 (BARRIER)",
                        "core 1 waits at instruction 4 (BARRIER)"});
    std::string msg = error_of([&] { simulate(p, MachineDesc{}, {}, timing_only()); });
    EXPECT_FALSE(contains(msg, "core 2 ")) << "cores 2 and 3 finished and are not blocked";
}

// --- images ----------------------------------------------------------------------------------------

DeviceProgram two_buffer_program() {
    ProgramBuilder b("images", 1);
    int x = b.buffer("x_in", BufferKind::Input, DType::F16, {100, 3});
    int y = b.buffer("y_out", BufferKind::Output, DType::F16, {100, 3});
    DmaDesc d;
    d.sticks = 6;
    int desc = b.dma_desc(d);
    b.dma_ld(0, x, kZero, 0, Lx(0), desc);
    b.wait_tag(0);
    b.dma_st(1, y, kZero, 0, Lx(0), desc);
    b.wait_tag(1);
    return b.finish();
}

TEST(SimErrors, WrongInputImageSizeNamesTheBuffer) {
    DeviceProgram p = two_buffer_program();
    // A dense 100 x 3 image instead of the padded 2-stick rows (768 bytes).
    std::string msg = error_of([&] { simulate(p, MachineDesc{}, {std::vector<uint8_t>(600), {}}); });
    EXPECT_TRUE(contains(msg, "buffer 0 'x_in' (input)"));
    EXPECT_TRUE(contains(msg, "600 bytes"));
    EXPECT_TRUE(contains(msg, "needs 768"));
    // A non-empty output image must have the right size too.
    msg = error_of([&] { simulate(p, MachineDesc{}, {std::vector<uint8_t>(768), std::vector<uint8_t>(5)}); });
    EXPECT_TRUE(contains(msg, "buffer 1 'y_out' (output)"));
}

TEST(SimErrors, MissingInputImage) {
    DeviceProgram p = two_buffer_program();
    std::string msg = error_of([&] { simulate(p, MachineDesc{}, {{}, {}}); });
    EXPECT_TRUE(contains(msg, "buffer 0 'x_in' (input)"));
    EXPECT_TRUE(contains(msg, "image has 0 bytes"));
    msg = error_of([&] { simulate(p, MachineDesc{}, {std::vector<uint8_t>(768)}); });
    EXPECT_TRUE(contains(msg, "1 buffer images given, the program declares 2"));
    // Timing-only needs no images.
    EXPECT_NO_THROW(simulate(p, MachineDesc{}, {}, timing_only()));
}

// --- scalar faults and budgets ---------------------------------------------------------------------

TEST(SimErrors, DivisionByZero) {
    for (Opcode op : {Opcode::DIV, Opcode::REM}) {
        ProgramBuilder b("div0", 2);
        Reg core = b.alloc(), ten = b.alloc(), q = b.alloc();
        b.core_id(core);
        b.li(ten, 10);
        b.op3(op, q, ten, core);  // pc 2: core 0 divides by zero
        DeviceProgram p = b.finish();
        std::string name = op == Opcode::DIV ? "instruction 2 (DIV)" : "instruction 2 (REM)";
        expect_rejected(p, {"core 0", name, "division by zero", "r1 is 0"});
    }
}

// Regression: strides whose product with a count overflows int64 used to wrap into a small span
// that passed the range check, and the copy then wrote far outside the buffer.
TEST(SimErrors, DmaSpanThatOverflowsIsOutOfRangeNotAWildWrite) {
    ProgramBuilder b("overflow", 1);
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64 * 8});
    DmaDesc d;
    d.count[0] = 5;
    d.dram_stride[0] = (int64_t(1) << 62) + 64;  // 4 * stride = 2^64 + 256: wraps to 256
    int desc = b.dma_desc(d);
    Reg base = b.alloc();
    b.li(base, 0);  // a register address: only the simulator can check it
    b.dma_st(0, out, base, 0, Lx(0), desc);
    b.wait_tag(0);
    DeviceProgram p = b.finish();
    std::string msg = error_of([&] { simulate(p, MachineDesc{}, {{}}); });
    EXPECT_TRUE(contains(msg, "outside buffer 'out'")) << msg;
    EXPECT_TRUE(contains(msg, "core 0")) << msg;
}

// 64 loads of one stick repeated `repeats` times. With `count_from_core_id` the loop's count is
// CORE_ID + 64, known only at run time.
DeviceProgram repeated_dma(const std::string &name, int32_t repeats, bool count_from_core_id) {
    ProgramBuilder b(name, 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64});
    DmaDesc d;
    d.count[0] = repeats;
    int desc = b.dma_desc(d);
    Reg i = b.alloc(), n = b.alloc();
    if (count_from_core_id) b.core_id(n);
    b.loop(i, 64, count_from_core_id ? n : kZero);
    b.dma_ld(0, in, kZero, 0, Lx(0), desc);
    b.wait_tag(0);
    b.end_loop();
    return b.finish();
}

// Regression: one descriptor of 16M sticks, repeated, kept the functional simulator busy for
// seconds. With a constant loop count it is now refused before the run, from its static work.
TEST(SimErrors, WorkLimitRefusesAHugeDescriptorBeforeRunning) {
    DeviceProgram p = repeated_dma("huge", 1 << 24, false);  // 2 GiB of copying per DMA
    SimOptions o;
    o.max_work = int64_t(1) << 30;
    std::vector<std::vector<uint8_t>> images = {std::vector<uint8_t>(128)};
    std::string msg = error_of([&] { simulate(p, MachineDesc{}, images, o); });
    EXPECT_TRUE(contains(msg, "kernel 'huge' asks for 137438953472 units of functional work")) << msg;
    EXPECT_TRUE(contains(msg, "above the limit of 1073741824 (SimOptions::max_work")) << msg;
    EXPECT_TRUE(contains(msg, "137438953472 DMA bytes")) << msg;
    // The default limit refuses it too, and timing-only mode times it without doing the work.
    EXPECT_TRUE(contains(error_of([&] { simulate(p, MachineDesc{}, images); }), "SimOptions::max_work"));
    SimOptions t;
    t.timing_only = true;
    // Timed, not done: 64 loads, one after another (a WAIT after each), of 2^24 one-stick runs
    // each (stride 0: every run is its own). Each run costs the channel its stick plus the run
    // overhead, and one core draws at most dma_core_bytes_per_ns of that (docs/device_model.md,
    // "How time is counted"); the descriptors' start latency (64 x 220 cycles) is a few millionths
    // of the total. So the time is that work at the core's rate, to a thousandth.
    const MachineDesc m;
    const double runs = 64.0 * (1 << 24);
    const double work_us = runs * (128 + m.dram_read_run_overhead_bytes) /
                           std::min(m.dma_core_bytes_per_ns, m.dram_bytes_per_ns) / 1000.0;
    const SimStats st = simulate(p, m, {}, t).stats;
    EXPECT_EQ(st.dram_read_bytes, int64_t(runs) * 128);
    EXPECT_GE(st.us, work_us);
    EXPECT_LE(st.us, work_us * 1.001);
}

// The same loop with a count computed from CORE_ID: only the run-time budget can stop it.
TEST(SimErrors, WorkBudgetStopsALoopWhoseCountIsKnownOnlyAtRunTime) {
    DeviceProgram p = repeated_dma("huge_dynamic", 1 << 22, true);  // 512 MiB: one pass is under the limit
    SimOptions o;
    o.max_work = int64_t(1) << 30;
    std::vector<std::vector<uint8_t>> images = {std::vector<uint8_t>(128)};
    std::string msg = error_of([&] { simulate(p, MachineDesc{}, images, o); });
    EXPECT_TRUE(contains(msg, "work budget of 1073741824")) << msg;
    EXPECT_TRUE(contains(msg, "timing-only")) << msg;
}

// Regression (fuzzer finding): scalar MUL overflowed int64 (undefined behaviour), and
// INT64_MIN / -1 traps on x86. Registers wrap like 64-bit hardware registers instead.
TEST(SimErrors, ScalarOverflowWrapsLikeAHardwareRegister) {
    ProgramBuilder b("wrap", 1);
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64});
    int desc = b.dma_desc(DmaDesc{});
    Reg x = b.alloc(), y = b.alloc(), z = b.alloc(), want = b.alloc(), ok = b.alloc(), both = b.alloc();
    b.li(x, 6413125869644029952LL);
    b.li(y, 2);
    b.mul(z, x, y);  // 12826251739288059904 wraps to -5620492334421491712
    b.li(want, -5620492334421491712LL);
    b.op3(Opcode::CMPEQ, ok, z, want);
    b.li(x, std::numeric_limits<int64_t>::min());
    b.li(y, -1);
    b.op3(Opcode::DIV, z, x, y);  // wraps to INT64_MIN
    b.op3(Opcode::CMPEQ, both, z, x);
    b.op3(Opcode::MUL, ok, ok, both);
    b.op3(Opcode::REM, z, x, y);  // 0
    b.op3(Opcode::CMPEQ, both, z, kZero);
    b.op3(Opcode::MUL, ok, ok, both);
    b.if_(ok);
    b.vfill(DType::F16, 0, Lx(0), 1.0f, 1);
    b.wait_tag(0);
    b.dma_st(1, out, kZero, 0, Lx(0), desc);
    b.wait_tag(1);
    b.end_if();
    SimResult r = simulate(b.finish(), MachineDesc{}, {{}});
    EXPECT_EQ(r.buffers[0][0], 0x00);
    EXPECT_EQ(r.buffers[0][1], 0x3c);  // fp16 1.0: every check held
}

TEST(SimErrors, InstructionLimitRefusesALongLoopBeforeRunning) {
    ProgramBuilder b("budget", 1);
    Reg i = b.alloc(), x = b.alloc();
    b.loop(i, 100000);
    b.addi(x, x, 1);
    b.end_loop();
    DeviceProgram p = b.finish();
    SimOptions o;
    o.max_instructions = 1000;
    std::string msg = error_of([&] { simulate(p, MachineDesc{}, {}, o); });
    EXPECT_TRUE(contains(msg, "kernel 'budget' issues 200001 instructions over its cores, above the limit of 1000 "
                              "(SimOptions::max_instructions)"))
        << msg;
    o.max_instructions = 400000;
    EXPECT_NO_THROW(simulate(p, MachineDesc{}, {}, o));
    // Timing-only mode summarises the loop: it steps a few iterations, well inside the budget.
    o.timing_only = true;
    o.max_instructions = 1000;
    EXPECT_NO_THROW(simulate(p, MachineDesc{}, {}, o));
}

// A loop holding a BARRIER is never summarised: timing-only runs are stopped by the step budget.
TEST(SimErrors, TimingOnlyRunsAreBoundedByTheStepBudget) {
    ProgramBuilder b("barriers", 2);
    Reg i = b.alloc();
    b.loop(i, 100000);
    b.barrier();
    b.end_loop();
    DeviceProgram p = b.finish();
    SimOptions o;
    o.timing_only = true;
    o.max_instructions = 1000;
    std::string msg = error_of([&] { simulate(p, MachineDesc{}, {}, o); });
    EXPECT_TRUE(contains(msg, "instruction budget of 1000 exceeded (SimOptions::max_instructions)")) << msg;
}

TEST(SimErrors, InstructionBudgetStopsALoopWhoseCountIsKnownOnlyAtRunTime) {
    ProgramBuilder b("budget", 1);
    Reg i = b.alloc(), x = b.alloc(), n = b.alloc();
    b.core_id(n);
    b.loop(i, 100000, n);
    b.addi(x, x, 1);
    b.end_loop();
    DeviceProgram p = b.finish();
    SimOptions o;
    o.max_instructions = 1000;
    std::string msg = error_of([&] { simulate(p, MachineDesc{}, {}, o); });
    EXPECT_TRUE(contains(msg, "instruction budget of 1000 exceeded")) << msg;
    EXPECT_TRUE(contains(msg, "core 0")) << msg;
}

TEST(SimErrors, ProgramNeedsMoreCoresThanTheMachine) {
    ProgramBuilder b("too_many", 33);
    b.barrier();
    std::string msg = error_of([&] { simulate(b.finish(), MachineDesc{}, {}, timing_only()); });
    EXPECT_TRUE(contains(msg, "needs 33 cores, machine has 32"));
}

TEST(SimErrors, UnwritableTracePathNamesThePath) {
    ProgramBuilder b("trace_fail", 1);
    b.vfill(DType::F16, 0, Lx(0), 1.0f, 1);
    b.wait_tag(0);
    SimOptions o;
    o.trace_path = ::testing::TempDir() + "no/such/dir/trace.json";
    std::string msg = error_of([&] { simulate(b.finish(), MachineDesc{}, {}, o); });
    EXPECT_TRUE(contains(msg, "no/such/dir/trace.json"));
}

}  // namespace
}  // namespace spyre

namespace spyre {
namespace {

// An in-out buffer: the run must be given its initial contents (it is never silently zeros), and
// the program updates them in place.
TEST(SimErrors, InOutBufferNeedsItsInitialImageAndIsUpdatedInPlace) {
    ProgramBuilder b("double_in_place", 1);
    int x = b.buffer("x", BufferKind::InOut, DType::F16, {64});
    int desc = b.dma_desc(DmaDesc{});
    b.dma_ld(0, x, kZero, 0, Lx(0), desc);
    b.wait_tag(0);
    b.vbin(Opcode::VADD, DType::F16, 1, Lx(128), Lx(0), Lx(0), 1);
    b.wait_tag(1);
    b.dma_st(2, x, kZero, 0, Lx(128), desc);
    b.wait_tag(2);
    DeviceProgram p = b.finish();
    const MachineDesc m;
    std::string msg = error_of([&] { simulate(p, m, {{}}); });
    EXPECT_TRUE(contains(msg, "buffer 0 'x' (inout): no initial image given")) << msg;
    std::vector<uint16_t> h(64, 0x3C00);  // 1.0
    SimResult r = simulate(p, m, {to_bytes(h)});
    std::vector<uint16_t> want(64, 0x4000);  // 2.0
    EXPECT_EQ(r.buffers[0], to_bytes(want));
}

}  // namespace
}  // namespace spyre
