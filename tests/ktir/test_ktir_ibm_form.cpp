// The form of what spyre-gen -e ktir writes that IBM's interpreter (ktir-cpu) needs. ktir-cpu keeps
// every tensor a ktdp.load produces in the core's LX itself, at a bump pointer from address 0, and
// its LX is a set of typed allocations, one per first store (ktir_cpu/ops/memory_ops.py,
// MemoryOps._write_to_lx; ktir_cpu/memory.py, _read_flat / _write_flat): a tensor the export keeps
// at a fixed LX address and reads back with a ktdp.load is overwritten there by ktir-cpu's own
// copies of loaded tiles, or read across two allocations as zeros ("Read from unmapped address").
// So a value the kernel wrote to LX and reads again while it is still there is the SSA value that
// was stored, not a load of the LX tile. ktir-cpu is never in CI: these tests pin that form on the
// text (docs/ktir.md, "What spyre-gen writes, on ktir-cpu").
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include <optional>

#include "catalogue_shapes.h"
#include "device/disassembler.h"
#include "device/program_builder.h"
#include "kernel_catalog.h"
#include "ktir_export.h"
#include "ktir_import.h"
#include "ktir_reader.h"
#include "run_halves.h"
#include "sim/simulator.h"

namespace {

using namespace spyre;
using ktir_testing::small_shape;

// The ktdp.loads of ct_local (LX) tiles in a function, by line, recursively; with `fills`, not
// those of a tile at a constant address whose last store there stored a constant fill or a
// broadcast (tensor.splat, linalg.broadcast: our importer writes LX with those again for each use,
// so the export reads their tile where it is).
struct LxWalk {
    bool fills = false;
    std::map<std::string, int64_t> consts;       // index constants
    std::map<std::string, int64_t> view_addr;    // ct_local views at a constant address (-1: other)
    std::map<std::string, std::string> tile_view;
    std::set<std::string> fill_values;
    std::map<int64_t, bool> last_store_fill;     // by constant LX address
    std::vector<int> lines;
    void walk(const ktir::Region &r) {
        for (const ktir::Op &op : r.ops) {
            if (op.name == "arith.constant" && !op.results.empty() && op.value.kind == ktir::Attr::Int)
                consts[op.results[0]] = op.value.i;
            if (op.name == "tensor.splat" || op.name == "linalg.broadcast") fill_values.insert(op.results[0]);
            if (op.name == "ktdp.construct_memory_view") {
                auto it = op.attrs.find("memory_space");
                if (it != op.attrs.end() && it->second.body.find("ct_local") != std::string::npos) {
                    auto c = consts.find(op.operands[0]);
                    view_addr[op.results[0]] = c == consts.end() ? -1 : c->second;
                }
            } else if (op.name == "ktdp.construct_access_tile") {
                tile_view[op.results[0]] = op.operands[0];
            } else if (op.name == "ktdp.store" || op.name == "ktdp.load") {
                const std::string &tile = op.operands[op.name == "ktdp.store" ? 1 : 0];
                auto v = view_addr.find(tile_view[tile]);
                if (v != view_addr.end()) {
                    if (op.name == "ktdp.store") {
                        last_store_fill[v->second] = fill_values.count(op.operands[0]) > 0;
                    } else {
                        auto f = last_store_fill.find(v->second);
                        if (!fills || v->second < 0 || f == last_store_fill.end() || !f->second) lines.push_back(op.line);
                    }
                }
            }
            for (const ktir::Region &sub : op.regions) walk(sub);
        }
    }
};

std::vector<int> ibm_form_lx_loads(const std::string &text, bool fills = false) {
    ktir::Module m = ktir::read_ktir(text);
    LxWalk w;
    w.fills = fills;
    w.walk(m.funcs.at(0).body);
    return w.lines;
}

// The non-scalar instructions by name, in order.
std::vector<std::string> ibm_form_async_ops(const DeviceProgram &p) {
    std::vector<std::string> v;
    for (const Instr &in : p.code)
        if (op_info(in.op).engine != Engine::Control) v.push_back(op_info(in.op).name);
    return v;
}

// in -> exp -> exp + in -> out, a 2-D read of what a 1-D DMA wrote, and a row max of the sum:
// every LX read is of a tile written before in the same region.
DeviceProgram ibm_form_straight_line() {
    ProgramBuilder b("straight", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {256, 2});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {256, 2});
    int mx = b.buffer("mx", BufferKind::Output, DType::F32, {2});
    DmaDesc d;
    d.sticks = 8;
    DmaDesc dm;
    dm.sticks = 1;
    int dd = b.dma_desc(d), dmd = b.dma_desc(dm);
    const DType H = DType::F16;
    b.dma_ld(0, in, kZero, 0, Lx(0), dd);
    b.wait_tag(0);
    b.vun(Opcode::VEXP, H, 1, Lx(1024), Lx(0), 4, 2);
    b.wait_tag(1);
    b.vbin(Opcode::VADD, H, 1, Lx(2048), Lx(1024), Lx(0), 4, 2);
    b.wait_tag(1);
    b.vred(Opcode::VREDMAX, H, 1, Lx(3072), Lx(2048), 4, 2, 0, kDstF32);
    b.wait_tag(1);
    b.dma_st(2, out, kZero, 0, Lx(2048), dd);
    b.dma_st(3, mx, kZero, 0, Lx(3072), dmd);
    b.wait_tag(2);
    b.wait_tag(3);
    return b.finish();
}

TEST(KtirIbmForm, AStraightLineKernelReadsNoLxTileItWrote) {
    const DeviceProgram p = ibm_form_straight_line();
    const std::string text = ktir::export_ktir(p);
    EXPECT_EQ(::testing::PrintToString(ibm_form_lx_loads(text)), "{}") << text;
    // Our importer reads the SSA form back as the same instructions, computing the same bytes.
    DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(::testing::PrintToString(ibm_form_async_ops(q)), ::testing::PrintToString(ibm_form_async_ops(p)));
    auto in = ktir_testing::random_halves(512, 7);
    MachineDesc m;
    std::vector<uint8_t> img(in.size() * 2);
    std::memcpy(img.data(), in.data(), img.size());
    SimResult a = simulate(p, m, {img, {}, {}}), c = simulate(q, m, {img, {}, {}});
    EXPECT_EQ(a.buffers[1], c.buffers[1]);
    EXPECT_EQ(a.buffers[2], c.buffers[2]);
}

