// VSHIFT, the shifted stick access, VSTRIDE, the strided one, and VLSEL, the select by lane block
// (backend/device/vector_shift.h): what each edge mode reads (mirror edges against Halide's formula), the LX ranges
// the simulator checks, the verifier's and lx_access's errors, the listing, the .spyre round trip
// and its time (two source sticks streamed per stick written).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "device/disassembler.h"
#include "device/error.h"
#include "device/half.h"
#include "device/program_builder.h"
#include "device/program_io.h"
#include "device/program_verify.h"
#include "device/vector_shift.h"
#include "sim/lx_access.h"
#include "sim/op_cost.h"
#include "sim/vector_exec.h"
#include "sim_test_helpers.h"

namespace spyre {
namespace {

constexpr int64_t kShiftSrc = 64 * 1024, kShiftDst = 0;

class VShift : public ::testing::Test {
protected:
    MachineDesc m;
    std::vector<uint8_t> lx;
    int64_t regs[kNumRegs] = {};
    DeviceProgram prog;

    VShift() : lx(size_t(m.lx_bytes), 0) {}

    Instr build(const std::function<void(ProgramBuilder &)> &f) {
        ProgramBuilder b("t", 1);
        f(b);
        prog = b.finish();
        return prog.code.back();
    }
    void run(const Instr &in) {
        lx_access(prog, in, regs, m, 0);
        exec_vector(in, regs, lx.data(), m);
    }
    float h(int64_t off, int64_t i) const {
        uint16_t v;
        std::memcpy(&v, &lx[size_t(off + 2 * i)], 2);
        return half_to_float(v);
    }
    void set_h(int64_t off, int64_t i, float v) {
        uint16_t b = float_to_half(v);
        std::memcpy(&lx[size_t(off + 2 * i)], &b, 2);
    }
    // Source element i (relative to kShiftSrc) holds i + 1000, so a read is identified by its value.
    void fill_source(int64_t from, int64_t to) {
        for (int64_t i = from; i < to; i++) set_h(kShiftSrc, i, float(i + 1000));
    }
    std::string error(const std::function<void(ProgramBuilder &)> &f) {
        try {
            Instr in = build(f);
            lx_access(prog, in, regs, m, 0);
        } catch (const Error &e) {
            return e.what();
        }
        return "";
    }
};

TEST_F(VShift, PlainShiftReadsAcrossSticksAndRows) {
    fill_source(-64, 256 + 64);
    // Two groups of two sticks (rows of 128), shifted right by 3 and left by 2.
    run(build([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), 3, 2, 2); }));
    for (int64_t g = 0; g < 2; g++)
        for (int64_t j = 0; j < 128; j++) EXPECT_EQ(h(kShiftDst, g * 128 + j), float(g * 128 + j + 3 + 1000));
    run(build([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), -2, 1, 1); }));
    EXPECT_EQ(h(kShiftDst, 0), float(-2 + 1000));
    EXPECT_EQ(h(kShiftDst, 63), float(61 + 1000));
}

TEST_F(VShift, ClampRepeatsTheEdgesOfEachRow) {
    fill_source(0, 256);
    // Rows of 128 elements whose valid part is [0, 99]: repeat_edge of a 100-column tensor.
    run(build([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), -1, 2, 2, kEdgeClamp, 0, 99); }));
    for (int64_t g = 0; g < 2; g++) {
        EXPECT_EQ(h(kShiftDst, g * 128 + 0), float(g * 128 + 0 + 1000));   // clamped to the row's first
        EXPECT_EQ(h(kShiftDst, g * 128 + 1), float(g * 128 + 0 + 1000));
        EXPECT_EQ(h(kShiftDst, g * 128 + 64), float(g * 128 + 63 + 1000));  // across the stick boundary
        EXPECT_EQ(h(kShiftDst, g * 128 + 127), float(g * 128 + 99 + 1000));  // clamped to the row's last
    }
}

