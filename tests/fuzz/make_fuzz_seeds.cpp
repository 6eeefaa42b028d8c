// Writes the fuzzers' seed corpora: small hand-built programs that use every instruction family
// (DMA loops, vector ops and masks, byte conversions, matmul, ring transfers and reductions, barriers) as .spyre files, machine
// descriptions as JSON, a few layout byte strings, and KTIR: the hand-written test kernels of
// tests/ktir/kernels and the seed programs exported to KTIR, and tiny Llama checkpoints (one file,
// two shards, a tied head, no rope scaling). Usage: make_fuzz_seeds OUT_DIR.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "device/machine_desc.h"
#include "device/program_builder.h"
#include "device/program_io.h"
#include "checkpoint_input.h"
#include "ktir_export.h"
#include "tiny_checkpoint.h"

namespace fs = std::filesystem;
using namespace spyre;

namespace {

DeviceProgram streaming(int cores) {
    ProgramBuilder b("stream", cores);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {256, 16 * cores});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {256, 16 * cores});
    DmaDesc d;
    d.sticks = 4;
    d.count[0] = 4;
    d.dram_stride[0] = 512;
    d.lx_stride[0] = 512;
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), off = b.alloc(), t = b.alloc(), i = b.alloc();
    b.core_id(core);
    b.li(t, 16 * 512);
    b.mul(off, core, t);
    b.loop(i, 4);
    b.dma_ld(0, in, off, 0, Lx(0), desc);
    b.wait_tag(0);
    b.vun(Opcode::VEXP, DType::F16, 1, Lx(8192), Lx(0), 16);
    b.vbin(Opcode::VADD, DType::F16, 1, Lx(8192), Lx(8192), Lx(0), 16);
    b.vred(Opcode::VREDMAX, DType::F16, 1, Lx(16384), Lx(8192), 4, 4);
    b.vshift(DType::F16, 1, Lx(24576), Lx(8192), -1, 4, 4, kEdgeClamp, 0, 199);  // a 3-tap stencil's left tap
    b.vshift(DType::F16, 1, Lx(32768), Lx(8192), 2, 4, 4, kEdgeZero, 0, 199);
    b.vshift(DType::F16, 1, Lx(40960), Lx(8192), 1, 16, 1);
    b.vshift(DType::F16, 1, Lx(24576), Lx(8192), -2, 4, 4, kEdgeMirrorImage, 0, 199);  // mirror_image
    b.vshift(DType::F16, 1, Lx(32768), Lx(8192), 70, 4, 4, kEdgeMirrorInterior, 0, 199);
    b.vlsel(DType::F16, 1, Lx(40960), Lx(24576), Lx(32768), 1, 4, 4);  // even and odd lanes
    b.vselidx(DType::F16, 1, Lx(40960), Lx(40960), Lx(32768), i, true, false, 1, 4);  // a causal mask, limit i
    b.vselidx(DType::F16, 1, Lx(40960), Lx(40960), Lx(16384), t, false, true, 1, 4);  // a tail mask, scalar pad
    b.wait_tag(1);
    b.dma_st(2, out, off, 0, Lx(8192), desc);
    b.wait_tag(2);
    b.addi(off, off, 2048);
    b.end_loop();
    return b.finish();
}

DeviceProgram matmul() {
    ProgramBuilder b("matmul", 2);
    int a = b.buffer("A", BufferKind::Input, DType::F16, {64, 16});
    int w = b.buffer("W", BufferKind::Input, DType::F16, {64, 64});
    int c = b.buffer("C", BufferKind::Output, DType::F32, {64, 32});
    DmaDesc da;
    da.sticks = 16;
    DmaDesc dw;
    dw.sticks = 64;
    DmaDesc dc;
    dc.sticks = 32;
    MatmulDesc mm;
    mm.m = 16, mm.n = 64, mm.k = 64, mm.lda = 128, mm.ldb = 128, mm.ldc = 256;
    int ida = b.dma_desc(da), idw = b.dma_desc(dw), idc = b.dma_desc(dc), imm = b.mm_desc(mm);
    Reg core = b.alloc(), off = b.alloc(), t = b.alloc();
    b.core_id(core);
    b.li(t, 4096);
    b.mul(off, core, t);
    b.dma_ld(0, a, kZero, 0, Lx(0), ida);
    b.dma_ld(0, w, kZero, 0, Lx(4096), idw);
    b.wait_tag(0);
    b.matmul(1, Lx(16384), Lx(0), Lx(4096), imm, false);
    b.wait_tag(1);
    b.dma_st(2, c, off, 0, Lx(16384), idc);
    b.wait_tag(2);
    return b.finish();
}

