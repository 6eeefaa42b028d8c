#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "device/error.h"
#include "device/machine_desc.h"
#include "device/program_builder.h"
#include "device/program_verify.h"

using namespace spyre;
using ::testing::HasSubstr;

namespace {

// Program used as the base of every rejection: each test breaks one thing.
//   0 CORE_ID r1
//   1 LOOP r2, r0, 4
//   2   DMA_LD t0, x[r0+0], [r0+0], dma#0
//   3   WAIT {t0}
//   4   VADD.f16 t1, [r0+4096], [r0+0], [r0+0], 4, 4
//   5   WAIT {t1}
//   6   DMA_ST t2, y[r0+0], [r0+4096], dma#0
//   7   WAIT {t2}
//   8 ENDLOOP
//   9 MATMUL.f16 t3, [r0+8192], [r0+0], [r0+16384], mm#0
//  10 WAIT {t3}
//  11 BARRIER
DeviceProgram base_program() {
    ProgramBuilder b("base", 4);
    int x = b.buffer("x", BufferKind::Input, DType::F16, {256, 4});  // 4 rows of 4 sticks: 2048 bytes
    int y = b.buffer("y", BufferKind::Output, DType::F16, {256, 4});
    int d = b.dma_desc(DmaDesc{4, {4, 1, 1}, {512, 0, 0}, {512, 0, 0}});
    int m = b.mm_desc(MatmulDesc{2, 64, 64, 128, 128, 256});
    Reg c = b.alloc(), i = b.alloc();
    b.core_id(c);
    b.loop(i, 4);
    b.dma_ld(0, x, kZero, 0, Lx(0), d);
    b.wait_tag(0);
    b.vbin(Opcode::VADD, DType::F16, 1, Lx(4096), Lx(0), Lx(0), 4, 4);
    b.wait_tag(1);
    b.dma_st(2, y, kZero, 0, Lx(4096), d);
    b.wait_tag(2);
    b.end_loop();
    b.matmul(3, Lx(8192), Lx(0), Lx(16384), m, false);
    b.wait_tag(3);
    b.barrier();
    return b.finish();
}

constexpr size_t kVadd = 4, kDmaLd = 2, kDmaSt = 6, kMatmul = 9, kLoop = 1, kEndLoop = 8;

Instr instr(Opcode op, std::initializer_list<int32_t> a, DType t = DType::F16, uint8_t mode = 0) {
    Instr in;
    in.op = op;
    in.dtype = uint8_t(t);
    in.mode = mode;
    int s = 0;
    for (int32_t v : a) in.a[size_t(s++)] = v;
    return in;
}

std::string verify_error(const DeviceProgram &p) {
    try {
        verify_program(p);
    } catch (const Error &e) {
        return e.what();
    }
    ADD_FAILURE() << "verify_program accepted the program";
    return "";
}

std::string machine_error(const DeviceProgram &p, const MachineDesc &m = MachineDesc{}) {
    try {
        verify_for_machine(p, m);
    } catch (const Error &e) {
        return e.what();
    }
    ADD_FAILURE() << "verify_for_machine accepted the program";
    return "";
}

// Applies `change` to a copy of the base program and returns verify_program's message.
std::string broken(const std::function<void(DeviceProgram &)> &change) {
    DeviceProgram p = base_program();
    change(p);
    return verify_error(p);
}

TEST(ProgramVerify, BaseProgramIsValid) {
    DeviceProgram p = base_program();
    EXPECT_NO_THROW(verify_program(p));
    EXPECT_NO_THROW(verify_for_machine(p, MachineDesc{}));
}

// --- header ---

TEST(ProgramVerify, RejectsBadKernelName) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.kernel_name = ""; }), HasSubstr("kernel name is empty"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.kernel_name = "a\nb"; }), HasSubstr("non-printable"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.kernel_name = std::string(257, 'k'); }),
                HasSubstr("kernel name is 257 bytes long"));
    DeviceProgram p = base_program();
    p.kernel_name = std::string(256, 'k');
    EXPECT_NO_THROW(verify_program(p));
}

TEST(ProgramVerify, RejectsBadCoreCount) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.num_cores = 0; }), HasSubstr("num_cores 0 out of range 1..1024"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.num_cores = 1025; }), HasSubstr("num_cores 1025 out of range"));
}

