// An assembler for device programs: typed helpers that fill the operand slots of isa.h correctly,
// a register allocator, and structured LOOP/IF blocks. Hand-built programs (calibration, tests)
// and the code generator both emit through it; finish() verifies the result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fp8.h"
#include "program.h"

namespace spyre {

struct Reg {
    int id = 0;
};
constexpr Reg kZero{0};

// An LX byte address: R[reg] + off.
struct Lx {
    Reg reg;
    int32_t off = 0;
    Lx() = default;
    Lx(int32_t o) : off(o) {}
    Lx(Reg r, int32_t o = 0) : reg(r), off(o) {}
};

enum class RedOp : int32_t { Sum = 0, Max = 1, Min = 2 };

class ProgramBuilder {
public:
    ProgramBuilder(std::string kernel_name, int num_cores);

    // Tables.
    int buffer(const std::string &name, BufferKind kind, DType type, std::vector<int64_t> shape,
               DeviceLayout layout = {});
    int dma_desc(const DmaDesc &d);
    int mm_desc(const MatmulDesc &d);
    // The index of an equal descriptor already in the table, else of a new one: the code
    // generator's and the KTIR importer's one descriptor interner.
    int intern_dma_desc(const DmaDesc &d);
    int intern_mm_desc(const MatmulDesc &d);

    // Registers: alloc() hands out a free one (1..31), the lowest, release() returns it. The code
    // generator and the KTIR importer (which counts references on top) allocate through these.
    Reg alloc();
    std::optional<Reg> try_alloc();  // none when all 31 are in use
    void release(Reg r);
    bool allocated(Reg r) const { return r.id > 0 && r.id < kNumRegs && (used_regs_ & (1u << r.id)); }

    // Scalar.
    void li(Reg d, int64_t v);
    void mov(Reg d, Reg s);
    void op3(Opcode op, Reg d, Reg a, Reg b);  // ADD SUB MUL DIV REM MIN MAX CMPLT CMPEQ
    void add(Reg d, Reg a, Reg b) { op3(Opcode::ADD, d, a, b); }
    void mul(Reg d, Reg a, Reg b) { op3(Opcode::MUL, d, a, b); }
    void addi(Reg d, Reg a, int32_t imm);
    void muli(Reg d, Reg a, int32_t imm);
    // LDLX (isa.h): d = the int32 at LX address src, sign-extended.
    void ldlx(Reg d, Lx src);
    void core_id(Reg d);

    // Structured control: count = R[count_reg] + count_imm iterations, iv = 0, 1, ...
    void loop(Reg iv, int32_t count_imm, Reg count_reg = kZero);
    void end_loop();
    void if_(Reg cond);
    void else_();
    void end_if();

    // Vector unit: `sticks` sticks per group, `groups` groups laid out back to back.
    void vbin(Opcode op, DType t, int tag, Lx dst, Lx a, Lx b, int32_t sticks, int32_t groups = 1,
              uint8_t mode = 0);
    void vun(Opcode op, DType t, int tag, Lx dst, Lx a, int32_t sticks, int32_t groups = 1);
    void vcvt(DType from, DType to, int tag, Lx dst, Lx src, int32_t sticks, int32_t groups = 1);
    // fp8 encode (from f16/f32 to u8 codes) or decode (from u8 to f16/f32), fp8.h.
    void vcvtf8(DType from, DType to, Fp8Format fmt, int tag, Lx dst, Lx src, int32_t sticks, int32_t groups = 1);
    void vfill(DType t, int tag, Lx dst, float value, int32_t sticks, int32_t groups = 1);
    void vbcast(DType t, int tag, Lx dst, Lx scalar_src, int32_t sticks, int32_t groups = 1);
    // Lane reduction of each group into one element at dst (+ g * element size).
    void vred(Opcode op, DType t, int tag, Lx dst, Lx src, int32_t sticks, int32_t groups = 1,
              int32_t valid_elems = 0, uint8_t mode = 0);
    // VREDARGMAX / VREDARGMIN (isa.h): per group, the first extreme element into values (+ g * element
    // size) and its lane index into indices (+ g * 4, int32), both compared with and updated in place.
    void vargred(Opcode op, DType t, int tag, Lx values, Lx src, Lx indices, int32_t sticks, int32_t groups = 1,
                 int32_t valid_elems = 0);
    // VSCANSUM (isa.h): per group, dst[e] = dst[e - 1] + src[e] for 1 <= e < valid (0 = all lanes).
    void vscansum(DType t, int tag, Lx dst, Lx src, int32_t sticks, int32_t groups = 1, int32_t valid_elems = 0);
    void vtranspose(DType t, int tag, Lx dst, Lx src, int32_t rows, int32_t cols);
    // Select by lane block (vector_shift.h): element e from a where (e / block) is even, else from b.
    void vlsel(DType t, int tag, Lx dst, Lx a, Lx b, int32_t block, int32_t sticks, int32_t groups = 1);
    // VSELIDX: lane e of group g from a where e <= R[limit] (+ g when per_group), else from b (one
    // element per group when b_scalar).
    void vselidx(DType t, int tag, Lx dst, Lx a, Lx b, Reg limit, bool per_group, bool b_scalar, int32_t sticks,
                 int32_t groups = 1);
    // Strided read (vector_shift.h): element j of group g from src's row g (row_sticks apart) at
    // start + j * step (step >= 2) or start + j / -step (step <= -2).
    void vstride(DType t, int tag, Lx dst, Lx src, int32_t start, int32_t step, int32_t sticks, int32_t groups,
                 int32_t row_sticks);
    // Shifted stick access (vector_shift.h): mode 0 or one kEdge* mode with window [lo, hi].
    void vshift(DType t, int tag, Lx dst, Lx src, int32_t shift, int32_t sticks, int32_t groups = 1,
                uint8_t mode = 0, int32_t lo = 0, int32_t hi = 0);

    // t: the operands' type, F16 (C fp32) or I8 (C int32).
    void matmul(int tag, Lx c, Lx a, Lx b, int desc, bool accumulate, DType t = DType::F16);

    // shared: a broadcast load (kDmaShared) of bytes other cores load at the same instruction.
    void dma_ld(int tag, int buffer, Reg dram_reg, int32_t dram_off, Lx lx, int desc, bool shared = false);
    void dma_st(int tag, int buffer, Reg dram_reg, int32_t dram_off, Lx lx, int desc);

    void ring_send(int tag, int dir, Lx src, int32_t sticks);
    void ring_recv(int tag, int dir, Lx dst, int32_t sticks);
    // An all-reduce over every core, or (group_size > 0) over each group of group_size cores
    // group_stride apart (isa.h, RING_REDUCE).
    void ring_reduce(DType t, int tag, RedOp op, Lx buf, int32_t sticks, int32_t group_size = 0,
                     int32_t group_stride = 0);

    void wait(uint32_t tag_mask);
    void wait_tag(int tag) { wait(1u << tag); }
    void barrier();

    void emit(const Instr &in);
    size_t size() const { return prog_.code.size(); }
    const std::vector<Instr> &code() const { return prog_.code; }
    // Drops the instructions from index `n` on (a code generator retrying a step another way).
    // The dropped code must have closed every block it opened.
    void truncate(size_t n);

    // Verifies and returns the program; throws spyre::Error on an unbalanced block or bad operand.
    DeviceProgram finish();

private:
    DeviceProgram prog_;
    uint32_t used_regs_ = 1;  // bit per register; r0 is reserved
    int open_blocks_ = 0;
};

}  // namespace spyre