// A tile loaded before a loop and read in its body (a gamma), while the body writes only other
// LX places: the body reads the loaded value, defined outside it, as ktir-cpu scopes values.
TEST(KtirIbmForm, AValueFromBeforeALoopIsReadInItsBody) {
    ProgramBuilder b("loop", 1);
    int g = b.buffer("g", BufferKind::Input, DType::F16, {64});
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64, 4});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64, 4});
    DmaDesc d;
    d.sticks = 1;
    int dd = b.dma_desc(d);
    const DType H = DType::F16;
    b.dma_ld(0, g, kZero, 0, Lx(0), dd);
    b.wait_tag(0);
    Reg i = b.alloc(), off = b.alloc();
    b.loop(i, 4);
    b.muli(off, i, 128);
    b.dma_ld(0, in, off, 0, Lx(1024), dd);
    b.wait_tag(0);
    b.vbin(Opcode::VMUL, H, 1, Lx(2048), Lx(1024), Lx(0), 1, 1);
    b.wait_tag(1);
    b.dma_st(2, out, off, 0, Lx(2048), dd);
    b.wait_tag(2);
    b.end_loop();
    const DeviceProgram p = b.finish();
    const std::string text = ktir::export_ktir(p);
    EXPECT_EQ(::testing::PrintToString(ibm_form_lx_loads(text)), "{}") << text;
    DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(::testing::PrintToString(ibm_form_async_ops(q)), ::testing::PrintToString(ibm_form_async_ops(p)));
    auto gv = ktir_testing::random_halves(64, 3), iv = ktir_testing::random_halves(256, 4);
    auto ra = ktir_testing::run(p, {{"g", gv}, {"in", iv}}), rb = ktir_testing::run(q, {{"g", gv}, {"in", iv}});
    EXPECT_EQ(ra["out"], rb["out"]);
}

// The lines of a text, trimmed.
std::vector<std::string> ibm_form_lines(const std::string &text) {
    std::vector<std::string> v;
    std::istringstream is(text);
    for (std::string l; std::getline(is, l);) {
        const size_t a = l.find_first_not_of(' ');
        v.push_back(a == std::string::npos ? "" : l.substr(a));
    }
    return v;
}

// Each op by name and its operands (ins and outs of linalg ops included), recursively.
void ibm_form_ops(const ktir::Region &r, std::vector<const ktir::Op *> &out) {
    for (const ktir::Op &op : r.ops) {
        out.push_back(&op);
        for (const ktir::Region &sub : op.regions) ibm_form_ops(sub, out);
    }
}

// fp16 rows summed into fp32, the second sum accumulated onto the first (kAccumulate): the
// reduce's combiner widens its input (arith.extf of the first block argument), and its init is
// the value the first sum stored to LX.
DeviceProgram ibm_form_widening_sums() {
    ProgramBuilder b("sums", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64, 4});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {4});
    DmaDesc d;
    d.sticks = 4;
    DmaDesc ds;
    ds.sticks = 1;
    int dd = b.dma_desc(d), dsd = b.dma_desc(ds);
    const DType H = DType::F16;
    b.dma_ld(0, in, kZero, 0, Lx(0), dd);
    b.wait_tag(0);
    b.vred(Opcode::VREDSUM, H, 1, Lx(1024), Lx(0), 1, 4, 0, kDstF32);
    b.wait_tag(1);
    b.vred(Opcode::VREDSUM, H, 1, Lx(1024), Lx(0), 1, 4, 0, kDstF32 | kAccumulate);
    b.wait_tag(1);
    b.dma_st(2, out, kZero, 0, Lx(1024), dsd);
    b.wait_tag(2);
    return b.finish();
}

// ktir-cpu binds a region's block arguments from a ^bb0 label, else from the operands of the
// region's first op (the accumulator is then unbound: "Value '%_N' not found in core 0"); the export
// writes MLIR's other form, an empty () and the arguments in the entry block's label. And ktir-cpu
// folds a reduce's input in the input's element type, rounding each row's sum to it before it meets
// the init: an f16 sum into f32 widens its input with a tensor arith.extf first, so the region
// combines f32 with f32. Our reader reads the pair back as the one widening instruction.
TEST(KtirIbmForm, AWideningReduceWidensItsInputFirstAndNamesItsBlockArgumentsInABb0Label) {
    const DeviceProgram p = ibm_form_widening_sums();
    const std::string text = ktir::export_ktir(p);
    const std::vector<std::string> lines = ibm_form_lines(text);
    int reduces = 0;
    for (size_t i = 1; i + 3 < lines.size(); i++) {
        if (lines[i].find("linalg.reduce") == std::string::npos) continue;
        reduces++;
        EXPECT_NE(lines[i - 1].find("arith.extf"), std::string::npos) << text;
        EXPECT_NE(lines[i - 1].find("xf16> to tensor<"), std::string::npos) << text;
        EXPECT_NE(lines[i].find("ins(" + lines[i - 1].substr(0, lines[i - 1].find(' ')) + " : tensor<"),
                  std::string::npos)
            << text;
        EXPECT_EQ(lines[i + 1], "() {") << text;
        EXPECT_EQ(lines[i + 2].rfind("^bb0(%", 0), 0u) << text;
        EXPECT_NE(lines[i + 2].find(": f32, %"), std::string::npos) << text;
        EXPECT_NE(lines[i + 2].find(": f32):"), std::string::npos) << text;
        EXPECT_EQ(lines[i + 3].find("arith.extf"), std::string::npos) << text;
    }
    EXPECT_EQ(reduces, 2) << text;
    // Read back: the same instructions, computing the same bytes.
    DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(::testing::PrintToString(ibm_form_async_ops(q)), ::testing::PrintToString(ibm_form_async_ops(p)));
    auto iv = ktir_testing::random_halves(256, 5);
    auto ra = ktir_testing::run(p, {{"in", iv}}), rb = ktir_testing::run(q, {{"in", iv}});
    EXPECT_EQ(ra["out"], rb["out"]);
}

// A fill stored to device memory, and a sum that starts from a fill kept in LX (softmax's stages:
// the maxima and sums start from their identity). ktir-cpu places its own copies of loaded tiles in
// LX from address 0, so a fill read back from its LX tile with a ktdp.load is what ktir-cpu put
// there: the export writes the fill's value itself to device memory and into the reduction's init,
// and our importer reads the pair back as the same instructions (the fill's tile is read where the
// device program read it).
DeviceProgram ibm_form_fills_kept_in_lx() {
    ProgramBuilder b("fills", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64, 32});
    int zero = b.buffer("zero", BufferKind::Output, DType::F32, {64});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {32});
    DmaDesc d, d2, ds;
    d.sticks = 32;
    d2.sticks = 2;
    ds.sticks = 1;
    int dd = b.dma_desc(d), d2d = b.dma_desc(d2), dsd = b.dma_desc(ds);
    b.dma_ld(0, in, kZero, 0, Lx(0), dd);
    b.vfill(DType::F32, 1, Lx(16384), 0.0f, 2);   // 64 zeros, stored whole to device memory
    b.vfill(DType::F32, 1, Lx(20480), 0.5f, 1);   // the 32 sums start from 0.5
    b.wait_tag(0);
    b.wait_tag(1);
    b.dma_st(2, zero, kZero, 0, Lx(16384), d2d);
    b.vred(Opcode::VREDSUM, DType::F16, 1, Lx(20480), Lx(0), 1, 32, 0, kDstF32 | kAccumulate);
    b.wait_tag(1);
    b.dma_st(3, out, kZero, 0, Lx(20480), dsd);
    b.wait_tag(2);
    b.wait_tag(3);
    return b.finish();
}

