#include "lx_access.h"

#include <algorithm>
#include <cstdint>

#include "device/error.h"
#include "device/fp8.h"
#include "device/vector_shift.h"

namespace spyre {

namespace {

// Range arithmetic mixes int64 registers with int32 counts whose products can exceed int64
// (2^31 sticks * 2^31 groups * 128 bytes). Every intermediate is clamped to +-2^61, far outside any
// LX, so a sum of two clamped values cannot overflow and a huge request still fails the range check.
constexpr int64_t kClamp = int64_t(1) << 61;

int64_t clamp(int64_t v) { return std::min(std::max(v, -kClamp), kClamp); }

int64_t sadd(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return a < 0 ? -kClamp : kClamp;
    return clamp(r);
}

int64_t smul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return (a < 0) != (b < 0) ? -kClamp : kClamp;
    return clamp(r);
}

int64_t round_up(int64_t v, int64_t m) { return smul((v + m - 1) / m, m); }

class Resolver {
public:
    Resolver(const Instr &in, const int64_t *regs, const MachineDesc &m, size_t pc)
        : in_(in), regs_(regs), m_(m), pc_(pc) {}

    template <typename... Parts>
    [[noreturn]] void fail(const Parts &...parts) const {
        throw_error("instruction ", pc_, " (", op_info(in_.op).name, "): ", parts...);
    }

    int64_t stick() const { return m_.stick_bytes; }

    // LX address regs[a[reg_slot]] + a[imm_slot].
    int64_t addr(int reg_slot, int imm_slot) const {
        int r = in_.a[reg_slot];
        if (r < 0 || r >= kNumRegs) fail("register ", r, " in operand ", reg_slot, " out of range");
        return sadd(regs_[r], in_.a[imm_slot]);
    }

    int64_t count(int slot, const char *what) const {
        int32_t v = in_.a[slot];
        if (v <= 0) fail(what, " count ", v, " is not positive");
        return v;
    }

    // A range [begin, begin + bytes) of operand `what`, inside LX and `begin` aligned to `align`
    // (the stick for stick operands, the element size for element operands).
    LxRange range(const char *what, int64_t begin, int64_t bytes, int64_t align, bool stick_operand) const {
        LxRange r{begin, sadd(begin, bytes)};
        if (r.begin < 0 || r.end > m_.lx_bytes)
            fail(what, " LX range [", r.begin, ", ", r.end, ") is outside LX (", m_.lx_bytes, " bytes)");
        if (begin % align != 0) {
            if (stick_operand) fail(what, " LX address ", begin, " is not stick-aligned (", align, " bytes)");
            fail(what, " LX address ", begin, " is not aligned to its element size (", align, " bytes)");
        }
        return r;
    }