// A RING_REDUCE over groups must tile the cores: groups of size x stride cores, whole.
TEST(ProgramVerify, RejectsRingReduceGroupsThatDoNotTileTheCores) {
    auto with_reduce = [](int32_t size, int32_t stride) {
        return broken([&](DeviceProgram &p) {
            p.code.insert(p.code.begin() + 1, instr(Opcode::RING_REDUCE, {5, 0, 0, 0, 1, size, stride}));
        });
    };
    EXPECT_THAT(with_reduce(3, 0), HasSubstr("instruction 1 (RING_REDUCE): groups of 3 cores 1 apart do not tile the "
                                             "program's 4 cores"));
    EXPECT_THAT(with_reduce(2, 4), HasSubstr("groups of 2 cores 4 apart do not tile"));
    EXPECT_THAT(with_reduce(-1, 0), HasSubstr("operand 5 count -1 must be >= 0"));
    for (auto [size, stride] : std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {4, 0}, {2, 1}, {2, 2}, {1, 4}}) {
        DeviceProgram p = base_program();
        p.code.insert(p.code.begin() + 1, instr(Opcode::RING_REDUCE, {5, 0, 0, 0, 1, size, stride}));
        EXPECT_NO_THROW(verify_program(p)) << size << " x " << stride;
    }
}

// --- operands ---

TEST(ProgramVerify, RejectsBadRegister) {
    EXPECT_EQ(broken([](DeviceProgram &p) { p.code[kVadd].a[3] = 40; }),
              "instruction 4 (VADD): operand 3 register 40 out of range 0..31");
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kVadd].a[1] = -1; }),
                HasSubstr("instruction 4 (VADD): operand 1 register -1 out of range 0..31"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[0].a[0] = 32; }),
                HasSubstr("instruction 0 (CORE_ID): operand 0 register 32 out of range 1..31"));
}

TEST(ProgramVerify, RejectsWriteToR0) {
    EXPECT_EQ(broken([](DeviceProgram &p) { p.code[0].a[0] = 0; }),
              "instruction 0 (CORE_ID): operand 0 register r0 is not writable");
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kLoop].a[0] = 0; }),
                HasSubstr("instruction 1 (LOOP): operand 0 register r0 is not writable"));
}

TEST(ProgramVerify, RejectsBadTag) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kVadd].a[0] = 16; }),
                HasSubstr("instruction 4 (VADD): operand 0 tag 16 out of range 0..15"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kDmaLd].a[0] = -1; }),
                HasSubstr("instruction 2 (DMA_LD): operand 0 tag -1"));
}

TEST(ProgramVerify, RejectsBadTagMask) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[3].a[0] = 0; }),
                HasSubstr("instruction 3 (WAIT): operand 0 tag mask 0x0 out of range 0x1..0xffff"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[3].a[0] = 0x10000; }),
                HasSubstr("tag mask 0x10000 out of range"));
}

TEST(ProgramVerify, RejectsZeroCount) {
    EXPECT_EQ(broken([](DeviceProgram &p) { p.code[kVadd].a[7] = 0; }),
              "instruction 4 (VADD): operand 7 count 0 must be >= 1");
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kLoop].a[2] = -1; }),
                HasSubstr("instruction 1 (LOOP): operand 2 count -1 must be >= 0"));
    DeviceProgram p = base_program();
    p.code[kLoop].a[2] = 0;  // CountOpt: a zero-trip loop is fine
    EXPECT_NO_THROW(verify_program(p));
}

TEST(ProgramVerify, RejectsNonZeroUnusedSlot) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kVadd].a[9] = 1; }),
                HasSubstr("instruction 4 (VADD): operand 9 is unused and must be 0, got 1"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[11].a[0] = 5; }),
                HasSubstr("instruction 11 (BARRIER): operand 0 is unused"));
}

TEST(ProgramVerify, RejectsBadBufferIndex) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kDmaLd].a[1] = 2; }),
                HasSubstr("instruction 2 (DMA_LD): operand 1 buffer index 2 out of range (program has 2 buffers)"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kDmaLd].a[1] = -1; }), HasSubstr("buffer index -1"));
}

TEST(ProgramVerify, RejectsBadDescriptorIndex) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kDmaSt].a[6] = 1; }),
                HasSubstr("instruction 6 (DMA_ST): operand 6 dma descriptor index 1 out of range"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kMatmul].a[7] = 3; }),
                HasSubstr("instruction 9 (MATMUL): operand 7 matmul descriptor index 3 out of range"));
}

TEST(ProgramVerify, RejectsBadRingOperands) {
    DeviceProgram p = base_program();
    p.code.push_back(instr(Opcode::RING_SEND, {0, 0, 0, 0, 1}, DType::F16));
    EXPECT_THAT(verify_error(p), HasSubstr("instruction 12 (RING_SEND): operand 1 ring direction 0 must be +1 or -1"));
    p.code.back() = instr(Opcode::RING_REDUCE, {0, 3, 0, 0, 1}, DType::F32);
    EXPECT_THAT(verify_error(p), HasSubstr("instruction 12 (RING_REDUCE): operand 1 reduction op 3 out of range 0..2"));
    p.code.back() = instr(Opcode::RING_REDUCE, {0, 2, 0, 0, 1}, DType::F32);
    EXPECT_NO_THROW(verify_program(p));
}