TEST(KtirIbmForm, AFillStoredToDeviceMemoryOrSummedIntoIsWrittenAsItsValueNotReadFromLx) {
    const DeviceProgram p = ibm_form_fills_kept_in_lx();
    const std::string text = ktir::export_ktir(p);
    // No LX tile is read back: neither the 64 zeros nor the sums' init.
    EXPECT_TRUE(ibm_form_lx_loads(text).empty()) << text;
    // Read back: the same instructions, computing the same bytes.
    DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(::testing::PrintToString(ibm_form_async_ops(q)), ::testing::PrintToString(ibm_form_async_ops(p)));
    auto iv = ktir_testing::random_halves(64 * 32, 7);
    auto ra = ktir_testing::run(p, {{"in", iv}}), rb = ktir_testing::run(q, {{"in", iv}});
    EXPECT_EQ(ra["zero"], rb["zero"]);
    EXPECT_EQ(ra["out"], rb["out"]);
}

// A broadcast a kernel stores into LX and then keeps there while it writes other LX: the importer
// frees the broadcast's source once the tile holds it (flash attention's running maxima).
TEST(KtirIbmForm, AFillWrittenToLxAgainIsNotKeptWhereItWasFirstStored) {
    // Stored into LX twice: each store writes the fill again, so neither tile is the value's home.
    const std::string text = R"(module {
  func.func @twice(%out: index) attributes {grid = [1]} {
    %c0 = arith.constant 0 : index
    %a = arith.constant 0 : index
    %b = arith.constant 256 : index
    %va = ktdp.construct_memory_view %a, sizes: [64], strides: [1] {memory_space = #ktdp.memory_space<ct_local>} : memref<64xf32>
    %ta = ktdp.construct_access_tile %va[%c0] : memref<64xf32> -> !ktdp.access_tile<64xindex>
    %vb = ktdp.construct_memory_view %b, sizes: [64], strides: [1] {memory_space = #ktdp.memory_space<ct_local>} : memref<64xf32>
    %tb = ktdp.construct_access_tile %vb[%c0] : memref<64xf32> -> !ktdp.access_tile<64xindex>
    %vo = ktdp.construct_memory_view %out, sizes: [64], strides: [1] {memory_space = #ktdp.memory_space<global>} : memref<64xf32>
    %to = ktdp.construct_access_tile %vo[%c0] : memref<64xf32> -> !ktdp.access_tile<64xindex>
    %one = arith.constant 1.0 : f32
    %f = tensor.splat %one : tensor<64xf32>
    ktdp.store %f, %ta : tensor<64xf32>, !ktdp.access_tile<64xindex>
    %two = arith.constant 2.0 : f32
    %g = tensor.splat %two : tensor<64xf32>
    ktdp.store %g, %ta : tensor<64xf32>, !ktdp.access_tile<64xindex>
    ktdp.store %f, %tb : tensor<64xf32>, !ktdp.access_tile<64xindex>
    ktdp.store %f, %to : tensor<64xf32>, !ktdp.access_tile<64xindex>
    return
  }
})";
    DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    auto r = ktir_testing::run(q, {});
    ASSERT_EQ(r["out"].size(), 64u * 2);  // 64 f32
    float first;
    std::memcpy(&first, r["out"].data(), 4);
    EXPECT_EQ(first, 1.0f);  // the fill's value, not the 2.0 written over its first tile
}

// ktir-cpu counts a value's uses from op operands, but parses a linalg.reduce's outs into an
// attribute, and frees a value at its one counted use: an init that the store into LX also used
// was gone by the reduce. The export passes it through a value the reduce alone reads.
TEST(KtirIbmForm, AnAccumulatingReduceReadsItsInitFromAValueNoOtherOpUses) {
    const DeviceProgram p = ibm_form_widening_sums();
    const std::string text = ktir::export_ktir(p);
    ktir::Module m = ktir::read_ktir(text);
    std::vector<const ktir::Op *> ops;
    ibm_form_ops(m.funcs.at(0).body, ops);
    int checked = 0;
    for (const ktir::Op *op : ops) {
        if (op->name != "linalg.reduce") continue;
        const std::string &init = op->operands.back();
        int uses = 0;
        for (const ktir::Op *o : ops)
            for (const std::string &x : o->operands) uses += x == init;
        EXPECT_EQ(uses, 1) << "%" << init << "\n" << text;
        checked++;
    }
    EXPECT_EQ(checked, 2) << text;
}

// The import of an exported text, or a test failure naming the case (none).
std::optional<DeviceProgram> imported_or_failure(const std::string &text, const std::string &name) {
    try {
        return ktir::import_ktir(ktir::read_ktir(text), {});
    } catch (const std::exception &e) {
        ADD_FAILURE() << name << ": " << e.what() << "\n" << text;
        return std::nullopt;
    }
}

// The last instruction of `op` in a program, or null.
const Instr *last_of(const DeviceProgram &p, Opcode op) {
    const Instr *found = nullptr;
    for (const Instr &in : p.code)
        if (in.op == op) found = &in;
    return found;
}

// `text` with `from` replaced by `to` must be refused with a message holding each of `says`.
void expect_refused_when_changed(const std::string &text, const std::string &from, const std::string &to,
                                 const std::vector<std::string> &says) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << text;
    std::string bad = text;
    bad.replace(at, from.size(), to);
    try {
        ktir::import_ktir(ktir::read_ktir(bad), {});
        ADD_FAILURE() << "imported\n" << bad;
    } catch (const std::exception &e) {
        const std::string m = e.what();
        for (const std::string &part : says) EXPECT_NE(m.find(part), std::string::npos) << m;
    }
}

// VSHIFT (vector_shift.h) of `groups` rows of two sticks, the rows loaded at LX 1024 (one stick of
// room below them, which a read before row 0 reaches), to LX 8192 and stored.
DeviceProgram ibm_form_shift(int32_t shift, uint8_t mode, int32_t lo, int32_t hi, int32_t groups) {
    ProgramBuilder b("shift", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {128, groups + 2});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {128, groups});
    DmaDesc d;
    d.sticks = 2 * (groups + 2);
    DmaDesc o;
    o.sticks = 2 * groups;
    int dd = b.dma_desc(d), od = b.dma_desc(o);
    b.dma_ld(0, in, kZero, 0, Lx(768), dd);  // rows -1 .. groups: a read past either end reads data
    b.wait_tag(0);
    b.vshift(DType::F16, 1, Lx(8192), Lx(1024), shift, 2, groups, mode, lo, hi);
    b.wait_tag(1);
    b.dma_st(2, out, kZero, 0, Lx(8192), od);
    b.wait_tag(2);
    return b.finish();
}