    DType dtype() const {
        if (!dtype_valid(in_.dtype)) fail("invalid element type code ", int(in_.dtype));
        DType t = DType(in_.dtype);
        if (!dtype_supported(in_.op, t)) fail("element type ", dtype_name(t), " is not supported");
        return t;
    }

private:
    const Instr &in_;
    const int64_t *regs_;
    const MachineDesc &m_;
    size_t pc_;
};

void add_read(LxAccess &acc, LxRange r) { acc.reads[acc.num_reads++] = r; }
void set_write(LxAccess &acc, LxRange r) {
    acc.writes[0] = r;
    acc.num_writes = 1;
}
void add_write(LxAccess &acc, LxRange r) { acc.writes[acc.num_writes++] = r; }

LxAccess vector_access(const Instr &in, const Resolver &R) {
    LxAccess acc;
    const Opcode op = in.op;
    const VecForm form = op_info(op).form;
    const DType t = R.dtype();
    const int64_t eb = dtype_bytes(t);
    const int64_t stick = R.stick();
    const int64_t lanes = stick / eb;

    if (form == VecForm::Transpose) {
        // R x C source with rows padded to whole sticks; C x R destination likewise.
        int64_t rows = R.count(7, "rows");
        int64_t cols = R.count(8, "cols");
        int64_t src_bytes = smul(smul(rows, round_up(cols, lanes)), eb);
        int64_t dst_bytes = smul(smul(cols, round_up(rows, lanes)), eb);
        add_read(acc, R.range("src0", R.addr(3, 4), src_bytes, stick, true));
        set_write(acc, R.range("dst", R.addr(1, 2), dst_bytes, stick, true));
        return acc;
    }

    const int64_t sticks = R.count(7, "sticks");
    const int64_t groups = R.count(8, "groups");
    const int64_t stick_span = smul(smul(sticks, groups), stick);  // groups of sticks, back to back

    if (form == VecForm::Shift) {
        // The source base is a stick; the elements read start anywhere around it (vector_shift.h).
        const int64_t base = R.addr(3, 4);
        R.range("src0", base, 0, stick, true);
        if ((in.mode & kEdgeModes) & ((in.mode & kEdgeModes) - 1)) R.fail("more than one edge mode is set");
        if (in.mode && in.a[6] > in.a[9]) R.fail("edge window [", in.a[6], ", ", in.a[9], "] is empty");
        ShiftSpan r = vshift_read_span(in, lanes);
        if (!r.empty())
            add_read(acc, R.range("src0", sadd(base, smul(r.first, eb)), smul(sadd(r.last, 1 - r.first), eb), eb, false));
        set_write(acc, R.range("dst", R.addr(1, 2), stick_span, stick, true));
        return acc;
    }

    if (form == VecForm::Strided) {
        // The source base is any element; the rows read follow from start, step and the row stride.
        const int64_t base = R.addr(3, 4);
        R.range("src0", base, 0, eb, true);
        if (!vstride_step_valid(in.a[6]))
            R.fail("step ", in.a[6], " is not between 2 and ", kMaxLaneStep, " (a downsample) or between -",
                   kMaxLaneStep, " and -2 (an upsample)");
        if (in.a[5] < 0) R.fail("first element ", in.a[5], " is before the source (it counts from it)");
        if (in.a[9] < 0) R.fail("source row stride ", in.a[9], " is negative");
        ShiftSpan r = vstride_read_span(in, lanes);
        add_read(acc, R.range("src0", sadd(base, smul(r.first, eb)), smul(sadd(r.last, 1 - r.first), eb), eb, false));
        set_write(acc, R.range("dst", R.addr(1, 2), stick_span, stick, true));
        return acc;
    }

    if (form == VecForm::LaneSelect) {
        if (in.a[9] < 1) R.fail("lane block width ", in.a[9], " is not positive");
        add_read(acc, R.range("src0", R.addr(3, 4), stick_span, stick, true));
        add_read(acc, R.range("src1", R.addr(5, 6), stick_span, stick, true));
        set_write(acc, R.range("dst", R.addr(1, 2), stick_span, stick, true));
        return acc;
    }

    if (form == VecForm::IndexSelect || form == VecForm::MaskSelect) {
        add_read(acc, R.range("src0", R.addr(3, 4), stick_span, stick, true));
        if (in.mode & kSrc1Scalar)
            add_read(acc, R.range("src1", R.addr(5, 6), smul(groups, eb), eb, false));
        else
            add_read(acc, R.range("src1", R.addr(5, 6), stick_span, stick, true));
        LxRange dst = R.range("dst", R.addr(1, 2), stick_span, stick, true);
        if (form == VecForm::MaskSelect) add_read(acc, dst);  // VSELM's mask is in its destination
        set_write(acc, dst);
        return acc;
    }

    // The valid elements per group of the reductions and scans (a9): 0 (all lanes) up to a group.
    auto check_valid_elements = [&] {
        if (in.a[9] < 0 || in.a[9] > sticks * lanes)
            R.fail("valid element count ", in.a[9], " is outside [0, ", sticks * lanes, "]");
    };
    switch (form) {
    case VecForm::Map2: {
        if (in.mode & kFoldGroups) {  // dst and src0 one group; src1 every group, read after dst is written
            add_read(acc, R.range("src0", R.addr(3, 4), smul(sticks, stick), stick, true));
            add_read(acc, R.range("src1", R.addr(5, 6), stick_span, stick, true));
            LxRange dst = R.range("dst", R.addr(1, 2), smul(sticks, stick), stick, true);
            if (groups > 1 && dst.overlaps(acc.reads[1]))
                R.fail("dst overlaps the groups it folds (src1, mode fold), which it reads after writing dst");
            set_write(acc, dst);
            return acc;
        }
        add_read(acc, R.range("src0", R.addr(3, 4), stick_span, stick, true));
        if (in.mode & kSrc1Scalar)
            add_read(acc, R.range("src1", R.addr(5, 6), smul(groups, eb), eb, false));
        else if (in.mode & kSrc1Row)
            add_read(acc, R.range("src1", R.addr(5, 6), smul(sticks, stick), stick, true));
        else
            add_read(acc, R.range("src1", R.addr(5, 6), stick_span, stick, true));
        LxRange dst = R.range("dst", R.addr(1, 2), stick_span, stick, true);
        // Every group reads the row: a destination over it would feed one group's result to the next.
        if ((in.mode & kSrc1Row) && groups > 1 && dst.overlaps(acc.reads[acc.num_reads - 1]))
            R.fail("dst overlaps its row operand (src1, mode row), which every group reads");
        if (op == Opcode::VFMA) add_read(acc, dst);  // dst is the addend
        set_write(acc, dst);
        return acc;
    }
    case VecForm::Map1:
    case VecForm::Copy:
        add_read(acc, R.range("src0", R.addr(3, 4), stick_span, stick, true));
        set_write(acc, R.range("dst", R.addr(1, 2), stick_span, stick, true));
        return acc;
    case VecForm::Convert: {
        int32_t to = in.a[9];
        if (!dtype_valid(to)) R.fail("invalid destination element type code ", to);
        if (op == Opcode::VCVTF8 && !vcvtf8_types_valid(t, DType(to)))
            R.fail("fp8 conversion from ", dtype_name(t), " to ", dtype_name(DType(to)),
                   " (it goes between u8 codes and f16 or f32)");
        if (op == Opcode::VCVTF8 && !fp8_format_valid(in.a[5])) R.fail("invalid fp8 format code ", in.a[5]);
        // A destination group holds the same element count as a source group.
        int64_t group_dst = smul(smul(sticks, lanes), dtype_bytes(DType(to)));
        if (group_dst % stick != 0)
            R.fail("destination group of ", group_dst, " bytes (", sticks, " ", dtype_name(t), " sticks as ",
                   dtype_name(DType(to)), ") is not a whole number of sticks (", stick, " bytes)");
        add_read(acc, R.range("src0", R.addr(3, 4), stick_span, stick, true));
        set_write(acc, R.range("dst", R.addr(1, 2), smul(group_dst, groups), stick, true));
        return acc;
    }
    case VecForm::Broadcast:
        add_read(acc, R.range("src0", R.addr(3, 4), smul(groups, eb), eb, false));
        set_write(acc, R.range("dst", R.addr(1, 2), stick_span, stick, true));
        return acc;
    case VecForm::Fill:
        set_write(acc, R.range("dst", R.addr(1, 2), stick_span, stick, true));
        return acc;
    case VecForm::Reduce: {
        check_valid_elements();
        int64_t db = ((in.mode & kDstF32) || t == DType::F32) ? 4 : 2;
        add_read(acc, R.range("src0", R.addr(3, 4), stick_span, stick, true));
        LxRange dst = R.range("dst", R.addr(1, 2), smul(groups, db), db, false);
        if (in.mode & kAccumulate) add_read(acc, dst);
        set_write(acc, dst);
        return acc;
    }
    case VecForm::Scan: {
        check_valid_elements();
        add_read(acc, R.range("src0", R.addr(3, 4), stick_span, stick, true));
        LxRange dst = R.range("dst", R.addr(1, 2), stick_span, stick, true);
        add_read(acc, dst);
        set_write(acc, dst);
        return acc;
    }
    case VecForm::ArgReduce: {
        check_valid_elements();
        add_read(acc, R.range("src0", R.addr(3, 4), stick_span, stick, true));
        LxRange values = R.range("values", R.addr(1, 2), smul(groups, eb), eb, false);
        LxRange indices = R.range("indices", R.addr(5, 6), smul(groups, 4), 4, false);
        add_read(acc, values);
        add_read(acc, indices);
        set_write(acc, values);
        add_write(acc, indices);
        return acc;
    }
    default: return acc;
    }
}

// Rows of a matrix operand: `rows` rows `ld` bytes apart, each `row_bytes` long (rounded to sticks).
LxRange matrix_range(const Resolver &R, const char *what, int64_t base, int64_t rows, int64_t ld,
                     int64_t row_bytes) {
    const int64_t stick = R.stick();
    if (ld % stick != 0) R.fail(what, " row stride ", ld, " is not a whole number of sticks (", stick, " bytes)");
    int64_t span = smul(rows - 1, ld);
    int64_t lo = std::min<int64_t>(0, span), hi = std::max<int64_t>(0, span);
    return R.range(what, sadd(base, lo), sadd(hi - lo, round_up(row_bytes, stick)), stick, true);
}

LxAccess matmul_access(const DeviceProgram &program, const Instr &in, const Resolver &R) {
    LxAccess acc;
    int32_t di = in.a[7];
    if (di < 0 || size_t(di) >= program.mm.size())
        R.fail("matmul descriptor ", di, " out of range (", program.mm.size(), " descriptors)");
    if (in.dtype != uint8_t(DType::F16) && in.dtype != uint8_t(DType::I8))
        R.fail("element type code ", int(in.dtype), " is not supported (fp16 or int8 only)");
    const int64_t eb = dtype_bytes(DType(in.dtype));
    const MatmulDesc &d = program.mm[di];
    if (d.m <= 0 || d.n <= 0 || d.k <= 0)
        R.fail("matmul descriptor ", di, " has non-positive extents m=", d.m, " n=", d.n, " k=", d.k);
    add_read(acc, matrix_range(R, "A", R.addr(3, 4), d.m, d.lda, int64_t(d.k) * eb));
    add_read(acc, matrix_range(R, "B", R.addr(5, 6), d.k, d.ldb, int64_t(d.n) * eb));
    LxRange c = matrix_range(R, "C", R.addr(1, 2), d.m, d.ldc, int64_t(d.n) * 4);
    if (in.mode & kAccumulate) add_read(acc, c);
    set_write(acc, c);
    return acc;
}

// The LX bounding range of a DMA: every run of `sticks` sticks starting at base + sum(i_d * stride_d).
LxRange dma_range(const DeviceProgram &program, const Instr &in, const Resolver &R, const char *what) {
    int32_t di = in.a[6];
    if (di < 0 || size_t(di) >= program.dma.size())
        R.fail("DMA descriptor ", di, " out of range (", program.dma.size(), " descriptors)");
    const DmaDesc &d = program.dma[di];
    const int64_t stick = R.stick();
    if (d.sticks <= 0) R.fail("DMA descriptor ", di, " has non-positive stick count ", d.sticks);
    int64_t lo = 0, hi = 0;
    for (int k = 0; k < 3; k++) {
        if (d.count[k] <= 0) R.fail("DMA descriptor ", di, " has non-positive count[", k, "] = ", d.count[k]);
        if (d.count[k] > 1 && d.lx_stride[k] % stick != 0)
            R.fail("DMA descriptor ", di, " LX stride[", k, "] = ", d.lx_stride[k],
                   " is not a whole number of sticks (", stick, " bytes)");
        int64_t span = smul(d.count[k] - 1, d.lx_stride[k]);
        lo = sadd(lo, std::min<int64_t>(0, span));
        hi = sadd(hi, std::max<int64_t>(0, span));
    }
    int64_t base = R.addr(4, 5);
    return R.range(what, sadd(base, lo), sadd(hi - lo, smul(d.sticks, stick)), stick, true);
}

}  // namespace

