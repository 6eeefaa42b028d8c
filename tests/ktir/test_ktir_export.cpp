// The export and re-import of a hand-built program that uses every instruction the compiler
// emits (and the vector ops it does not, where they have a KTIR form): each must come back as the
// same instruction, and the program must compute the same bytes.
#include <cstring>

#include <gtest/gtest.h>

#include "device/error.h"
#include "device/half.h"
#include "device/program_builder.h"
#include "ktir_export.h"
#include "ktir_import.h"
#include "ktir_reader.h"
#include "sim/simulator.h"

namespace {

using namespace spyre;

constexpr int32_t S = 1024;  // LX slot size: slot i at i * S

DeviceProgram every_instruction() {
    ProgramBuilder b("every", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64, 4});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64, 256});
    DmaDesc ld;
    ld.sticks = 1;
    ld.count[0] = 4;
    ld.dram_stride[0] = 128;
    ld.lx_stride[0] = 128;
    DmaDesc st;
    st.sticks = 256;
    int dl = b.dma_desc(ld), ds = b.dma_desc(st);
    const DType H = DType::F16, F = DType::F32, I = DType::I32;
    auto vw = [&] { b.wait_tag(1); };
    b.dma_ld(0, in, kZero, 0, Lx(0), dl);
    b.wait_tag(0);
    b.vun(Opcode::VEXP, H, 1, Lx(1 * S), Lx(0), 1, 4); vw();
    b.vbin(Opcode::VADD, H, 1, Lx(2 * S), Lx(1 * S), Lx(0), 1, 4); vw();
    b.vbin(Opcode::VSUB, H, 1, Lx(3 * S), Lx(2 * S), Lx(0), 1, 4); vw();
    b.vbin(Opcode::VMUL, H, 1, Lx(4 * S), Lx(3 * S), Lx(0), 1, 4); vw();
    b.vun(Opcode::VABS, H, 1, Lx(5 * S), Lx(0), 1, 4); vw();
    b.vun(Opcode::VSQRT, H, 1, Lx(5 * S), Lx(5 * S), 1, 4); vw();
    b.vun(Opcode::VRSQRT, H, 1, Lx(5 * S + 512), Lx(5 * S), 1, 4); vw();
    b.vun(Opcode::VLOG, H, 1, Lx(13 * S + 512), Lx(5 * S), 1, 4); vw();
    b.vun(Opcode::VTANH, H, 1, Lx(14 * S + 512), Lx(0), 1, 4); vw();
    b.vun(Opcode::VNEG, H, 1, Lx(15 * S), Lx(0), 1, 4); vw();
    b.vbin(Opcode::VDIV, H, 1, Lx(6 * S), Lx(0), Lx(1 * S), 1, 4); vw();
    b.vun(Opcode::VRECIP, H, 1, Lx(6 * S + 512), Lx(1 * S), 1, 4); vw();
    b.vred(Opcode::VREDSUM, H, 1, Lx(7 * S), Lx(0), 1, 4, 0, kDstF32); vw();
    b.vred(Opcode::VREDSUM, H, 1, Lx(7 * S), Lx(1 * S), 1, 4, 0, kDstF32 | kAccumulate); vw();
    b.vred(Opcode::VREDMAX, H, 1, Lx(7 * S + 128), Lx(0), 1, 4); vw();
    b.vred(Opcode::VREDMIN, H, 1, Lx(7 * S + 256), Lx(0), 1, 4, 10); vw();
    b.vbin(Opcode::VMIN, H, 1, Lx(8 * S), Lx(0), Lx(7 * S + 128), 1, 4, kSrc1Scalar); vw();
    b.vbin(Opcode::VMAX, H, 1, Lx(8 * S + 512), Lx(0), Lx(1 * S), 1, 4); vw();
    b.vbcast(H, 1, Lx(9 * S), Lx(7 * S + 256), 1, 4); vw();
    b.vfill(H, 1, Lx(9 * S + 512), 2.5f, 4, 1); vw();
    b.vcvt(H, F, 1, Lx(10 * S), Lx(0), 1, 4); vw();
    b.vcvt(F, I, 1, Lx(11 * S), Lx(10 * S), 2, 4); vw();
    b.vbin(Opcode::VADD, I, 1, Lx(12 * S), Lx(11 * S), Lx(11 * S), 2, 4); vw();
    b.vun(Opcode::VNEG, I, 1, Lx(13 * S), Lx(12 * S), 1, 4); vw();
    b.vun(Opcode::VABS, I, 1, Lx(14 * S), Lx(13 * S), 1, 4); vw();
    b.vred(Opcode::VREDMAX, I, 1, Lx(15 * S + 512), Lx(14 * S), 2, 4); vw();
    b.vtranspose(H, 1, Lx(16 * S), Lx(0), 4, 64); vw();  // 64 rows of one stick: slots 16..23
    // Bytes and rounding: int8 and uint8 through every conversion, VROUND.
    const DType I8 = DType::I8, U8 = DType::U8;
    b.vcvt(H, I8, 1, Lx(27 * S), Lx(1 * S), 4); vw();
    b.vcvt(I8, H, 1, Lx(28 * S), Lx(27 * S), 2); vw();
    b.vun(Opcode::VROUND, H, 1, Lx(28 * S + 512), Lx(1 * S), 4); vw();
    b.vcvt(H, U8, 1, Lx(29 * S), Lx(28 * S + 512), 4); vw();
    b.vcvt(U8, I, 1, Lx(30 * S), Lx(29 * S), 2); vw();
    b.vcvt(I, I8, 1, Lx(31 * S), Lx(30 * S), 8); vw();
    b.vcvt(U8, H, 1, Lx(31 * S + 256), Lx(29 * S), 2); vw();
    // fp8 codes: encodes from fp16 and fp32, decodes to fp16 (in the output) and fp32.
    b.vcvtf8(H, U8, Fp8Format::E4M3, 1, Lx(29 * S + 256), Lx(1 * S), 4); vw();
    b.vcvtf8(U8, H, Fp8Format::E4M3, 1, Lx(7 * S + 512), Lx(29 * S + 256), 2); vw();
    b.vcvtf8(F, U8, Fp8Format::E5M2, 1, Lx(29 * S + 512), Lx(10 * S), 8); vw();
    b.vcvtf8(U8, H, Fp8Format::E5M2, 1, Lx(31 * S + 768), Lx(29 * S + 512), 1); vw();
    b.vcvtf8(U8, F, Fp8Format::E5M2, 1, Lx(50 * S), Lx(29 * S + 512), 1); vw();
    // A row read by every group (a bias) and folds of the groups into one (column max and sum).
    b.vbin(Opcode::VADD, H, 1, Lx(25 * S + 512), Lx(0), Lx(1 * S), 1, 4, kSrc1Row); vw();
    b.vbin(Opcode::VMAX, H, 1, Lx(26 * S + 512), Lx(1 * S), Lx(0), 1, 4, kFoldGroups); vw();
    b.vbin(Opcode::VADD, H, 1, Lx(26 * S + 640), Lx(26 * S + 512), Lx(2 * S), 1, 4, kFoldGroups); vw();
    MatmulDesc mm;
    mm.m = 4;
    mm.n = 64;
    mm.k = 64;
    mm.lda = 128;
    mm.ldb = 128;
    mm.ldc = 256;
    int md = b.mm_desc(mm);
    b.matmul(2, Lx(24 * S), Lx(0), Lx(16 * S), md, false);
    b.wait_tag(2);
    b.matmul(2, Lx(24 * S), Lx(0), Lx(16 * S), md, true);
    b.wait_tag(2);
    // int8 x int8 -> int32: A the two int8 sticks at slot 27 (rows of 128), B 128 rows of 128.
    MatmulDesc m8;
    m8.m = 2, m8.n = 128, m8.k = 128, m8.lda = 128, m8.ldb = 128, m8.ldc = 512;
    int md8 = b.mm_desc(m8);
    b.matmul(2, Lx(48 * S), Lx(27 * S), Lx(32 * S), md8, false, DType::I8);
    b.wait_tag(2);
    // Scalar code: a loop of copies at register addresses, a branch on the core id, arithmetic.
    Reg i = b.alloc(), a = b.alloc(), c = b.alloc(), k = b.alloc();
    b.loop(i, 4);
    b.muli(a, i, 128);
    b.vun(Opcode::VCOPY, H, 1, Lx(a, 25 * S), Lx(a, 0), 1, 1);
    b.wait_tag(1);
    b.end_loop();
    b.core_id(c);
    b.li(k, 3);
    b.op3(Opcode::CMPLT, a, c, k);
    b.if_(a);
    b.op3(Opcode::REM, a, k, k);
    b.op3(Opcode::MAX, a, a, k);
    b.op3(Opcode::MIN, a, a, k);
    Instr shl;
    shl.op = Opcode::SHLI;
    shl.a[0] = a.id;
    shl.a[1] = a.id;
    shl.a[2] = 7;
    b.emit(shl);  // 3 << 7 = 384
    b.vfill(H, 1, Lx(a, 26 * S), -1.0f, 1, 1);
    b.wait_tag(1);
    b.else_();
    b.vfill(H, 1, Lx(26 * S), 7.0f, 1, 1);
    b.wait_tag(1);
    b.end_if();
    b.barrier();
    b.dma_st(3, out, kZero, 0, Lx(0), ds);
    b.wait_tag(3);
    return b.finish();
}