TEST(ProgramVerify, RejectsUnknownOpcode) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[3].op = Opcode(999); }),
                HasSubstr("instruction 3: unknown opcode 999"));
}

// --- types and modes ---

TEST(ProgramVerify, RejectsBadDtypeForOp) {
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code[kVadd].op = Opcode::VDIV;  // integer division has no vector form
                    p.code[kVadd].dtype = uint8_t(DType::I32);
                }),
                HasSubstr("instruction 4 (VDIV): element type i32 not supported (f16 or f32 only)"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kVadd].dtype = 9; }),
                HasSubstr("instruction 4 (VADD): invalid element type 9"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kMatmul].dtype = uint8_t(DType::F32); }),
                HasSubstr("instruction 9 (MATMUL): element type f32 not supported (f16 or i8 only)"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kDmaLd].dtype = 1; }),
                HasSubstr("instruction 2 (DMA_LD): dtype field must be 0, got 1"));
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code.push_back(instr(Opcode::VEXP, {0, 0, 0, 0, 0, 0, 0, 1, 1}, DType::I32));
                }),
                HasSubstr("instruction 12 (VEXP): element type i32 not supported (f16 or f32 only)"));
    // Bytes are storage only: no arithmetic, no rounding.
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kVadd].dtype = uint8_t(DType::I8); }),
                HasSubstr("instruction 4 (VADD): element type i8 not supported (f16, f32 or i32 only)"));
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code.push_back(instr(Opcode::VROUND, {0, 0, 0, 0, 0, 0, 0, 1, 1}, DType::U8));
                }),
                HasSubstr("instruction 12 (VROUND): element type u8 not supported (f16 or f32 only)"));
    // Integer arithmetic and reductions (and the ring reduction) take int32.
    DeviceProgram ints = base_program();
    ints.code[kVadd].dtype = uint8_t(DType::I32);
    ints.code.push_back(instr(Opcode::RING_REDUCE, {0, 0, 0, 0, 1}, DType::I32));
    EXPECT_NO_THROW(verify_program(ints));
    // Data movement accepts any type.
    DeviceProgram p = base_program();
    p.code[kVadd] = instr(Opcode::VCOPY, {1, 0, 4096, 0, 0, 0, 0, 4, 4}, DType::I32);
    EXPECT_NO_THROW(verify_program(p));
    p.code[kVadd] = instr(Opcode::VCVT, {1, 0, 4096, 0, 0, 0, 0, 4, 4, int32_t(DType::F16)}, DType::I8);
    EXPECT_NO_THROW(verify_program(p));
}

TEST(ProgramVerify, RejectsVcvtToSameType) {
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code[kVadd] = instr(Opcode::VCVT, {1, 0, 4096, 0, 0, 0, 0, 4, 1, int32_t(DType::F32)}, DType::F32);
                }),
                HasSubstr("instruction 4 (VCVT): source and destination type are both f32"));
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code[kVadd] = instr(Opcode::VCVT, {1, 0, 4096, 0, 0, 0, 0, 4, 1, 7}, DType::F32);
                }),
                HasSubstr("instruction 4 (VCVT): operand 9 element type 7 is not a valid dtype"));
}

