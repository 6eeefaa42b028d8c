#include "program_verify.h"
#include "vector_shift.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "checked_math.h"
#include "error.h"
#include "fp8.h"

namespace spyre {

namespace {

constexpr int64_t kMaxBufferBytes = int64_t(1) << 40;
constexpr int64_t kMaxDmaSticks = int64_t(1) << 31;
constexpr size_t kMaxNameLength = 256;
constexpr int kMaxCores = 1024;
constexpr int64_t kMatmulRowAlign = 128;

bool printable(const std::string &s) {
    for (unsigned char c : s)
        if (c < 0x20 || c > 0x7e) return false;
    return true;
}

std::string quoted(const std::string &s) {
    // Names reaching an error message may be hostile: escape anything non-printable.
    std::string out = "'";
    for (unsigned char c : s) {
        if (c >= 0x20 && c <= 0x7e) {
            out += char(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    return out + "'";
}

std::string hex(int64_t v) {
    std::ostringstream os;
    if (v < 0) os << "-0x" << std::hex << (uint64_t(0) - uint64_t(v));
    else os << "0x" << std::hex << v;
    return os.str();
}

bool is_binary(Opcode op) {
    return (op >= Opcode::VADD && op <= Opcode::VFMA) || (op >= Opcode::VCMPLT && op <= Opcode::VSELM);
}
bool is_reduction(Opcode op) { return op >= Opcode::VREDSUM && op <= Opcode::VREDMIN; }

bool has_dtype(Opcode op) {
    return op_info(op).engine == Engine::Vector || op == Opcode::MATMUL || op == Opcode::RING_REDUCE;
}

std::string where(size_t pc, Opcode op) {
    std::ostringstream os;
    os << "instruction " << pc << " (" << op_info(op).name << ")";
    return os.str();
}

std::string buffer_where(const DeviceProgram &p, size_t i) {
    std::ostringstream os;
    os << "buffer " << i << " " << quoted(p.buffers[i].name);
    return os.str();
}

void check_head(const DeviceProgram &p) {
    if (p.kernel_name.empty()) throw_error("kernel name is empty");
    if (p.kernel_name.size() > kMaxNameLength)
        throw_error("kernel name is ", p.kernel_name.size(), " bytes long (at most ", kMaxNameLength, ")");
    if (!printable(p.kernel_name)) throw_error("kernel name ", quoted(p.kernel_name), " has non-printable characters");
    if (p.num_cores < 1 || p.num_cores > kMaxCores)
        throw_error("kernel ", quoted(p.kernel_name), ": num_cores ", p.num_cores, " out of range 1..", kMaxCores);
}

void check_buffers(const DeviceProgram &p) {
    std::set<std::string> names;
    for (size_t i = 0; i < p.buffers.size(); i++) {
        const BufferDecl &b = p.buffers[i];
        std::string w = buffer_where(p, i);
        if (b.name.empty()) throw_error("buffer ", i, ": name is empty");
        if (b.name.size() > kMaxNameLength)
            throw_error("buffer ", i, ": name is ", b.name.size(), " bytes long (at most ", kMaxNameLength, ")");
        if (!printable(b.name)) throw_error(w, ": name has non-printable characters");
        if (!names.insert(b.name).second) throw_error(w, ": duplicate buffer name");
        if (uint8_t(b.kind) > uint8_t(BufferKind::InOut)) throw_error(w, ": invalid kind ", int(b.kind));
        if (!dtype_valid(int(b.type))) throw_error(w, ": invalid element type ", int(b.type));
        if (b.shape.empty() || int(b.shape.size()) > kMaxBufferRank)
            throw_error(w, ": rank ", b.shape.size(), " out of range 1..", kMaxBufferRank);
        int64_t bytes = dtype_bytes(b.type);
        for (size_t d = 0; d < b.shape.size(); d++) {
            if (b.shape[d] < 1) throw_error(w, ": extent of dim ", d, " is ", b.shape[d], " (must be >= 1)");
            bytes = sat_mul(bytes, b.shape[d]);
        }
        if (bytes > kMaxBufferBytes) throw_error(w, ": size exceeds 2^40 bytes");
        check_layout(b.layout, b.shape, w);
    }
}

void check_dma(const DeviceProgram &p) {
    for (size_t i = 0; i < p.dma.size(); i++) {
        const DmaDesc &d = p.dma[i];
        if (d.sticks < 1) throw_error("dma descriptor ", i, ": sticks ", d.sticks, " must be >= 1");
        int64_t total = d.sticks;
        for (int k = 0; k < 3; k++) {
            if (d.count[k] < 1) throw_error("dma descriptor ", i, ": count[", k, "] ", d.count[k], " must be >= 1");
            total = sat_mul(total, d.count[k]);
        }
        if (total > kMaxDmaSticks) throw_error("dma descriptor ", i, ": moves more than 2^31 sticks");
    }
}

void check_mm(const DeviceProgram &p) {
    // A row of A or B holds elements of the MATMULs' type: int8 when every MATMUL using the
    // descriptor is int8 (isa.h), fp16 otherwise. C is fp32 or int32, four bytes either way.
    std::vector<int64_t> eb(p.mm.size(), 0);
    for (const Instr &in : p.code)
        if (in.op == Opcode::MATMUL && in.a[7] >= 0 && size_t(in.a[7]) < p.mm.size() && dtype_valid(in.dtype) &&
            dtype_supported(Opcode::MATMUL, DType(in.dtype)))
            eb[size_t(in.a[7])] = std::max<int64_t>(eb[size_t(in.a[7])], dtype_bytes(DType(in.dtype)));
    for (size_t i = 0; i < p.mm.size(); i++) {
        const MatmulDesc &d = p.mm[i];
        const int64_t e = eb[i] ? eb[i] : 2;
        if (d.m < 1 || d.n < 1 || d.k < 1)
            throw_error("matmul descriptor ", i, ": m, n, k (", d.m, ", ", d.n, ", ", d.k, ") must all be >= 1");
        struct {
            const char *name;
            int32_t value;
            int64_t min;
        } strides[] = {{"lda", d.lda, int64_t(d.k) * e}, {"ldb", d.ldb, int64_t(d.n) * e}, {"ldc", d.ldc, int64_t(d.n) * 4}};
        for (const auto &s : strides) {
            if (s.value < s.min)
                throw_error("matmul descriptor ", i, ": ", s.name, " ", s.value, " smaller than a row (", s.min, " bytes)");
            if (s.value % kMatmulRowAlign != 0)
                throw_error("matmul descriptor ", i, ": ", s.name, " ", s.value, " is not a multiple of ", kMatmulRowAlign);
        }
    }
}

void check_operand(const DeviceProgram &p, size_t pc, const Instr &in, int slot) {
    Operand kind = op_info(in.op).operands[slot];
    int32_t v = in.a[slot];
    auto fail = [&](const auto &...parts) { throw_error(where(pc, in.op), ": operand ", slot, " ", parts...); };
    switch (kind) {
    case Operand::None:
        if (v != 0) fail("is unused and must be 0, got ", v);
        break;
    case Operand::RegDst:
        if (v == 0) fail("register r0 is not writable");
        if (v < 1 || v >= kNumRegs) fail("register ", v, " out of range 1..", kNumRegs - 1);
        break;
    case Operand::RegSrc:
        if (v < 0 || v >= kNumRegs) fail("register ", v, " out of range 0..", kNumRegs - 1);
        break;
    case Operand::Imm: break;
    case Operand::Count:
        if (v < 1) fail("count ", v, " must be >= 1");
        break;
    case Operand::CountOpt:
        if (v < 0) fail("count ", v, " must be >= 0");
        break;
    case Operand::Tag:
        if (v < 0 || v >= kNumTags) fail("tag ", v, " out of range 0..", kNumTags - 1);
        break;
    case Operand::TagMask:
        if (v < 1 || v > 0xFFFF) fail("tag mask ", hex(v), " out of range 0x1..0xffff");
        break;
    case Operand::Buffer:
        if (v < 0 || size_t(v) >= p.buffers.size())
            fail("buffer index ", v, " out of range (program has ", p.buffers.size(), " buffers)");
        break;
    case Operand::DmaDesc:
        if (v < 0 || size_t(v) >= p.dma.size())
            fail("dma descriptor index ", v, " out of range (program has ", p.dma.size(), " dma descriptors)");
        break;
    case Operand::MmDesc:
        if (v < 0 || size_t(v) >= p.mm.size())
            fail("matmul descriptor index ", v, " out of range (program has ", p.mm.size(), " matmul descriptors)");
        break;
    case Operand::Dir:
        if (v != 1 && v != -1) fail("ring direction ", v, " must be +1 or -1");
        break;
    case Operand::RedOp:
        if (v < 0 || v > 2) fail("reduction op ", v, " out of range 0..2");
        break;
    case Operand::DTypeImm:
        if (!dtype_valid(v)) fail("element type ", v, " is not a valid dtype");
        break;
    case Operand::Fp8Fmt:
        if (!fp8_format_valid(v)) fail("fp8 format ", v, " is not one of 0 (e4m3), 1 (e5m2)");
        break;
    }
}

void check_type_and_mode(size_t pc, const Instr &in) {
    Opcode op = in.op;
    std::string w = where(pc, op);
    if (!has_dtype(op)) {
        if (in.dtype != 0) throw_error(w, ": dtype field must be 0, got ", int(in.dtype));
        if (op == Opcode::DMA_LD) {
            if (uint8_t bad = in.mode & uint8_t(~kDmaShared))
                throw_error(w, ": mode bits ", hex(bad), " not allowed (allowed: ", hex(kDmaShared), ", shared)");
            return;
        }
        if (in.mode != 0) throw_error(w, ": mode field must be 0, got ", int(in.mode));
        return;
    }
    if (!dtype_valid(in.dtype)) throw_error(w, ": invalid element type ", int(in.dtype));
    DType t = DType(in.dtype);
    if (!dtype_supported(op, t))
        throw_error(w, ": element type ", dtype_name(t), " not supported (",
                    op == Opcode::MATMUL                                         ? "f16 or i8 only"
                    : op == Opcode::VCVTF8                                       ? "u8 fp8 codes, f16 or f32 only"
                    : dtype_supported(op, DType::I32)                             ? "f16, f32 or i32 only"
                                                                                  : "f16 or f32 only",
                    ")");
    if (op == Opcode::VCVT && int(in.dtype) == in.a[9])
        throw_error(w, ": source and destination type are both ", dtype_name(t));
    if (op == Opcode::VCVTF8 && dtype_valid(in.a[9]) && !vcvtf8_types_valid(t, DType(in.a[9])))
        throw_error(w, ": converts ", dtype_name(t), " to ", dtype_name(DType(in.a[9])),
                    "; an fp8 conversion goes between u8 codes and f16 or f32 (encode f16/f32 -> u8, decode u8 -> "
                    "f16/f32)");

    uint8_t allowed = 0;
    if (is_binary(op))
        allowed = kSrc1Scalar | (op_info(op).form != VecForm::Map2 ? 0
                                 : op == Opcode::VFMA       ? kSrc1Row  // its dst is an addend per group
                                                            : kSrc1Row | kFoldGroups);
    if (is_reduction(op)) allowed = kAccumulate | kDstF32;
    if (op == Opcode::VREDSUM && t == DType::F16) allowed |= kAccF16;
    if (op == Opcode::MATMUL) allowed = kAccumulate;
    if (op == Opcode::VSHIFT) allowed = kEdgeModes;
    if (op == Opcode::VSELIDX) allowed = kSrc1Scalar | kLimitPerGroup;
    uint8_t bad = in.mode & uint8_t(~allowed);
    if (bad) throw_error(w, ": mode bits ", hex(bad), " not allowed (allowed: ", hex(allowed), ")");
    if (is_binary(op) && __builtin_popcount(in.mode & (kSrc1Scalar | kSrc1Row | kFoldGroups)) > 1)
        throw_error(w, ": more than one of src1 one element per group (mode bit ", hex(kSrc1Scalar),
                    "), one row for all (", hex(kSrc1Row), ") and a fold over the groups (", hex(kFoldGroups), ")");
    if ((in.mode & kAccF16) && (in.mode & kDstF32))
        throw_error(w, ": accumulates in fp16 (mode bit ", hex(kAccF16), ") but writes fp32 (", hex(kDstF32), ")");
    if (op == Opcode::VSTRIDE) {
        if (!vstride_step_valid(in.a[6]))
            throw_error(w, ": step ", in.a[6], " is not between 2 and ", kMaxLaneStep, " (a downsample) or between -",
                        kMaxLaneStep, " and -2 (an upsample)");
        if (in.a[5] < 0) throw_error(w, ": first element ", in.a[5], " is before the source (it counts from it)");
    }
    if (op == Opcode::VSHIFT) {
        const uint8_t edges = in.mode & kEdgeModes;
        if (edges & (edges - 1)) throw_error(w, ": more than one edge mode is set (one at most)");
        if (in.mode && in.a[6] > in.a[9])
            throw_error(w, ": edge window [", in.a[6], ", ", in.a[9], "] is empty (lo above hi)");
    }
}

void check_code(const DeviceProgram &p) {
    struct Open {
        Opcode op;
        size_t pc;
        bool has_else;
    };
    std::vector<Open> open;
    for (size_t pc = 0; pc < p.code.size(); pc++) {
        const Instr &in = p.code[pc];
        if (!opcode_valid(int(in.op))) throw_error("instruction ", pc, ": unknown opcode ", int(in.op));
        for (int s = 0; s < kNumOperands; s++) check_operand(p, pc, in, s);
        check_type_and_mode(pc, in);

        switch (in.op) {
        case Opcode::RING_REDUCE:
            if (in.a[5] > 0 && p.num_cores % (int64_t(in.a[5]) * std::max(1, in.a[6])) != 0)
                throw_error(where(pc, in.op), ": groups of ", in.a[5], " cores ", std::max(1, in.a[6]),
                            " apart do not tile the program's ", p.num_cores, " cores");
            break;
        case Opcode::LOOP:
        case Opcode::IF:
            if (int(open.size()) >= kMaxLoopDepth)
                throw_error(where(pc, in.op), ": blocks nested deeper than ", kMaxLoopDepth);
            open.push_back({in.op, pc, false});
            break;
        case Opcode::ELSE:
            if (open.empty() || open.back().op != Opcode::IF) throw_error(where(pc, in.op), ": ELSE outside an IF");
            if (open.back().has_else)
                throw_error(where(pc, in.op), ": second ELSE for the IF at instruction ", open.back().pc);
            open.back().has_else = true;
            break;
        case Opcode::ENDLOOP:
        case Opcode::ENDIF: {
            Opcode want = in.op == Opcode::ENDLOOP ? Opcode::LOOP : Opcode::IF;
            if (open.empty()) throw_error(where(pc, in.op), ": no open ", op_info(want).name, " to close");
            if (open.back().op != want)
                throw_error(where(pc, in.op), ": closes the ", op_info(open.back().op).name, " at instruction ",
                            open.back().pc);
            open.pop_back();
            break;
        }
        default: break;
        }
    }
    if (!open.empty())
        throw_error(where(open.back().pc, open.back().op), ": block is never closed (end of program at instruction ",
                    p.code.size(), ")");
}

// --- machine checks ---

struct Span {
    int64_t lo, hi;  // [lo, hi) bytes relative to the base address
};

// Footprint of a strided pattern: an innermost run of `run` bytes repeated over the dims.
template <typename Stride>
Span strided_span(int64_t run, const std::array<int32_t, 3> &count, const std::array<Stride, 3> &stride) {
    Span s{0, run};
    for (int k = 0; k < 3; k++) {
        int64_t ext = sat_mul(int64_t(count[k]) - 1, int64_t(stride[k]));
        if (ext < 0) s.lo = sat_add(s.lo, ext);
        else s.hi = sat_add(s.hi, ext);
    }
    return s;
}

void check_lx(size_t pc, const Instr &in, const char *what, int reg_slot, int64_t bytes, const MachineDesc &m) {
    if (in.a[reg_slot] != 0) return;  // dynamic address: the simulator checks it
    int64_t begin = in.a[reg_slot + 1];
    int64_t end = sat_add(begin, bytes);
    if (begin < 0 || end > m.lx_bytes)
        throw_error(where(pc, in.op), ": ", what, " LX range [", begin, ", ", end, ") outside LX [0, ", m.lx_bytes, ")");
}

void check_lx_span(size_t pc, const Instr &in, const char *what, int reg_slot, Span s, const MachineDesc &m) {
    if (in.a[reg_slot] != 0) return;
    int64_t off = in.a[reg_slot + 1];
    int64_t begin = sat_add(off, s.lo), end = sat_add(off, s.hi);
    if (begin < 0 || end > m.lx_bytes)
        throw_error(where(pc, in.op), ": ", what, " LX range [", begin, ", ", end, ") outside LX [0, ", m.lx_bytes, ")");
}

void check_vector_machine(size_t pc, const Instr &in, const MachineDesc &m) {
    const int64_t sb = m.stick_bytes;
    const int64_t sticks = in.a[7], groups = in.a[8];
    const int64_t eb = dtype_bytes(DType(in.dtype));
    const int64_t full = sat_mul(sat_mul(groups, sticks), sb);
    Opcode op = in.op;

    if (op == Opcode::VCVT || op == Opcode::VCVTF8) {
        int64_t lanes = sb / eb;
        int64_t group_bytes = sat_mul(sat_mul(sticks, lanes), dtype_bytes(DType(in.a[9])));
        if (group_bytes % sb != 0)
            throw_error(where(pc, op), ": destination group of ", group_bytes, " bytes (", sticks, " sticks of ",
                        dtype_name(DType(in.dtype)), " as ", dtype_name(DType(in.a[9])),
                        ") is not a whole number of ", sb, "-byte sticks");
        check_lx(pc, in, "dst", 1, sat_mul(groups, group_bytes), m);
        check_lx(pc, in, "src0", 3, full, m);
        return;
    }
    if (op == Opcode::VTRANSPOSE) {
        // a7 x a8 (rows x cols) source, rows padded to whole sticks; the transposed destination likewise.
        int64_t lanes = sb / eb;
        auto padded = [&](int64_t n) { return sat_mul((n + lanes - 1) / lanes, lanes); };
        check_lx(pc, in, "dst", 1, sat_mul(sat_mul(groups, padded(sticks)), eb), m);
        check_lx(pc, in, "src0", 3, sat_mul(sat_mul(sticks, padded(groups)), eb), m);
        return;
    }
    if (op == Opcode::VLSEL) {
        check_lx(pc, in, "dst", 1, full, m);
        check_lx(pc, in, "src0", 3, full, m);
        check_lx(pc, in, "src1", 5, full, m);
        return;
    }
    if (op == Opcode::VSELIDX) {
        check_lx(pc, in, "dst", 1, full, m);
        check_lx(pc, in, "src0", 3, full, m);
        check_lx(pc, in, "src1", 5, (in.mode & kSrc1Scalar) ? sat_mul(groups, eb) : full, m);
        return;
    }
    if (op == Opcode::VSHIFT) {
        check_lx(pc, in, "dst", 1, full, m);
        ShiftSpan r = vshift_read_span(in, sb / eb);
        if (!r.empty())
            check_lx_span(pc, in, "src0", 3, Span{sat_mul(r.first, eb), sat_mul(sat_add(r.last, 1), eb)}, m);
        return;
    }
    if (op == Opcode::VSTRIDE) {
        check_lx(pc, in, "dst", 1, full, m);
        ShiftSpan r = vstride_read_span(in, sb / eb);
        check_lx_span(pc, in, "src0", 3, Span{sat_mul(r.first, eb), sat_mul(sat_add(r.last, 1), eb)}, m);
        return;
    }
    if (op == Opcode::VSCANSUM) {
        int64_t lanes = sb / eb;
        if (in.a[9] > sat_mul(sticks, lanes))
            throw_error(where(pc, op), ": valid element count ", in.a[9], " exceeds the ", sat_mul(sticks, lanes),
                        " lanes of a group");
        check_lx(pc, in, "dst", 1, full, m);
        check_lx(pc, in, "src0", 3, full, m);
        return;
    }
    if (op_info(op).form == VecForm::ArgReduce) {
        int64_t lanes = sb / eb;
        if (in.a[9] > sat_mul(sticks, lanes))
            throw_error(where(pc, op), ": valid element count ", in.a[9], " exceeds the ", sat_mul(sticks, lanes),
                        " lanes of a group");
        check_lx(pc, in, "values", 1, sat_mul(groups, eb), m);
        check_lx(pc, in, "src0", 3, full, m);
        check_lx(pc, in, "indices", 5, sat_mul(groups, 4), m);
        return;
    }
    if (is_reduction(op)) {
        int64_t lanes = sb / eb;
        if (in.a[9] > sat_mul(sticks, lanes))
            throw_error(where(pc, op), ": valid element count ", in.a[9], " exceeds the ", sat_mul(sticks, lanes),
                        " lanes of a group");
        int64_t out = (in.mode & kDstF32) ? 4 : eb;
        check_lx(pc, in, "dst", 1, sat_mul(groups, out), m);
        check_lx(pc, in, "src0", 3, full, m);
        return;
    }
    if (is_binary(op) && (in.mode & kFoldGroups)) {  // dst and src0 one group, src1 every group
        check_lx(pc, in, "dst", 1, sat_mul(sticks, sb), m);
        check_lx(pc, in, "src0", 3, sat_mul(sticks, sb), m);
        check_lx(pc, in, "src1", 5, full, m);
        return;
    }
    check_lx(pc, in, "dst", 1, full, m);
    if (op == Opcode::VFILL) return;
    // VBCAST reads one scalar per group.
    check_lx(pc, in, "src0", 3, op == Opcode::VBCAST ? sat_mul(groups, eb) : full, m);
    if (is_binary(op))
        check_lx(pc, in, "src1", 5,
                 (in.mode & kSrc1Scalar) ? sat_mul(groups, eb) : (in.mode & kSrc1Row) ? sat_mul(sticks, sb) : full, m);
}

void check_machine_instr(const DeviceProgram &p, size_t pc, const Instr &in, const MachineDesc &m) {
    const OpInfo &info = op_info(in.op);
    const int64_t sb = m.stick_bytes;
    switch (info.engine) {
    case Engine::Vector: check_vector_machine(pc, in, m); break;
    case Engine::PE: {
        const MatmulDesc &d = p.mm[size_t(in.a[7])];
        // Rows occupy whole sticks, as the PE array reads them.
        auto rows = [&](int64_t n, int64_t ld, int64_t row) {
            return sat_add(sat_mul(n - 1, ld), sat_mul((row + sb - 1) / sb, sb));
        };
        check_lx(pc, in, "c", 1, rows(d.m, d.ldc, int64_t(d.n) * 4), m);
        check_lx(pc, in, "a", 3, rows(d.m, d.lda, int64_t(d.k) * 2), m);
        check_lx(pc, in, "b", 5, rows(d.k, d.ldb, int64_t(d.n) * 2), m);
        break;
    }
    case Engine::DMA: {
        const DmaDesc &d = p.dma[size_t(in.a[6])];
        const size_t buf = size_t(in.a[1]);
        int64_t run = sat_mul(d.sticks, sb);
        if (in.op == Opcode::DMA_ST) {
            for (int k = 0; k < 3; k++)
                if (d.count[k] > 1 && d.dram_stride[k] == 0)
                    throw_error(where(pc, in.op), ": dma descriptor ", in.a[6], " has device stride 0 on dim ", k,
                                " with count ", d.count[k], " (the store would race with itself)");
        }
        check_lx_span(pc, in, "lx", 4, strided_span(run, d.count, d.lx_stride), m);
        if (in.a[2] == 0) {
            Span s = strided_span(run, d.count, d.dram_stride);
            int64_t off = in.a[3];
            int64_t begin = sat_add(off, s.lo), end = sat_add(off, s.hi);
            int64_t size = p.buffer_bytes(buf, sb);
            if (begin < 0 || end > size)
                throw_error(where(pc, in.op), ": device range [", begin, ", ", end, ") outside ", buffer_where(p, buf),
                            " (", size, " bytes)");
        }
        break;
    }
    case Engine::Ring: check_lx(pc, in, "buf", 2, sat_mul(in.a[4], sb), m); break;
    case Engine::Control:
        if (in.op == Opcode::LDLX) {
            check_lx(pc, in, "src", 1, 4, m);
            if (in.a[1] == 0 && in.a[2] % 4 != 0)
                throw_error(where(pc, in.op), ": src LX address ", in.a[2], " is not a multiple of 4 (an int32)");
        }
        break;
    default: break;
    }
}

}  // namespace

void verify_program_part(const DeviceProgram &program, VerifiedPart part) {
    switch (part) {
    case VerifiedPart::Head: check_head(program); break;
    case VerifiedPart::Buffers: check_buffers(program); break;
    case VerifiedPart::DmaDescriptors: check_dma(program); break;
    case VerifiedPart::MatmulDescriptors: check_mm(program); break;
    case VerifiedPart::Code: check_code(program); break;
    }
}

void verify_program(const DeviceProgram &program) {
    for (VerifiedPart part : kVerifiedParts) verify_program_part(program, part);
}

void verify_for_machine(const DeviceProgram &program, const MachineDesc &machine) {
    // The machine checks index tables and decode operands, so the structure must be sound first.
    verify_program(program);
    // Range arithmetic divides by the stick and by elements per stick.
    if (machine.stick_bytes < 4 || machine.stick_bytes % 4 != 0)
        throw_error("machine stick_bytes ", machine.stick_bytes, " does not hold whole elements");
    if (program.num_cores > machine.cores)
        throw_error("kernel ", quoted(program.kernel_name), ": needs ", program.num_cores, " cores, machine has ",
                    machine.cores);
    for (size_t pc = 0; pc < program.code.size(); pc++) check_machine_instr(program, pc, program.code[pc], machine);
}

}  // namespace spyre