TEST_F(VShift, ZeroEdgeReadsZeroOutsideTheWindow) {
    fill_source(0, 128);
    run(build([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), -2, 1, 2, kEdgeZero, 0, 1000); }));
    EXPECT_EQ(h(kShiftDst, 0), 0.0f);
    EXPECT_EQ(h(kShiftDst, 1), 0.0f);
    EXPECT_EQ(h(kShiftDst, 2), 1000.0f);
    EXPECT_EQ(h(kShiftDst, 64), 0.0f);  // the second row's own edge
    EXPECT_EQ(h(kShiftDst, 66), float(64 + 1000));
}

// Halide 14's mirror_image and mirror_interior of a coordinate in [lo, lo + w), written as Halide
// lowers them (a Euclidean modulo and its reflection), to check the device's reflection against.
int64_t halide_mirror(bool interior, int64_t k, int64_t lo, int64_t w) {
    auto emod = [](int64_t a, int64_t m) { return m == 0 ? 0 : ((a % m) + m) % m; };
    if (interior) {
        const int64_t l = w - 1, c = emod(k - lo, 2 * l);
        return lo + l - std::llabs(c - l);
    }
    const int64_t c = emod(k - lo, 2 * w);
    return lo + (c < w ? c : 2 * w - 1 - c);
}

TEST(VShiftMirror, ReflectionMatchesHalidesFormulaAtAnyDistance) {
    for (bool interior : {false, true})
        for (int64_t w : {1, 2, 3, 7, 64, 100})
            for (int64_t lo : {0, -5, 13})
                for (int64_t k = lo - 5 * w - 3; k <= lo + 6 * w + 3; k++) {
                    bool zero = true;
                    const ShiftEdge e = interior ? ShiftEdge::MirrorInterior : ShiftEdge::MirrorImage;
                    EXPECT_EQ(shift_source(e, k, lo, lo + w - 1, &zero), halide_mirror(interior, k, lo, w))
                        << (interior ? "interior" : "image") << " w=" << w << " lo=" << lo << " k=" << k;
                    EXPECT_FALSE(zero);
                }
}

TEST_F(VShift, MirrorEdgesReflectAtEachRowsEnds) {
    fill_source(0, 256);
    // Rows of 128 whose valid part is [0, 99]: a read of x - 2 and of x + 3.
    run(build([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), -2, 2, 2, kEdgeMirrorImage, 0, 99); }));
    for (int64_t g = 0; g < 2; g++) {
        EXPECT_EQ(h(kShiftDst, g * 128 + 0), float(g * 128 + 1 + 1000));  // -2 reads 1
        EXPECT_EQ(h(kShiftDst, g * 128 + 1), float(g * 128 + 0 + 1000));  // -1 reads 0
        EXPECT_EQ(h(kShiftDst, g * 128 + 2), float(g * 128 + 0 + 1000));
    }
    run(build([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), 3, 2, 2, kEdgeMirrorInterior, 0, 99); }));
    for (int64_t g = 0; g < 2; g++) {
        EXPECT_EQ(h(kShiftDst, g * 128 + 96), float(g * 128 + 99 + 1000));
        EXPECT_EQ(h(kShiftDst, g * 128 + 97), float(g * 128 + 98 + 1000));  // 100 reads 98
        EXPECT_EQ(h(kShiftDst, g * 128 + 127), float(g * 128 + 68 + 1000));  // 130 reads 68
    }
}

TEST_F(VShift, MirrorReadSpanCoversTheReflections) {
    // Every lane beyond the window's top: the reflections reach down to 2 * hi - last.
    Instr in = build([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), 2, 1, 1, kEdgeMirrorImage, -62, 1); });
    const ShiftSpan s = vshift_read_span(in, 64);
    EXPECT_EQ(s.first, -62);
    EXPECT_EQ(s.last, 1);
}

TEST_F(VShift, LaneSelectTakesEvenAndOddLanesFromEachSource) {
    fill_source(0, 256);
    for (int64_t i = 0; i < 128; i++) set_h(kShiftSrc + 4096, i, float(-i));
    run(build([](ProgramBuilder &b) { b.vlsel(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), Lx(kShiftSrc + 4096), 1, 1, 2); }));
    for (int64_t e = 0; e < 128; e++) EXPECT_EQ(h(kShiftDst, e), e % 2 == 0 ? float(e + 1000) : float(-e)) << e;
    run(build([](ProgramBuilder &b) { b.vlsel(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), Lx(kShiftSrc + 4096), 32, 2, 1); }));
    for (int64_t e = 0; e < 128; e++) EXPECT_EQ(h(kShiftDst, e), (e / 32) % 2 == 0 ? float(e + 1000) : float(-e)) << e;
}