DeviceProgram ring(int cores) {
    ProgramBuilder b("ring", cores);
    b.vfill(DType::F32, 0, Lx(0), 1.0f, 2);
    b.wait_tag(0);
    b.ring_send(1, 1, Lx(0), 2);
    b.ring_recv(2, -1, Lx(4096), 2);
    b.wait(0x6);
    b.ring_reduce(DType::F32, 3, RedOp::Sum, Lx(0), 2);
    b.wait_tag(3);
    b.barrier();
    return b.finish();
}

// int8 codes dequantized to fp16, rounded and quantized to uint8 (the byte types and VROUND), and
// an int8 matmul.
DeviceProgram quantize() {
    ProgramBuilder b("quantize", 1);
    int q = b.buffer("q", BufferKind::Input, DType::I8, {256, 4});
    int out = b.buffer("out", BufferKind::Output, DType::U8, {256, 4});
    DmaDesc d;
    d.sticks = 8;
    int desc = b.dma_desc(d);
    b.dma_ld(0, q, kZero, 0, Lx(0), desc);
    b.wait_tag(0);
    b.vcvt(DType::I8, DType::F16, 1, Lx(4096), Lx(0), 8);
    b.vun(Opcode::VROUND, DType::F16, 1, Lx(4096), Lx(4096), 16);
    b.vcvt(DType::F16, DType::U8, 1, Lx(8192), Lx(4096), 16);
    b.wait_tag(1);
    MatmulDesc mm;  // int8 x int8 -> int32 on the PE array
    mm.m = 4, mm.n = 128, mm.k = 256, mm.lda = 256, mm.ldb = 128, mm.ldc = 512;
    b.matmul(3, Lx(65536), Lx(0), Lx(16384), b.mm_desc(mm), false, DType::I8);
    b.wait_tag(3);
    b.dma_st(2, out, kZero, 0, Lx(8192), desc);
    b.wait_tag(2);
    return b.finish();
}

// fp16 values encoded to E4M3 codes, decoded back (E5M2 too, into fp32): VCVTF8 and its format
// operand.
DeviceProgram fp8() {
    ProgramBuilder b("fp8", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {256, 2});
    int out = b.buffer("out", BufferKind::Output, DType::U8, {256, 2});
    DmaDesc d;
    d.sticks = 8;
    DmaDesc o;
    o.sticks = 4;
    int ind = b.dma_desc(d), outd = b.dma_desc(o);
    b.dma_ld(0, in, kZero, 0, Lx(0), ind);
    b.wait_tag(0);
    b.vcvtf8(DType::F16, DType::U8, Fp8Format::E4M3, 1, Lx(4096), Lx(0), 8);
    b.vcvtf8(DType::U8, DType::F16, Fp8Format::E4M3, 1, Lx(8192), Lx(4096), 4);
    b.vcvtf8(DType::U8, DType::F32, Fp8Format::E5M2, 1, Lx(16384), Lx(4096), 4);
    b.wait_tag(1);
    b.dma_st(2, out, kZero, 0, Lx(4096), outd);
    b.wait_tag(2);
    return b.finish();
}

// Per-row argmax and argmin (value and index beside each other) and a running sum along the rows:
// VREDARGMAX, VREDARGMIN and VSCANSUM, which have no KTIR form (so no exported seed).
DeviceProgram row_scans() {
    ProgramBuilder b("row_scans", 2);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {200, 8});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {200, 8});
    DmaDesc d;
    d.sticks = 4;
    d.count[0] = 4;
    d.dram_stride[0] = 256;
    d.lx_stride[0] = 256;
    int desc = b.dma_desc(d);
    Reg core = b.alloc(), off = b.alloc(), t = b.alloc();
    b.core_id(core);
    b.li(t, 1024);
    b.mul(off, core, t);
    b.dma_ld(0, in, off, 0, Lx(0), desc);
    b.wait_tag(0);
    b.vfill(DType::F16, 1, Lx(4096), -65504.0f, 1);
    b.vfill(DType::I32, 1, Lx(8192), 0.0f, 1);
    b.vargred(Opcode::VREDARGMAX, DType::F16, 1, Lx(4096), Lx(0), Lx(8192), 4, 4, 200);
    b.vargred(Opcode::VREDARGMIN, DType::F16, 1, Lx(4096), Lx(0), Lx(8192), 4, 4, 200);
    b.vun(Opcode::VCOPY, DType::F16, 1, Lx(12288), Lx(0), 16);
    b.vscansum(DType::F16, 1, Lx(12288), Lx(0), 4, 4, 200);
    b.wait_tag(1);
    b.dma_st(2, out, off, 0, Lx(12288), desc);
    b.wait_tag(2);
    return b.finish();
}