// VCVTF8 goes between u8 fp8 codes and f16 or f32, in format 0 (e4m3) or 1 (e5m2).
TEST(ProgramVerify, RejectsFp8ConversionsOfOtherTypesAndUnknownFormats) {
    auto fp8 = [](DType from, DType to, int32_t fmt) {
        return instr(Opcode::VCVTF8, {1, 0, 4096, 0, 0, fmt, 0, 2, 1, int32_t(to)}, from);
    };
    DeviceProgram ok = base_program();
    ok.code[kVadd] = fp8(DType::F16, DType::U8, 0);
    EXPECT_NO_THROW(verify_program(ok));
    ok.code[kVadd] = fp8(DType::U8, DType::F32, 1);
    EXPECT_NO_THROW(verify_program(ok));
    EXPECT_THAT(broken([&](DeviceProgram &p) { p.code[kVadd] = fp8(DType::I8, DType::F16, 0); }),
                HasSubstr("instruction 4 (VCVTF8): element type i8 not supported (u8 fp8 codes, f16 or f32 only)"));
    EXPECT_THAT(broken([&](DeviceProgram &p) { p.code[kVadd] = fp8(DType::F16, DType::I8, 0); }),
                HasSubstr("instruction 4 (VCVTF8): converts f16 to i8; an fp8 conversion goes between u8 codes and "
                          "f16 or f32"));
    EXPECT_THAT(broken([&](DeviceProgram &p) { p.code[kVadd] = fp8(DType::F16, DType::F32, 0); }),
                HasSubstr("instruction 4 (VCVTF8): converts f16 to f32"));
    EXPECT_THAT(broken([&](DeviceProgram &p) { p.code[kVadd] = fp8(DType::U8, DType::U8, 1); }),
                HasSubstr("instruction 4 (VCVTF8): converts u8 to u8"));
    EXPECT_THAT(broken([&](DeviceProgram &p) { p.code[kVadd] = fp8(DType::F16, DType::U8, 2); }),
                HasSubstr("instruction 4 (VCVTF8): operand 5 fp8 format 2 is not one of 0 (e4m3), 1 (e5m2)"));
    EXPECT_THAT(broken([&](DeviceProgram &p) { p.code[kVadd] = fp8(DType::F16, DType::U8, -1); }),
                HasSubstr("operand 5 fp8 format -1"));
    EXPECT_THAT(broken([&](DeviceProgram &p) {
                    p.code[kVadd] = fp8(DType::F16, DType::U8, 0);
                    p.code[kVadd].a[6] = 3;
                }),
                HasSubstr("instruction 4 (VCVTF8): operand 6 is unused and must be 0, got 3"));
}

TEST(ProgramVerify, RejectsBadModeBits) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kVadd].mode = kAccumulate; }),
                HasSubstr("instruction 4 (VADD): mode bits 0x2 not allowed"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kVadd].mode = 8; }), HasSubstr("mode bits 0x8 not allowed"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kMatmul].mode = kAccumulate | kDstF32; }),
                HasSubstr("instruction 9 (MATMUL): mode bits 0x4 not allowed"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kDmaSt].mode = kAccumulate; }),
                HasSubstr("instruction 6 (DMA_ST): mode field must be 0"));
    // A store has no shared form; a load's only mode bit is kDmaShared.
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kDmaSt].mode = kDmaShared; }),
                HasSubstr("instruction 6 (DMA_ST): mode field must be 0"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kDmaLd].mode = 2; }),
                HasSubstr("(DMA_LD): mode bits 0x2 not allowed (allowed: 0x1, shared)"));
    DeviceProgram shared = base_program();
    shared.code[kDmaLd].mode = kDmaShared;
    EXPECT_NO_THROW(verify_program(shared));
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code[kVadd] = instr(Opcode::VEXP, {1, 0, 4096, 0, 0, 0, 0, 4, 4}, DType::F16, kSrc1Scalar);
                }),
                HasSubstr("instruction 4 (VEXP): mode bits 0x1 not allowed"));
    // kAccF16 (bit 0x8) is an fp16 VREDSUM's alone, and never with an fp32 result.
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code.push_back(instr(Opcode::VREDSUM, {0, 0, 0, 0, 0, 0, 0, 4, 1, 0}, DType::F16, kAccF16 | kDstF32));
                }),
                HasSubstr("instruction 12 (VREDSUM): accumulates in fp16 (mode bit 0x8) but writes fp32 (0x4)"));
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code.push_back(instr(Opcode::VREDSUM, {0, 0, 0, 0, 0, 0, 0, 4, 1, 0}, DType::F32, kAccF16));
                }),
                HasSubstr("instruction 12 (VREDSUM): mode bits 0x8 not allowed"));
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code.push_back(instr(Opcode::VREDMAX, {0, 0, 0, 0, 0, 0, 0, 4, 1, 0}, DType::F16, kAccF16));
                }),
                HasSubstr("instruction 12 (VREDMAX): mode bits 0x8 not allowed"));
    DeviceProgram p = base_program();
    p.code.push_back(instr(Opcode::VREDSUM, {0, 0, 0, 0, 0, 0, 0, 4, 1, 0}, DType::F16, kAccF16 | kAccumulate));
    p.code[kVadd].mode = kSrc1Scalar;
    p.code[kMatmul].mode = kAccumulate;
    p.code.push_back(instr(Opcode::VREDSUM, {0, 0, 0, 0, 0, 0, 0, 4, 1, 0}, DType::F16, kAccumulate | kDstF32));
    EXPECT_NO_THROW(verify_program(p));
}