TEST(OpcodeNumbers, ReservedNumbersAreNotOpcodes) {
    EXPECT_EQ(int(Opcode::VCVTF8), 57);
    EXPECT_EQ(int(Opcode::VSELIDX), 58);
    EXPECT_EQ(int(Opcode::VLSEL), 60);
    EXPECT_FALSE(opcode_valid(59));
    EXPECT_TRUE(opcode_valid(57));
    EXPECT_TRUE(opcode_valid(58));
    Opcode op;
    EXPECT_FALSE(opcode_by_name("", &op));
    EXPECT_TRUE(opcode_by_name("VLSEL", &op));
}

TEST_F(VShift, FloatAndIntElementsShiftBitwise) {
    for (int i = -32; i < 64; i++) std::memcpy(&lx[size_t(kShiftSrc + 4 * i)], &i, 4);
    run(build([](ProgramBuilder &b) { b.vshift(DType::I32, 0, Lx(kShiftDst), Lx(kShiftSrc), -5, 1, 1); }));
    int32_t v;
    std::memcpy(&v, &lx[kShiftDst], 4);
    EXPECT_EQ(v, -5);
    std::memcpy(&v, &lx[kShiftDst + 4 * 31], 4);
    EXPECT_EQ(v, 26);
}

TEST_F(VShift, OverlappingDestinationSeesTheOldSource) {
    fill_source(0, 192);
    run(build([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(kShiftSrc), Lx(kShiftSrc), 1, 2, 1); }));
    for (int64_t j = 0; j < 128; j++) EXPECT_EQ(h(kShiftSrc, j), float(j + 1 + 1000));
}

TEST_F(VShift, LxAccessCoversOnlyTheElementsRead) {
    Instr in = build([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), -1, 2, 3); });
    LxAccess a = lx_access(prog, in, regs, m, 0);
    ASSERT_EQ(a.num_reads, 1);
    EXPECT_EQ(a.reads[0].begin, kShiftSrc - 2);
    EXPECT_EQ(a.reads[0].end, kShiftSrc + 3 * 256 - 2);
    EXPECT_EQ(a.writes[0].end - a.writes[0].begin, 3 * 256);
    in = build([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), -1, 2, 3, kEdgeClamp, 0, 99); });
    a = lx_access(prog, in, regs, m, 0);
    EXPECT_EQ(a.reads[0].begin, kShiftSrc);
    EXPECT_EQ(a.reads[0].end, kShiftSrc + 2 * (2 * 128 + 100));
}

TEST_F(VShift, LxAccessErrorsNameTheOperand) {
    EXPECT_EQ(error([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(0), Lx(0), -1, 1, 1); }),
              "instruction 0 (VSHIFT): src0 LX range [-2, 126) is outside LX (2097152 bytes)");
    EXPECT_EQ(error([](ProgramBuilder &b) { b.vshift(DType::F16, 0, Lx(0), Lx(130), 1, 1, 1); }),
              "instruction 0 (VSHIFT): src0 LX address 130 is not stick-aligned (128 bytes)");
}

// The simulator checks what the verifier checks, for a program that was not verified.
TEST_F(VShift, LxAccessRejectsBadEdgeOperands) {
    Instr in;
    in.op = Opcode::VSHIFT;
    in.dtype = uint8_t(DType::F16);
    in.a = {0, 0, 0, 0, 4096, 1, 5, 1, 1, 4};
    in.mode = kEdgeClamp | kEdgeZero;
    EXPECT_THROW(
        {
            try {
                lx_access(prog, in, regs, m, 3);
            } catch (const Error &e) {
                EXPECT_STREQ(e.what(), "instruction 3 (VSHIFT): more than one edge mode is set");
                throw;
            }
        },
        Error);
    in.mode = kEdgeZero;
    EXPECT_THROW(
        {
            try {
                lx_access(prog, in, regs, m, 3);
            } catch (const Error &e) {
                EXPECT_STREQ(e.what(), "instruction 3 (VSHIFT): edge window [5, 4] is empty");
                throw;
            }
        },
        Error);
}

