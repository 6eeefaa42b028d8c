// VSCANSUM (isa.h), the running sum along each group: in place from the group's first element,
// which it keeps; every sum rounded to the element type (fp16 after each element, int32 wrapping);
// the valid elements; the verifier, the listing and the .spyre round trip; its LX ranges.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "device/disassembler.h"
#include "device/half.h"
#include "device/program_builder.h"
#include "device/program_io.h"
#include "sim/lx_access.h"
#include "sim/op_cost.h"
#include "sim/vector_exec.h"
#include "sim_test_helpers.h"

namespace spyre {
namespace {

constexpr int64_t kScanDst = 0, kScanSrc = 64 * 1024;

class ScanSum : public ::testing::Test {
protected:
    MachineDesc m;
    std::vector<uint8_t> lx;
    int64_t regs[kNumRegs] = {};
    DeviceProgram prog;

    ScanSum() : lx(size_t(m.lx_bytes), 0) {}
    void run(DType t, int32_t sticks, int32_t groups, int32_t valid = 0) {
        ProgramBuilder b("t", 1);
        b.vscansum(t, 0, Lx(kScanDst), Lx(kScanSrc), sticks, groups, valid);
        prog = b.finish();
        lx_access(prog, prog.code.back(), regs, m, 0);
        exec_vector(prog.code.back(), regs, lx.data(), m);
    }
    template <class T>
    void set(int64_t off, int64_t i, T v) { std::memcpy(&lx[size_t(off + int64_t(sizeof(T)) * i)], &v, sizeof(T)); }
    template <class T>
    T get(int64_t off, int64_t i) const {
        T v;
        std::memcpy(&v, &lx[size_t(off + int64_t(sizeof(T)) * i)], sizeof(T));
        return v;
    }
};

TEST_F(ScanSum, KeepsTheFirstElementAndAddsTheSourceAfterIt) {
    // 2 groups of 32 f32 lanes: dst starts at 100 * (g + 1), src[e] = e.
    for (int g = 0; g < 2; g++) {
        set<float>(kScanDst, g * 32, 100.0f * float(g + 1));
        for (int e = 0; e < 32; e++) set<float>(kScanSrc, g * 32 + e, float(e));
    }
    run(DType::F32, 1, 2);
    for (int g = 0; g < 2; g++)
        for (int e = 0; e < 32; e++)
            EXPECT_EQ(get<float>(kScanDst, g * 32 + e), 100.0f * float(g + 1) + float(e * (e + 1) / 2)) << g << "," << e;
}

TEST_F(ScanSum, HalvesRoundAfterEveryElementAndStopAtTheValidOnes) {
    // 2048 + 1 + 1: in fp16 each +1 rounds back to 2048 (ties to even), as Halide's fp16 adds do.
    set<uint16_t>(kScanDst, 0, float_to_half(2048.0f));
    for (int e = 0; e < 64; e++) set<uint16_t>(kScanSrc, e, float_to_half(1.0f));
    set<uint16_t>(kScanDst, 10, float_to_half(-7.0f));  // past the 10 valid elements: untouched
    run(DType::F16, 1, 1, 10);
    for (int e = 0; e < 10; e++) EXPECT_EQ(half_to_float(get<uint16_t>(kScanDst, e)), 2048.0f) << e;
    EXPECT_EQ(half_to_float(get<uint16_t>(kScanDst, 10)), -7.0f);
}

TEST_F(ScanSum, IntegersWrap) {
    set<int32_t>(kScanDst, 0, INT32_MAX);
    for (int e = 0; e < 32; e++) set<int32_t>(kScanSrc, e, 1);
    run(DType::I32, 1, 1, 3);
    EXPECT_EQ(get<int32_t>(kScanDst, 1), INT32_MIN);
    EXPECT_EQ(get<int32_t>(kScanDst, 2), INT32_MIN + 1);
}

TEST_F(ScanSum, LxAccessReadsAndWritesTheDestination) {
    ProgramBuilder b("t", 1);
    b.vscansum(DType::F16, 0, Lx(kScanDst), Lx(kScanSrc), 2, 3);
    prog = b.finish();
    LxAccess acc = lx_access(prog, prog.code.back(), regs, m, 0);
    ASSERT_EQ(acc.num_reads, 2);
    ASSERT_EQ(acc.num_writes, 1);
    EXPECT_EQ(acc.reads[1].begin, kScanDst);
    EXPECT_EQ(acc.reads[1].end, kScanDst + 6 * m.stick_bytes);
    EXPECT_EQ(acc.writes[0].end, kScanDst + 6 * m.stick_bytes);
}

Instr scan_instr() {
    Instr in;
    in.op = Opcode::VSCANSUM;
    in.dtype = uint8_t(DType::F16);
    in.a = {0, 0, 0, 0, 8192, 0, 0, 2, 16, 100};
    return in;
}

TEST(ScanSumVerify, ChecksModesValidElementsAndTypes) {
    using simtest::one_instruction;
    using simtest::verify_error;
    EXPECT_EQ(verify_error(one_instruction(scan_instr())), "");
    Instr acc = scan_instr();
    acc.mode = kAccumulate;
    EXPECT_EQ(verify_error(one_instruction(acc)), "instruction 0 (VSCANSUM): mode bits 0x2 not allowed (allowed: 0x0)");
    Instr wide = scan_instr();
    wide.a[9] = 129;
    EXPECT_NE(verify_error(one_instruction(wide)).find("valid element count 129 exceeds the 128 lanes"), std::string::npos);
    Instr bytes = scan_instr();
    bytes.dtype = uint8_t(DType::U8);
    EXPECT_NE(verify_error(one_instruction(bytes)).find("element type u8 not supported"), std::string::npos);
}

TEST(ScanSumListingAndFile, RoundTrips) {
    DeviceProgram p = simtest::one_instruction(scan_instr());
    std::vector<uint8_t> bytes = serialize_program(p);
    DeviceProgram q = parse_program(bytes.data(), bytes.size());
    ASSERT_EQ(q.code.size(), 1u);
    EXPECT_EQ(q.code[0].op, Opcode::VSCANSUM);
    EXPECT_EQ(q.code[0].a, p.code[0].a);
    EXPECT_NE(disassemble(q).find("VSCANSUM.f16 t0, [r0+0], [r0+8192], 2, 16, 100"), std::string::npos) << disassemble(q);
}

}  // namespace
}  // namespace spyre