TEST(ProgramVerify, ARowSrc1AndAFoldAreForElementwiseOpsOfTwoSourcesAlone) {
    DeviceProgram p = base_program();
    p.code[kVadd].mode = kSrc1Row;
    EXPECT_NO_THROW(verify_program(p));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kVadd].mode = kSrc1Row | kSrc1Scalar; }),
                HasSubstr("more than one of src1 one element per group (mode bit 0x1), one row for all (0x10)"));
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code.push_back(instr(Opcode::VSELM, {0, 0, 0, 0, 0, 0, 0, 4, 1, 0}, DType::F16, kSrc1Row));
                }),
                HasSubstr("instruction 12 (VSELM): mode bits 0x10 not allowed"));
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code.push_back(instr(Opcode::VEXP, {0, 0, 0, 0, 0, 0, 0, 4, 1, 0}, DType::F16, kSrc1Row));
                }),
                HasSubstr("instruction 12 (VEXP): mode bits 0x10 not allowed"));
    p.code[kVadd].mode = kFoldGroups;
    EXPECT_NO_THROW(verify_program(p));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kVadd].mode = kFoldGroups | kSrc1Row; }),
                HasSubstr("more than one of src1 one element per group (mode bit 0x1), one row for all (0x10) and a "
                          "fold over the groups (0x20)"));
    EXPECT_THAT(broken([](DeviceProgram &p) {
                    p.code.push_back(instr(Opcode::VFMA, {0, 0, 0, 0, 0, 0, 0, 4, 1, 0}, DType::F16, kFoldGroups));
                }),
                HasSubstr("instruction 12 (VFMA): mode bits 0x20 not allowed"));
}

// --- blocks ---

TEST(ProgramVerify, RejectsUnbalancedLoop) {
    EXPECT_EQ(broken([](DeviceProgram &p) { p.code.erase(p.code.begin() + long(kEndLoop)); }),
              "instruction 1 (LOOP): block is never closed (end of program at instruction 11)");
}

TEST(ProgramVerify, RejectsStrayEndloopAndEndif) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code.push_back(instr(Opcode::ENDLOOP, {}, DType::F16)); }),
                HasSubstr("instruction 12 (ENDLOOP): no open LOOP to close"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code.push_back(instr(Opcode::ENDIF, {}, DType::F16)); }),
                HasSubstr("instruction 12 (ENDIF): no open IF to close"));
    // ENDIF closing a LOOP.
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code[kEndLoop].op = Opcode::ENDIF; }),
                HasSubstr("instruction 8 (ENDIF): closes the LOOP at instruction 1"));
}

TEST(ProgramVerify, RejectsElseOutsideIf) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code.insert(p.code.begin() + 3, instr(Opcode::ELSE, {})); }),
                HasSubstr("instruction 3 (ELSE): ELSE outside an IF"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.code.push_back(instr(Opcode::ELSE, {})); }),
                HasSubstr("instruction 12 (ELSE): ELSE outside an IF"));
}

TEST(ProgramVerify, RejectsSecondElse) {
    DeviceProgram p = base_program();
    p.code.push_back(instr(Opcode::IF, {1}));
    p.code.push_back(instr(Opcode::ELSE, {}));
    p.code.push_back(instr(Opcode::ELSE, {}));
    p.code.push_back(instr(Opcode::ENDIF, {}));
    EXPECT_THAT(verify_error(p), HasSubstr("instruction 14 (ELSE): second ELSE for the IF at instruction 12"));
    p.code.erase(p.code.begin() + 14);
    EXPECT_NO_THROW(verify_program(p));
}

TEST(ProgramVerify, NestingDepthLimit) {
    DeviceProgram p = base_program();
    p.code.clear();
    for (int d = 0; d < kMaxLoopDepth; d++) p.code.push_back(instr(Opcode::LOOP, {1 + d, 0, 2}));
    for (int d = 0; d < kMaxLoopDepth; d++) p.code.push_back(instr(Opcode::ENDLOOP, {}));
    EXPECT_NO_THROW(verify_program(p));
    p.code.insert(p.code.begin() + kMaxLoopDepth, instr(Opcode::IF, {1}));
    p.code.insert(p.code.begin() + kMaxLoopDepth + 1, instr(Opcode::ENDIF, {}));
    EXPECT_THAT(verify_error(p), HasSubstr("instruction 16 (IF): blocks nested deeper than 16"));
}

// --- buffers ---

TEST(ProgramVerify, RejectsDuplicateBufferName) {
    EXPECT_EQ(broken([](DeviceProgram &p) { p.buffers[1].name = "x"; }), "buffer 1 'x': duplicate buffer name");
}