DeviceProgram one(const Instr &in) { return simtest::one_instruction(in); }
using simtest::verify_error;

Instr vshift(int32_t shift, uint8_t mode, int32_t lo, int32_t hi, int32_t src = 4096) {
    Instr in;
    in.op = Opcode::VSHIFT;
    in.dtype = uint8_t(DType::F16);
    in.mode = mode;
    in.a = {0, 0, 0, 0, src, shift, lo, 1, 2, hi};
    return in;
}

TEST(VShiftVerify, AcceptsEachEdgeMode) {
    EXPECT_EQ(verify_error(one(vshift(-1, 0, 0, 0))), "");
    EXPECT_EQ(verify_error(one(vshift(-1, kEdgeClamp, 0, 99))), "");
    EXPECT_EQ(verify_error(one(vshift(2, kEdgeZero, -5, 70))), "");
    EXPECT_EQ(verify_error(one(vshift(-3, kEdgeMirrorImage, 0, 99))), "");
    EXPECT_EQ(verify_error(one(vshift(3, kEdgeMirrorInterior, 0, 99))), "");
}

TEST(VShiftVerify, RejectsBothEdgeModes) {
    EXPECT_EQ(verify_error(one(vshift(1, kEdgeClamp | kEdgeZero, 0, 9))),
              "instruction 0 (VSHIFT): more than one edge mode is set (one at most)");
    EXPECT_EQ(verify_error(one(vshift(1, kEdgeMirrorImage | kEdgeMirrorInterior, 0, 9))),
              "instruction 0 (VSHIFT): more than one edge mode is set (one at most)");
}

TEST(VShiftVerify, RejectsAnEmptyWindow) {
    EXPECT_EQ(verify_error(one(vshift(1, kEdgeClamp, 10, 9))),
              "instruction 0 (VSHIFT): edge window [10, 9] is empty (lo above hi)");
}

TEST(VShiftVerify, RejectsOtherModeBits) {
    EXPECT_EQ(verify_error(one(vshift(1, kAccumulate, 0, 0))),
              "instruction 0 (VSHIFT): mode bits 0x2 not allowed (allowed: 0x78)");
}

TEST(VShiftVerify, RejectsASourceReachingBeforeLx) {
    EXPECT_EQ(verify_error(one(vshift(-3000, 0, 0, 0))),
              "instruction 0 (VSHIFT): src0 LX range [-1904, -1648) outside LX [0, 2097152)");
}

TEST(VShiftListing, ShowsTheEdgeModeAndOperands) {
    std::string s = disassemble(one(vshift(-1, kEdgeClamp, 0, 99)));
    EXPECT_NE(s.find("VSHIFT.f16.clamp t0, [r0+0], [r0+4096], -1, 0, 1, 2, 99"), std::string::npos) << s;
    s = disassemble(one(vshift(2, kEdgeZero, 0, 99)));
    EXPECT_NE(s.find("VSHIFT.f16.zero "), std::string::npos) << s;
    s = disassemble(one(vshift(2, kEdgeMirrorImage, 0, 99)));
    EXPECT_NE(s.find("VSHIFT.f16.mirror "), std::string::npos) << s;
    s = disassemble(one(vshift(2, kEdgeMirrorInterior, 0, 99)));
    EXPECT_NE(s.find("VSHIFT.f16.mirror_interior "), std::string::npos) << s;
}

TEST(VShiftFile, RoundTripsThroughSpyreFormat) {
    DeviceProgram p = one(vshift(-7, kEdgeZero, -3, 200));
    std::vector<uint8_t> bytes = serialize_program(p);
    DeviceProgram q = parse_program(bytes.data(), bytes.size());
    ASSERT_EQ(q.code.size(), 1u);
    EXPECT_EQ(q.code[0].op, Opcode::VSHIFT);
    EXPECT_EQ(q.code[0].mode, kEdgeZero);
    EXPECT_EQ(q.code[0].a, p.code[0].a);
}

