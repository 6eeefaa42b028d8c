#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/disassembler.h"
#include "device/program_builder.h"

using namespace spyre;
using ::testing::HasSubstr;

namespace {

DeviceProgram golden_program() {
    ProgramBuilder b("axpy", 2);
    int x = b.buffer("x", BufferKind::Input, DType::F16, {128, 2});
    int y = b.buffer("y", BufferKind::Output, DType::F32, {32, 2}, DeviceLayout{1, {0, 1}});
    int d = b.dma_desc(DmaDesc{2, {2, 1, 1}, {256, 0, 0}, {256, 0, 0}});
    int m = b.mm_desc(MatmulDesc{1, 64, 64, 128, 128, 256});
    Reg c = b.alloc(), i = b.alloc(), t = b.alloc();
    b.core_id(c);
    b.li(t, int64_t(1) << 40);
    b.loop(i, 2);
    b.if_(c);
    b.dma_ld(0, x, t, 256, Lx(i, -128), d);
    b.else_();
    b.vfill(DType::F16, 1, Lx(0), 0.5f, 2);
    b.end_if();
    b.wait(0x3);
    b.end_loop();
    b.vbin(Opcode::VMUL, DType::F16, 2, Lx(512), Lx(0), Lx(256), 2, 1, kSrc1Scalar);
    b.vcvt(DType::F16, DType::F32, 3, Lx(1024), Lx(512), 2);
    b.vred(Opcode::VREDSUM, DType::F32, 4, Lx(2048), Lx(1024), 4, 1, 0, kAccumulate | kDstF32);
    b.matmul(5, Lx(4096), Lx(0), Lx(8192), m, true);
    b.ring_reduce(DType::F32, 6, RedOp::Max, Lx(1024), 4);
    b.ring_send(7, -1, Lx(1024), 4);
    b.wait(0xFC);
    b.dma_st(8, y, kZero, 0, Lx(1024), d);
    b.barrier();
    return b.finish();
}

TEST(Disassembler, Golden) {
    const char *expected =
        "kernel axpy: 2 cores, format version 11\n"
        "buffers (2):\n"
        "  0 x input f16 [128, 2] sticks(d0) order[d1,d0]\n"
        "  1 y output f32 [32, 2] sticks(d1) order[d0,d1]\n"
        "dma descriptors (1):\n"
        "  dma#0 sticks 2 count [2,1,1] dram_stride [256,0,0] lx_stride [256,0,0]\n"
        "matmul descriptors (1):\n"
        "  mm#0 m 1 n 64 k 64 lda 128 ldb 128 ldc 256\n"
        "code (19):\n"
        "   0  CORE_ID r1\n"
        "   1  LI r3, 1099511627776\n"
        "   2  LOOP r2, r0, 2\n"
        "   3    IF r1\n"
        "   4      DMA_LD t0, x[r3+256], [r2-128], dma#0\n"
        "   5    ELSE\n"
        "   6      VFILL.f16 t1, [r0+0], 2, 1, 0.5\n"
        "   7    ENDIF\n"
        "   8    WAIT {t0,t1}\n"
        "   9  ENDLOOP\n"
        "  10  VMUL.f16.scalar t2, [r0+512], [r0+0], [r0+256], 2, 1\n"
        "  11  VCVT.f16 t3, [r0+1024], [r0+512], 2, 1, f32\n"
        "  12  VREDSUM.f32.acc.f32out t4, [r0+2048], [r0+1024], 4, 1, 0\n"
        "  13  MATMUL.f16.acc t5, [r0+4096], [r0+0], [r0+8192], mm#0\n"
        "  14  RING_REDUCE.f32 t6, max, [r0+1024], 4\n"
        "  15  RING_SEND t7, -1, [r0+1024], 4\n"
        "  16  WAIT {t2,t3,t4,t5,t6,t7}\n"
        "  17  DMA_ST t8, y[r0+0], [r0+1024], dma#0\n"
        "  18  BARRIER\n";
    EXPECT_EQ(disassemble(golden_program()), expected);
}

TEST(Disassembler, Fp8ConversionsNameTheirFormat) {
    ProgramBuilder b("fp8", 1);
    b.vcvtf8(DType::F16, DType::U8, Fp8Format::E4M3, 1, Lx(256), Lx(0), 2);
    b.vcvtf8(DType::U8, DType::F32, Fp8Format::E5M2, 2, Lx(1024), Lx(256), 1, 3);
    b.wait(0x6);
    std::string text = disassemble(b.finish());
    EXPECT_THAT(text, HasSubstr("VCVTF8.f16 t1, [r0+256], [r0+0], e4m3, 2, 1, u8\n"));
    EXPECT_THAT(text, HasSubstr("VCVTF8.u8 t2, [r0+1024], [r0+256], e5m2, 1, 3, f32\n"));
    DeviceProgram p = b.finish();
    p.code[0].a[5] = 9;  // the listing shows an unverified program as it is
    EXPECT_THAT(disassemble(p), HasSubstr("fp8fmt9"));
}

TEST(Disassembler, RingReduceOverGroupsShowsItsGroup) {
    ProgramBuilder b("groups", 8);
    b.ring_reduce(DType::F16, 1, RedOp::Sum, Lx(256), 2, 4, 2);
    b.ring_reduce(DType::F16, 2, RedOp::Min, Lx(256), 2, 4, 0);
    b.wait(0x6);
    std::string text = disassemble(b.finish());
    EXPECT_THAT(text, HasSubstr("RING_REDUCE.f16 t1, sum, [r0+256], 2, group 4 x2\n"));
    EXPECT_THAT(text, HasSubstr("RING_REDUCE.f16 t2, min, [r0+256], 2, group 4 x1\n"));
}

TEST(Disassembler, Deterministic) {
    DeviceProgram p = golden_program();
    EXPECT_EQ(disassemble(p), disassemble(p));
}

TEST(Disassembler, EveryOpcodeHasItsName) {
    DeviceProgram p;
    p.kernel_name = "all";
    for (int o = 0; o < kNumOpcodes; o++) {
        if (!opcode_valid(o)) continue;  // reserved numbers
        Instr in;
        in.op = Opcode(o);
        p.code.push_back(in);
    }
    std::string text = disassemble(p);
    for (int o = 0; o < kNumOpcodes; o++) {
        if (opcode_valid(o)) {
            EXPECT_THAT(text, HasSubstr(op_info(Opcode(o)).name));
        }
    }
}

TEST(Disassembler, SharedLoadIsMarked) {
    DeviceProgram p;
    p.kernel_name = "k";
    Instr dma;
    dma.op = Opcode::DMA_LD;
    dma.mode = kDmaShared;
    p.code.push_back(dma);
    dma.mode = kDmaShared | 4;
    p.code.push_back(dma);
    std::string text = disassemble(p);
    EXPECT_THAT(text, HasSubstr("DMA_LD.shared t0"));
    EXPECT_THAT(text, HasSubstr("DMA_LD.shared.mode0x4 t0"));
}

TEST(Disassembler, UnverifiedProgramDoesNotCrash) {
    DeviceProgram p;
    p.kernel_name = "bad\x01name";
    Instr bad;
    bad.op = Opcode(999);
    p.code.push_back(bad);
    Instr dma;
    dma.op = Opcode::DMA_LD;
    dma.a = {0, 42, 0, 0, 0, 0, -3, 0, 0, 0};  // buffer and descriptor out of range
    p.code.push_back(dma);
    Instr end;
    end.op = Opcode::ENDLOOP;  // stray
    p.code.push_back(end);
    std::string text = disassemble(p);
    EXPECT_THAT(text, HasSubstr("bad\\x01name"));
    EXPECT_THAT(text, HasSubstr("??? opcode 999"));
    EXPECT_THAT(text, HasSubstr("DMA_LD t0, buf#42[r0+0], [r0+0], dma#-3"));
}

}  // namespace
