// VCMPLT, VCMPLE, VCMPEQ (element-wise comparisons into 1/0 masks) and VSELM (a select by the mask
// held in its destination): their results in fp16, fp32 and int32 (NaN compares false, a -0.0 mask
// selects src1), one src1 element per group, the LX ranges (VSELM reads its destination), the
// verifier's mode bits, the listing and the .spyre round trip, and their time (two-source vector ops).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "device/disassembler.h"
#include "device/half.h"
#include "device/program_builder.h"
#include "device/program_io.h"
#include "device/program_verify.h"
#include "sim/lx_access.h"
#include "sim/vector_exec.h"

namespace spyre {
namespace {

constexpr int64_t kMaskA = 64 * 1024, kMaskB = 96 * 1024, kMaskDst = 0;

class MaskSelect : public ::testing::Test {
protected:
    MachineDesc m;
    std::vector<uint8_t> lx;
    int64_t regs[kNumRegs] = {};
    DeviceProgram prog;

    MaskSelect() : lx(size_t(m.lx_bytes), 0) {}
    void run(Opcode op, DType t, int32_t sticks, int32_t groups, uint8_t mode = 0) {
        ProgramBuilder b("t", 1);
        b.vbin(op, t, 0, Lx(kMaskDst), Lx(kMaskA), Lx(kMaskB), sticks, groups, mode);
        prog = b.finish();
        verify_program(prog);
        lx_access(prog, prog.code.back(), regs, m, 0);
        exec_vector(prog.code.back(), regs, lx.data(), m);
    }
    float f32(int64_t off, int64_t i) const {
        float v;
        std::memcpy(&v, &lx[size_t(off + 4 * i)], 4);
        return v;
    }
    void set_f32(int64_t off, int64_t i, float v) { std::memcpy(&lx[size_t(off + 4 * i)], &v, 4); }
    float f16(int64_t off, int64_t i) const {
        uint16_t h;
        std::memcpy(&h, &lx[size_t(off + 2 * i)], 2);
        return half_to_float(h);
    }
    void set_f16(int64_t off, int64_t i, float v) {
        const uint16_t h = float_to_half(v);
        std::memcpy(&lx[size_t(off + 2 * i)], &h, 2);
    }
    int32_t i32(int64_t off, int64_t i) const {
        int32_t v;
        std::memcpy(&v, &lx[size_t(off + 4 * i)], 4);
        return v;
    }
    void set_i32(int64_t off, int64_t i, int32_t v) { std::memcpy(&lx[size_t(off + 4 * i)], &v, 4); }
};

TEST_F(MaskSelect, ComparisonsGiveOneWhereTheyHoldAndNaNComparesFalse) {
    const float nan = std::nanf("");
    const std::vector<std::pair<float, float>> pairs = {{1, 2}, {2, 2}, {3, 2}, {nan, 1}, {1, nan}, {-0.0f, 0.0f}};
    for (Opcode op : {Opcode::VCMPLT, Opcode::VCMPLE, Opcode::VCMPEQ}) {
        for (size_t i = 0; i < 32; i++) {
            set_f32(kMaskA, int64_t(i), pairs[i % pairs.size()].first);
            set_f32(kMaskB, int64_t(i), pairs[i % pairs.size()].second);
        }
        run(op, DType::F32, 1, 1);
        for (size_t i = 0; i < 32; i++) {
            const float a = pairs[i % pairs.size()].first, b = pairs[i % pairs.size()].second;
            const bool want = op == Opcode::VCMPLT ? a < b : op == Opcode::VCMPLE ? a <= b : a == b;
            EXPECT_EQ(f32(kMaskDst, int64_t(i)), want ? 1.0f : 0.0f) << op_info(op).name << " " << a << " " << b;
        }
    }
}

TEST_F(MaskSelect, ComparisonWithOneElementPerGroupInFp16AndInt32) {
    for (int64_t g = 0; g < 3; g++) {
        set_f16(kMaskB, g, float(g * 10));
        set_i32(kMaskB + 4096, g, int32_t(g * 10));
        for (int64_t e = 0; e < 64; e++) set_f16(kMaskA, g * 64 + e, float(e));
    }
    run(Opcode::VCMPLT, DType::F16, 1, 3, kSrc1Scalar);
    for (int64_t g = 0; g < 3; g++)
        for (int64_t e = 0; e < 64; e++) EXPECT_EQ(f16(kMaskDst, g * 64 + e), e < g * 10 ? 1.0f : 0.0f);
    for (int64_t i = 0; i < 32; i++) set_i32(kMaskA, i, int32_t(i - 16)), set_i32(kMaskB, i, 0);
    run(Opcode::VCMPLE, DType::I32, 1, 1);
    for (int64_t i = 0; i < 32; i++) EXPECT_EQ(i32(kMaskDst, i), i - 16 <= 0 ? 1 : 0);
}

TEST_F(MaskSelect, SelectTakesSrc0WhereTheMaskIsNonzero) {
    for (int64_t i = 0; i < 64; i++) {
        set_f16(kMaskDst, i, i % 3 == 0 ? 1.0f : i % 3 == 1 ? 0.0f : -0.0f);  // -0.0 is a zero mask
        set_f16(kMaskA, i, float(100 + i));
        set_f16(kMaskB, i, float(-i));
    }
    run(Opcode::VSELM, DType::F16, 1, 1);
    for (int64_t i = 0; i < 64; i++) EXPECT_EQ(f16(kMaskDst, i), i % 3 == 0 ? float(100 + i) : float(-i)) << i;
    // One src1 element per group, int32.
    for (int64_t g = 0; g < 2; g++) {
        set_i32(kMaskB, g, int32_t(-7 - g));
        for (int64_t e = 0; e < 32; e++) set_i32(kMaskDst, g * 32 + e, e % 2), set_i32(kMaskA, g * 32 + e, int32_t(e));
    }
    run(Opcode::VSELM, DType::I32, 1, 2, kSrc1Scalar);
    for (int64_t g = 0; g < 2; g++)
        for (int64_t e = 0; e < 32; e++) EXPECT_EQ(i32(kMaskDst, g * 32 + e), e % 2 ? int32_t(e) : int32_t(-7 - g));
}

TEST_F(MaskSelect, SelectReadsItsDestinationAndTheVerifierChecksModes) {
    ProgramBuilder b("t", 1);
    b.vbin(Opcode::VSELM, DType::F32, 0, Lx(kMaskDst), Lx(kMaskA), Lx(kMaskB), 2, 3);
    DeviceProgram p = b.finish();
    const LxAccess acc = lx_access(p, p.code.back(), regs, m, 0);
    bool reads_dst = false;
    for (int i = 0; i < acc.num_reads; i++) reads_dst = reads_dst || acc.reads[size_t(i)].begin == kMaskDst;
    EXPECT_TRUE(reads_dst) << "the mask is read from the destination";
    p.code.back().mode = kAccumulate;
    try {
        verify_program(p);
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("mode bits"), std::string::npos) << e.what();
    }
}

TEST_F(MaskSelect, ListingAndFileRoundTrip) {
    ProgramBuilder b("t", 1);
    b.vbin(Opcode::VCMPEQ, DType::F16, 0, Lx(kMaskDst), Lx(kMaskA), Lx(kMaskB), 1, 2, kSrc1Scalar);
    b.vbin(Opcode::VSELM, DType::F16, 0, Lx(kMaskDst), Lx(kMaskA), Lx(kMaskB), 1, 2);
    const DeviceProgram p = b.finish();
    const std::string text = disassemble(p);
    EXPECT_NE(text.find("VCMPEQ"), std::string::npos) << text;
    EXPECT_NE(text.find("VSELM"), std::string::npos) << text;
    const std::vector<uint8_t> bytes = serialize_program(p);
    const DeviceProgram q = parse_program(bytes.data(), bytes.size());
    EXPECT_EQ(serialize_program(q), bytes);
}

}  // namespace
}  // namespace spyre