TEST(VShiftTiming, StreamsTwoSourceSticksPerStickWritten) {
    MachineDesc m;
    Instr shift = vshift(1, 0, 0, 0), copy = shift;
    copy.op = Opcode::VCOPY;
    copy.a[5] = copy.a[6] = copy.a[9] = 0;
    EXPECT_EQ(vector_sticks(shift, m), 2 * vector_sticks(copy, m));
    EXPECT_DOUBLE_EQ(vector_cycles(shift, m) - m.vec_op_overhead_cycles,
                     2 * (vector_cycles(copy, m) - m.vec_op_overhead_cycles));
}

TEST(VLselVerify, RejectsAZeroBlockAndRoundTrips) {
    Instr in;
    in.op = Opcode::VLSEL;
    in.dtype = uint8_t(DType::F32);
    in.a = {0, 0, 0, 0, 4096, 0, 8192, 1, 2, 0};
    EXPECT_NE(verify_error(one(in)).find("instruction 0 (VLSEL)"), std::string::npos);
    in.a[9] = 1;
    EXPECT_EQ(verify_error(one(in)), "");
    DeviceProgram p = one(in);
    std::vector<uint8_t> bytes = serialize_program(p);
    DeviceProgram q = parse_program(bytes.data(), bytes.size());
    ASSERT_EQ(q.code.size(), 1u);
    EXPECT_EQ(q.code[0].op, Opcode::VLSEL);
    EXPECT_EQ(q.code[0].a, in.a);
    EXPECT_NE(disassemble(q).find("VLSEL.f32 t0, [r0+0], [r0+4096], [r0+8192], 1, 2, 1"), std::string::npos)
        << disassemble(q);
}

// VSTRIDE: a downsample (every second element from the first, row by row, the rows apart by their
// own stride), a decimation by 3 from element 5, and an upsample (each element twice from 32).
TEST_F(VShift, StridedReadsEveryStepthElementOfEachRow) {
    fill_source(0, 1024);
    // Two groups of one stick; source rows 4 sticks apart; from element 1, step 2.
    run(build([](ProgramBuilder &b) { b.vstride(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), 1, 2, 1, 2, 4); }));
    for (int64_t g = 0; g < 2; g++)
        for (int64_t j = 0; j < 64; j++) EXPECT_EQ(h(kShiftDst, g * 64 + j), float(g * 256 + 1 + 2 * j + 1000)) << j;
    run(build([](ProgramBuilder &b) { b.vstride(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), 5, 3, 2, 1, 0); }));
    for (int64_t j = 0; j < 128; j++) EXPECT_EQ(h(kShiftDst, j), float(5 + 3 * j + 1000)) << j;
}

TEST_F(VShift, StridedReadsWithANegativeStepRepeatEachElement) {
    fill_source(0, 256);
    // Two groups of one stick, both reading the same row (row stride 0) from element 32: start 64
    // counts in the finer grid.
    run(build([](ProgramBuilder &b) { b.vstride(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), 64, -2, 1, 2, 0); }));
    for (int64_t g = 0; g < 2; g++)
        for (int64_t j = 0; j < 64; j++) EXPECT_EQ(h(kShiftDst, g * 64 + j), float(32 + j / 2 + 1000)) << j;
    // Start 1: in((x + 1) / 2), the first element once, then each twice; by 4 from start 3.
    run(build([](ProgramBuilder &b) { b.vstride(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), 1, -2, 1, 1, 0); }));
    for (int64_t j = 0; j < 64; j++) EXPECT_EQ(h(kShiftDst, j), float((j + 1) / 2 + 1000)) << j;
    run(build([](ProgramBuilder &b) { b.vstride(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), 3, -4, 1, 1, 0); }));
    for (int64_t j = 0; j < 64; j++) EXPECT_EQ(h(kShiftDst, j), float((j + 3) / 4 + 1000)) << j;
}