// ktir-cpu skips ops it does not know, so spyre.shift's result was "not found" (conv1d, rope,
// stencil). The export spells VSHIFT in tensor.insert_slice / extract_slice / reshape of zero
// splats and the elements read, which ktir-cpu runs, with the instruction's operands as spyre.*
// attributes on the last insert_slice; our importer checks that the slices compute what those
// say and rebuilds the same VSHIFT. The elements read are sliced from the value that was loaded
// into LX (ktir-cpu's LX does not keep a tile at its address). Every edge mode, shifts left and right by less and more than a
// stick, windows inside and beyond the row.
TEST(KtirIbmForm, AShiftedReadIsSlicesThatImportBackToTheSameVshift) {
    struct Case {
        int32_t shift;
        uint8_t mode;
        int32_t lo, hi, groups;
    };
    const std::vector<Case> cases = {
        {-1, 0, 0, 0, 1},         {3, 0, 0, 0, 2},          {-70, 0, 0, 0, 3},        {-1, kEdgeZero, 0, 1 << 30, 4},
        {32, kEdgeZero, -(1 << 30), 127, 2}, {-5, kEdgeZero, 2, 100, 3}, {-3, kEdgeClamp, 0, 127, 2},
        {4, kEdgeClamp, 10, 120, 3}, {-3, kEdgeMirrorImage, 0, 127, 2}, {6, kEdgeMirrorImage, 5, 110, 2},
        {-9, kEdgeMirrorInterior, 0, 127, 3}, {200, kEdgeMirrorInterior, 0, 127, 1}, {-2, kEdgeMirrorImage, 0, 0, 2}};
    for (const Case &c : cases) {
        const std::string name = "shift " + std::to_string(c.shift) + " mode " + std::to_string(c.mode) + " [" +
                                 std::to_string(c.lo) + ", " + std::to_string(c.hi) + "] x" + std::to_string(c.groups);
        const DeviceProgram p = ibm_form_shift(c.shift, c.mode, c.lo, c.hi, c.groups);
        const std::string text = ktir::export_ktir(p);
        EXPECT_EQ(text.find("\"spyre.shift\""), std::string::npos) << name << "\n" << text;
        EXPECT_NE(text.find("tensor.insert_slice"), std::string::npos) << name << "\n" << text;
        // The elements read are a slice of the loaded rows' value, not a ktdp.load of part of their tile.
        EXPECT_EQ(::testing::PrintToString(ibm_form_lx_loads(text)), "{}") << name << "\n" << text;
        const std::optional<DeviceProgram> q = imported_or_failure(text, name);
        if (!q) continue;
        const Instr *a = last_of(p, Opcode::VSHIFT), *b = last_of(*q, Opcode::VSHIFT);
        ASSERT_TRUE(a && b) << name;
        EXPECT_EQ(a->mode, b->mode) << name;
        for (int k : {5, 6, 7, 8, 9}) EXPECT_EQ(a->a[k], b->a[k]) << name << ", operand a" << k;
        auto iv = ktir_testing::random_halves(size_t(128 * (c.groups + 2)), 11);
        auto ra = ktir_testing::run(p, {{"in", iv}}), rb = ktir_testing::run(*q, {{"in", iv}});
        EXPECT_EQ(ra["out"], rb["out"]) << name;
    }
}

// The importer reads the slices, not only the attributes: slices that read other elements than
// the attributes say are refused, naming the first element that differs.
TEST(KtirIbmForm, SlicesThatDisagreeWithTheirShiftAttributesAreRefused) {
    // Element (0, 0) would read position 1; the slices read 0.
    expect_refused_when_changed(ktir::export_ktir(ibm_form_shift(-3, kEdgeClamp, 0, 127, 2)), "spyre.lo = 0 : i32",
                                "spyre.lo = 1 : i32",
                                {"tensor.insert_slice: element (0, 0) of the slices reads source element ",
                                 ", spyre.shift and its edge say source element "});
}

// VLSEL (rope_interleaved's even and odd lanes) of `groups` rows of `sticks` sticks from LX 0 and
// LX 8192 (blocks of `block` lanes) to LX 16384, and stored.
DeviceProgram ibm_form_lane_select(int32_t block, int32_t sticks, int32_t groups) {
    ProgramBuilder b("lsel", 1);
    const int64_t row = 64 * int64_t(sticks);
    int a = b.buffer("a", BufferKind::Input, DType::F16, {row, groups});
    int c = b.buffer("b", BufferKind::Input, DType::F16, {row, groups});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {row, groups});
    DmaDesc d;
    d.sticks = sticks * groups;
    int dd = b.dma_desc(d);
    b.dma_ld(0, a, kZero, 0, Lx(0), dd);
    b.dma_ld(0, c, kZero, 0, Lx(8192), dd);
    b.wait_tag(0);
    b.vlsel(DType::F16, 1, Lx(16384), Lx(0), Lx(8192), block, sticks, groups);
    b.wait_tag(1);
    b.dma_st(2, out, kZero, 0, Lx(16384), dd);
    b.wait_tag(2);
    return b.finish();
}

// ktir-cpu skips ops it does not know, so spyre.lane_select's result was "not found"
// (rope_interleaved x4). The export spells VLSEL as tensor.extract_slice of each operand (strided,
// one per column of a block pair, or one per block) inserted into a zero result, the block as
// spyre.lane_select on the last insert_slice; our importer checks the slices element by element
// and rebuilds the same VLSEL. Blocks of one lane (rope), of several, of a stick and more, a
// last block cut short.
TEST(KtirIbmForm, ALaneSelectIsSlicesThatImportBackToTheSameVlsel) {
    struct Case {
        int32_t block, sticks, groups;
    };
    const std::vector<Case> cases = {{1, 1, 2}, {1, 2, 3}, {2, 1, 1}, {3, 2, 2}, {32, 1, 2}, {64, 2, 2}, {50, 2, 1}};
    for (const Case &c : cases) {
        const std::string name = "block " + std::to_string(c.block) + ", " + std::to_string(c.sticks) + " sticks x" +
                                 std::to_string(c.groups);
        const DeviceProgram p = ibm_form_lane_select(c.block, c.sticks, c.groups);
        const std::string text = ktir::export_ktir(p);
        EXPECT_EQ(text.find("\"spyre.lane_select\""), std::string::npos) << name << "\n" << text;
        EXPECT_NE(text.find("spyre.lane_select = " + std::to_string(c.block) + " : i32"), std::string::npos)
            << name << "\n" << text;
        EXPECT_EQ(::testing::PrintToString(ibm_form_lx_loads(text)), "{}") << name << "\n" << text;
        const std::optional<DeviceProgram> q = imported_or_failure(text, name);
        if (!q) continue;
        EXPECT_EQ(::testing::PrintToString(ibm_form_async_ops(*q)), ::testing::PrintToString(ibm_form_async_ops(p)))
            << name;
        const Instr *a = last_of(p, Opcode::VLSEL), *b = last_of(*q, Opcode::VLSEL);
        ASSERT_TRUE(a && b) << name;
        for (int k = 1; k < 10; k++) EXPECT_EQ(a->a[k], b->a[k]) << name << ", operand a" << k;
        const size_t n = size_t(64 * c.sticks * c.groups);
        auto av = ktir_testing::random_halves(n, 31), bv = ktir_testing::random_halves(n, 32);
        auto ra = ktir_testing::run(p, {{"a", av}, {"b", bv}}), rb = ktir_testing::run(*q, {{"a", av}, {"b", bv}});
        EXPECT_EQ(ra["out"], rb["out"]) << name;
    }
}