LxAccess lx_access(const DeviceProgram &program, const Instr &in, const int64_t *regs, const MachineDesc &machine,
                   size_t pc) {
    Resolver R(in, regs, machine, pc);
    LxAccess acc;
    if (!opcode_valid(int(in.op))) throw_error("instruction ", pc, ": invalid opcode ", int(in.op));
    switch (op_info(in.op).engine) {
    case Engine::Vector: return vector_access(in, R);
    case Engine::PE: return matmul_access(program, in, R);
    case Engine::DMA:
        if (in.op == Opcode::DMA_ST) add_read(acc, dma_range(program, in, R, "src"));
        else set_write(acc, dma_range(program, in, R, "dst"));
        return acc;
    case Engine::Ring: {
        const char *what = in.op == Opcode::RING_SEND ? "src" : in.op == Opcode::RING_RECV ? "dst" : "buf";
        if (in.op == Opcode::RING_REDUCE && !dtype_valid(in.dtype))
            R.fail("invalid element type code ", int(in.dtype));
        int64_t bytes = smul(R.count(4, "sticks"), machine.stick_bytes);
        LxRange r = R.range(what, R.addr(2, 3), bytes, machine.stick_bytes, true);
        if (in.op != Opcode::RING_RECV) add_read(acc, r);
        if (in.op != Opcode::RING_SEND) set_write(acc, r);
        return acc;
    }
    case Engine::Control:
        if (in.op == Opcode::LDLX) add_read(acc, R.range("src", R.addr(1, 2), 4, 4, false));
        break;
    case Engine::Sync: break;
    }
    return acc;
}

}  // namespace spyre