TEST_F(VShift, StridedReadLxAccessCoversTheRowsItReads) {
    Instr in = build([](ProgramBuilder &b) { b.vstride(DType::F16, 0, Lx(kShiftDst), Lx(kShiftSrc), 1, 2, 1, 3, 2); });
    LxAccess a = lx_access(prog, in, regs, m, 0);
    ASSERT_EQ(a.num_reads, 1);
    // Rows at 0, 128 and 256 elements; the last reads up to 256 + 1 + 2 * 63 = 383.
    EXPECT_EQ(a.reads[0].begin, kShiftSrc + 2);
    EXPECT_EQ(a.reads[0].end, kShiftSrc + 2 * 384);
    // The simulator checks what the verifier checks, for a program that was not verified.
    auto direct = [&](int32_t start, int32_t step, int32_t row) {
        Instr bad = in;
        bad.a[5] = start, bad.a[6] = step, bad.a[9] = row;
        try {
            lx_access(prog, bad, regs, m, 3);
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_EQ(direct(0, 1, 0), "instruction 3 (VSTRIDE): step 1 is not between 2 and 64 (a downsample) or between -64 and -2 (an upsample)");
    EXPECT_EQ(direct(-1, 2, 0), "instruction 3 (VSTRIDE): first element -1 is before the source (it counts from it)");
    EXPECT_EQ(direct(0, 2, -1), "instruction 3 (VSTRIDE): source row stride -1 is negative");
    // The source may start at any element, not only on a stick.
    Instr odd = in;
    odd.a[4] += 2;
    EXPECT_EQ(lx_access(prog, odd, regs, m, 0).reads[0].begin, kShiftSrc + 4);
}

Instr vstride(int32_t start, int32_t step, int32_t row, int32_t src = 4096) {
    Instr in;
    in.op = Opcode::VSTRIDE;
    in.dtype = uint8_t(DType::F16);
    in.a = {0, 0, 0, 0, src, start, step, 1, 2, row};
    return in;
}

TEST(VStrideVerify, RejectsStepsItDoesNotTakeAndReadsPastLx) {
    EXPECT_EQ(verify_error(one(vstride(1, 2, 2))), "");
    EXPECT_EQ(verify_error(one(vstride(0, -64, 0))), "");
    for (int step : {0, 1, -1, 65, -65})
        EXPECT_EQ(verify_error(one(vstride(0, step, 2))),
                  "instruction 0 (VSTRIDE): step " + std::to_string(step) +
                      " is not between 2 and 64 (a downsample) or between -64 and -2 (an upsample)");
    EXPECT_EQ(verify_error(one(vstride(-3, 2, 2))), "instruction 0 (VSTRIDE): first element -3 is before the source (it counts from it)");
    EXPECT_NE(verify_error(one(vstride(0, 2, 1 << 20))).find("instruction 0 (VSTRIDE): src0 LX range"), std::string::npos);
    Instr bad = vstride(1, 2, 2);
    bad.mode = kEdgeClamp;
    EXPECT_NE(verify_error(one(bad)).find("mode bits 0x8 not allowed"), std::string::npos);
}

TEST(VStrideFile, RoundTripsAndListsItsOperands) {
    DeviceProgram p = one(vstride(3, -4, 5));
    std::vector<uint8_t> bytes = serialize_program(p);
    DeviceProgram q = parse_program(bytes.data(), bytes.size());
    ASSERT_EQ(q.code.size(), 1u);
    EXPECT_EQ(q.code[0].op, Opcode::VSTRIDE);
    EXPECT_EQ(q.code[0].a, p.code[0].a);
    EXPECT_NE(disassemble(q).find("VSTRIDE.f16 t0, [r0+0], [r0+4096], 3, -4, 1, 2, 5"), std::string::npos)
        << disassemble(q);
}

// A downsample by 2 streams two source sticks per stick written, a decimation by 3 three, an
// upsample one per stick written.
TEST(VStrideTiming, StreamsTheSourceSticksItsRowsSpan) {
    MachineDesc m;
    Instr copy = vstride(0, 2, 2);
    copy.op = Opcode::VCOPY;
    copy.a[5] = copy.a[6] = copy.a[9] = 0;
    EXPECT_EQ(vector_sticks(vstride(0, 2, 2), m), 2 * vector_sticks(copy, m));
    EXPECT_EQ(vector_sticks(vstride(2, 3, 3), m), 3 * vector_sticks(copy, m));
    EXPECT_EQ(vector_sticks(vstride(64, -2, 0), m), vector_sticks(copy, m));
}

}  // namespace
}  // namespace spyre