TEST(ProgramVerify, RejectsBadBuffers) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.buffers[0].name = ""; }), HasSubstr("buffer 0: name is empty"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.buffers[0].shape = {}; }),
                HasSubstr("buffer 0 'x': rank 0 out of range 1..4"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.buffers[0].shape = {1, 2, 3, 4, 5}; }),
                HasSubstr("buffer 0 'x': rank 5 out of range 1..4"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.buffers[0].shape = {256, 0}; }),
                HasSubstr("buffer 0 'x': extent of dim 1 is 0"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.buffers[0].shape = {INT64_C(1) << 20, INT64_C(1) << 20}; }),
                HasSubstr("buffer 0 'x': size exceeds 2^40 bytes"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.buffers[0].shape = {INT64_MAX, INT64_MAX}; }),
                HasSubstr("buffer 0 'x': size exceeds 2^40 bytes"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.buffers[1].kind = BufferKind(9); }),
                HasSubstr("buffer 1 'y': invalid kind 9"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.buffers[1].type = DType(kNumDTypes); }),
                HasSubstr("buffer 1 'y': invalid element type " + std::to_string(kNumDTypes)));
    // Layout problems come from check_layout, named after the buffer.
    EXPECT_THAT(broken([](DeviceProgram &p) { p.buffers[1].layout.stick_dim = 2; }), HasSubstr("buffer 1 'y'"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.buffers[1].layout.order = {1, 1}; }), HasSubstr("buffer 1 'y'"));
    // 2^40 bytes exactly is allowed.
    DeviceProgram p = base_program();
    p.buffers[0].shape = {INT64_C(1) << 19, INT64_C(1) << 20};
    EXPECT_NO_THROW(verify_program(p));
}

TEST(ProgramVerify, NoOutputBufferRequired) {
    DeviceProgram p = base_program();
    p.buffers[1].kind = BufferKind::Temp;
    EXPECT_NO_THROW(verify_program(p));
}

// --- descriptors ---

TEST(ProgramVerify, RejectsBadDmaDescriptor) {
    EXPECT_EQ(broken([](DeviceProgram &p) { p.dma[0].sticks = 0; }), "dma descriptor 0: sticks 0 must be >= 1");
    EXPECT_THAT(broken([](DeviceProgram &p) { p.dma[0].count[2] = 0; }),
                HasSubstr("dma descriptor 0: count[2] 0 must be >= 1"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.dma[0] = DmaDesc{1 << 16, {1 << 15, 2, 1}, {0, 0, 0}, {0, 0, 0}}; }),
                HasSubstr("dma descriptor 0: moves more than 2^31 sticks"));
    DeviceProgram p = base_program();
    p.dma[0] = DmaDesc{1 << 16, {1 << 15, 1, 1}, {INT64_C(1) << 23, 0, 0}, {0, 0, 0}};  // exactly 2^31
    EXPECT_NO_THROW(verify_program(p));
}

TEST(ProgramVerify, RejectsBadMatmulDescriptor) {
    EXPECT_THAT(broken([](DeviceProgram &p) { p.mm[0].k = 0; }), HasSubstr("matmul descriptor 0: m, n, k (2, 64, 0)"));
    EXPECT_EQ(broken([](DeviceProgram &p) { p.mm[0].lda = 0; }),
              "matmul descriptor 0: lda 0 smaller than a row (128 bytes)");
    EXPECT_THAT(broken([](DeviceProgram &p) { p.mm[0].ldc = 128; }),
                HasSubstr("matmul descriptor 0: ldc 128 smaller than a row (256 bytes)"));
    EXPECT_THAT(broken([](DeviceProgram &p) { p.mm[0].ldb = 192; }),
                HasSubstr("matmul descriptor 0: ldb 192 is not a multiple of 128"));
    // Rows of 64 int8 elements are 64 bytes: one stick holds a row of an int8 MATMUL's A, not of an fp16 one's.
    DeviceProgram p = base_program();
    p.mm[0].k = 128;
    p.mm[0].lda = 128;
    EXPECT_THAT(broken([&](DeviceProgram &q) { q = p; }), HasSubstr("matmul descriptor 0: lda 128 smaller than a row (256 bytes)"));
    p.code[kMatmul].dtype = uint8_t(DType::I8);
    EXPECT_NO_THROW(verify_program(p));
}

// --- machine checks ---

TEST(ProgramVerifyMachine, RejectsTooManyCores) {
    DeviceProgram p = base_program();
    MachineDesc m;
    m.cores = 2;
    EXPECT_THAT(machine_error(p, m), HasSubstr("needs 4 cores, machine has 2"));
    m.cores = 4;
    EXPECT_NO_THROW(verify_for_machine(p, m));
}

