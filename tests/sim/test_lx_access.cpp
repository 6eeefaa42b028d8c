// lx_access: the LX ranges each instruction family reads and writes, and every rejection (range
// outside LX, misaligned stick operand, misaligned element operand, fractional VCVT group).
#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <string>

#include "device/error.h"
#include "device/program_builder.h"
#include "sim/lx_access.h"

namespace spyre {
namespace {

class LxAccessTest : public ::testing::Test {
protected:
    MachineDesc m;
    int64_t regs[kNumRegs] = {};
    DeviceProgram prog;

    // Builds (and verifies) a program whose last instruction is the one under test.
    const Instr &build(const std::function<void(ProgramBuilder &)> &f) {
        ProgramBuilder b("t", 1);
        f(b);
        prog = b.finish();
        return prog.code.back();
    }
    LxAccess access(const std::function<void(ProgramBuilder &)> &f, size_t pc = 0) {
        const Instr &in = build(f);
        return lx_access(prog, in, regs, m, pc);
    }
    // The message of the spyre::Error lx_access throws ("" if none).
    std::string error(const std::function<void(ProgramBuilder &)> &f, size_t pc = 0) {
        const Instr &in = build(f);
        try {
            lx_access(prog, in, regs, m, pc);
        } catch (const Error &e) {
            return e.what();
        }
        return "";
    }
};

void expect_range(const LxRange &r, int64_t begin, int64_t end, const char *what) {
    EXPECT_EQ(begin, r.begin) << what;
    EXPECT_EQ(end, r.end) << what;
}

TEST_F(LxAccessTest, ARowSrc1IsOneGroupAndNoDestinationMayCoverIt) {
    // f16, 2 sticks x 3 groups; the row is 2 sticks (256 bytes).
    LxAccess a = access([](ProgramBuilder &b) {
        b.vbin(Opcode::VADD, DType::F16, 0, Lx(0), Lx(4096), Lx(8192), 2, 3, kSrc1Row);
    });
    expect_range(a.reads[1], 8192, 8192 + 256, "src1");
    EXPECT_EQ(error([](ProgramBuilder &b) { b.vbin(Opcode::VADD, DType::F16, 0, Lx(16384), Lx(4096), Lx(8192), 2, 3, kSrc1Row); }),
              "");
    EXPECT_NE(error([](ProgramBuilder &b) { b.vbin(Opcode::VADD, DType::F16, 0, Lx(7936), Lx(4096), Lx(8192), 2, 3, kSrc1Row); })
                  .find("dst overlaps its row operand (src1, mode row), which every group reads"),
              std::string::npos);
    // One group may compute in place.
    EXPECT_EQ(error([](ProgramBuilder &b) { b.vbin(Opcode::VADD, DType::F16, 0, Lx(8192), Lx(4096), Lx(8192), 2, 1, kSrc1Row); }),
              "");
}

TEST_F(LxAccessTest, AFoldReadsOneGroupAndEveryGroupAndWritesOne) {
    LxAccess a = access([](ProgramBuilder &b) {
        b.vbin(Opcode::VADD, DType::F16, 0, Lx(0), Lx(0), Lx(8192), 2, 3, kFoldGroups);
    });
    expect_range(a.reads[0], 0, 256, "src0");
    expect_range(a.reads[1], 8192, 8192 + 768, "src1");
    expect_range(a.writes[0], 0, 256, "dst");
    EXPECT_NE(error([](ProgramBuilder &b) { b.vbin(Opcode::VADD, DType::F16, 0, Lx(8448), Lx(0), Lx(8192), 2, 3, kFoldGroups); })
                  .find("dst overlaps the groups it folds"),
              std::string::npos);
}

TEST_F(LxAccessTest, BinaryStickOperands) {
    // f16, 2 sticks x 3 groups = 768 bytes per operand.
    LxAccess a = access([](ProgramBuilder &b) {
        b.vbin(Opcode::VADD, DType::F16, 0, Lx(0), Lx(4096), Lx(8192), 2, 3);
    });
    ASSERT_EQ(2, a.num_reads);
    expect_range(a.reads[0], 4096, 4096 + 768, "src0");
    expect_range(a.reads[1], 8192, 8192 + 768, "src1");
    ASSERT_EQ(a.num_writes, 1);
    expect_range(a.writes[0], 0, 768, "dst");
}

TEST_F(LxAccessTest, ScalarSrc1IsOneElementPerGroup) {
    LxAccess a = access([](ProgramBuilder &b) {
        b.vbin(Opcode::VMUL, DType::F32, 0, Lx(0), Lx(4096), Lx(8196), 2, 3, kSrc1Scalar);
    });
    ASSERT_EQ(2, a.num_reads);
    expect_range(a.reads[1], 8196, 8196 + 3 * 4, "src1");
    expect_range(a.writes[0], 0, 768, "dst");
}

TEST_F(LxAccessTest, FmaAlsoReadsDst) {
    LxAccess a = access([](ProgramBuilder &b) {
        b.vbin(Opcode::VFMA, DType::F16, 0, Lx(1024), Lx(4096), Lx(8194), 1, 2, kSrc1Scalar);
    });
    ASSERT_EQ(3, a.num_reads);
    expect_range(a.reads[0], 4096, 4096 + 256, "src0");
    expect_range(a.reads[1], 8194, 8194 + 4, "src1");
    expect_range(a.reads[2], 1024, 1024 + 256, "dst read");
    expect_range(a.writes[0], 1024, 1024 + 256, "dst");
}

TEST_F(LxAccessTest, RegisterPlusImmediate) {
    regs[5] = 1024;
    regs[6] = 1 << 20;
    LxAccess a = access([](ProgramBuilder &b) {
        b.vun(Opcode::VEXP, DType::F32, 0, Lx(Reg{5}, 128), Lx(Reg{6}, -256), 1, 4);
    });
    ASSERT_EQ(1, a.num_reads);
    expect_range(a.reads[0], (1 << 20) - 256, (1 << 20) - 256 + 512, "src0");
    expect_range(a.writes[0], 1152, 1152 + 512, "dst");
}

TEST_F(LxAccessTest, ConvertDestinationSize) {
    // f16 -> f32: a group of 1 stick (64 elements) becomes 256 bytes.
    LxAccess a = access([](ProgramBuilder &b) { b.vcvt(DType::F16, DType::F32, 0, Lx(0), Lx(8192), 1, 3); });
    ASSERT_EQ(1, a.num_reads);
    expect_range(a.reads[0], 8192, 8192 + 384, "src0");
    expect_range(a.writes[0], 0, 768, "dst");
    // f32 -> f16: 2 sticks (64 elements) become 128 bytes.
    a = access([](ProgramBuilder &b) { b.vcvt(DType::F32, DType::F16, 0, Lx(0), Lx(8192), 2, 2); });
    expect_range(a.reads[0], 8192, 8192 + 512, "src0");
    expect_range(a.writes[0], 0, 256, "dst");
    // i32 -> f32: same size.
    a = access([](ProgramBuilder &b) { b.vcvt(DType::I32, DType::F32, 0, Lx(0), Lx(8192), 3, 1); });
    expect_range(a.writes[0], 0, 384, "dst");
}

TEST_F(LxAccessTest, BroadcastFillAndReductions) {
    LxAccess a = access([](ProgramBuilder &b) { b.vbcast(DType::F16, 0, Lx(0), Lx(4102), 2, 4); });
    ASSERT_EQ(1, a.num_reads);
    expect_range(a.reads[0], 4102, 4102 + 8, "bcast src0");
    expect_range(a.writes[0], 0, 4 * 2 * 128, "bcast dst");

    a = access([](ProgramBuilder &b) { b.vfill(DType::F32, 0, Lx(256), 1.0f, 3, 2); });
    EXPECT_EQ(0, a.num_reads);
    expect_range(a.writes[0], 256, 256 + 768, "fill dst");

    a = access([](ProgramBuilder &b) { b.vred(Opcode::VREDSUM, DType::F16, 0, Lx(6), Lx(4096), 2, 5); });
    ASSERT_EQ(1, a.num_reads);
    expect_range(a.reads[0], 4096, 4096 + 5 * 256, "red src0");
    expect_range(a.writes[0], 6, 6 + 10, "red f16 dst");

    a = access([](ProgramBuilder &b) {
        b.vred(Opcode::VREDMAX, DType::F16, 0, Lx(8), Lx(4096), 2, 5, 3, kDstF32);
    });
    expect_range(a.writes[0], 8, 8 + 20, "red f16->f32 dst");

    a = access([](ProgramBuilder &b) {
        b.vred(Opcode::VREDMIN, DType::F32, 0, Lx(12), Lx(4096), 1, 2, 0, kAccumulate);
    });
    ASSERT_EQ(2, a.num_reads);
    expect_range(a.reads[1], 12, 20, "accumulated dst read");
    expect_range(a.writes[0], 12, 20, "red f32 dst");
}

TEST_F(LxAccessTest, TransposeRanges) {
    // f16 5 x 70: source rows padded to 128 elements, destination 70 rows of 64 elements.
    LxAccess a = access([](ProgramBuilder &b) { b.vtranspose(DType::F16, 0, Lx(0), Lx(65536), 5, 70); });
    ASSERT_EQ(1, a.num_reads);
    expect_range(a.reads[0], 65536, 65536 + 5 * 128 * 2, "src0");
    expect_range(a.writes[0], 0, 70 * 64 * 2, "dst");
    // f32 33 x 3: source rows of 32 elements, destination 3 rows of 64.
    a = access([](ProgramBuilder &b) { b.vtranspose(DType::F32, 0, Lx(0), Lx(65536), 33, 3); });
    expect_range(a.reads[0], 65536, 65536 + 33 * 32 * 4, "src0");
    expect_range(a.writes[0], 0, 3 * 64 * 4, "dst");
}

TEST_F(LxAccessTest, MatmulRanges) {
    MatmulDesc d;
    d.m = 3;
    d.n = 70;
    d.k = 130;
    d.lda = 384;
    d.ldb = 256;
    d.ldc = 512;
    for (bool acc : {false, true}) {
        LxAccess a = access([&](ProgramBuilder &b) {
            int desc = b.mm_desc(d);
            b.matmul(0, Lx(200 * 1024), Lx(0), Lx(64 * 1024), desc, acc);
        });
        ASSERT_EQ(acc ? 3 : 2, a.num_reads);
        expect_range(a.reads[0], 0, 2 * 384 + 384, "A");                // k*2 = 260 -> 384
        expect_range(a.reads[1], 65536, 65536 + 129 * 256 + 256, "B");  // n*2 = 140 -> 256
        expect_range(a.writes[0], 204800, 204800 + 2 * 512 + 384, "C");     // n*4 = 280 -> 384
        if (acc) expect_range(a.reads[2], 204800, 204800 + 2 * 512 + 384, "C read");
    }
}

TEST_F(LxAccessTest, DmaBoundingRange) {
    DmaDesc d;
    d.sticks = 2;
    d.count = {3, 2, 4};
    d.dram_stride = {256, 4096, 8192};
    d.lx_stride = {256, -1024, 0};  // negative and zero (broadcast) LX strides
    regs[7] = 4096;
    // Offsets: 0..512 on dim 0, -1024..0 on dim 1, 0 on dim 2; plus the 256-byte run.
    LxAccess a = access([&](ProgramBuilder &b) {
        int buf = b.buffer("x", BufferKind::Input, DType::F16, {1 << 16});
        int desc = b.dma_desc(d);
        b.dma_ld(0, buf, kZero, 0, Lx(Reg{7}, 128), desc);
    });
    EXPECT_EQ(0, a.num_reads);
    ASSERT_EQ(a.num_writes, 1);
    expect_range(a.writes[0], 4224 - 1024, 4224 + 512 + 256, "dma_ld");

    a = access([&](ProgramBuilder &b) {
        int buf = b.buffer("y", BufferKind::Output, DType::F16, {1 << 16});
        int desc = b.dma_desc(d);
        b.dma_st(0, buf, kZero, 0, Lx(Reg{7}, 128), desc);
    });
    ASSERT_EQ(1, a.num_reads);
    EXPECT_EQ(a.num_writes, 0);
    expect_range(a.reads[0], 4224 - 1024, 4224 + 512 + 256, "dma_st");
}

TEST_F(LxAccessTest, RingRanges) {
    regs[9] = 1024;
    LxAccess a = access([](ProgramBuilder &b) { b.ring_send(0, 1, Lx(Reg{9}, 256), 3); });
    ASSERT_EQ(1, a.num_reads);
    EXPECT_EQ(a.num_writes, 0);
    expect_range(a.reads[0], 1280, 1280 + 384, "send");

    a = access([](ProgramBuilder &b) { b.ring_recv(0, -1, Lx(Reg{9}, 256), 3); });
    EXPECT_EQ(0, a.num_reads);
    expect_range(a.writes[0], 1280, 1280 + 384, "recv");

    a = access([](ProgramBuilder &b) { b.ring_reduce(DType::F16, 0, RedOp::Max, Lx(Reg{9}, 256), 3); });
    ASSERT_EQ(1, a.num_reads);
    expect_range(a.reads[0], 1280, 1280 + 384, "reduce read");
    expect_range(a.writes[0], 1280, 1280 + 384, "reduce write");
}

TEST_F(LxAccessTest, OtherOpcodesTouchNothing) {
    for (auto f : std::vector<std::function<void(ProgramBuilder &)>>{
             [](ProgramBuilder &b) { b.add(Reg{1}, Reg{2}, Reg{3}); },
             [](ProgramBuilder &b) { b.li(Reg{1}, 1LL << 40); },
             [](ProgramBuilder &b) { b.wait_tag(3); },
             [](ProgramBuilder &b) { b.barrier(); },
         }) {
        LxAccess a = access(f);
        EXPECT_EQ(0, a.num_reads);
        EXPECT_EQ(a.num_writes, 0);
    }
}

TEST_F(LxAccessTest, RejectsRangeOutsideLx) {
    EXPECT_EQ("instruction 7 (VADD): src1 LX range [2097024, 2097280) is outside LX (2097152 bytes)",
              error([](ProgramBuilder &b) { b.vbin(Opcode::VADD, DType::F16, 0, Lx(0), Lx(0), Lx(2097024), 2); }, 7));
    regs[3] = -128;
    EXPECT_EQ("instruction 0 (VEXP): src0 LX range [-128, 0) is outside LX (2097152 bytes)",
              error([](ProgramBuilder &b) { b.vun(Opcode::VEXP, DType::F16, 0, Lx(0), Lx(Reg{3}), 1); }));
    // Element operand running off the end.
    EXPECT_EQ("instruction 2 (VREDSUM): dst LX range [2097148, 2097156) is outside LX (2097152 bytes)",
              error([](ProgramBuilder &b) {
                  b.vred(Opcode::VREDSUM, DType::F32, 0, Lx(2097148), Lx(0), 1, 2);
              }, 2));
    // Destination of a widening VCVT is twice the source.
    EXPECT_EQ("instruction 0 (VCVT): dst LX range [2096128, 2098176) is outside LX (2097152 bytes)",
              error([](ProgramBuilder &b) { b.vcvt(DType::F16, DType::F32, 0, Lx(2096128), Lx(0), 8); }));
}

TEST_F(LxAccessTest, HugeCountsDoNotOverflow) {
    std::string e = error([](ProgramBuilder &b) {
        b.vbin(Opcode::VADD, DType::F32, 0, Lx(0), Lx(0), Lx(0), INT32_MAX, INT32_MAX);
    });
    EXPECT_NE(std::string::npos, e.find("instruction 0 (VADD): src0 LX range [0, ")) << e;
    EXPECT_NE(std::string::npos, e.find(") is outside LX")) << e;
    regs[4] = INT64_MAX - 10;  // register + offset overflow
    e = error([](ProgramBuilder &b) { b.vun(Opcode::VCOPY, DType::F32, 0, Lx(0), Lx(Reg{4}, INT32_MAX), 1); });
    EXPECT_NE(std::string::npos, e.find("src0 LX range")) << e;
    e = error([](ProgramBuilder &b) { b.vtranspose(DType::F16, 0, Lx(0), Lx(0), INT32_MAX, INT32_MAX); });
    EXPECT_NE(std::string::npos, e.find("outside LX")) << e;
}

TEST_F(LxAccessTest, RejectsMisalignedStickOperands) {
    EXPECT_EQ("instruction 3 (VADD): dst LX address 64 is not stick-aligned (128 bytes)",
              error([](ProgramBuilder &b) { b.vbin(Opcode::VADD, DType::F16, 0, Lx(64), Lx(0), Lx(256), 1); }, 3));
    EXPECT_EQ("instruction 0 (VMAX): src1 LX address 130 is not stick-aligned (128 bytes)",
              error([](ProgramBuilder &b) { b.vbin(Opcode::VMAX, DType::F16, 0, Lx(0), Lx(256), Lx(130), 1); }));
    EXPECT_EQ("instruction 0 (VREDMAX): src0 LX address 2 is not stick-aligned (128 bytes)",
              error([](ProgramBuilder &b) { b.vred(Opcode::VREDMAX, DType::F16, 0, Lx(0), Lx(2), 1); }));
    EXPECT_EQ("instruction 0 (RING_SEND): src LX address 100 is not stick-aligned (128 bytes)",
              error([](ProgramBuilder &b) { b.ring_send(0, 1, Lx(100), 1); }));
    DmaDesc d;
    d.sticks = 1;
    d.count = {2, 1, 1};
    d.dram_stride = {128, 0, 0};
    d.lx_stride = {64, 0, 0};
    std::string e = error([&](ProgramBuilder &b) {
        int buf = b.buffer("x", BufferKind::Input, DType::F16, {4096});
        b.dma_ld(0, buf, kZero, 0, Lx(0), b.dma_desc(d));
    });
    EXPECT_NE(std::string::npos, e.find("instruction 0 (DMA_LD): DMA descriptor 0 LX stride[0] = 64")) << e;
    d.lx_stride = {128, 0, 0};
    EXPECT_EQ("instruction 0 (DMA_LD): dst LX address 32 is not stick-aligned (128 bytes)",
              error([&](ProgramBuilder &b) {
                  int buf = b.buffer("x", BufferKind::Input, DType::F16, {4096});
                  b.dma_ld(0, buf, kZero, 0, Lx(32), b.dma_desc(d));
              }));
}

TEST_F(LxAccessTest, RejectsMatmulRowsOffStickGrid) {
    MatmulDesc d;
    d.m = 2;
    d.n = 64;
    d.k = 64;
    d.lda = d.ldb = 128;
    d.ldc = 256;
    auto mm = [&](Lx c, Lx a, Lx b) {
        return [=](ProgramBuilder &pb) { pb.matmul(0, c, a, b, pb.mm_desc(d), false); };
    };
    EXPECT_EQ("", error(mm(Lx(0), Lx(1024), Lx(2048))));
    EXPECT_EQ("instruction 0 (MATMUL): B LX address 2050 is not stick-aligned (128 bytes)",
              error(mm(Lx(0), Lx(1024), Lx(2050))));
    // With 256-byte sticks a 128-byte row stride puts every other row off the stick grid.
    m.stick_bytes = 256;
    EXPECT_EQ("instruction 0 (MATMUL): A row stride 128 is not a whole number of sticks (256 bytes)",
              error(mm(Lx(0), Lx(1024), Lx(2048))));
}

TEST_F(LxAccessTest, RejectsMisalignedElementOperands) {
    EXPECT_EQ("instruction 0 (VBCAST): src0 LX address 2 is not aligned to its element size (4 bytes)",
              error([](ProgramBuilder &b) { b.vbcast(DType::F32, 0, Lx(0), Lx(2), 1); }));
    EXPECT_EQ("instruction 4 (VREDSUM): dst LX address 6 is not aligned to its element size (4 bytes)",
              error([](ProgramBuilder &b) {
                  b.vred(Opcode::VREDSUM, DType::F16, 0, Lx(6), Lx(0), 1, 1, 0, kDstF32);
              }, 4));
    EXPECT_EQ("instruction 0 (VSUB): src1 LX address 1 is not aligned to its element size (2 bytes)",
              error([](ProgramBuilder &b) {
                  b.vbin(Opcode::VSUB, DType::F16, 0, Lx(0), Lx(256), Lx(1), 1, 1, kSrc1Scalar);
              }));
    // fp16 reductions write 2-byte elements: address 6 is fine.
    EXPECT_EQ("", error([](ProgramBuilder &b) { b.vred(Opcode::VREDSUM, DType::F16, 0, Lx(6), Lx(0), 1); }));
}

TEST_F(LxAccessTest, RejectsFractionalConvertGroup) {
    // One f32 stick (32 elements) as f16 is 64 bytes: half a stick.
    std::string e = error([](ProgramBuilder &b) { b.vcvt(DType::F32, DType::F16, 0, Lx(0), Lx(256), 1, 2); }, 5);
    EXPECT_EQ("instruction 5 (VCVT): destination group of 64 bytes (1 f32 sticks as f16) is not a whole number of "
              "sticks (128 bytes)",
              e);
    e = error([](ProgramBuilder &b) { b.vcvt(DType::I32, DType::F16, 0, Lx(0), Lx(256), 3); });
    EXPECT_NE(std::string::npos, e.find("destination group of 192 bytes")) << e;
    EXPECT_EQ("", error([](ProgramBuilder &b) { b.vcvt(DType::I32, DType::F16, 0, Lx(0), Lx(256), 4); }));
}

TEST_F(LxAccessTest, RejectsValidCountBeyondGroup) {
    std::string e = error([](ProgramBuilder &b) { b.vred(Opcode::VREDSUM, DType::F16, 0, Lx(0), Lx(256), 1, 1, 65); });
    EXPECT_EQ("instruction 0 (VREDSUM): valid element count 65 is outside [0, 64]", e);
}

TEST_F(LxAccessTest, ErrorsAreSpyreErrors) {
    const Instr &in = build([](ProgramBuilder &b) { b.vbin(Opcode::VADD, DType::F16, 0, Lx(64), Lx(0), Lx(0), 1); });
    EXPECT_THROW(lx_access(prog, in, regs, m, 0), Error);
}

}  // namespace
}  // namespace spyre