// A leaky ReLU by a data select: a mask of the negative elements (VCMPLT against 0, one per row),
// then VSELM between the scaled row and the row (neither has a KTIR form: no exported seed).
DeviceProgram data_select() {
    ProgramBuilder b("data_select", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64, 4});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64, 4});
    DmaDesc d;
    d.sticks = 4;
    int desc = b.dma_desc(d);
    b.dma_ld(0, in, kZero, 0, Lx(0), desc);
    b.wait_tag(0);
    b.vfill(DType::F16, 1, Lx(4096), 0.0f, 1);
    b.vbin(Opcode::VCMPLT, DType::F16, 1, Lx(8192), Lx(0), Lx(4096), 1, 4, kSrc1Scalar);
    b.vfill(DType::F16, 1, Lx(4224), 0.125f, 1);
    b.vbin(Opcode::VMUL, DType::F16, 1, Lx(12288), Lx(0), Lx(4224), 1, 4, kSrc1Scalar);
    b.vbin(Opcode::VCMPEQ, DType::F16, 1, Lx(16384), Lx(0), Lx(0), 1, 4);
    b.vbin(Opcode::VSELM, DType::F16, 1, Lx(8192), Lx(12288), Lx(0), 1, 4);
    b.vbin(Opcode::VCMPLE, DType::F16, 1, Lx(16384), Lx(8192), Lx(0), 1, 4);
    b.wait_tag(1);
    b.dma_st(2, out, kZero, 0, Lx(8192), desc);
    b.wait_tag(2);
    return b.finish();
}

// Strided reads (VSTRIDE, no KTIR form): a downsample's odd lanes, and a linear upsample's second
// tap from half a stick in.
DeviceProgram resampling() {
    ProgramBuilder b("resampling", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {256, 4});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {128, 4});
    DmaDesc d;
    d.sticks = 16;
    int desc = b.dma_desc(d);
    DmaDesc o;
    o.sticks = 8;
    int odesc = b.dma_desc(o);
    b.dma_ld(0, in, kZero, 0, Lx(0), desc);
    b.wait_tag(0);
    b.vstride(DType::F16, 1, Lx(8192), Lx(0), 1, 2, 2, 4, 4);
    b.vstride(DType::F16, 1, Lx(8192), Lx(64), 1, -2, 1, 4, 4);
    b.wait_tag(1);
    b.dma_st(2, out, kZero, 0, Lx(8192), odesc);
    b.wait_tag(2);
    return b.finish();
}

// A causal mask (VSELIDX per row, one element per row on the other side), then an f32 widening over
// the f16 input's dead bytes: exported with its high water, its KTIR has an index select in
// standard ops and an LX span per element type (docs/ktir.md).
DeviceProgram masked_rows() {
    ProgramBuilder b("masked_rows", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {128, 4});
    int fill = b.buffer("fill", BufferKind::Input, DType::F16, {4});
    int out = b.buffer("out", BufferKind::Output, DType::F32, {128, 4});
    DmaDesc whole, one;
    whole.sticks = 8;
    one.sticks = 1;
    DmaDesc wide;
    wide.sticks = 16;
    const int dw = b.dma_desc(whole), d1 = b.dma_desc(one), dd = b.dma_desc(wide);
    b.dma_ld(0, in, kZero, 0, Lx(0), dw);
    b.dma_ld(1, fill, kZero, 0, Lx(1024), d1);
    b.wait_tag(0);
    b.wait_tag(1);
    Reg lim = b.alloc();
    b.li(lim, 70);
    b.vselidx(DType::F16, 2, Lx(2048), Lx(0), Lx(1024), lim, true, true, 2, 4);
    b.wait_tag(2);
    b.vcvt(DType::F16, DType::F32, 2, Lx(0), Lx(2048), 2, 4);
    b.wait_tag(2);
    b.dma_st(3, out, kZero, 0, Lx(0), dd);
    b.wait_tag(3);
    return b.finish();
}