TEST(ProgramVerifyMachine, RejectsConstantLxRangeOutsideLx) {
    MachineDesc m;
    DeviceProgram p = base_program();
    // 4 groups of 4 sticks = 2048 bytes; the last 1024 bytes of LX are too few.
    p.code[kVadd].a[2] = int32_t(m.lx_bytes - 1024);
    EXPECT_EQ(machine_error(p, m), "instruction 4 (VADD): dst LX range [2096128, 2098176) outside LX [0, 2097152)");
    p.code[kVadd].a[2] = int32_t(m.lx_bytes - 2048);
    EXPECT_NO_THROW(verify_for_machine(p, m));
    p.code[kVadd].a[6] = -128;
    EXPECT_THAT(machine_error(p, m), HasSubstr("instruction 4 (VADD): src1 LX range [-128, 1920)"));
    // A register base is only known at run time: not checked here.
    p.code[kVadd].a[5] = 3;
    EXPECT_NO_THROW(verify_for_machine(p, m));
}

TEST(ProgramVerifyMachine, ScalarSourceAndReductionRanges) {
    MachineDesc m;
    DeviceProgram p = base_program();
    // Scalar src1: one element per group (4 groups of f16 = 8 bytes) fits at the very end of LX.
    p.code[kVadd].mode = kSrc1Scalar;
    p.code[kVadd].a[6] = int32_t(m.lx_bytes - 8);
    EXPECT_NO_THROW(verify_for_machine(p, m));
    p.code[kVadd].a[6] = int32_t(m.lx_bytes - 6);
    EXPECT_THAT(machine_error(p, m), HasSubstr("src1 LX range"));
    // Reduction to fp32: 4 bytes per group.
    p = base_program();
    p.code.push_back(instr(Opcode::VREDSUM, {0, 0, int32_t(m.lx_bytes - 16), 0, 0, 0, 0, 2, 4, 0}, DType::F16, kDstF32));
    EXPECT_NO_THROW(verify_for_machine(p, m));
    p.code.back().a[2] = int32_t(m.lx_bytes - 12);
    EXPECT_THAT(machine_error(p, m), HasSubstr("instruction 12 (VREDSUM): dst LX range"));
}

TEST(ProgramVerifyMachine, TransposeBroadcastAndValidElements) {
    MachineDesc m;
    DeviceProgram p = base_program();
    // 3 x 70 f16 transpose: source rows of 70 pad to 128 lanes (3 * 256 bytes); destination rows of 3
    // pad to 64 lanes (70 * 128 bytes).
    p.code[kVadd] = instr(Opcode::VTRANSPOSE, {1, 0, int32_t(m.lx_bytes - 70 * 128), 0, int32_t(m.lx_bytes - 768),
                                               0, 0, 3, 70});
    EXPECT_NO_THROW(verify_for_machine(p, m));
    p.code[kVadd].a[4] += 128;
    EXPECT_THAT(machine_error(p, m), HasSubstr("instruction 4 (VTRANSPOSE): src0 LX range"));
    // VBCAST reads one element per group.
    p.code[kVadd] = instr(Opcode::VBCAST, {1, 0, 0, 0, int32_t(m.lx_bytes - 8), 0, 0, 2, 4});
    EXPECT_NO_THROW(verify_for_machine(p, m));
    p.code[kVadd].a[4] += 2;
    EXPECT_THAT(machine_error(p, m), HasSubstr("instruction 4 (VBCAST): src0 LX range"));
    // A reduction's valid element count must fit the group's lanes (2 f16 sticks = 128 lanes).
    p.code[kVadd] = instr(Opcode::VREDMAX, {1, 0, 4096, 0, 0, 0, 0, 2, 4, 128});
    EXPECT_NO_THROW(verify_for_machine(p, m));
    p.code[kVadd].a[9] = 129;
    EXPECT_THAT(machine_error(p, m), HasSubstr("instruction 4 (VREDMAX): valid element count 129 exceeds the 128"));
}

