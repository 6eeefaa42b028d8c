#include "disassembler.h"
#include "fp8.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <sstream>

namespace spyre {

namespace {

// The listing must not crash on an unverified program, so every table lookup is bounds-checked and
// every name is escaped.
std::string escaped(const std::string &s) {
    std::string out;
    for (unsigned char c : s) {
        if (c >= 0x20 && c <= 0x7e) {
            out += char(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    return out;
}

std::string type_name(int t) { return dtype_valid(t) ? dtype_name(DType(t)) : "dt" + std::to_string(t); }

// Shortest decimal form that reads back as the same float, so listings stay short and exact.
std::string float_text(int32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    std::string s;
    for (int prec = 6; prec <= 9; prec++) {
        std::ostringstream os;
        os << std::setprecision(prec) << f;
        s = os.str();
        if (std::strtof(s.c_str(), nullptr) == f) break;
    }
    return s;
}

template <typename T, size_t N>
std::string list(const std::array<T, N> &a) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < N; i++) os << (i ? "," : "") << a[i];
    os << "]";
    return os.str();
}

std::string address(int32_t reg, int32_t off) {
    std::ostringstream os;
    os << "[r" << reg << (off < 0 ? "-" : "+") << (off < 0 ? -int64_t(off) : int64_t(off)) << "]";
    return os.str();
}

bool typed(Opcode op) {
    return op_info(op).engine == Engine::Vector || op == Opcode::MATMUL || op == Opcode::RING_REDUCE;
}

std::string mnemonic(const Instr &in) {
    std::string s = op_info(in.op).name;
    if (in.op == Opcode::DMA_LD) {
        if (in.mode & kDmaShared) s += ".shared";
        if (int rest = in.mode & ~kDmaShared) {
            char buf[16];
            std::snprintf(buf, sizeof buf, ".mode0x%x", rest);
            s += buf;
        }
        return s;
    }
    if (typed(in.op)) s += "." + type_name(in.dtype);
    if (in.mode & kSrc1Scalar) s += ".scalar";
    if (in.mode & kAccumulate) s += ".acc";
    if (in.mode & kDstF32) s += ".f32out";
    if (in.op == Opcode::VREDSUM && (in.mode & kAccF16)) s += ".f16acc";
    if (in.op != Opcode::VREDSUM && (in.mode & kEdgeClamp)) s += ".clamp";
    if (in.mode & kEdgeZero) s += op_info(in.op).form == VecForm::Map2 ? ".row" : ".zero";  // kSrc1Row
    if (in.mode & kEdgeMirrorImage) s += op_info(in.op).form == VecForm::Map2 ? ".fold" : ".mirror";  // kFoldGroups
    if (in.mode & kEdgeMirrorInterior) s += ".mirror_interior";
    if (in.mode & kLimitPerGroup) s += ".diag";
    if (int rest = in.mode & ~(kSrc1Scalar | kAccumulate | kDstF32 | kEdgeModes | kLimitPerGroup)) {
        char buf[16];
        std::snprintf(buf, sizeof buf, ".mode0x%x", rest);
        s += buf;
    }
    return s;
}

std::string operands(const DeviceProgram &p, const Instr &in) {
    const OpInfo &info = op_info(in.op);
    const auto &k = info.operands;
    // A register slot followed by an immediate slot is a base + offset address (except on scalar ops,
    // where the immediate is an operand of its own).
    auto is_addr = [&](int i) {
        return info.engine != Engine::Control && i + 1 < kNumOperands && k[i] == Operand::RegSrc &&
               k[i + 1] == Operand::Imm;
    };
    std::vector<std::string> out;
    for (int i = 0; i < kNumOperands; i++) {
        int32_t v = in.a[i];
        std::ostringstream os;
        switch (k[i]) {
        case Operand::None: continue;
        case Operand::RegDst: os << "r" << v; break;
        case Operand::RegSrc:
            if (is_addr(i)) {
                os << address(v, in.a[i + 1]);
                i++;
            } else {
                os << "r" << v;
            }
            break;
        case Operand::Imm:
            if (in.op == Opcode::LI && i == 1) {
                os << int64_t(uint64_t(uint32_t(in.a[1])) | (uint64_t(uint32_t(in.a[2])) << 32));
                i++;
            } else if (in.op == Opcode::VFILL && i == 9) {
                os << float_text(v);
            } else {
                os << v;
            }
            break;
        case Operand::Count:
        case Operand::CountOpt:
            if (in.op == Opcode::RING_REDUCE && i == 5) {  // the group, when not every core (isa.h)
                if (v > 0) os << "group " << v << " x" << std::max(1, in.a[6]);
                i++;
                if (v == 0) continue;
            } else {
                os << v;
            }
            break;
        case Operand::Tag: os << "t" << v; break;
        case Operand::TagMask: {
            os << "{";
            bool first = true;
            for (int t = 0; t < 32; t++) {
                if (uint32_t(v) & (1u << t)) {
                    os << (first ? "" : ",") << "t" << t;
                    first = false;
                }
            }
            os << "}";
            break;
        }
        case Operand::Buffer:
            if (v >= 0 && size_t(v) < p.buffers.size()) os << escaped(p.buffers[size_t(v)].name);
            else os << "buf#" << v;
            // DMA: the device-memory address follows the buffer and is printed as an index into it.
            if (is_addr(i + 1)) {
                os << address(in.a[i + 1], in.a[i + 2]);
                i += 2;
            }
            break;
        case Operand::DmaDesc: os << "dma#" << v; break;
        case Operand::MmDesc: os << "mm#" << v; break;
        case Operand::Dir: os << (v > 0 ? "+" : "") << v; break;
        case Operand::RedOp: {
            static const char *names[] = {"sum", "max", "min"};
            if (v >= 0 && v <= 2) os << names[v];
            else os << "redop" << v;
            break;
        }
        case Operand::DTypeImm: os << type_name(v); break;
        case Operand::Fp8Fmt:
            if (fp8_format_valid(v)) os << fp8_format_name(Fp8Format(v));
            else os << "fp8fmt" << v;
            break;
        }
        out.push_back(os.str());
    }
    std::string s;
    for (size_t i = 0; i < out.size(); i++) s += (i ? ", " : "") + out[i];
    return s;
}

}  // namespace

std::string disassemble(const DeviceProgram &p) {
    std::ostringstream os;
    os << "kernel " << escaped(p.kernel_name) << ": " << p.num_cores << " cores, format version "
       << DeviceProgram::kFormatVersion << "\n";

    os << "buffers (" << p.buffers.size() << "):\n";
    for (size_t i = 0; i < p.buffers.size(); i++) {
        const BufferDecl &b = p.buffers[i];
        os << "  " << i << " " << escaped(b.name) << " " << buffer_kind_name(b.kind) << " " << type_name(int(b.type))
           << " [";
        for (size_t d = 0; d < b.shape.size(); d++) os << (d ? ", " : "") << b.shape[d];
        os << "] " << layout_to_string(b.layout) << "\n";
    }

    os << "dma descriptors (" << p.dma.size() << "):\n";
    for (size_t i = 0; i < p.dma.size(); i++) {
        const DmaDesc &d = p.dma[i];
        os << "  dma#" << i << " sticks " << d.sticks << " count " << list(d.count) << " dram_stride "
           << list(d.dram_stride) << " lx_stride " << list(d.lx_stride) << "\n";
    }

    os << "matmul descriptors (" << p.mm.size() << "):\n";
    for (size_t i = 0; i < p.mm.size(); i++) {
        const MatmulDesc &d = p.mm[i];
        os << "  mm#" << i << " m " << d.m << " n " << d.n << " k " << d.k << " lda " << d.lda << " ldb " << d.ldb
           << " ldc " << d.ldc << "\n";
    }

    os << "code (" << p.code.size() << "):\n";
    const int width = int(std::to_string(p.code.empty() ? 0 : p.code.size() - 1).size());
    int depth = 0;
    for (size_t pc = 0; pc < p.code.size(); pc++) {
        const Instr &in = p.code[pc];
        os << "  " << std::setw(width) << pc << "  ";
        if (!opcode_valid(int(in.op))) {
            os << "??? opcode " << int(in.op) << "\n";
            continue;
        }
        bool closes = in.op == Opcode::ENDLOOP || in.op == Opcode::ENDIF;
        bool reopens = in.op == Opcode::ELSE;
        if ((closes || reopens) && depth > 0) depth--;
        os << std::string(size_t(2 * std::min(depth, 2 * kMaxLoopDepth)), ' ') << mnemonic(in);  // capped: unverified input
        std::string ops = operands(p, in);
        if (!ops.empty()) os << " " << ops;
        os << "\n";
        if (in.op == Opcode::LOOP || in.op == Opcode::IF || reopens) depth++;
    }
    return os.str();
}

}  // namespace spyre
