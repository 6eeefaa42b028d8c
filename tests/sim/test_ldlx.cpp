// LDLX (isa.h), the scalar read of an int32 from LX: a gather of table rows by ids loaded into LX
// (each id read into a register, clamped, scaled to a row and used as a DMA's device offset), its
// sign extension, the race it must not run (a read before the WAIT on the DMA that writes it), the
// verifier's LX checks, the listing and the .spyre round trip, and timing-only runs (which read 0).
#include <gtest/gtest.h>

#include <vector>

#include "device/disassembler.h"
#include "device/program_io.h"
#include "sim_test_helpers.h"

namespace spyre {
namespace {

using simtest::from_bytes;
using simtest::kStick;
using simtest::to_bytes;

constexpr int kRowLanes = 32;  // a table row: one stick of fp32
constexpr int64_t kIdsLx = 0, kRowLx = 4096;

// out row t = table row clamp(ids[t], 0, rows - 1), one row at a time.
DeviceProgram gather_program(int rows, int tokens, bool wait_for_ids = true) {
    ProgramBuilder b("gather", 1);
    const int table = b.buffer("table", BufferKind::Input, DType::F32, {kRowLanes, rows});
    const int ids = b.buffer("ids", BufferKind::Input, DType::I32, {tokens});
    const int out = b.buffer("out", BufferKind::Output, DType::F32, {kRowLanes, tokens});
    DmaDesc all_ids;
    all_ids.sticks = int32_t((tokens * 4 + kStick - 1) / kStick);
    DmaDesc row;
    row.sticks = 1;
    b.dma_ld(0, ids, kZero, 0, Lx(kIdsLx), b.dma_desc(all_ids));
    if (wait_for_ids) b.wait_tag(0);
    const int row_desc = b.dma_desc(row);
    Reg t{1}, addr{2}, id{3}, hi{4}, off{5};
    b.li(hi, rows - 1);
    b.loop(t, tokens);
    b.muli(addr, t, 4);
    b.ldlx(id, Lx(addr, int32_t(kIdsLx)));
    b.op3(Opcode::MIN, id, id, hi);
    b.op3(Opcode::MAX, id, id, kZero);
    b.muli(off, id, int32_t(kStick));
    b.dma_ld(1, table, off, 0, Lx(kRowLx), row_desc);
    b.wait_tag(1);
    b.muli(off, t, int32_t(kStick));
    b.dma_st(2, out, off, 0, Lx(kRowLx), row_desc);
    b.wait_tag(2);
    b.end_loop();
    return b.finish();
}

// The ids' device image: whole sticks (32 int32), the ids then zeros.
std::vector<uint8_t> ids_image(std::vector<int32_t> ids) {
    ids.resize((ids.size() + 31) / 32 * 32, 0);
    return to_bytes(ids);
}

std::vector<float> table_rows(int rows) {
    std::vector<float> v(size_t(rows * kRowLanes));
    for (size_t i = 0; i < v.size(); i++) v[i] = float(i) + 0.5f;
    return v;
}

TEST(Ldlx, GathersTheRowsTheIdsNameAndTheClampBoundsTheOutOfRangeOnes) {
    const int rows = 10;
    const std::vector<int32_t> ids = {3, 0, 9, -5, 12, 7, 3};  // -5 and 12 clamp to 0 and 9
    const DeviceProgram p = gather_program(rows, int(ids.size()));
    const std::vector<float> table = table_rows(rows);
    const SimResult r = simulate(p, MachineDesc{}, {to_bytes(table), ids_image(ids), {}});
    const std::vector<float> out = from_bytes<float>(r.buffers[2]);
    ASSERT_EQ(out.size(), ids.size() * kRowLanes);
    for (size_t t = 0; t < ids.size(); t++) {
        const int row = std::min(std::max(ids[t], 0), rows - 1);
        for (int e = 0; e < kRowLanes; e++) EXPECT_EQ(out[t * kRowLanes + size_t(e)], table[size_t(row * kRowLanes + e)]) << t << "," << e;
    }
}

TEST(Ldlx, ANegativeIdIsSignExtended) {
    // Without the clamp's MAX a negative id would address before the table: the MIN alone keeps it
    // negative, which shows the register holds -1, not 0xffffffff.
    ProgramBuilder b("sign", 1);
    const int ids = b.buffer("ids", BufferKind::Input, DType::I32, {32});
    const int out = b.buffer("out", BufferKind::Output, DType::I32, {32});
    DmaDesc d;
    d.sticks = 1;
    const int desc = b.dma_desc(d);
    b.dma_ld(0, ids, kZero, 0, Lx(0), desc);
    b.wait_tag(0);
    Reg v{1}, base{2};
    b.ldlx(v, Lx(0));
    // out = 32 lanes of v + 2 (VFILL cannot take a register: write it with a shifted DMA instead).
    b.addi(base, v, 2);  // -1 + 2 = 1: store the stick at byte offset 1 * 128 - 128 = 0
    b.muli(base, base, int32_t(kStick));
    b.addi(base, base, -int32_t(kStick));
    b.dma_st(1, out, base, 0, Lx(0), desc);
    b.wait_tag(1);
    std::vector<int32_t> in(32, 7);
    in[0] = -1;
    const SimResult r = simulate(b.finish(), MachineDesc{}, {to_bytes(in), {}});
    EXPECT_EQ(from_bytes<int32_t>(r.buffers[out]), in) << "the store landed at offset 0 only if LDLX read -1";
}

TEST(Ldlx, AReadBeforeTheWaitOnTheDmaThatWritesItIsARace) {
    const DeviceProgram p = gather_program(4, 3, /*wait_for_ids=*/false);
    const std::vector<int32_t> ids = {1, 2, 3};
    const std::string e = simtest::error_of([&] { simulate(p, MachineDesc{}, {to_bytes(table_rows(4)), ids_image(ids), {}}); });
    EXPECT_TRUE(simtest::contains(e, "race: LDLX reads LX [0, 4)")) << e;
    EXPECT_TRUE(simtest::contains(e, "WAIT on that tag first")) << e;
}

TEST(Ldlx, TheVerifierChecksItsLxAddress) {
    Instr outside{};
    outside.op = Opcode::LDLX;
    outside.a[0] = 1;
    outside.a[2] = int32_t(MachineDesc{}.lx_bytes - 2);
    EXPECT_TRUE(simtest::contains(simtest::verify_error(simtest::one_instruction(outside)), "src LX range")) << simtest::verify_error(simtest::one_instruction(outside));
    Instr unaligned = outside;
    unaligned.a[2] = 6;
    EXPECT_TRUE(simtest::contains(simtest::verify_error(simtest::one_instruction(unaligned)), "is not a multiple of 4"));
    Instr ok = outside;
    ok.a[2] = 8;
    EXPECT_EQ(simtest::verify_error(simtest::one_instruction(ok)), "");
}

TEST(Ldlx, ListsAndRoundTripsThroughTheFileFormat) {
    const DeviceProgram p = gather_program(10, 4);
    EXPECT_NE(disassemble(p).find("LDLX"), std::string::npos) << disassemble(p);
    const std::vector<uint8_t> bytes = serialize_program(p);
    const DeviceProgram q = parse_program(bytes.data(), bytes.size());
    EXPECT_EQ(serialize_program(q), bytes);
}

TEST(Ldlx, ATimingOnlyRunReadsZeroAndTakesAsLongAsAFunctionalRun) {
    const int rows = 10;
    const std::vector<int32_t> ids = {3, 0, 9, 5};
    const DeviceProgram p = gather_program(rows, int(ids.size()));
    const SimResult full = simulate(p, MachineDesc{}, {to_bytes(table_rows(rows)), ids_image(ids), {}});
    const SimResult timed = simulate(p, MachineDesc{}, {}, simtest::timing_only(false));
    EXPECT_EQ(timed.stats.cycles, full.stats.cycles);
}

}  // namespace
}  // namespace spyre
