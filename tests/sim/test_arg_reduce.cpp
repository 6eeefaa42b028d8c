// VREDARGMAX and VREDARGMIN (isa.h): each group's first extreme element and its lane index, compared
// with and written over the running value and index (so a row split over several instructions, or
// a Halide initial value, carries on); ties keep the first; NaN never wins; the valid-element count;
// both LX writes seen by the race check; the verifier, the listing and the .spyre round trip; the
// time of a reduction.
#include <gtest/gtest.h>

#include <cmath>
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

constexpr int64_t kArgSrc = 64 * 1024, kArgVal = 0, kArgIdx = 4096;

class ArgReduce : public ::testing::Test {
protected:
    MachineDesc m;
    std::vector<uint8_t> lx;
    int64_t regs[kNumRegs] = {};
    DeviceProgram prog;

    ArgReduce() : lx(size_t(m.lx_bytes), 0) {}
    void run(Opcode op, DType t, int32_t sticks, int32_t groups, int32_t valid = 0, int64_t src = kArgSrc) {
        ProgramBuilder b("t", 1);
        b.vargred(op, t, 0, Lx(kArgVal), Lx(src), Lx(kArgIdx), sticks, groups, valid);
        prog = b.finish();
        lx_access(prog, prog.code.back(), regs, m, 0);
        exec_vector(prog.code.back(), regs, lx.data(), m);
    }
    void set_f32(int64_t off, int64_t i, float v) { std::memcpy(&lx[size_t(off + 4 * i)], &v, 4); }
    void set_i32(int64_t off, int64_t i, int32_t v) { std::memcpy(&lx[size_t(off + 4 * i)], &v, 4); }
    void set_f16(int64_t off, int64_t i, float v) {
        uint16_t h = float_to_half(v);
        std::memcpy(&lx[size_t(off + 2 * i)], &h, 2);
    }
    float f32(int64_t off, int64_t i) const {
        float v;
        std::memcpy(&v, &lx[size_t(off + 4 * i)], 4);
        return v;
    }
    int32_t i32(int64_t off, int64_t i) const {
        int32_t v;
        std::memcpy(&v, &lx[size_t(off + 4 * i)], 4);
        return v;
    }
    float f16(int64_t off, int64_t i) const {
        uint16_t h;
        std::memcpy(&h, &lx[size_t(off + 2 * i)], 2);
        return half_to_float(h);
    }
};

TEST_F(ArgReduce, FirstOfEqualMaximaWinsInEveryGroup) {
    // 3 groups of 32 f32 lanes: group g holds its maximum 5 + g at lanes 7 and 20.
    for (int g = 0; g < 3; g++) {
        set_f32(kArgVal, g, -1e30f);
        for (int e = 0; e < 32; e++) set_f32(kArgSrc, g * 32 + e, float(e % 5));
        set_f32(kArgSrc, g * 32 + 7, 5.0f + float(g));
        set_f32(kArgSrc, g * 32 + 20, 5.0f + float(g));
    }
    run(Opcode::VREDARGMAX, DType::F32, 1, 3);
    for (int g = 0; g < 3; g++) {
        EXPECT_EQ(i32(kArgIdx, g), 7) << g;
        EXPECT_EQ(f32(kArgVal, g), 5.0f + float(g)) << g;
    }
}

TEST_F(ArgReduce, ARunningValueNoElementBeatsKeepsItsIndex) {
    // Halide's initial state (index 0, the lowest value) and a row that never beats it; then a
    // second instruction over the same row from a running value it does beat.
    set_f32(kArgVal, 0, 10.0f);
    set_i32(kArgIdx, 0, 99);
    for (int e = 0; e < 32; e++) set_f32(kArgSrc, e, float(e % 10));
    run(Opcode::VREDARGMAX, DType::F32, 1, 1);
    EXPECT_EQ(i32(kArgIdx, 0), 99);
    EXPECT_EQ(f32(kArgVal, 0), 10.0f);
    set_f32(kArgVal, 0, 9.0f);  // equal to the maximum: strict comparison keeps the running index
    run(Opcode::VREDARGMAX, DType::F32, 1, 1);
    EXPECT_EQ(i32(kArgIdx, 0), 99);
    set_f32(kArgVal, 0, 8.5f);
    run(Opcode::VREDARGMAX, DType::F32, 1, 1);
    EXPECT_EQ(i32(kArgIdx, 0), 9);
    EXPECT_EQ(f32(kArgVal, 0), 9.0f);
}

TEST_F(ArgReduce, ArgminOfHalvesStopsAtTheValidElements) {
    // 2 sticks of f16 per group (128 lanes), 100 valid: the padding's -100 is not seen.
    set_f16(kArgVal, 0, 65504.0f);
    for (int e = 0; e < 128; e++) set_f16(kArgSrc, e, e < 100 ? float((e * 37) % 101) / 4.0f : -100.0f);
    run(Opcode::VREDARGMIN, DType::F16, 2, 1, 100);
    int want = 0;
    for (int e = 1; e < 100; e++)
        if ((e * 37) % 101 < (want * 37) % 101) want = e;
    EXPECT_EQ(i32(kArgIdx, 0), want);
    EXPECT_EQ(f16(kArgVal, 0), float((want * 37) % 101) / 4.0f);
}