// The non-scalar instructions by name, in order.
std::vector<std::string> async_ops(const DeviceProgram &p) {
    std::vector<std::string> v;
    for (const Instr &in : p.code)
        if (op_info(in.op).engine != Engine::Control) v.push_back(op_info(in.op).name);
    return v;
}

TEST(KtirExport, EveryInstructionFamilyComesBackAsTheSameInstructions) {
    DeviceProgram p = every_instruction();
    std::string text = ktir::export_ktir(p);
    DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(::testing::PrintToString(async_ops(q)), ::testing::PrintToString(async_ops(p)));
    std::vector<uint8_t> in(512);
    for (size_t j = 0; j < 256; j++) {
        uint16_t h = float_to_half(float(int(j % 29) - 14) * 0.125f);
        std::memcpy(&in[j * 2], &h, 2);
    }
    MachineDesc m;
    SimResult a = simulate(p, m, {in, {}}), b = simulate(q, m, {in, {}});
    ASSERT_EQ(a.buffers[1].size(), b.buffers[1].size());
    for (size_t j = 0; j < a.buffers[1].size(); j++)
        if (a.buffers[1][j] != b.buffers[1][j]) {
            ADD_FAILURE() << "first difference at byte " << j << " (LX slot " << j / S << ", offset " << j % S << ")";
            break;
        }
    EXPECT_NEAR(b.stats.cycles, a.stats.cycles, 0.05 * a.stats.cycles);
}