// The importer reads the slices, not only the attribute: slices that select other lanes than the
// block says are refused, naming the first element that differs.
TEST(KtirIbmForm, SlicesThatDisagreeWithTheirLaneSelectBlockAreRefused) {
    // Column 2: the slices read b, a block of 1 says a.
    expect_refused_when_changed(ktir::export_ktir(ibm_form_lane_select(2, 1, 2)), "spyre.lane_select = 2 : i32",
                                "spyre.lane_select = 1 : i32",
                                {"tensor.insert_slice: element (0, 2) reads %", "[2], but spyre.lane_select = 1 reads %"});
}

// Over the catalogue: kernels without LX data carried across loop iterations read no LX tile
// they wrote but constant fills and broadcasts (each other such read is the stored SSA value);
// what is left reads LX across loop iterations (docs/ktir.md).
// conv1d schedule=auto's start: rows loaded into LX as one run of sticks, copied (VCOPY) to another
// tile in the copy's 2-D shape, and the copy stored to device memory while the next load already
// overwrites the loaded rows. The export reads the copy through a tensor.reshape of the loaded
// value (the same bytes in the copy's shape), stored to the copy's tile, and the DMA_ST stores a
// reshape of that. The importer took both reshapes for views of the loaded rows, so the imported
// DMA_ST read the rows' tile, which the next DMA_LD overwrites before any WAIT on the store: the
// simulator stopped with "race: overwrites LX ... WAIT on that tag first" (spyre-run conv1d.ktir).
// A value that views another's LX and is first stored to a tile is, from that store on, that tile.
TEST(KtirIbmForm, AReshapedValueStoredToAnLxTileIsReadFromThatTile) {
    ProgramBuilder b("copy", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64, 4});
    int in2 = b.buffer("in2", BufferKind::Input, DType::F16, {64, 4});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64, 4});
    int out2 = b.buffer("out2", BufferKind::Output, DType::F16, {64, 4});
    DmaDesc d;
    d.sticks = 4;
    int dd = b.dma_desc(d);
    const DType H = DType::F16;
    b.dma_ld(5, in, kZero, 0, Lx(8192), dd);
    b.wait_tag(5);
    b.vun(Opcode::VCOPY, H, 2, Lx(0), Lx(8192), 4, 1);
    b.wait_tag(2);
    b.dma_st(6, out, kZero, 0, Lx(0), dd);
    b.dma_ld(5, in2, kZero, 0, Lx(8192), dd);  // the store reads LX 0, not 8192: no WAIT on tag 6 first
    b.wait_tag(5);
    b.dma_st(7, out2, kZero, 0, Lx(8192), dd);
    b.wait_tag(6);
    b.wait_tag(7);
    const DeviceProgram p = b.finish();
    const std::string text = ktir::export_ktir(p);
    ASSERT_NE(text.find("tensor.reshape"), std::string::npos) << text;  // the form that went wrong
    EXPECT_EQ(::testing::PrintToString(ibm_form_lx_loads(text)), "{}") << text;
    DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(::testing::PrintToString(ibm_form_async_ops(q)), ::testing::PrintToString(ibm_form_async_ops(p)));
    // Each DMA_ST reads the LX address the device program's did.
    std::vector<int32_t> pa, qa;
    for (const Instr &i : p.code)
        if (i.op == Opcode::DMA_ST) pa.push_back(i.a[5]);
    for (const Instr &i : q.code)
        if (i.op == Opcode::DMA_ST) qa.push_back(i.a[5]);
    EXPECT_EQ(::testing::PrintToString(qa), ::testing::PrintToString(pa));
    auto iv = ktir_testing::random_halves(256, 21), iv2 = ktir_testing::random_halves(256, 22);
    std::map<std::string, ktir_testing::Halves> ra, rb;
    ra = ktir_testing::run(p, {{"in", iv}, {"in2", iv2}});
    ASSERT_NO_THROW(rb = ktir_testing::run(q, {{"in", iv}, {"in2", iv2}}));  // was: race on LX 8192
    EXPECT_EQ(ra["out"], rb["out"]);
    EXPECT_EQ(ra["out2"], rb["out2"]);
    EXPECT_EQ(ra["out"], iv);
}

// The same with the copy in the load's shape: the export stores the loaded value itself to the
// copy's tile, so one SSA value is held at two tiles, and the importer reads it from the first.
TEST(KtirIbmForm, AValueCopiedToASecondLxTileIsReadFromTheTileTheProgramRead) {
    ProgramBuilder b("copy2", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64, 4});
    int in2 = b.buffer("in2", BufferKind::Input, DType::F16, {64, 4});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64, 4});
    int out2 = b.buffer("out2", BufferKind::Output, DType::F16, {64, 4});
    DmaDesc d;
    d.sticks = 1;
    d.count = {4, 1, 1};
    d.dram_stride = {128, 0, 0};
    d.lx_stride = {128, 0, 0};
    int dd = b.dma_desc(d);
    const DType H = DType::F16;
    b.dma_ld(5, in, kZero, 0, Lx(8192), dd);
    b.wait_tag(5);
    b.vun(Opcode::VCOPY, H, 2, Lx(0), Lx(8192), 1, 4);
    b.wait_tag(2);
    b.dma_st(6, out, kZero, 0, Lx(0), dd);
    b.dma_ld(5, in2, kZero, 0, Lx(8192), dd);
    b.wait_tag(5);
    b.dma_st(7, out2, kZero, 0, Lx(8192), dd);
    b.wait_tag(6);
    b.wait_tag(7);
    const DeviceProgram p = b.finish();
    const std::string text = ktir::export_ktir(p);
    EXPECT_EQ(::testing::PrintToString(ibm_form_lx_loads(text)), "{}") << text;
    DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(::testing::PrintToString(ibm_form_async_ops(q)), ::testing::PrintToString(ibm_form_async_ops(p)));
    std::vector<int32_t> pa, qa;
    for (const Instr &i : p.code)
        if (i.op == Opcode::DMA_ST) pa.push_back(i.a[5]);
    for (const Instr &i : q.code)
        if (i.op == Opcode::DMA_ST) qa.push_back(i.a[5]);
    EXPECT_EQ(::testing::PrintToString(qa), ::testing::PrintToString(pa)) << text;
    auto iv = ktir_testing::random_halves(256, 23), iv2 = ktir_testing::random_halves(256, 24);
    std::map<std::string, ktir_testing::Halves> ra, rb;
    ra = ktir_testing::run(p, {{"in", iv}, {"in2", iv2}});
    ASSERT_NO_THROW(rb = ktir_testing::run(q, {{"in", iv}, {"in2", iv2}})) << text;
    EXPECT_EQ(ra["out"], rb["out"]);
    EXPECT_EQ(ra["out2"], rb["out2"]);
}

