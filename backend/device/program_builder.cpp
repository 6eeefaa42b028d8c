#include "program_builder.h"

#include <cstring>

#include "error.h"
#include "half.h"
#include "program_verify.h"

namespace spyre {

namespace {

Instr make(Opcode op, std::initializer_list<int32_t> ops, uint8_t dtype = 0, uint8_t mode = 0) {
    Instr in;
    in.op = op;
    in.dtype = dtype;
    in.mode = mode;
    int i = 0;
    for (int32_t v : ops) in.a[i++] = v;
    return in;
}

}  // namespace

ProgramBuilder::ProgramBuilder(std::string kernel_name, int num_cores) {
    prog_.kernel_name = std::move(kernel_name);
    prog_.num_cores = num_cores;
}

int ProgramBuilder::buffer(const std::string &name, BufferKind kind, DType type, std::vector<int64_t> shape,
                           DeviceLayout layout) {
    if (layout.order.empty() && layout.stick_dim == 0) layout = default_layout(int(shape.size()));
    prog_.buffers.push_back(BufferDecl{name, kind, type, std::move(shape), std::move(layout)});
    return int(prog_.buffers.size()) - 1;
}

int ProgramBuilder::dma_desc(const DmaDesc &d) {
    prog_.dma.push_back(d);
    return int(prog_.dma.size()) - 1;
}

int ProgramBuilder::mm_desc(const MatmulDesc &d) {
    prog_.mm.push_back(d);
    return int(prog_.mm.size()) - 1;
}

int ProgramBuilder::intern_dma_desc(const DmaDesc &d) {
    for (size_t i = 0; i < prog_.dma.size(); i++) {
        const DmaDesc &e = prog_.dma[i];
        if (e.sticks == d.sticks && e.count == d.count && e.dram_stride == d.dram_stride && e.lx_stride == d.lx_stride)
            return int(i);
    }
    return dma_desc(d);
}

int ProgramBuilder::intern_mm_desc(const MatmulDesc &d) {
    for (size_t i = 0; i < prog_.mm.size(); i++) {
        const MatmulDesc &e = prog_.mm[i];
        if (e.m == d.m && e.n == d.n && e.k == d.k && e.lda == d.lda && e.ldb == d.ldb && e.ldc == d.ldc) return int(i);
    }
    return mm_desc(d);
}

std::optional<Reg> ProgramBuilder::try_alloc() {
    for (int r = 1; r < kNumRegs; r++) {
        if (!(used_regs_ & (1u << r))) {
            used_regs_ |= 1u << r;
            return Reg{r};
        }
    }
    return std::nullopt;
}

Reg ProgramBuilder::alloc() {
    if (std::optional<Reg> r = try_alloc()) return *r;
    throw_error("kernel ", prog_.kernel_name, ": out of scalar registers (", kNumRegs - 1, " in use)");
}

void ProgramBuilder::release(Reg r) {
    if (r.id > 0) used_regs_ &= ~(1u << r.id);
}

void ProgramBuilder::li(Reg d, int64_t v) {
    emit(make(Opcode::LI, {d.id, int32_t(uint32_t(uint64_t(v))), int32_t(uint32_t(uint64_t(v) >> 32))}));
}
void ProgramBuilder::mov(Reg d, Reg s) { emit(make(Opcode::MOV, {d.id, s.id})); }
void ProgramBuilder::op3(Opcode op, Reg d, Reg a, Reg b) { emit(make(op, {d.id, a.id, b.id})); }
void ProgramBuilder::addi(Reg d, Reg a, int32_t imm) { emit(make(Opcode::ADDI, {d.id, a.id, imm})); }
void ProgramBuilder::muli(Reg d, Reg a, int32_t imm) { emit(make(Opcode::MULI, {d.id, a.id, imm})); }
void ProgramBuilder::ldlx(Reg d, Lx src) { emit(make(Opcode::LDLX, {d.id, src.reg.id, src.off})); }
void ProgramBuilder::core_id(Reg d) { emit(make(Opcode::CORE_ID, {d.id})); }

void ProgramBuilder::truncate(size_t n) {
    if (n < prog_.code.size()) prog_.code.resize(n);
}

void ProgramBuilder::loop(Reg iv, int32_t count_imm, Reg count_reg) {
    emit(make(Opcode::LOOP, {iv.id, count_reg.id, count_imm}));
    open_blocks_++;
}
void ProgramBuilder::end_loop() {
    emit(make(Opcode::ENDLOOP, {}));
    open_blocks_--;
}
void ProgramBuilder::if_(Reg cond) {
    emit(make(Opcode::IF, {cond.id}));
    open_blocks_++;
}
void ProgramBuilder::else_() { emit(make(Opcode::ELSE, {})); }
void ProgramBuilder::end_if() {
    emit(make(Opcode::ENDIF, {}));
    open_blocks_--;
}

void ProgramBuilder::vbin(Opcode op, DType t, int tag, Lx dst, Lx a, Lx b, int32_t sticks, int32_t groups,
                          uint8_t mode) {
    emit(make(op, {tag, dst.reg.id, dst.off, a.reg.id, a.off, b.reg.id, b.off, sticks, groups}, uint8_t(t), mode));
}
void ProgramBuilder::vun(Opcode op, DType t, int tag, Lx dst, Lx a, int32_t sticks, int32_t groups) {
    emit(make(op, {tag, dst.reg.id, dst.off, a.reg.id, a.off, 0, 0, sticks, groups}, uint8_t(t)));
}
void ProgramBuilder::vcvt(DType from, DType to, int tag, Lx dst, Lx src, int32_t sticks, int32_t groups) {
    emit(make(Opcode::VCVT, {tag, dst.reg.id, dst.off, src.reg.id, src.off, 0, 0, sticks, groups, int32_t(to)},
              uint8_t(from)));
}
void ProgramBuilder::vcvtf8(DType from, DType to, Fp8Format fmt, int tag, Lx dst, Lx src, int32_t sticks,
                            int32_t groups) {
    emit(make(Opcode::VCVTF8,
              {tag, dst.reg.id, dst.off, src.reg.id, src.off, int32_t(fmt), 0, sticks, groups, int32_t(to)},
              uint8_t(from)));
}
void ProgramBuilder::vfill(DType t, int tag, Lx dst, float value, int32_t sticks, int32_t groups) {
    int32_t bits;
    std::memcpy(&bits, &value, 4);
    emit(make(Opcode::VFILL, {tag, dst.reg.id, dst.off, 0, 0, 0, 0, sticks, groups, bits}, uint8_t(t)));
}
void ProgramBuilder::vbcast(DType t, int tag, Lx dst, Lx scalar_src, int32_t sticks, int32_t groups) {
    vun(Opcode::VBCAST, t, tag, dst, scalar_src, sticks, groups);
}
void ProgramBuilder::vred(Opcode op, DType t, int tag, Lx dst, Lx src, int32_t sticks, int32_t groups,
                          int32_t valid_elems, uint8_t mode) {
    emit(make(op, {tag, dst.reg.id, dst.off, src.reg.id, src.off, 0, 0, sticks, groups, valid_elems}, uint8_t(t),
              mode));
}
void ProgramBuilder::vargred(Opcode op, DType t, int tag, Lx values, Lx src, Lx indices, int32_t sticks,
                             int32_t groups, int32_t valid_elems) {
    emit(make(op, {tag, values.reg.id, values.off, src.reg.id, src.off, indices.reg.id, indices.off, sticks, groups,
                   valid_elems},
              uint8_t(t)));
}
void ProgramBuilder::vscansum(DType t, int tag, Lx dst, Lx src, int32_t sticks, int32_t groups, int32_t valid_elems) {
    emit(make(Opcode::VSCANSUM, {tag, dst.reg.id, dst.off, src.reg.id, src.off, 0, 0, sticks, groups, valid_elems},
              uint8_t(t)));
}
void ProgramBuilder::vtranspose(DType t, int tag, Lx dst, Lx src, int32_t rows, int32_t cols) {
    vun(Opcode::VTRANSPOSE, t, tag, dst, src, rows, cols);
}

void ProgramBuilder::vshift(DType t, int tag, Lx dst, Lx src, int32_t shift, int32_t sticks, int32_t groups,
                            uint8_t mode, int32_t lo, int32_t hi) {
    emit(make(Opcode::VSHIFT, {tag, dst.reg.id, dst.off, src.reg.id, src.off, shift, lo, sticks, groups, hi},
              uint8_t(t), mode));
}

void ProgramBuilder::vstride(DType t, int tag, Lx dst, Lx src, int32_t start, int32_t step, int32_t sticks,
                             int32_t groups, int32_t row_sticks) {
    emit(make(Opcode::VSTRIDE, {tag, dst.reg.id, dst.off, src.reg.id, src.off, start, step, sticks, groups, row_sticks},
              uint8_t(t), 0));
}

void ProgramBuilder::vlsel(DType t, int tag, Lx dst, Lx a, Lx b, int32_t block, int32_t sticks, int32_t groups) {
    emit(make(Opcode::VLSEL, {tag, dst.reg.id, dst.off, a.reg.id, a.off, b.reg.id, b.off, sticks, groups, block},
              uint8_t(t), 0));
}

void ProgramBuilder::vselidx(DType t, int tag, Lx dst, Lx a, Lx b, Reg limit, bool per_group, bool b_scalar,
                              int32_t sticks, int32_t groups) {
    emit(make(Opcode::VSELIDX, {tag, dst.reg.id, dst.off, a.reg.id, a.off, b.reg.id, b.off, sticks, groups, limit.id},
              uint8_t(t), uint8_t((per_group ? kLimitPerGroup : 0) | (b_scalar ? kSrc1Scalar : 0))));
}

void ProgramBuilder::matmul(int tag, Lx c, Lx a, Lx b, int desc, bool accumulate, DType t) {
    emit(make(Opcode::MATMUL, {tag, c.reg.id, c.off, a.reg.id, a.off, b.reg.id, b.off, desc}, uint8_t(t),
              accumulate ? kAccumulate : 0));
}

void ProgramBuilder::dma_ld(int tag, int buffer, Reg dram_reg, int32_t dram_off, Lx lx, int desc, bool shared) {
    emit(make(Opcode::DMA_LD, {tag, buffer, dram_reg.id, dram_off, lx.reg.id, lx.off, desc}, 0,
              shared ? kDmaShared : 0));
}
void ProgramBuilder::dma_st(int tag, int buffer, Reg dram_reg, int32_t dram_off, Lx lx, int desc) {
    emit(make(Opcode::DMA_ST, {tag, buffer, dram_reg.id, dram_off, lx.reg.id, lx.off, desc}));
}

void ProgramBuilder::ring_send(int tag, int dir, Lx src, int32_t sticks) {
    emit(make(Opcode::RING_SEND, {tag, dir, src.reg.id, src.off, sticks}));
}
void ProgramBuilder::ring_recv(int tag, int dir, Lx dst, int32_t sticks) {
    emit(make(Opcode::RING_RECV, {tag, dir, dst.reg.id, dst.off, sticks}));
}
void ProgramBuilder::ring_reduce(DType t, int tag, RedOp op, Lx buf, int32_t sticks, int32_t group_size,
                                 int32_t group_stride) {
    emit(make(Opcode::RING_REDUCE, {tag, int32_t(op), buf.reg.id, buf.off, sticks, group_size, group_stride},
              uint8_t(t)));
}

void ProgramBuilder::wait(uint32_t tag_mask) { emit(make(Opcode::WAIT, {int32_t(tag_mask)})); }
void ProgramBuilder::barrier() { emit(make(Opcode::BARRIER, {})); }

void ProgramBuilder::emit(const Instr &in) { prog_.code.push_back(in); }

DeviceProgram ProgramBuilder::finish() {
    if (open_blocks_ != 0)
        throw_error("kernel ", prog_.kernel_name, ": ", open_blocks_, " LOOP/IF block(s) left open");
    verify_program(prog_);
    return prog_;
}

}  // namespace spyre