// A Halide sum() of fp16 values adds in fp16 (VREDSUM.f16acc); KTIR's f16 reduce imports as fp32
// accumulation, so the export refuses it by name rather than write a kernel that sums otherwise.
TEST(KtirExport, AnFp16AccumulatingSumIsRefusedByName) {
    ProgramBuilder b("f16sum", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64, 4});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64, 1});
    DmaDesc ld;
    ld.sticks = 4;
    int dl = b.dma_desc(ld);
    DmaDesc st;
    st.sticks = 1;
    int ds = b.dma_desc(st);
    b.dma_ld(0, in, kZero, 0, Lx(0), dl);
    b.wait_tag(0);
    b.vred(Opcode::VREDSUM, DType::F16, 1, Lx(S), Lx(0), 1, 4, 0, kAccF16);
    b.wait_tag(1);
    b.dma_st(3, out, kZero, 0, Lx(S), ds);
    b.wait_tag(3);
    const DeviceProgram p = b.finish();
    try {
        ktir::export_ktir(p);
        FAIL() << "exported";
    } catch (const Error &e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("(VREDSUM): accumulates in fp16, rounding every addition"), std::string::npos) << msg;
        EXPECT_NE(msg.find("sum(cast<float>(...))"), std::string::npos) << msg;
    }
}