TEST(KtirIbmForm, CatalogueKernelsWithoutLoopCarriedLxReadOnlyFillsFromLx) {
    for (const auto &[app, schedule] : std::vector<std::pair<std::string, std::string>>{
             {"gelu", "root"}, {"gelu", "tiles"}, {"gelu", "cores32"}, {"softmax", "stage4"}, {"rmsnorm", "tiles"}}) {
        const report::Shape shape = small_shape(app);
        const DeviceProgram p = report::compile_kernel(app, schedule, shape, {}, "", nullptr);
        const std::string text = ktir::export_ktir(p);
        EXPECT_EQ(::testing::PrintToString(ibm_form_lx_loads(text, true)), "{}") << app << "/" << schedule;
    }
}

// ktir-cpu's parser joins an op whose text ends in an attribute or a region (linalg.transpose's
// permutation, linalg.broadcast's dimensions, the closing brace of scf.for, scf.if and
// linalg.reduce) with the next line unless that line starts an SSA assignment or is blank
// (ktir_cpu/parser.py, _tokenize_operations): a ktdp.store after a transpose, and one after a
// reduce (rmsnorm/cores32's sums of squares), were dropped so. Each such op is followed by a blank
// line.
TEST(KtirIbmForm, AnOpEndingInAnAttributeOrARegionIsFollowedByABlankLine) {
    int ops = 0, regions = 0;
    for (const auto &[app, schedule] : std::vector<std::pair<std::string, std::string>>{
             {"transpose", "tiles"}, {"layernorm", "tiles"}, {"rmsnorm", "cores32"}}) {
        const DeviceProgram p = report::compile_kernel(app, schedule, small_shape(app), {}, "", nullptr);
        std::istringstream text(ktir::export_ktir(p));
        std::string line, next;
        while (std::getline(text, line)) {
            const bool op = line.find("= linalg.transpose") != std::string::npos ||
                            line.find("= linalg.broadcast") != std::string::npos;
            // A region's end inside the function (the function's own is at 2 spaces, the module's at 0).
            const size_t first = line.find_first_not_of(' ');
            const bool region = first != std::string::npos && first >= 4 && line.substr(first) == "}";
            if (!op && !region) continue;
            (op ? ops : regions)++;
            ASSERT_TRUE(std::getline(text, next));
            EXPECT_EQ(next, "") << app << "/" << schedule << ": after\n" << line;
        }
    }
    EXPECT_GT(ops, 1);
    EXPECT_GT(regions, 1);
}

// The program's LX at the top of LX when the export is given its high water (as spyre-gen does):
// ktir-cpu puts the tensors it loads at LX address 0 up, where they overwrote the program's own
// tiles (a transpose's second tile read the first's data). The import moves the LX back.
TEST(KtirIbmForm, WithItsHighWaterTheProgramsLxIsAtTheTopOfLxAndImportsBack) {
    const DeviceProgram p = report::compile_kernel("transpose", "tiles", small_shape("transpose"), {}, "", nullptr);
    const std::string plain = ktir::export_ktir(p);
    EXPECT_EQ(plain.find("spyre.lx_offset"), std::string::npos);
    ktir::ExportOptions eo;
    eo.lx_high_water_bytes = 40000;
    const std::string text = ktir::export_ktir(p, {}, eo);
    const int64_t shift = (MachineDesc{}.lx_bytes - 40000) / 128 * 128;
    EXPECT_NE(text.find("spyre.lx_offset = " + std::to_string(shift) + " : i64"), std::string::npos) << text;
    // Every ct_local view at a constant address is at or above the shift (in elements of fp16).
    ktir::Module m = ktir::read_ktir(text);
    LxWalk w;
    w.walk(m.funcs.at(0).body);
    int constant_views = 0;
    for (const auto &[view, addr] : w.view_addr)
        if (addr >= 0) {
            constant_views++;
            EXPECT_GE(addr * 2, shift) << view;
        }
    EXPECT_GT(constant_views, 0);
    const DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    const DeviceProgram r = ktir::import_ktir(ktir::read_ktir(plain), {});
    EXPECT_EQ(disassemble(q), disassemble(r));
}

// ktir-cpu keeps LX as typed allocations, each made by the first store at an address: the f16
// probabilities that attention/unfused stores over its dead f32 scores were cast into the f32
// allocation and cut at its end (rows 64-127 came out 0.92 off). With its high water, the export
// gives each element type a copy of the program's LX span of its own (spyre.lx_offset for the
// first, spyre.lx_offset_<type> below it), each declared whole at the start; the import moves every
// view back by its type's offset, to the same program.
TEST(KtirIbmForm, EachElementTypeGetsLxOfItsOwnDeclaredWholeAndImportsBack) {
    const DeviceProgram p = report::compile_kernel("attention", "unfused", small_shape("attention"), {}, "", nullptr);
    SimOptions every_iteration;  // as spyre-gen measures it
    every_iteration.timing_only = true;
    every_iteration.summarize_loops = false;
    const int64_t high_water = simulate(p, MachineDesc{}, {}, every_iteration).stats.lx_peak_bytes;
    const int64_t lx = MachineDesc{}.lx_bytes;
    ASSERT_LT(3 * high_water, lx);
    ktir::ExportOptions eo;
    eo.lx_high_water_bytes = high_water;
    const std::string text = ktir::export_ktir(p, {}, eo);
    const int64_t top = (lx - high_water) / 128 * 128, space = lx - top;
    ASSERT_NE(text.find("spyre.lx_offset = " + std::to_string(top) + " : i64"), std::string::npos) << text.substr(0, 400);
    // attention's first LX type is fp16 (Q's tile); its fp32 scores live one space below.
    EXPECT_NE(text.find("spyre.lx_offset_f32 = " + std::to_string(top - space) + " : i64"), std::string::npos);
    EXPECT_NE(text.find("%_lx_f16 = tensor.empty() : tensor<" + std::to_string(space / 2) + "xf16>"), std::string::npos);
    EXPECT_NE(text.find("%_lx_f32 = tensor.empty() : tensor<" + std::to_string(space / 4) + "xf32>"), std::string::npos);
    // Every LX view at a constant address lies in its own type's space.
    ktir::Module m = ktir::read_ktir(text);
    std::map<std::string, int64_t> consts;
    int views = 0;
    for (const ktir::Op &op : m.funcs.at(0).body.ops) {
        if (op.name == "arith.constant" && !op.results.empty() && op.value.kind == ktir::Attr::Int)
            consts[op.results[0]] = op.value.i;
        if (op.name != "ktdp.construct_memory_view" || !consts.count(op.operands[0])) continue;
        const ktir::Type &t = op.result_types.at(0);
        auto ms = op.attrs.find("memory_space");
        if (ms == op.attrs.end() || ms->second.body.find("ct_local") == std::string::npos) continue;
        const int64_t eb = t.bits / 8, at = consts[op.operands[0]] * eb, base = eb == 4 ? top - space : top;
        EXPECT_GE(at, base) << op.line;
        EXPECT_LT(at, base + space) << op.line;
        views++;
    }
    EXPECT_GT(views, 4);
    const DeviceProgram q = ktir::import_ktir(m, {});
    EXPECT_EQ(disassemble(q), disassemble(ktir::import_ktir(ktir::read_ktir(ktir::export_ktir(p)), {})));
    // A high water too large for two spaces above one free space: both types share the top.
    eo.lx_high_water_bytes = lx / 2;
    const std::string shared = ktir::export_ktir(p, {}, eo);
    EXPECT_EQ(shared.find("spyre.lx_offset_"), std::string::npos);
    EXPECT_EQ(shared.find("%_lx_f"), std::string::npos);
}