TEST(ProgramVerifyMachine, RejectsMatmulAndRingOutsideLx) {
    MachineDesc m;
    DeviceProgram p = base_program();
    // B is k=64 rows of ldb=128 bytes: 8192 bytes.
    p.code[kMatmul].a[6] = int32_t(m.lx_bytes - 8192);
    EXPECT_NO_THROW(verify_for_machine(p, m));
    p.code[kMatmul].a[6] = int32_t(m.lx_bytes - 8064);
    EXPECT_THAT(machine_error(p, m), HasSubstr("instruction 9 (MATMUL): b LX range"));
    // C is m=2 rows ldc=256 apart and the last row holds n=32 fp32 (128 bytes): 384 bytes in all.
    p = base_program();
    p.mm[0] = MatmulDesc{2, 32, 64, 128, 128, 256};
    p.code[kMatmul].a[2] = int32_t(m.lx_bytes - 384);
    EXPECT_NO_THROW(verify_for_machine(p, m));
    p.code[kMatmul].a[2] += 128;
    EXPECT_THAT(machine_error(p, m), HasSubstr("instruction 9 (MATMUL): c LX range"));
    p = base_program();
    p.code.push_back(instr(Opcode::RING_SEND, {0, 1, 0, int32_t(m.lx_bytes - 128), 2}));
    EXPECT_THAT(machine_error(p, m), HasSubstr("instruction 12 (RING_SEND): buf LX range"));
}

TEST(ProgramVerifyMachine, RejectsStaticDmaExtentPastBufferEnd) {
    DeviceProgram p = base_program();
    p.code[kDmaLd].a[3] = 128;
    EXPECT_EQ(machine_error(p), "instruction 2 (DMA_LD): device range [128, 2176) outside buffer 0 'x' (2048 bytes)");
    p.code[kDmaLd].a[3] = -128;
    EXPECT_THAT(machine_error(p), HasSubstr("device range [-128, 1920)"));
    p = base_program();
    p.dma[0].count[1] = 2;
    p.dma[0].dram_stride[1] = 64;
    EXPECT_THAT(machine_error(p), HasSubstr("instruction 2 (DMA_LD): device range [0, 2112)"));
    // With a register base the extent is dynamic and left to the simulator.
    p.code[kDmaLd].a[2] = 5;
    p.code[kDmaSt].a[2] = 5;
    EXPECT_NO_THROW(verify_for_machine(p, MachineDesc{}));
}

TEST(ProgramVerifyMachine, RejectsDmaLxRangeOutsideLx) {
    MachineDesc m;
    DeviceProgram p = base_program();
    p.code[kDmaLd].a[5] = int32_t(m.lx_bytes - 1024);
    EXPECT_THAT(machine_error(p, m), HasSubstr("instruction 2 (DMA_LD): lx LX range"));
}

TEST(ProgramVerifyMachine, RejectsZeroStrideStore) {
    DeviceProgram p = base_program();
    p.dma.push_back(DmaDesc{4, {1, 4, 1}, {0, 0, 0}, {0, 512, 0}});
    p.code[kDmaSt].a[6] = 1;
    p.code[kDmaLd].a[6] = 1;
    EXPECT_THAT(machine_error(p),
                HasSubstr("instruction 6 (DMA_ST): dma descriptor 1 has device stride 0 on dim 1 with count 4"));
    // A load may broadcast (the DMA_LD above uses the same descriptor)...
    p.code[kDmaSt].a[6] = 0;
    EXPECT_NO_THROW(verify_for_machine(p, MachineDesc{}));
    // ...and a zero stride on a dim of count 1 does nothing.
    p.dma[1].count[1] = 1;
    p.code[kDmaSt].a[6] = 1;
    EXPECT_NO_THROW(verify_for_machine(p, MachineDesc{}));
}

TEST(ProgramVerifyMachine, VcvtGroupSize) {
    DeviceProgram p = base_program();
    // f32 -> f16 of one stick (32 lanes) makes 64 bytes: not a whole stick.
    p.code[kVadd] = instr(Opcode::VCVT, {1, 0, 4096, 0, 0, 0, 0, 1, 2, int32_t(DType::F16)}, DType::F32);
    EXPECT_THAT(machine_error(p), HasSubstr("instruction 4 (VCVT): destination group of 64 bytes"));
    p.code[kVadd].a[7] = 2;
    EXPECT_NO_THROW(verify_for_machine(p, MachineDesc{}));
    // f16 -> f32 doubles: 1 stick in, 2 sticks out; the dst range counts the doubled size.
    MachineDesc m;
    p.code[kVadd] = instr(Opcode::VCVT, {1, 0, int32_t(m.lx_bytes - 256), 0, 0, 0, 0, 1, 1, int32_t(DType::F32)});
    EXPECT_NO_THROW(verify_for_machine(p, m));
    p.code[kVadd].a[8] = 2;
    EXPECT_THAT(machine_error(p, m), HasSubstr("instruction 4 (VCVT): dst LX range"));
}

TEST(ProgramVerifyMachine, StructuralErrorsStillReported) {
    DeviceProgram p = base_program();
    p.code[kDmaLd].a[6] = 9;
    EXPECT_THAT(machine_error(p), HasSubstr("dma descriptor index 9"));
}

}  // namespace