// An embedding lookup: the ids into LX, then per token an id read with LDLX, clamped, and its table
// row loaded at that offset and stored (LDLX has no KTIR form either).
DeviceProgram gather() {
    ProgramBuilder b("gather", 1);
    int table = b.buffer("table", BufferKind::Input, DType::F16, {64, 100});
    int ids = b.buffer("ids", BufferKind::Input, DType::I32, {8});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64, 8});
    DmaDesc row;
    row.sticks = 1;
    int desc = b.dma_desc(row);
    b.dma_ld(0, ids, kZero, 0, Lx(0), desc);
    b.wait_tag(0);
    Reg t = b.alloc(), addr = b.alloc(), id = b.alloc(), hi = b.alloc();
    b.li(hi, 99);
    b.loop(t, 8);
    b.muli(addr, t, 4);
    b.ldlx(id, Lx(addr, 0));
    b.op3(Opcode::MIN, id, id, hi);
    b.op3(Opcode::MAX, id, id, kZero);
    b.muli(id, id, 128);
    b.dma_ld(1, table, id, 0, Lx(4096), desc);
    b.wait_tag(1);
    b.muli(addr, t, 128);
    b.dma_st(2, out, addr, 0, Lx(4096), desc);
    b.wait_tag(2);
    b.end_loop();
    return b.finish();
}

// A bias row read by every row (kSrc1Row) and the column maxima and sums of the rows (kFoldGroups),
// so the fuzzers start from both modes and from their KTIR forms.
DeviceProgram rows_and_folds() {
    ProgramBuilder b("rows_and_folds", 1);
    int in = b.buffer("in", BufferKind::Input, DType::F16, {64, 4});
    int out = b.buffer("out", BufferKind::Output, DType::F16, {64, 6});
    DmaDesc ld, st;
    ld.sticks = 4;
    st.sticks = 6;
    int dl = b.dma_desc(ld), ds = b.dma_desc(st);
    b.dma_ld(0, in, kZero, 0, Lx(0), dl);
    b.wait_tag(0);
    b.vbin(Opcode::VADD, DType::F16, 1, Lx(4096), Lx(0), Lx(384), 1, 4, kSrc1Row);
    b.vbin(Opcode::VMAX, DType::F16, 1, Lx(4608), Lx(0), Lx(4096), 1, 4, kFoldGroups);
    b.vbin(Opcode::VADD, DType::F16, 1, Lx(4736), Lx(4608), Lx(0), 1, 4, kFoldGroups);
    b.wait_tag(1);
    b.dma_st(2, out, kZero, 0, Lx(4096), ds);
    b.wait_tag(2);
    return b.finish();
}