// ktir-cpu skips ops it does not know: flash_attention/kv_chunked's causal mask (VSELIDX), written
// as our "spyre.index_select", defined nothing, and ktir-cpu stopped at its first use ("Value '%_193' not
// found"). The export spells VSELIDX in standard ops (lane indices compared with the limit, plus the
// row index per group, and an arith.select of the two sources); our importer checks that mask and
// reads the select back as the one VSELIDX.
TEST(KtirIbmForm, AnIndexSelectIsWrittenInStandardOpsAndImportsBackToTheSameInstruction) {
    for (const bool per_group : {false, true}) {
        for (const bool one_per_row : {false, true}) {
            // 4 rows of 2 sticks (128 lanes) masked at lane L = 70 (+ the row with per_group).
            ProgramBuilder b("mask", 1);
            const DType H = DType::F16;
            int in = b.buffer("in", BufferKind::Input, DType::F16, {128, 4});
            int other = b.buffer("other", BufferKind::Input, DType::F16, one_per_row ? std::vector<int64_t>{4}
                                                                                      : std::vector<int64_t>{128, 4});
            int out = b.buffer("out", BufferKind::Output, DType::F16, {128, 4});
            DmaDesc whole, row;
            whole.sticks = 8;
            row.sticks = 1;
            const int dw = b.dma_desc(whole), dr = b.dma_desc(row);
            b.dma_ld(0, in, kZero, 0, Lx(0), dw);
            b.dma_ld(1, other, kZero, 0, Lx(1024), one_per_row ? dr : dw);
            b.wait_tag(0);
            b.wait_tag(1);
            Reg lim = b.alloc();
            b.li(lim, 70);
            b.vselidx(H, 2, Lx(2048), Lx(0), Lx(1024), lim, per_group, one_per_row, 2, 4);
            b.wait_tag(2);
            b.dma_st(3, out, kZero, 0, Lx(2048), dw);
            b.wait_tag(3);
            const DeviceProgram p = b.finish();
            const std::string text = ktir::export_ktir(p);
            EXPECT_EQ(text.find("\"spyre.index_select\""), std::string::npos) << text;
            EXPECT_NE(text.find("arith.cmpi ule, "), std::string::npos);
            EXPECT_NE(text.find("{spyre.index_select = " + std::to_string(per_group ? 1 : 0) + " : i32}"), std::string::npos);
            const DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
            EXPECT_EQ(::testing::PrintToString(ibm_form_async_ops(q)), ::testing::PrintToString(ibm_form_async_ops(p)));
            const auto x = ktir_testing::random_halves(512, 3), y = ktir_testing::random_halves(512, 4);
            std::vector<uint8_t> xi(1024), yi(one_per_row ? 128 : 1024);
            std::memcpy(xi.data(), x.data(), xi.size());
            std::memcpy(yi.data(), y.data(), yi.size());
            SimResult a = simulate(p, MachineDesc{}, {xi, yi, {}}), c = simulate(q, MachineDesc{}, {xi, yi, {}});
            EXPECT_EQ(a.buffers[2], c.buffers[2]);
        }
    }
}

// ktir-cpu multiplies a linalg.matmul in its operands' type and rounds the sum to it
// (ArithOps.matmul, np.matmul in fp16): linear/pe came out up to 196 ULP off. The export widens fp16
// operands to fp32 first, as the PE array sums in fp32, and our importer reads each such widening
// back as part of the MATMUL: the same instructions.
TEST(KtirIbmForm, AMatmulWidensItsFp16OperandsFirstAndImportsBackToTheSameMatmul) {
    const DeviceProgram p = report::compile_kernel("linear", "pe", small_shape("linear"), {}, "", nullptr);
    const std::string text = ktir::export_ktir(p);
    const size_t mm = text.find("= linalg.matmul ins(");
    ASSERT_NE(mm, std::string::npos);
    const std::string line = text.substr(mm, text.find('\n', mm) - mm);
    EXPECT_NE(line.find("xf32>, tensor<"), std::string::npos) << line;
    EXPECT_EQ(line.find("xf16>"), std::string::npos) << line;
    EXPECT_NE(text.rfind("arith.extf", mm), std::string::npos);
    const DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(ibm_form_async_ops(q), ibm_form_async_ops(p));
}

// ktir-cpu makes each first store at an LX address an allocation of its own and reads zeros past
// the end of one (_read_flat in memory.py): rope's output tile, filled a row per loop iteration
// and stored whole by one DMA, came back one row and zeros. The export declares such a tile before
// the loop with a store of tensor.empty() of the DMA's shape, which our importer takes as no
// instruction (the tile's contents are undefined until written).
TEST(KtirIbmForm, ATileALoopFillsInPiecesIsDeclaredWholeBeforeTheLoop) {
    const DeviceProgram p = report::compile_kernel("rope", "root", small_shape("rope"), {}, "", nullptr);
    const std::string text = ktir::export_ktir(p);
    const size_t loop = text.find("scf.for");
    ASSERT_NE(loop, std::string::npos);
    const size_t empty = text.rfind("= tensor.empty() : tensor<", loop);
    ASSERT_NE(empty, std::string::npos) << text.substr(0, loop);
    const std::string value = text.substr(text.rfind('%', text.rfind(" = tensor.empty", loop)),
                                          text.rfind(" = tensor.empty", loop) - text.rfind('%', text.rfind(" = tensor.empty", loop)));
    EXPECT_NE(text.find("ktdp.store " + value + ", ", empty), std::string::npos) << value;
    EXPECT_LT(text.find("ktdp.store " + value + ", ", empty), loop);
    const DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(ibm_form_async_ops(q), ibm_form_async_ops(p));
}