// RING_REDUCE and BARRIER in the dialect's inter-tile form (ktdp.inter_tile_produce, then
// ktdp.inter_tile_reduce with every core a producer and a consumer): the form IBM's interpreter
// runs. They come back as the same instructions, with the same numbers.
TEST(KtirExport, RingReductionsAndBarriersAreInterTileAllReduces) {
    const int cores = 4, sticks = 2;
    ProgramBuilder b("all_reduce", cores);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {sticks * 64, cores});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {sticks * 64, cores});
    int out2 = b.buffer("out2", BufferKind::Output, DType::F32, {sticks * 64, cores});
    DmaDesc d;
    d.sticks = sticks;
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), off = b.alloc();
    b.core_id(core);
    b.muli(off, core, int32_t(sticks * 128));
    b.dma_ld(0, in, off, 0, Lx(0), desc);
    b.wait_tag(0);
    b.vcvt(DType::F16, DType::F32, 1, Lx(4 * S), Lx(0), sticks);
    b.wait_tag(1);
    b.ring_reduce(DType::F16, 2, RedOp::Max, Lx(0), sticks);
    b.wait_tag(2);
    b.ring_reduce(DType::F32, 3, RedOp::Sum, Lx(4 * S), 2 * sticks);
    b.wait_tag(3);
    b.barrier();
    b.dma_st(4, out, off, 0, Lx(0), desc);
    Reg off2 = b.alloc();
    b.muli(off2, core, int32_t(2 * sticks * 128));
    DmaDesc d2;
    d2.sticks = 2 * sticks;
    b.dma_st(5, out2, off2, 0, Lx(4 * S), b.dma_desc(d2));
    b.wait_tag(4);
    b.wait_tag(5);
    const DeviceProgram p = b.finish();

    const std::string text = ktir::export_ktir(p);
    for (const char *want : {"attributes {grid = [4]", "ktdp.inter_tile_produce producer_tiles_per_group = "
                             "affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> -> !ktdp.tile_future<tensor<128xf16>, "
                             "groups = affine_set<(g) : (g == 0)>> {",
                             "consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, identity(%",
                             "= arith.maximumf %", "= arith.addf %", " : tensor<128xf32>", "ktdp.yield_reduced %"})
        EXPECT_NE(text.find(want), std::string::npos) << want;
    EXPECT_EQ(text.find("spyre.barrier"), std::string::npos);
    EXPECT_EQ(text.find("ktdp.reduce "), std::string::npos);

    const DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(::testing::PrintToString(async_ops(q)), ::testing::PrintToString(async_ops(p)));
    std::vector<uint8_t> x(size_t(cores * sticks * 128));
    for (size_t j = 0; j < x.size() / 2; j++) {
        uint16_t h = float_to_half(float(int(j * 7 % 31) - 15) * 0.25f);
        std::memcpy(&x[j * 2], &h, 2);
    }
    MachineDesc m;
    SimResult a = simulate(p, m, {x, {}, {}}), r = simulate(q, m, {x, {}, {}});
    EXPECT_EQ(a.buffers[1], r.buffers[1]);
    EXPECT_EQ(a.buffers[2], r.buffers[2]);
    // Every core's row of out is the lane-wise maximum of the four rows of in.
    for (int c = 0; c < cores; c++)
        for (int i = 0; i < sticks * 64; i++) {
            float want = -1e9f;
            for (int k = 0; k < cores; k++) {
                uint16_t h;
                std::memcpy(&h, &x[size_t((k * sticks * 64 + i) * 2)], 2);
                want = std::max(want, half_to_float(h));
            }
            uint16_t g;
            std::memcpy(&g, &r.buffers[1][size_t((c * sticks * 64 + i) * 2)], 2);
            ASSERT_EQ(half_to_float(g), want) << "core " << c << " element " << i;
        }
}

