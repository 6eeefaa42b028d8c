// VSELIDX, the select by lane index against a limit (backend/device/vector_shift.h): what each
// group takes from each source (a diagonal, a fixed limit, one src1 element per group), the limit
// read from a register, the verifier's checks, the listing, the .spyre round trip and its time
// (a two-source vector op).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "device/disassembler.h"
#include "device/error.h"
#include "device/program_builder.h"
#include "device/program_io.h"
#include "device/program_verify.h"
#include "sim/lx_access.h"
#include "sim/op_cost.h"
#include "sim/vector_exec.h"
#include "sim_test_helpers.h"

namespace spyre {
namespace {

constexpr int64_t kA = 64 * 1024, kB = 96 * 1024, kDst = 0;
constexpr int kLimitReg = 5;

class IndexSelect : public ::testing::Test {
protected:
    MachineDesc m;
    std::vector<uint8_t> lx;
    int64_t regs[kNumRegs] = {};
    DeviceProgram prog;

    IndexSelect() : lx(size_t(m.lx_bytes), 0) {
        for (int64_t i = 0; i < 1024; i++) set(kA, i, int32_t(1000 + i)), set(kB, i, int32_t(-1 - i));
    }
    Instr build(bool per_group, bool scalar, int32_t sticks, int32_t groups) {
        ProgramBuilder b("t", 1);
        b.vselidx(DType::I32, 0, Lx(kDst), Lx(kA), Lx(kB), Reg{kLimitReg}, per_group, scalar, sticks, groups);
        prog = b.finish();
        return prog.code.back();
    }
    void run(const Instr &in) {
        lx_access(prog, in, regs, m, 0);
        exec_vector(in, regs, lx.data(), m);
    }
    int32_t get(int64_t off, int64_t i) const {
        int32_t v;
        std::memcpy(&v, &lx[size_t(off + 4 * i)], 4);
        return v;
    }
    void set(int64_t off, int64_t i, int32_t v) { std::memcpy(&lx[size_t(off + 4 * i)], &v, 4); }
};

TEST_F(IndexSelect, DiagonalKeepsLanesUpToTheRowPlusTheLimit) {
    regs[kLimitReg] = -3;  // a causal mask whose key tile starts 3 positions after the query tile
    run(build(true, false, 2, 8));  // 8 rows of 64 int32 lanes
    for (int64_t g = 0; g < 8; g++)
        for (int64_t e = 0; e < 64; e++)
            EXPECT_EQ(get(kDst, g * 64 + e), e <= g - 3 ? 1000 + g * 64 + e : -1 - (g * 64 + e)) << g << "," << e;
}

TEST_F(IndexSelect, FixedLimitIsTheSameForEveryRow) {
    regs[kLimitReg] = 40;
    run(build(false, false, 2, 3));
    for (int64_t g = 0; g < 3; g++)
        for (int64_t e = 0; e < 64; e++)
            EXPECT_EQ(get(kDst, g * 64 + e), e <= 40 ? 1000 + g * 64 + e : -1 - (g * 64 + e)) << g << "," << e;
}

TEST_F(IndexSelect, ScalarSecondSourceIsOneElementPerRow) {
    regs[kLimitReg] = 0;
    run(build(true, true, 1, 4));
    for (int64_t g = 0; g < 4; g++)
        for (int64_t e = 0; e < 32; e++) EXPECT_EQ(get(kDst, g * 32 + e), e <= g ? 1000 + g * 32 + e : -1 - g);
}

TEST_F(IndexSelect, LimitsOutsideTheRowTakeOneSourceWhole) {
    regs[kLimitReg] = int64_t(1) << 40;  // 64-bit register values: no overflow
    run(build(true, false, 1, 2));
    for (int64_t i = 0; i < 64; i++) EXPECT_EQ(get(kDst, i), 1000 + i);
    regs[kLimitReg] = -(int64_t(1) << 40);
    run(build(true, false, 1, 2));
    for (int64_t i = 0; i < 64; i++) EXPECT_EQ(get(kDst, i), -1 - i);
}

TEST_F(IndexSelect, LxAccessReadsOneElementPerRowOfAScalarSource) {
    regs[kLimitReg] = 0;
    Instr in = build(false, true, 1, 4);
    LxAccess acc = lx_access(prog, in, regs, m, 0);
    ASSERT_EQ(acc.num_reads, 2);
    EXPECT_EQ(acc.reads[1].end - acc.reads[1].begin, 4 * 4);  // 4 int32 values
    EXPECT_EQ(acc.writes[0].end - acc.writes[0].begin, 4 * m.stick_bytes);
}

DeviceProgram one(const Instr &in) { return simtest::one_instruction(in); }
using simtest::verify_error;

Instr vselidx(uint8_t mode, int32_t limit_reg = 3) {
    Instr in;
    in.op = Opcode::VSELIDX;
    in.dtype = uint8_t(DType::F32);
    in.mode = mode;
    in.a = {0, 0, 0, 0, 4096, 0, 8192, 2, 64, limit_reg};
    return in;
}

TEST(IndexSelectVerify, AcceptsTheDiagonalAndScalarModes) {
    EXPECT_EQ(verify_error(one(vselidx(0))), "");
    EXPECT_EQ(verify_error(one(vselidx(kLimitPerGroup | kSrc1Scalar))), "");
}

TEST(IndexSelectVerify, RejectsOtherModeBitsAndABadRegister) {
    EXPECT_EQ(verify_error(one(vselidx(kAccumulate))),
              "instruction 0 (VSELIDX): mode bits 0x2 not allowed (allowed: 0x81)");
    EXPECT_NE(verify_error(one(vselidx(0, 32))).find("instruction 0 (VSELIDX)"), std::string::npos);
}

TEST(IndexSelectVerify, RejectsASecondSourceReachingPastLx) {
    Instr in = vselidx(0);
    in.a[6] = int32_t(MachineDesc{}.lx_bytes - 4096);
    EXPECT_NE(verify_error(one(in)).find("src1 LX range"), std::string::npos) << verify_error(one(in));
    in.mode = kSrc1Scalar;  // one element per group fits
    EXPECT_EQ(verify_error(one(in)), "");
}

TEST(IndexSelectListingAndFile, RoundTripsAndShowsTheModes) {
    DeviceProgram p = one(vselidx(kLimitPerGroup | kSrc1Scalar));
    std::vector<uint8_t> bytes = serialize_program(p);
    DeviceProgram q = parse_program(bytes.data(), bytes.size());
    ASSERT_EQ(q.code.size(), 1u);
    EXPECT_EQ(q.code[0].op, Opcode::VSELIDX);
    EXPECT_EQ(q.code[0].mode, kLimitPerGroup | kSrc1Scalar);
    EXPECT_EQ(q.code[0].a, p.code[0].a);
    EXPECT_NE(disassemble(q).find("VSELIDX.f32.scalar.diag t0, [r0+0], [r0+4096], [r0+8192], 2, 64, r3"),
              std::string::npos)
        << disassemble(q);
}

TEST(IndexSelectTiming, IsATwoSourceVectorOp) {
    MachineDesc m;
    Instr sel = vselidx(0), add = sel;
    add.op = Opcode::VADD;
    add.a[9] = 0;
    EXPECT_EQ(vector_sticks(sel, m), vector_sticks(add, m));
    EXPECT_DOUBLE_EQ(vector_cycles(sel, m), vector_cycles(add, m));
}

}  // namespace
}  // namespace spyre