// ktir-cpu cuts a store short at the end of the allocation the first store at its address made:
// conv1d/root loads one stick per row into a fixed LX address, then two, and lost the second half.
// The export declares that address at the start with the larger DMA's extent (tensor.empty()
// stored there, before any load), and imports back to the same instructions.
TEST(KtirIbmForm, AnLxAddressALaterDmaFillsFurtherIsDeclaredWithItsLargestExtent) {
    const DeviceProgram p = report::compile_kernel("conv1d", "root", small_shape("conv1d"), {}, "", nullptr);
    const std::string text = ktir::export_ktir(p);
    const size_t first_load = text.find("= ktdp.load");
    const size_t empty = text.find("= tensor.empty() : tensor<");
    ASSERT_NE(empty, std::string::npos);
    EXPECT_LT(empty, first_load);
    const DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(ibm_form_async_ops(q), ibm_form_async_ops(p));
}

// The declaration covers a DMA of several rows (conv1d/cores32 stores 2 rows of 64 filled a row per
// iteration: 128 elements declared), and is left out after a DMA loaded the tile, which then holds
// data an empty store would zero in ktir-cpu (conv1d/tiles loads its output's tile of 64 rows of 128
// first: its 8192-element declaration, the tile a DMA of several rows fills, comes before any load).
TEST(KtirIbmForm, ARowsDmaTileIsDeclaredUnlessADmaLoadedItBefore) {
    const std::string cores32 = ktir::export_ktir(
        report::compile_kernel("conv1d", "cores32", small_shape("conv1d"), {}, "", nullptr));
    EXPECT_NE(cores32.find("= tensor.empty() : tensor<128xf16>"), std::string::npos);
    const std::string tiles = ktir::export_ktir(
        report::compile_kernel("conv1d", "tiles", small_shape("conv1d"), {}, "", nullptr));
    const size_t first_load = tiles.find("= ktdp.load");
    ASSERT_NE(first_load, std::string::npos);
    EXPECT_EQ(tiles.find("= tensor.empty() : tensor<8192xf16>", first_load), std::string::npos);
}

// A double-buffered loop as a pipelined schedule makes it (rope/auto): each iteration prefetches
// the next tile in an IF into the other of two fixed LX places, and its address register, written
// in the IF, is written again by the inner loop before anything reads it. ktir-cpu frees the LX a
// branch allocates when the branch ends, and its parser takes no scf.if results: the export
// declares both places at the start (tensor.empty() stored there) and the IF yields nothing. It
// imports back to the same instructions, and computes the same bytes.
TEST(KtirIbmForm, ATilePrefetchedInABranchIsDeclaredFirstAndTheBranchYieldsNothingDead) {
    ProgramBuilder b("prefetch", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64, 4});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64, 4});
    DmaDesc d;
    d.sticks = 1;
    int dd = b.dma_desc(d);
    const DType H = DType::F16;
    Reg i = b.alloc(), nxt = b.alloc(), cond = b.alloc(), addr = b.alloc(), j = b.alloc();
    // Row `nxt` (when it is one of the 4) into LX `at` on `tag`, in a branch.
    auto prefetch = [&](int tag, int32_t at) {
        b.li(cond, 4);
        b.op3(Opcode::CMPLT, cond, nxt, cond);
        b.if_(cond);
        b.muli(addr, nxt, 128);
        b.dma_ld(tag, in, addr, 0, Lx(at), dd);
        b.end_if();
    };
    b.dma_ld(0, in, kZero, 0, Lx(0), dd);
    b.loop(i, 2);
    // The odd row's tile, prefetched while the even one is used: row 2i + 1 into LX 128.
    b.muli(nxt, i, 2);
    b.addi(nxt, nxt, 1);
    prefetch(1, 128);
    b.wait_tag(0);
    b.loop(j, 1);
    b.muli(addr, j, 0);  // the address register, written again before it is read
    b.vun(Opcode::VEXP, H, 2, Lx(addr, 256), Lx(0), 1, 1);
    b.wait_tag(2);
    b.end_loop();
    b.muli(addr, i, 256);
    b.dma_st(3, out, addr, 0, Lx(256), dd);
    b.wait_tag(1);
    b.vun(Opcode::VEXP, H, 2, Lx(384), Lx(128), 1, 1);
    b.wait_tag(2);
    b.addi(addr, addr, 128);
    b.dma_st(3, out, addr, 0, Lx(384), dd);
    b.wait_tag(3);
    // The next even row into LX 0.
    b.addi(nxt, nxt, 1);
    prefetch(0, 0);
    b.end_loop();
    const DeviceProgram p = b.finish();
    const std::string text = ktir::export_ktir(p);
    EXPECT_EQ(text.find("= scf.if"), std::string::npos) << text;
    const size_t loop = text.find("scf.for");
    ASSERT_NE(loop, std::string::npos);
    // LX 128, written only in the branch, is declared before the loop (as is LX 0, loaded again there).
    int declared = 0;
    for (size_t at = text.find("= tensor.empty() : tensor<64xf16>"); at != std::string::npos && at < loop;
         at = text.find("= tensor.empty() : tensor<64xf16>", at + 1))
        declared++;
    EXPECT_EQ(declared, 2) << text.substr(0, loop);
    DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(::testing::PrintToString(ibm_form_async_ops(q)), ::testing::PrintToString(ibm_form_async_ops(p)));
    auto iv = ktir_testing::random_halves(256, 5);
    auto ra = ktir_testing::run(p, {{"in", iv}}), rb = ktir_testing::run(q, {{"in", iv}});
    EXPECT_EQ(ra["out"], rb["out"]);
}

// A DMA of several runs into LX (flash_attention/kv_resident loads a head's K as 64 rows of 2 x 64
// strided in LX) is a scatter to ktir-cpu, which needs the allocation there first ("Scatter to
// unmapped address"): its place is declared at the start, before any load, and the export imports
// back to the same instructions.
TEST(KtirIbmForm, AStridedDmaIntoLxIsDeclaredBeforeAnyLoad) {
    const DeviceProgram p =
        report::compile_kernel("flash_attention", "kv_resident", small_shape("flash_attention"), {}, "", nullptr);
    int64_t span = 0;  // the first strided load's LX extent, in fp16 elements
    for (const Instr &in : p.code)
        if (in.op == Opcode::DMA_LD && span == 0) {
            const DmaDesc &d = p.dma[size_t(in.a[6])];
            if (d.count[0] * d.count[1] * d.count[2] == 1) continue;
            int64_t bytes = int64_t(d.sticks) * 128;
            for (int k = 0; k < 3; k++) bytes += int64_t(d.count[size_t(k)] - 1) * d.lx_stride[size_t(k)];
            span = bytes / 2;
        }
    ASSERT_GT(span, 0) << "the kernel loads a strided tile";
    const std::string text = ktir::export_ktir(p);
    const size_t empty = text.find("= tensor.empty() : tensor<" + std::to_string(span) + "xf16>");
    ASSERT_NE(empty, std::string::npos) << span;
    EXPECT_LT(empty, text.find("= ktdp.load"));
    const DeviceProgram q = ktir::import_ktir(ktir::read_ktir(text), {});
    EXPECT_EQ(ibm_form_async_ops(q), ibm_form_async_ops(p));
}

}  // namespace