// RING_REDUCE over groups (isa.h) exports with the groups as tile sets (floordiv and mod of the
// tile id) and imports back to the same groups, with the same numbers: 8 cores, a sum over groups
// of 4 cores 2 apart and a maximum over pairs of adjacent cores.
TEST(KtirExport, RingReductionsOverGroupsKeepTheirGroups) {
    const int cores = 8;
    ProgramBuilder b("group_reduce", cores);
    int in = b.buffer("in", BufferKind::Input, DType::F32, {32, cores});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {32, cores});
    int in2 = b.buffer("in2", BufferKind::Input, DType::F32, {32, cores});
    int out2 = b.buffer("out2", BufferKind::Output, DType::F32, {32, cores});
    DmaDesc d;
    d.sticks = 1;
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), off = b.alloc();
    b.core_id(core);
    b.muli(off, core, 128);
    b.dma_ld(0, in, off, 0, Lx(0), desc);
    b.dma_ld(1, in2, off, 0, Lx(S), desc);
    b.wait_tag(0);
    b.wait_tag(1);
    b.ring_reduce(DType::F32, 2, RedOp::Sum, Lx(0), 1, 4, 2);
    b.ring_reduce(DType::F32, 3, RedOp::Max, Lx(S), 1, 2, 1);
    b.wait_tag(2);
    b.wait_tag(3);
    b.dma_st(4, out, off, 0, Lx(0), desc);
    b.dma_st(5, out2, off, 0, Lx(S), desc);
    b.wait_tag(4);
    b.wait_tag(5);
    const DeviceProgram p = b.finish();
    const std::string text = ktir::export_ktir(p);
    for (const char *want : {"affine_set<(i)[g] : (i floordiv 8 - g floordiv 2 == 0, (i - g) mod 2 == 0, i >= 0, -i + 7 >= 0)>",
                             "groups = affine_set<(g) : (g >= 0, -g + 1 >= 0)>",
                             "affine_set<(i)[g] : (i floordiv 2 - g floordiv 1 == 0, (i - g) mod 1 == 0, i >= 0, -i + 7 >= 0)>",
                             "groups = affine_set<(g) : (g >= 0, -g + 3 >= 0)>"})
        EXPECT_NE(text.find(want), std::string::npos) << want;
    const DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    std::vector<std::pair<int32_t, int32_t>> want_groups, got_groups;
    for (const Instr &in : p.code)
        if (in.op == Opcode::RING_REDUCE) want_groups.push_back({in.a[5], std::max(1, in.a[6])});
    for (const Instr &in : q.code)
        if (in.op == Opcode::RING_REDUCE) got_groups.push_back({in.a[5], std::max(1, in.a[6])});
    EXPECT_EQ(got_groups, want_groups);
    std::vector<uint8_t> x(size_t(cores * 128));
    for (size_t j = 0; j < x.size() / 4; j++) {
        float f = float(int(j * 7 % 29) - 14);
        std::memcpy(&x[j * 4], &f, 4);
    }
    MachineDesc m;
    std::vector<uint8_t> x2(x.rbegin(), x.rend());
    SimResult a = simulate(p, m, {x, {}, x2, {}}), r = simulate(q, m, {x, {}, x2, {}});
    EXPECT_EQ(a.buffers[1], r.buffers[1]);
    EXPECT_EQ(a.buffers[3], r.buffers[3]);
}

TEST(KtirExport, ExportedTextUsesTheKtdpFormsAndOurExtensions) {
    std::string text = ktir::export_ktir(every_instruction());
    for (const char *want : {"attributes {grid = [1], spyre.sync = \"explicit\"}", "ktdp.get_compute_tile_id : index",
                             "memory_space = #ktdp.memory_space<global>, spyre.kind = \"input\"",
                             "{memory_space = #ktdp.memory_space<ct_local>}",
                             "-> !ktdp.access_tile<", "= ktdp.load %", " : <", "scf.for", "scf.if", "} else {", "linalg.matmul", "linalg.transpose",
                             "linalg.reduce", "linalg.broadcast", "tensor.splat", "math.rsqrt", "arith.fptosi",
                             "math.roundeven", "arith.fptoui", "arith.uitofp", "arith.sitofp", "arith.extui",
                             "arith.trunci", "xi8>", "xi32>) -> tensor<2x128xi32>",
                             "\"spyre.wait\"() {tags = 2 : i32}",
                             "ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + ",
                             "ktdp.yield_partial", "ktdp.yield_reduced", "-> !ktdp.tile_future<tensor<64xf16>, "
                             "groups = affine_set<(g) : (g == 0)>> {", "= ktdp.inter_tile_reduce(%",
                             "{spyre.tag = 3 : i32}", "\"spyre.to_fp8\"(", "\"spyre.from_fp8\"(",
                             "{format = \"e4m3\"} : (tensor<1x256xf16>) -> tensor<1x256xi8>",
                             "{format = \"e5m2\"} : (tensor<1x128xi8>) -> tensor<1x128xf32>"})
        EXPECT_NE(text.find(want), std::string::npos) << want;
    // The spelling before ktir-mlir-frontend#58: ktir-cpu reads `spyre_memory_space<LX>` as device memory.
    EXPECT_EQ(text.find("spyre_memory_space"), std::string::npos);
}

}  // namespace