void write(const fs::path &p, const std::string &bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_fuzz_seeds OUT_DIR\n");
        return 2;
    }
    fs::path out = argv[1];
    for (const char *d : {"program", "machine", "layout", "ktir", "tuned", "checkpoint"}) fs::create_directories(out / d);
    int n = 0;
    for (const DeviceProgram &p : {streaming(1), streaming(4), matmul(), ring(4), quantize(), fp8(), rows_and_folds()}) {
        std::vector<uint8_t> bytes = serialize_program(p);
        write(out / "program" / (std::to_string(n) + ".spyre"), std::string(bytes.begin(), bytes.end()));
        write(out / "ktir" / ("exported" + std::to_string(n++) + ".ktir"), ktir::export_ktir(p));
    }
    {
        ktir::ExportOptions top;
        top.lx_high_water_bytes = 4096;
        write(out / "ktir" / "exported_masked_rows.ktir", ktir::export_ktir(masked_rows(), {}, top));
    }
    for (const DeviceProgram &p : {row_scans(), gather(), data_select(), resampling()}) {
        std::vector<uint8_t> bytes = serialize_program(p);
        write(out / "program" / (std::to_string(n++) + ".spyre"), std::string(bytes.begin(), bytes.end()));
    }
    for (const auto &e : fs::directory_iterator(KTIR_KERNELS))
        if (e.path().extension() == ".ktir") fs::copy_file(e.path(), out / "ktir" / e.path().filename(),
                                                           fs::copy_options::overwrite_existing);
    write(out / "machine" / "default.json", MachineDesc().to_json_text());
    write(out / "machine" / "small.json", R"({"cores": 8, "clock_ghz": 2.0, "dram_bytes_per_ns": 100})");
    write(out / "machine" / "typo.json", R"({"corse": 8})");
    write(out / "layout" / "rank2", std::string("\x01\x00\x40\x10\x01\x02\x01\x00\x05", 9));
    write(out / "layout" / "rank3", std::string("\x02\x01\x20\x08\x03\x00\x03\x02\x01\x00\x03", 11));
    // Tuning database entries as auto_schedule stores them: a row schedule and a matmul's layouts.
    write(out / "tuned" / "rows",
          R"({"directives":[{"kind":0,"func":"F3","vars":["A1"],"ints":[16,0],"at_func":"","update":0,"fixed":false},)"
          R"({"kind":1,"func":"F3","vars":["A1","yo","yi"],"ints":[2],"at_func":"","update":0,"fixed":false},)"
          R"({"kind":7,"func":"P0","vars":["yo"],"ints":[],"at_func":"F3","update":0,"fixed":false}],)"
          R"("layouts":[{"stick_dim":0,"order":[]},{"stick_dim":0,"order":[]}],"us":1.19,"exact":false,)"
          R"("family":"rows","summary":"rows cores=16","candidates":1848,"timed":573,"failed":36,"search_seconds":2.6})");
    write(out / "tuned" / "layouts",
          R"({"directives":[{"kind":9,"func":"F1","vars":["R0"],"ints":[],"at_func":"","update":0,"fixed":false}],)"
          R"("layouts":[{"stick_dim":0,"order":[1,2,0]},{"stick_dim":0,"order":[]},{"stick_dim":0,"order":[2,1,0]}],)"
          R"("us":12.5,"exact":true,"family":"matmul","summary":"m","candidates":9,"timed":9,"failed":0,"search_seconds":1})");
    // Llama checkpoints at a small shape (the reader's limits, not the device's).
    {
        namespace t = spyre::llama::test;
        t::TinyShape s;
        s.hidden = 16, s.heads = 2, s.kv_heads = 1, s.head_dim = 8, s.intermediate = 24, s.vocab = 32, s.layers = 1;
        const std::vector<t::TestTensor> tensors = t::tiny_tensors(s);
        const nlohmann::json config = t::tiny_config(s);
        auto single = [&](const nlohmann::json &c, const std::vector<t::TestTensor> &ts) {
            fuzz::CheckpointInput in;
            in.config = c.dump();
            in.files = {{"model.safetensors", t::safetensors_bytes(ts)}};
            return fuzz::encode_checkpoint_input(in);
        };
        write(out / "checkpoint" / "single", single(config, tensors));
        nlohmann::json tied = config, plain = config;
        tied["tie_word_embeddings"] = true;
        tied["eos_token_id"] = {30, 31};
        write(out / "checkpoint" / "tied", single(tied, std::vector<t::TestTensor>(tensors.begin(), tensors.end() - 1)));
        plain["rope_scaling"] = nullptr;
        plain.erase("head_dim");
        write(out / "checkpoint" / "unscaled", single(plain, tensors));
        fuzz::CheckpointInput sharded;
        sharded.config = config.dump();
        std::vector<t::TestTensor> a, b;
        nlohmann::json index = {{"weight_map", nlohmann::json::object()}};
        for (size_t i = 0; i < tensors.size(); i++) {
            (i % 2 ? b : a).push_back(tensors[i]);
            index["weight_map"][tensors[i].name] = i % 2 ? fuzz::kShard2 : fuzz::kShard1;
        }
        sharded.index = index.dump();
        sharded.files = {{fuzz::kShard1, t::safetensors_bytes(a)}, {fuzz::kShard2, t::safetensors_bytes(b)}};
        write(out / "checkpoint" / "sharded", fuzz::encode_checkpoint_input(sharded));
    }
    return 0;
}