TEST_F(ArgReduce, NanNeverWinsAndIntegersCompareExactly) {
    set_f32(kArgVal, 0, -1e30f);
    for (int e = 0; e < 32; e++) set_f32(kArgSrc, e, e == 3 ? std::nanf("") : float(e == 12));
    run(Opcode::VREDARGMAX, DType::F32, 1, 1);
    EXPECT_EQ(i32(kArgIdx, 0), 12);
    // int32 values 2^31 - 1 and 2^31 - 2 (not exact in a float): the larger is found.
    set_i32(kArgVal, 0, INT32_MIN);
    set_i32(kArgIdx, 0, 0);
    for (int e = 0; e < 32; e++) set_i32(kArgSrc, e, e == 5 ? INT32_MAX - 1 : e == 6 ? INT32_MAX : 0);
    run(Opcode::VREDARGMAX, DType::I32, 1, 1);
    EXPECT_EQ(i32(kArgIdx, 0), 6);
    EXPECT_EQ(i32(kArgVal, 0), INT32_MAX);
}

TEST_F(ArgReduce, LxAccessReadsAndWritesBothRunningVectors) {
    ProgramBuilder b("t", 1);
    b.vargred(Opcode::VREDARGMAX, DType::F16, 0, Lx(kArgVal), Lx(kArgSrc), Lx(kArgIdx), 2, 5);
    prog = b.finish();
    LxAccess acc = lx_access(prog, prog.code.back(), regs, m, 0);
    ASSERT_EQ(acc.num_reads, 3);
    ASSERT_EQ(acc.num_writes, 2);
    EXPECT_EQ(acc.reads[0].end - acc.reads[0].begin, 10 * m.stick_bytes);
    EXPECT_EQ(acc.writes[0].begin, kArgVal);
    EXPECT_EQ(acc.writes[0].end, kArgVal + 5 * 2);  // 5 f16 values
    EXPECT_EQ(acc.writes[1].begin, kArgIdx);
    EXPECT_EQ(acc.writes[1].end, kArgIdx + 5 * 4);  // 5 int32 indices
}

Instr argmax_instr(DType t = DType::F16) {
    Instr in;
    in.op = Opcode::VREDARGMAX;
    in.dtype = uint8_t(t);
    in.a = {0, 0, 0, 0, 8192, 0, 4096, 2, 64, 100};
    return in;
}

TEST(ArgReduceVerify, AcceptsFloatsAndIntegersAndRefusesModesAndOtherTypes) {
    using simtest::one_instruction;
    using simtest::verify_error;
    EXPECT_EQ(verify_error(one_instruction(argmax_instr())), "");
    Instr ints = argmax_instr(DType::I32);
    ints.a[9] = 64;  // 2 int32 sticks hold 64 lanes
    EXPECT_EQ(verify_error(one_instruction(ints)), "");
    Instr acc = argmax_instr();
    acc.mode = kAccumulate;
    EXPECT_EQ(verify_error(one_instruction(acc)), "instruction 0 (VREDARGMAX): mode bits 0x2 not allowed (allowed: 0x0)");
    EXPECT_NE(verify_error(one_instruction(argmax_instr(DType::I8))).find("element type i8 not supported"),
              std::string::npos);
    Instr wide = argmax_instr();
    wide.a[9] = 129;  // 2 f16 sticks hold 128 lanes
    EXPECT_NE(verify_error(one_instruction(wide)).find("valid element count 129 exceeds the 128 lanes"),
              std::string::npos);
    Instr far = argmax_instr();
    far.a[6] = int32_t(MachineDesc{}.lx_bytes - 8);  // 64 int32 indices do not fit in 8 bytes
    EXPECT_NE(verify_error(one_instruction(far)).find("indices LX range"), std::string::npos)
        << verify_error(one_instruction(far));
}

TEST(ArgReduceListingAndFile, RoundTripsAndNamesTheOperands) {
    DeviceProgram p = simtest::one_instruction(argmax_instr());
    std::vector<uint8_t> bytes = serialize_program(p);
    DeviceProgram q = parse_program(bytes.data(), bytes.size());
    ASSERT_EQ(q.code.size(), 1u);
    EXPECT_EQ(q.code[0].op, Opcode::VREDARGMAX);
    EXPECT_EQ(q.code[0].a, p.code[0].a);
    EXPECT_NE(disassemble(q).find("VREDARGMAX.f16 t0, [r0+0], [r0+8192], [r0+4096], 2, 64, 100"), std::string::npos)
        << disassemble(q);
}

TEST(ArgReduceTiming, IsPricedAsAReduction) {
    MachineDesc m;
    Instr arg = argmax_instr(), red = arg;
    red.op = Opcode::VREDMAX;
    red.a[5] = red.a[6] = 0;
    EXPECT_DOUBLE_EQ(vector_cycles(arg, m), vector_cycles(red, m));
}

}  // namespace
}  // namespace spyre
