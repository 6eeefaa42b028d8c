#include "ktir_export.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "device/error.h"
#include "device/fp8.h"
#include "device/half.h"
#include "device/layout.h"
#include "device/program_builder.h"
#include "device/program_verify.h"
#include "device/vector_shift.h"

namespace spyre::ktir {

namespace {

// MLIR integers are signless: int8 and uint8 are both i8, and the conversions say which (extsi or
// extui, sitofp or uitofp).
std::string type_name(DType t) {
    return t == DType::F16 ? "f16" : t == DType::F32 ? "f32" : t == DType::I32 ? "i32" : "i8";
}

// The arith op that converts elements of type `from` to `to`.
const char *convert_op(DType from, DType to) {
    const bool fi = from == DType::F16 || from == DType::F32, ti = to == DType::F16 || to == DType::F32;
    if (fi && ti) return dtype_bytes(to) > dtype_bytes(from) ? "arith.extf" : "arith.truncf";
    if (fi) return to == DType::U8 ? "arith.fptoui" : "arith.fptosi";
    if (ti) return from == DType::U8 ? "arith.uitofp" : "arith.sitofp";
    if (dtype_bytes(to) < dtype_bytes(from)) return "arith.trunci";
    if (dtype_bytes(to) > dtype_bytes(from)) return from == DType::U8 ? "arith.extui" : "arith.extsi";
    return nullptr;  // int8 <-> uint8: the same bits
}

std::string shape_text(const std::vector<int64_t> &s) {
    std::string r;
    for (int64_t d : s) r += std::to_string(d) + "x";
    return r;
}

class Exporter {
public:
    Exporter(const DeviceProgram &p, const MachineDesc &m, const ExportOptions &o) : p_(p), m_(m), sb_(m.stick_bytes) {
        if (o.lx_high_water_bytes > 0 && o.lx_high_water_bytes <= m.lx_bytes) {
            lx_shift_ = (m.lx_bytes - o.lx_high_water_bytes) / sb_ * sb_;
            lx_space_ = m.lx_bytes - lx_shift_;
        }
    }

    std::string run() {
        verify_program(p_);
        match_blocks();
        names();
        os_ << "// KTIR of device program " << p_.kernel_name << " (" << p_.num_cores
            << " cores), written by spyre-gen (-e ktir).\n"
            << "// Run it on the simulator: spyre-run " << p_.kernel_name << ".ktir (docs/ktir.md).\n"
            << "module {\n  func.func @" << ident(p_.kernel_name) << "(";
        for (size_t i = 0; i < p_.buffers.size(); i++) os_ << (i ? ", " : "") << "%" << buf_[i] << ": index";
        os_ << ") attributes {grid = [" << p_.num_cores << "], spyre.sync = \"explicit\"";
        if (lx_shift_) os_ << ", spyre.lx_offset = " << lx_shift_ << " : i64";
        const size_t type_offsets_at = size_t(os_.tellp());  // the per-type offsets go here, once known
        os_ << "} {\n";
        ind_ = 4;
        line("%_zero = arith.constant 0 : index");
        for (int r = 0; r < kNumRegs; r++) reg_[r] = "%_zero";
        for (size_t i = 0; i < p_.buffers.size(); i++) buffer_view(i);
        const size_t spaces_at = size_t(os_.tellp());  // each type's LX space is declared here, once known
        declare_grown_dma_tiles();
        block(0, p_.code.size());
        line("return");
        os_ << "  }\n}\n";
        std::string text = os_.str(), offsets, spaces;
        bool own = false;  // some type has LX of its own
        for (const auto &[type, shift] : type_shift_) own |= shift != lx_shift_;
        for (const auto &[type, shift] : type_shift_) {
            if (shift != lx_shift_) offsets += ", spyre.lx_offset_" + type + " = " + std::to_string(shift) + " : i64";
            if (own && (shift != lx_shift_ || type == first_type_)) spaces += declare_space(type, shift);
        }
        return text.insert(spaces_at, spaces).insert(type_offsets_at, offsets);
    }

private:
    // ------------------------------------------------------------------ structure
    void match_blocks() {
        match_.assign(p_.code.size(), 0);
        std::vector<size_t> st;
        for (size_t pc = 0; pc < p_.code.size(); pc++) {
            Opcode op = p_.code[pc].op;
            if (op == Opcode::LOOP || op == Opcode::IF) st.push_back(pc);
            else if (op == Opcode::ELSE) {
                match_[st.back()] = pc;
                st.back() = pc;
            } else if (op == Opcode::ENDLOOP || op == Opcode::ENDIF) {
                match_[st.back()] = pc;
                match_[pc] = st.back();
                st.pop_back();
            }
        }
    }
    static void regs_of(const Instr &in, std::vector<int> &reads, std::vector<int> &writes) {
        const OpInfo &info = op_info(in.op);
        for (int k = 0; k < kNumOperands; k++) {
            if (info.operands[size_t(k)] == Operand::RegSrc && in.a[size_t(k)] != 0) reads.push_back(in.a[size_t(k)]);
            if (info.operands[size_t(k)] == Operand::RegDst) writes.push_back(in.a[size_t(k)]);
        }
    }
    bool reads(size_t pc, int r) const {
        std::vector<int> rd, wr;
        regs_of(p_.code[pc], rd, wr);
        return std::find(rd.begin(), rd.end(), r) != rd.end();
    }
    bool writes(size_t pc, int r) const {
        std::vector<int> rd, wr;
        regs_of(p_.code[pc], rd, wr);
        return std::find(wr.begin(), wr.end(), r) != wr.end();
    }
    // Whether register r may be read, after pc, before it is surely written again. Within the block
    // around pc that is first_access's question (a write in a nested loop that surely runs kills
    // r: ktir-cpu's parser takes no scf.if results, so an if must not yield what is not live);
    // past the block's end: a loop may run again (its body reading r first) or r is live after
    // it; a then-branch continues after the else-branch.
    bool live_after(int r, size_t pc) const {
        size_t end = pc + 1;
        for (int depth = 0; end < p_.code.size(); end++) {
            const Opcode op = p_.code[end].op;
            if (op == Opcode::LOOP || op == Opcode::IF) depth++;
            else if (depth > 0 && (op == Opcode::ENDLOOP || op == Opcode::ENDIF)) depth--;
            else if (depth == 0 && (op == Opcode::ENDLOOP || op == Opcode::ENDIF || op == Opcode::ELSE)) break;
        }
        const int f = first_access(r, pc + 1, end);
        if (f != 0) return f > 0;
        if (end >= p_.code.size()) return false;
        switch (p_.code[end].op) {
        case Opcode::ENDLOOP: return read_first(r, loop_of(end)) || live_after(r, end);
        case Opcode::ELSE: {
            size_t q = end;  // leaving a then-branch: on after the ENDIF
            while (p_.code[q].op != Opcode::ENDIF) q = match_[q];
            return live_after(r, q);
        }
        default: return live_after(r, end);
        }
    }
    // The LOOP that an ENDLOOP closes.
    size_t loop_of(size_t endloop) const {
        for (size_t q = endloop; q-- > 0;)
            if (p_.code[q].op == Opcode::LOOP && match_[q] == endloop) return q;
        return 0;
    }
    // Whether a loop body may read r before writing it (a value from the previous iteration).
    bool read_first(int r, size_t loop_pc) const { return first_access(r, loop_pc + 1, match_[loop_pc]) > 0; }
    // Over [from, to): 1 if r may be read before it is written, -1 if it is surely written first,
    // 0 if neither. A nested loop with a constant positive count runs its body, so a write there
    // counts; a write inside a branch or a loop that may not run does not.
    int first_access(int r, size_t from, size_t to) const {
        for (size_t q = from; q < to; q++) {
            const Instr &in = p_.code[q];
            if (reads(q, r)) return 1;
            if (in.op == Opcode::LOOP) {
                if (in.a[0] == r) return -1;  // the loop sets r before its body reads it
                const bool runs = in.a[1] == 0 && in.a[2] > 0;
                int f = first_access(r, q + 1, match_[q]);
                if (f > 0 || (f < 0 && runs)) return f;
                q = match_[q];
                continue;
            }
            if (in.op == Opcode::IF) {
                // Both branches read first -> a read; a read in either -> a read.
                size_t end = q;
                while (p_.code[end].op != Opcode::ENDIF) end = match_[end];
                for (size_t b = q; b != end; b = match_[b])
                    if (first_access(r, b + 1, match_[b]) > 0) return 1;
                q = end;
                continue;
            }
            if (writes(q, r)) return -1;
        }
        return 0;
    }
    std::set<int> written(size_t from, size_t to, int except) const {
        std::set<int> w;
        for (size_t q = from; q < to; q++) {
            std::vector<int> rd, wr;
            regs_of(p_.code[q], rd, wr);
            for (int r : wr)
                if (r != except) w.insert(r);
        }
        return w;
    }

    // ------------------------------------------------------------------ text
    void line(const std::string &s) { os_ << std::string(size_t(ind_), ' ') << s << "\n"; }
    // An op whose text ends in an attribute or a region, not a type (linalg.broadcast's dimensions,
    // linalg.transpose's permutation, the closing brace of scf.for, scf.if or linalg.reduce): a
    // blank line ends it, since ktir-cpu's parser joins such an op with the next line unless that
    // one starts an SSA assignment (it dropped a ktdp.store after a transpose and after a reduce).
    void untyped_line(const std::string &s) {
        line(s);
        os_ << "\n";
    }
    std::string fresh() { return "%_" + std::to_string(next_++); }
    static std::string ident(const std::string &s) {
        std::string o;
        for (char c : s) o += std::isalnum((unsigned char)c) || c == '_' ? c : '_';
        if (o.empty() || !std::isalpha((unsigned char)o[0])) o = "k" + o;
        return o;
    }
    void names() {
        std::set<std::string> used;
        for (const BufferDecl &b : p_.buffers) {
            std::string n = ident(b.name);
            while (!used.insert(n).second) n += "_";
            buf_.push_back(n);
        }
    }
    std::string konst(int64_t v) {
        std::string n = fresh();
        line(n + " = arith.constant " + std::to_string(v) + " : index");
        return n;
    }
    // The index value R[r] + off.
    std::string value(int r, int64_t off) {
        if (r == 0) return konst(off);
        if (off == 0) return reg_[r];
        std::string n = fresh();
        line(n + " = arith.addi " + reg_[r] + ", " + konst(off) + " : index");
        return n;
    }
    // An element address: (R[r] + off) / eb, with off a multiple of eb.
    std::string elem_addr(int r, int64_t off, int64_t eb, size_t pc, const char *what) {
        if (off % eb != 0)
            throw_error("instruction ", pc, " (", op_info(p_.code[pc].op).name, "): ", what, " offset ", off,
                        " is not a whole number of elements");
        if (r == 0) return konst(off / eb);
        std::string q = fresh();
        line(q + " = arith.divui " + reg_[r] + ", " + konst(eb) + " : index");
        if (off == 0) return q;
        std::string n = fresh();
        line(n + " = arith.addi " + q + ", " + konst(off / eb) + " : index");
        return n;
    }

    static std::string set_text(const std::vector<int64_t> &shape) {
        std::string dims, cons;
        for (size_t i = 0; i < shape.size(); i++) {
            dims += (i ? ", " : "") + ("d" + std::to_string(i));
            cons += (i ? ", " : "") + ("d" + std::to_string(i)) + " >= 0, -d" + std::to_string(i) + " + " +
                    std::to_string(shape[i] - 1) + " >= 0";
        }
        return "affine_set<(" + dims + ") : (" + cons + ")>";
    }
    static std::string list(const std::vector<int64_t> &v) {
        std::string s;
        for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + std::to_string(v[i]);
        return s;
    }

    // A memory view at `addr` (elements) and the access tile covering all of it; returns the tile.
    std::string view_tile(const std::string &addr, bool hbm, DType t, const std::vector<int64_t> &sizes,
                          const std::vector<int64_t> &strides, const std::string &base = "", int64_t off = 0) {
        std::string v = fresh(), tl = fresh();
        if (!hbm) lx_regions_[tl] = Region{base, off, off + extent(sizes, strides) * dtype_bytes(t), t, sizes, strides};
        std::string mt = "memref<" + shape_text(sizes) + type_name(t) + ">";
        line(v + " = ktdp.construct_memory_view " + addr + ", sizes: [" + list(sizes) + "], strides: [" +
             list(strides) + "] {memory_space = #ktdp.memory_space<" + (hbm ? "global" : "ct_local") + ">} : " + mt);
        std::string idx;
        for (size_t i = 0; i < sizes.size(); i++) idx += (i ? ", " : "") + std::string("%_zero");
        line(tl + " = ktdp.construct_access_tile " + v + "[" + idx + "] {access_tile_set = " + set_text(sizes) +
             "} : " + mt + " -> " + tile_type(sizes));
        return tl;
    }
    // The access tile's type as torch-spyre prints it: `!ktdp.access_tile<...>` where it stands alone,
    // and MLIR's short form `<...>` in ktdp.load and ktdp.store, whose format fixes the dialect.
    static std::string tile_type(const std::vector<int64_t> &s) { return "!ktdp.access_tile" + short_tile_type(s); }
    static std::string short_tile_type(const std::vector<int64_t> &s) { return "<" + shape_text(s) + "index>"; }
    static std::string tensor_type(const std::vector<int64_t> &s, DType t) {
        return "tensor<" + shape_text(s) + type_name(t) + ">";
    }
    std::string lx_tile(const Instr &in, int reg_slot, DType t, const std::vector<int64_t> &sizes,
                        const std::vector<int64_t> &strides, size_t pc, const char *what) {
        const int r = in.a[size_t(reg_slot)];
        std::string a = elem_addr(r, in.a[size_t(reg_slot + 1)] + lx_shift(t), dtype_bytes(t), pc, what);
        return view_tile(a, false, t, sizes, strides, r ? reg_[r] : "", in.a[size_t(reg_slot + 1)]);
    }
    std::string load(const std::string &tile, const std::vector<int64_t> &s, DType t, bool in_place = false) {
        auto rg = lx_regions_.find(tile);
        if (rg != lx_regions_.end()) {
            std::string held = held_value(rg->second, in_place);
            if (!held.empty()) return held;
        }
        std::string x = fresh();
        line(x + " = ktdp.load " + tile + " : " + short_tile_type(s) + " -> " + tensor_type(s, t));
        return x;
    }
    // The elements of the whole rows around n elements read from `first` (after row 0's base).
    static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
    static int64_t shift_rows(int64_t first, int64_t n, int64_t row) {
        return (floor_div(first + n - 1, row) - floor_div(first, row) + 1) * row;
    }
    static constexpr int64_t kMaxShiftRowsElements = int64_t(1) << 22;
    // VSELIDX in ops ktir-cpu runs (docs/ktir.md, "Index selects"): the lane index of each element
    // (a dense iota broadcast over the rows) compared with the limit (a splat, plus the row index
    // with per_group), and an arith.select of the two sources (the second broadcast along the row
    // when it is one element per row). The select carries spyre.index_select = per_group, from which
    // our importer rebuilds the instruction (checking the mask). Returns "" for tensors too large to
    // spell out; the caller writes spyre.index_select.
    std::string index_select_ops(const std::string &x, const std::string &y, const std::string &lim,
                                 const std::vector<int64_t> &shape, bool one_per_row, bool per_group, DType t) {
        if (shape.size() != 2 || shape[0] * shape[1] > kMaxShiftRowsElements || shape[1] > 8192 || shape[0] > 8192)
            return "";
        const int64_t groups = shape[0], row = shape[1];
        const std::string mt = "tensor<" + shape_text(shape) + "index>";
        auto iota = [&](int64_t n, int dim) {
            std::string list;
            for (int64_t i = 0; i < n; i++) list += (i ? ", " : "") + std::to_string(i);
            const std::string c = fresh(), e = fresh(), b = fresh();
            line(c + " = arith.constant dense<[" + list + "]> : tensor<" + std::to_string(n) + "xindex>");
            line(e + " = tensor.empty() : " + mt);
            untyped_line(b + " = linalg.broadcast ins(" + c + " : tensor<" + std::to_string(n) + "xindex>) outs(" + e +
                         " : " + mt + ") dimensions = [" + std::to_string(dim) + "]");
            return b;
        };
        const std::string lanes = iota(row, 0);
        std::string limit = fresh();
        line(limit + " = tensor.splat " + lim + " : " + mt);
        if (per_group) {
            const std::string rows = iota(groups, 1), sum = fresh();
            line(sum + " = arith.addi " + rows + ", " + limit + " : " + mt);
            limit = sum;
        }
        const std::string mask = fresh();
        line(mask + " = arith.cmpi ule, " + lanes + ", " + limit + " : " + mt);
        std::string second = y;
        if (one_per_row) {
            const std::string e = fresh();
            second = fresh();
            line(e + " = tensor.empty() : " + tensor_type(shape, t));
            untyped_line(second + " = linalg.broadcast ins(" + y + " : " + tensor_type({groups}, t) + ") outs(" + e +
                         " : " + tensor_type(shape, t) + ") dimensions = [1]");
        }
        const std::string r = fresh();
        line(r + " = arith.select " + mask + ", " + x + ", " + second + " {spyre.index_select = " +
             std::to_string(per_group ? 1 : 0) + " : i32} : tensor<" + shape_text(shape) + "i1>, " + tensor_type(shape, t));
        return r;
    }
    // VLSEL in ops ktir-cpu runs (docs/ktir.md, "Lane selects"): the columns of each block of w taken
    // from x (even blocks) or y (odd blocks) as tensor.extract_slice, inserted at the same place in a
    // zero result; strided slices (one per column of a block pair) or one per block, whichever is
    // fewer. The last insert_slice carries spyre.lane_select = w, from which our importer rebuilds
    // the instruction (checking the slices). Returns "" for rows of at most w columns (no element of
    // y) or tensors too large to spell out; the caller writes spyre.lane_select.
    std::string lane_select_slices(const std::string &x, const std::string &y, const std::vector<int64_t> &shape,
                                   DType t, int64_t w) {
        if (shape.size() != 2 || w < 1 || shape[1] <= w || shape[0] * shape[1] > kMaxShiftRowsElements) return "";
        const int64_t groups = shape[0], row = shape[1];
        struct Piece {
            bool second;
            int64_t c0, count, step;
        };
        std::vector<Piece> strided, blocks;
        for (int64_t o = 0; o < 2 * w && o < row; o++)
            strided.push_back(Piece{o >= w, o, (row - o + 2 * w - 1) / (2 * w), 2 * w});
        for (int64_t k = 0; k * w < row; k++) blocks.push_back(Piece{k % 2 == 1, k * w, std::min(w, row - k * w), 1});
        const std::vector<Piece> &pieces = strided.size() <= blocks.size() ? strided : blocks;
        const std::string rt = tensor_type(shape, t);
        std::string z = fresh(), r = fresh();
        line(z + " = arith.constant " + float_literal(0.0f, t) + " : " + type_name(t));
        line(r + " = tensor.splat " + z + " : " + rt);
        for (size_t i = 0; i < pieces.size(); i++) {
            const Piece &p = pieces[i];
            const std::string pt = tensor_type({groups, p.count}, t);
            const std::string at = "[0, " + std::to_string(p.c0) + "] [" + std::to_string(groups) + ", " +
                                   std::to_string(p.count) + "] [1, " + std::to_string(p.step) + "]";
            std::string piece = fresh(), next = fresh();
            line(piece + " = tensor.extract_slice " + (p.second ? y : x) + at + " : " + rt + " to " + pt);
            const std::string attr =
                i + 1 == pieces.size() ? " {spyre.lane_select = " + std::to_string(w) + " : i32}" : "";
            line(next + " = tensor.insert_slice " + piece + " into " + r + at + attr + " : " + pt + " into " + rt);
            r = next;
        }
        return r;
    }
    // VSHIFT in ops ktir-cpu runs (docs/ktir.md, "Shifted reads"). `x` holds the n elements read,
    // the first `first` elements after row 0's base (negative: before it). The rows' positions are
    // laid out flat in a zero tensor of whole rows (x inserted at its place), seen as rows; each run
    // of result columns that reads consecutive positions of one row is an extract_slice of those rows
    // (one per group) inserted into a zero result; the last insert_slice carries the instruction's
    // operands as spyre.* attributes, from which our importer rebuilds it (checking the slices).
    // Returns "" when no element is read or the rows would be too large; the caller writes spyre.shift.
    std::string shift_slices(const std::string &x, int64_t n, int64_t first, int64_t groups, int64_t row, DType t,
                             ShiftEdge e, int64_t sh, int64_t lo, int64_t hi, const std::string &attrs) {
        struct Run {
            int64_t j0, q, c0, len;
        };
        std::vector<Run> runs;
        for (int64_t j = 0; j < row; j++) {
            bool zero = false;
            const int64_t p = shift_source(e, j + sh, lo, hi, &zero);
            if (zero) continue;
            const int64_t q = floor_div(p, row), c = p - q * row;
            Run &b = runs.empty() ? runs.emplace_back(Run{j, q, c, 0}) : runs.back();
            if (b.j0 + b.len == j && b.q == q && b.c0 + b.len == c) {
                b.len++;
            } else {
                runs.push_back(Run{j, q, c, 1});
            }
        }
        const int64_t qmin = floor_div(first, row);
        const int64_t total = shift_rows(first, n, row), rows = total / row;
        if (runs.empty() || total > kMaxShiftRowsElements) return "";
        const std::string xt = tensor_type({n}, t), st = tensor_type({rows, row}, t), rt = tensor_type({groups, row}, t);
        std::string z = fresh();
        line(z + " = arith.constant " + float_literal(0.0f, t) + " : " + type_name(t));
        // Inserted even when x fills the rows: our importer reads a reshape of x itself as x's LX bytes.
        std::string zf = fresh(), flat = fresh();
        line(zf + " = tensor.splat " + z + " : " + tensor_type({total}, t));
        line(flat + " = tensor.insert_slice " + x + " into " + zf + "[" + std::to_string(first - qmin * row) + "] [" +
             std::to_string(n) + "] [1] : " + xt + " into " + tensor_type({total}, t));
        const std::string s = reshaped(flat, {total}, {rows, row}, t);
        std::string r = fresh();
        line(r + " = tensor.splat " + z + " : " + rt);
        for (size_t i = 0; i < runs.size(); i++) {
            const Run &b = runs[i];
            const std::string bt = tensor_type({groups, b.len}, t), sizes = "[" + std::to_string(groups) + ", " +
                                                                            std::to_string(b.len) + "] [1, 1]";
            std::string piece = fresh(), next = fresh();
            line(piece + " = tensor.extract_slice " + s + "[" + std::to_string(b.q - qmin) + ", " +
                 std::to_string(b.c0) + "] " + sizes + " : " + st + " to " + bt);
            std::string tail = " : " + bt + " into " + rt;
            if (i + 1 == runs.size()) {
                std::string spy;  // the instruction's operands, each as spyre.<name>
                for (size_t k = 0; k < attrs.size();) {
                    const size_t c = attrs.find(", ", k);
                    spy += (spy.empty() ? "spyre." : ", spyre.") + attrs.substr(k, c == std::string::npos ? c : c - k);
                    k = c == std::string::npos ? attrs.size() : c + 2;
                }
                tail = " {" + spy + "}" + tail;
            }
            line(next + " = tensor.insert_slice " + piece + " into " + r + "[0, " + std::to_string(b.j0) + "] " +
                 sizes + tail);
            r = next;
        }
        return r;
    }
    // `x` (of shape `from`) as shape `to`, the same dense elements.
    std::string reshaped(const std::string &x, const std::vector<int64_t> &from, const std::vector<int64_t> &to,
                         DType t) {
        std::string shp = fresh(), r = fresh();
        line(shp + " = arith.constant dense<[" + list(to) + "]> : tensor<" + std::to_string(to.size()) + "xindex>");
        line(r + " = tensor.reshape " + x + "(" + shp + ") : (" + tensor_type(from, t) + ", tensor<" +
             std::to_string(to.size()) + "xindex>) -> " + tensor_type(to, t));
        return r;
    }
    // A linalg.reduce's init. ktir-cpu counts a value's uses from op operands, and it parses a
    // linalg.reduce's outs into an attribute, not an operand: a held value used once elsewhere (the
    // store that put it in LX) is freed at that use (its LXOptions.consume_last_use) and the reduce
    // finds it gone ("Value '%_N' not found"); the reduce also rebinds the outs name to its result.
    // So a held value reaches the reduce through a tensor.reshape to its own shape, which only the
    // reduce reads (our importer: the same LX bytes).
    std::string reduce_init(const std::string &tile, const std::vector<int64_t> &s, DType t, bool in_place) {
        auto rg = lx_regions_.find(tile);
        std::string held = rg == lx_regions_.end() ? "" : held_value(rg->second, in_place);
        // A constant fill held at that tile alone, as many elements as the init (the identity a
        // reduction starts from): its value too, in the init's shape, not a load of the tile, which
        // ktir-cpu's own copies of loaded tiles may have overwritten. Our importer accumulates into
        // the tile the fill was stored to. (A fill of more elements than the init would need a
        // slice of it, which our importer reads only in shifted reads and lane selects.)
        if (held.empty() && rg != lx_regions_.end())
            for (const Held &h : held_) {
                int uses = 0;
                for (const Held &o : held_) uses += o.value == h.value;
                if (splats_.count(h.value) && uses == 1 && h.at.base == rg->second.base && h.at.lo == rg->second.lo &&
                    h.at.t == t && dense(h.at) && dense(rg->second) && count(h.at.sizes) == count(s)) {
                    held = h.at.sizes == s ? h.value : reshaped(h.value, h.at.sizes, s, t);
                    break;
                }
            }
        if (held.empty()) return load(tile, s, t, in_place);
        return reshaped(held, s, s, t);
    }
    // shared: the store into LX of a shared load (DMA_LD.shared), marked `spyre.shared = 1`.
    void store(const std::string &x, const std::string &tile, const std::vector<int64_t> &s, DType t, int tag,
               bool shared = false) {
        auto rg = lx_regions_.find(tile);
        std::string v = x;  // the value the tile holds after the store
        if (rg != lx_regions_.end() && !splats_.count(x)) {
            // Our importer keeps a value at one LX place, the tile it was first stored to, and
            // reads it there (a value that views another's LX and is first stored to a tile is that
            // tile: Importer::store). A value stored to a second tile is that tile's contents under a
            // new name, a tensor.reshape to its own shape, so that a read of the second tile reads
            // it, not the first, which later instructions may overwrite while the second still holds
            // it. Where the reshape would not view the first tile's layout in place (rows not back
            // to back in whole sticks), the export forgets the second tile and reads it with a load.
            auto home = lx_home_.find(x);
            if (home != lx_home_.end()) {
                const Region &h = home->second;
                if (dense(h) && (h.sizes.size() == 1 || (h.sizes.back() * dtype_bytes(t)) % sb_ == 0)) {
                    v = reshaped(x, s, s, t);
                    renamed_.insert(x);
                    renamed_.insert(v);
                } else {
                    v.clear();
                }
            }
        }
        line("ktdp.store " + (v.empty() ? x : v) + ", " + tile + " {spyre.tag = " + std::to_string(tag) + " : i32" +
             (shared ? ", spyre.shared = 1 : i32" : "") + "} : " + tensor_type(s, t) + ", " + short_tile_type(s));
        if (rg != lx_regions_.end()) {
            forget(rg->second);
            if (!v.empty()) {
                held_.push_back(Held{rg->second, v});
                lx_home_.emplace(v, rg->second);
            }
        }
    }

    // ------------------------------------------------------------------ LX contents as SSA values
    // IBM's interpreter (ktir-cpu) keeps every tensor a ktdp.load produces in LX itself, at a bump
    // pointer from address 0 that each region's end rewinds (ktir_cpu/ops/memory_ops.py,
    // MemoryOps._write_to_lx; ktir_cpu/grid.py, CoreContext.push_scope / pop_scope), and its LX is a
    // set of typed allocations, one per first store (ktir_cpu/memory.py, _read_flat / _write_flat).
    // Data the export left at a fixed LX address and loaded again is overwritten there by those
    // copies, or read across two allocations. So the export says what an LX read reads when it
    // knows: the SSA value last stored to exactly that tile (or, dense, the same bytes in another
    // shape, through tensor.reshape), while nothing may have written over it and the value is in
    // scope (defined in this region or one around it). Our importer places a value stored to an LX
    // tile there and reads it in place, so it imports to the same instructions. Only what it cannot
    // say (a tile written in an earlier iteration of a loop, or partly) is still a ktdp.load.
    struct Region {
        std::string base;  // the SSA name of the address register; "" for a constant address
        int64_t lo = 0, hi = 0;  // bytes after base
        DType t = DType::F16;
        std::vector<int64_t> sizes, strides;
    };
    struct Held {
        Region at;
        std::string value;
    };
    static int64_t extent(const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides) {
        int64_t e = 1;
        for (size_t i = 0; i < sizes.size(); i++) e += (sizes[i] - 1) * strides[i];
        return e;
    }
    static bool dense(const Region &r) {
        int64_t st = 1;
        for (size_t i = r.sizes.size(); i-- > 0;) {
            if (r.sizes[i] > 1 && r.strides[i] != st) return false;
            st *= r.sizes[i];
        }
        return true;
    }
    static int64_t count(const std::vector<int64_t> &s) {
        int64_t n = 1;
        for (int64_t d : s) n *= d;
        return n;
    }
    // Whether a write of [lo, hi) after `base` may change what `r` holds: addresses after
    // different registers are not compared.
    static bool may_overlap(const Region &r, const std::string &base, int64_t lo, int64_t hi) {
        return r.base != base || (r.lo < hi && lo < r.hi);
    }
    void forget(const std::string &base, int64_t lo, int64_t hi) {
        held_.erase(std::remove_if(held_.begin(), held_.end(),
                                   [&](const Held &h) { return may_overlap(h.at, base, lo, hi); }),
                    held_.end());
    }
    void forget(const Region &r) { forget(r.base, r.lo, r.hi); }
    // The SSA value that holds what a read of `r` reads, or "" if the export does not know one.
    // in_place: the value is a linalg.matmul / linalg.reduce init, which ktir-cpu overwrites (it
    // accumulates into the outs tensor and rebinds its name): only a value held at that tile alone.
    std::string held_value(const Region &r, bool in_place) {
        for (const Held &h : held_) {
            // A constant fill or a broadcast: our importer keeps a tensor.splat or linalg.broadcast
            // as such and writes LX with it again for each use, so the tile is read where it is
            // (but a DMA store of the whole tile stores the value: dma()).
            if (splats_.count(h.value)) continue;
            if (h.at.base != r.base || h.at.lo != r.lo || h.at.t != r.t) continue;
            if (in_place) {
                // ktir-cpu accumulates into the init in place: not a value another name may share.
                if (renamed_.count(h.value)) return "";
                int uses = 0;
                for (const Held &o : held_) uses += o.value == h.value;
                if (uses != 1 || h.at.sizes != r.sizes || h.at.strides != r.strides) return "";
                return h.value;
            }
            if (h.at.sizes == r.sizes && h.at.strides == r.strides) return h.value;
            if (dense(h.at) && dense(r) && count(h.at.sizes) == count(r.sizes))
                return reshaped(h.value, h.at.sizes, r.sizes, r.t);
            return "";
        }
        return "";
    }
    // The LX bytes an instruction writes: its address register and offset, and an upper bound on
    // the bytes.
    struct LxWrite {
        int reg = 0;
        int64_t off = 0, bytes = 0;
    };
    bool lx_write(const Instr &in, LxWrite &w) const {
        const auto &a = in.a;
        switch (op_info(in.op).engine) {
        case Engine::DMA: {
            if (in.op != Opcode::DMA_LD) return false;
            const DmaDesc &d = p_.dma[size_t(a[6])];
            w = {a[4], a[5], int64_t(d.sticks) * sb_};
            for (int k = 0; k < 3; k++)
                if (d.count[size_t(k)] > 1) w.bytes += int64_t(d.count[size_t(k)] - 1) * std::abs(d.lx_stride[size_t(k)]);
            return true;
        }
        case Engine::PE: {
            const MatmulDesc &d = p_.mm[size_t(a[7])];
            w = {a[1], a[2], int64_t(d.m) * d.ldc};
            return true;
        }
        case Engine::Ring:
            if (in.op == Opcode::RING_SEND) return false;
            w = {a[2], a[3], int64_t(a[4]) * sb_};
            return true;
        case Engine::Vector: {
            const int64_t eb = dtype_bytes(DType(in.dtype)), lanes = sb_ / eb;
            if (op_info(in.op).form == VecForm::Transpose)
                w = {a[1], a[2], int64_t(a[8]) * ((a[7] + lanes - 1) / lanes * lanes) * eb};
            else
                w = {a[1], a[2], int64_t(a[7]) * a[8] * sb_ * std::max<int64_t>(1, 4 / eb)};
            return true;
        }
        default: return false;
        }
    }
    // Before a loop or branch over [from, to): forgets what any of its writes may change. `iv`: the
    // loop's induction variable (written by the loop), or -1.
    void forget_writes(size_t from, size_t to, int iv) {
        const std::set<int> changed = written(from, to, -1);
        for (size_t q = from; q < to; q++) {
            LxWrite w;
            if (!lx_write(p_.code[q], w)) continue;
            if (w.reg != 0 && (w.reg == iv || changed.count(w.reg))) {
                held_.clear();  // an address that changes in the region: anywhere
                return;
            }
            forget(w.reg ? reg_[w.reg] : "", w.off, w.off + w.bytes);
        }
    }

    // ------------------------------------------------------------------ buffers
    // A buffer in the default layout: its logical dims, rows padded to whole sticks. In another
    // layout, torch-spyre's form: the logical dims outermost first with the stick dim split into its
    // stick count and its lanes (a (1024, 256) fp16 tensor with the stick count outermost is
    // `sizes: [1024, 4, 64], strides: [64, 65536, 1]`), and `spyre.stick_extent` when the stick dim
    // is not whole sticks (docs/ktir.md).
    bool same_bytes(const DeviceLayout &a, const DeviceLayout &b, const std::vector<int64_t> &shape, DType t) const {
        const DeviceGeometry ga = device_geometry(a, shape, t, sb_), gb = device_geometry(b, shape, t, sb_);
        if (ga.total_bytes != gb.total_bytes) return false;
        if (ga.sticks_along_stick_dim > 1 && ga.stick_index_stride != gb.stick_index_stride) return false;
        for (size_t d = 1; d < shape.size(); d++)
            if (shape[d] > 1 && ga.dim_stride[d] != gb.dim_stride[d]) return false;
        return true;
    }

    void buffer_view(size_t i) {
        BufferDecl b = p_.buffers[i];
        const int rank = int(b.shape.size());
        std::string sticked_on;
        if (b.layout.stick_dim == 1 && rank == 2) {
            // Byte for byte the tensor with its dims swapped, sticked on dim 0: written so, and marked.
            std::vector<int> order;
            for (int d : b.layout.order.empty() ? std::vector<int>{0, 1} : b.layout.order) order.push_back(1 - d);
            b.shape = {b.shape[1], b.shape[0]};
            b.layout = DeviceLayout{0, order};
            sticked_on = ", spyre.stick_dim = 1 : i64";
        }
        // A layout that places every element where the default does (they differ only in where dims
        // of extent 1 go: torch-spyre's [M, K/64, B, 64] at B = 1) is written in the default form.
        if (b.layout.stick_dim == 0 && same_bytes(b.layout, default_layout(rank), b.shape, b.type))
            b.layout = default_layout(rank);
        const bool split = rank > 1 && !stick_count_innermost(b.layout, rank);
        if (b.layout.stick_dim != 0 ||
            (!split && b.layout != default_layout(rank) && !(b.layout.order.empty() && b.layout.stick_dim == 0)))
            throw_error("buffer '", b.name, "' has layout ", layout_to_string(b.layout),
                        "; KTIR export supports layouts sticked on dim 0, and on dim 1 at rank 2");
        const int64_t eb = dtype_bytes(b.type), lanes = sb_ / eb;
        std::vector<int64_t> sizes, strides;
        std::string extra;
        if (split) {
            const DeviceGeometry g = device_geometry(b.layout, b.shape, b.type, sb_);
            for (int d = rank - 1; d >= 1; d--) {
                sizes.push_back(b.shape[size_t(d)]);
                strides.push_back(g.dim_stride[size_t(d)] / eb);
            }
            sizes.push_back(g.sticks_along_stick_dim);
            strides.push_back(g.stick_index_stride / eb);
            sizes.push_back(lanes);
            strides.push_back(1);
            if (b.shape[0] % lanes) extra = ", spyre.stick_extent = " + std::to_string(b.shape[0]) + " : i64";
        } else {
            sizes.assign(b.shape.rbegin(), b.shape.rend());
            strides.resize(sizes.size());
            int64_t st = 1;
            for (size_t d = sizes.size(); d-- > 0;) {
                strides[d] = st;
                st *= d + 1 == sizes.size() ? (sizes[d] + lanes - 1) / lanes * lanes : sizes[d];
            }
        }
        std::string mt = "memref<" + shape_text(sizes) + type_name(b.type) + ">";
        const char *kind = buffer_kind_name(b.kind);  // input, output, inout, temp
        line("%" + buf_[i] + "_view = ktdp.construct_memory_view %" + buf_[i] + ", sizes: [" + list(sizes) +
             "], strides: [" + list(strides) + "] {");
        line("  coordinate_set = " + set_text(sizes) + ",");
        line(std::string("  memory_space = #ktdp.memory_space<global>, spyre.kind = \"") + kind + "\"" + extra +
             sticked_on);
        line("} : " + mt);
    }

    // ------------------------------------------------------------------ instructions
    void block(size_t from, size_t to) {
        for (size_t pc = from; pc < to; pc++) {
            const Instr &in = p_.code[pc];
            switch (in.op) {
            case Opcode::LOOP:
                declare_tiles_read_after(pc, to);
                loop(pc);
                pc = match_[pc];
                break;
            case Opcode::IF:
                if_block(pc);
                pc = match_[pc];
                while (p_.code[pc].op == Opcode::ELSE) pc = match_[pc];
                break;
            default: instr(pc);
            }
        }
    }

    // A store of tensor.empty() of n elements of type t at fixed LX byte address `at`: one
    // allocation for ktir-cpu, no instruction for our importer (the tile's contents stay undefined).
    void declare_tile(int64_t at, DType t, int64_t n) {
        const std::string e = fresh();
        line(e + " = tensor.empty() : " + tensor_type({n}, t));
        const std::string tile = view_tile(konst((at + lx_shift(t)) / dtype_bytes(t)), false, t, {n}, {1}, "", at);
        line("ktdp.store " + e + ", " + tile + " : " + tensor_type({n}, t) + ", " + short_tile_type({n}));
    }

    // The LX bytes a transfer spans, from its first element to its last.
    int64_t dma_lx_bytes(const DmaDesc &d) const {
        int64_t bytes = int64_t(d.sticks) * sb_;
        for (int k = 0; k < 3; k++) bytes += int64_t(d.count[size_t(k)] - 1) * d.lx_stride[size_t(k)];
        return bytes;
    }

    // ktir-cpu cuts a store short at the end of the allocation the first store at its address made
    // (_write_flat in memory.py): a DMA into a fixed LX address that an earlier, smaller DMA of the
    // same type filled (conv1d/root: one stick per row, then two) lost its second half. And it frees
    // the LX a branch or loop body allocated when the body ends (the scope ktir-cpu's scf.if and
    // scf.for push, ControlOps in control_ops.py): a DMA inside a loop or branch that prefetches the
    // next iteration's tile (rope/auto's double-buffered tiles, loaded in an scf.if) filled an
    // allocation gone by the next iteration's read. Each such address is declared at the start with
    // the largest of those DMAs' extents (a store of tensor.empty(), no instruction for our
    // importer), when every DMA into it has the same type.
    void declare_grown_dma_tiles() {
        struct Dest {
            DType t = DType::F16;
            int64_t first = 0, most = 0;
            bool mixed = false, nested = false;
        };
        std::map<int64_t, Dest> dests;  // by LX byte address
        int depth = 0;  // LOOP and IF blocks around the instruction
        for (const Instr &in : p_.code) {
            if (in.op == Opcode::LOOP || in.op == Opcode::IF) depth++;
            if (in.op == Opcode::ENDLOOP || in.op == Opcode::ENDIF) depth--;
            if (in.op != Opcode::DMA_LD || in.a[4] != 0) continue;
            const int64_t bytes = dma_lx_bytes(p_.dma[size_t(in.a[6])]);
            const DType t = p_.buffers[size_t(in.a[1])].type;
            auto [it, fresh_dest] = dests.try_emplace(in.a[5]);
            if (fresh_dest) it->second = Dest{t, bytes, bytes, false, false};
            it->second.mixed |= it->second.t != t;
            it->second.most = std::max(it->second.most, bytes);
            // A DMA of several runs (rows of a strided tile) is a scatter to ktir-cpu, which needs
            // the allocation there already (flash_attention's K, loaded head by head).
            const DmaDesc &dd = p_.dma[size_t(in.a[6])];
            it->second.nested |= depth > 0 || dd.count[0] * dd.count[1] * dd.count[2] > 1;
        }
        for (const auto &[at, d] : dests) {
            if (d.mixed || (d.most <= d.first && !d.nested)) continue;
            const int64_t n = d.most / dtype_bytes(d.t);
            declare_tile(at, d.t, n);
        }
    }

    // ktir-cpu's LX is a set of typed allocations, each made by the first store at an address, and
    // a read reads one of them, zeros past its end (_read_flat in memory.py): a tile a loop fills a
    // row at a time and a DMA then stores whole read one row and zeros. Before such a loop, each
    // tile that a DMA after it (in the same block) stores from a fixed LX address is declared: a
    // store of tensor.empty() of the DMA's extent and type there, one allocation for ktir-cpu and
    // no instruction for our importer (unless a DMA loaded that tile before: it holds data).
    void declare_tiles_read_after(size_t pc, size_t to) {
        for (size_t q = match_[pc] + 1; q < to; q++) {
            const Instr &in = p_.code[q];
            if (in.op == Opcode::LOOP || in.op == Opcode::IF) {
                q = match_[q];
                while (p_.code[q].op == Opcode::ELSE) q = match_[q];
                continue;
            }
            if (in.op != Opcode::DMA_ST || in.a[4] != 0) continue;
            const DType t = p_.buffers[size_t(in.a[1])].type;
            const int64_t n = dma_lx_bytes(p_.dma[size_t(in.a[6])]) / dtype_bytes(t);
            bool held = false;
            for (const Held &h : held_) held |= h.at.base.empty() && h.at.lo == in.a[5];
            // A tile a DMA loaded before (an output's old contents, updated in place) holds data:
            // an empty store there would be zeros to ktir-cpu.
            bool loaded = false;
            for (size_t e = 0; e < pc && !loaded; e++)
                loaded = p_.code[e].op == Opcode::DMA_LD && p_.code[e].a[4] == 0 && p_.code[e].a[5] == in.a[5];
            if (held || loaded) continue;
            declare_tile(in.a[5], t, n);
        }
    }

    void loop(size_t pc) {
        const Instr &in = p_.code[pc];
        size_t end = match_[pc];
        const int iv = in.a[0];
        if (live_after(iv, end))
            throw_error("instruction ", pc, " (LOOP): its induction variable r", iv, " is read after the loop");
        std::vector<int> carried;
        for (int r : written(pc + 1, end, iv))
            if (read_first(r, pc) || live_after(r, end)) carried.push_back(r);
        std::string n = value(in.a[1], in.a[2]);
        std::string c1 = konst(1);
        std::string ivn = fresh();
        std::vector<std::string> res, args;
        for (size_t i = 0; i < carried.size(); i++) {
            res.push_back(fresh());
            args.push_back(fresh());
        }
        std::string head;
        for (size_t i = 0; i < res.size(); i++) head += (i ? ", " : "") + res[i];
        if (!res.empty()) head += " = ";
        head += "scf.for " + ivn + " = %_zero to " + n + " step " + c1;
        if (!carried.empty()) {
            head += " iter_args(";
            for (size_t i = 0; i < carried.size(); i++)
                head += (i ? ", " : "") + args[i] + " = " + reg_[carried[i]];
            head += ") -> (";
            for (size_t i = 0; i < carried.size(); i++) head += (i ? ", " : "") + std::string("index");
            head += ")";
        }
        forget_writes(pc + 1, end, iv);
        const std::vector<Held> before = held_;  // what the body defines is out of scope after it
        line(head + " {");
        ind_ += 2;
        reg_[iv] = ivn;
        for (size_t i = 0; i < carried.size(); i++) reg_[carried[i]] = args[i];
        block(pc + 1, end);
        if (!carried.empty()) line(yield(carried));
        ind_ -= 2;
        untyped_line("}");
        held_ = before;
        for (size_t i = 0; i < carried.size(); i++) reg_[carried[i]] = res[i];
    }
    std::string yield(const std::vector<int> &regs) {
        std::string y = "scf.yield ", t;
        for (size_t i = 0; i < regs.size(); i++) {
            y += (i ? ", " : "") + reg_[regs[i]];
            t += (i ? ", " : "") + std::string("index");
        }
        return y + " : " + t;
    }

    void if_block(size_t pc) {
        const Instr &in = p_.code[pc];
        size_t mid = match_[pc];
        bool has_else = p_.code[mid].op == Opcode::ELSE;
        size_t end = has_else ? match_[mid] : mid;
        std::vector<int> results;
        for (int r : written(pc + 1, end, -1))
            if (live_after(r, end)) results.push_back(r);
        std::string c = fresh();
        line(c + " = arith.cmpi ne, " + reg_[in.a[0]] + ", %_zero : index");
        std::vector<std::string> res;
        for (size_t i = 0; i < results.size(); i++) res.push_back(fresh());
        std::string head;
        for (size_t i = 0; i < res.size(); i++) head += (i ? ", " : "") + res[i];
        if (!res.empty()) head += " = ";
        head += "scf.if " + c;
        if (!res.empty()) {
            head += " -> (";
            for (size_t i = 0; i < res.size(); i++) head += (i ? ", " : "") + std::string("index");
            head += ")";
        }
        forget_writes(pc + 1, end, -1);
        const std::vector<Held> before = held_;  // what a branch defines is out of scope after it
        line(head + " {");
        std::string saved[kNumRegs];
        std::copy(std::begin(reg_), std::end(reg_), std::begin(saved));
        ind_ += 2;
        block(pc + 1, mid);
        if (!results.empty()) line(yield(results));
        ind_ -= 2;
        held_ = before;
        std::copy(std::begin(saved), std::end(saved), std::begin(reg_));
        if (has_else || !results.empty()) {
            line("} else {");
            ind_ += 2;
            if (has_else) block(mid + 1, end);
            if (!results.empty()) line(yield(results));
            ind_ -= 2;
            held_ = before;
            std::copy(std::begin(saved), std::end(saved), std::begin(reg_));
        }
        untyped_line("}");
        for (size_t i = 0; i < results.size(); i++) reg_[results[i]] = res[i];
    }

    void scalar(size_t pc) {
        const Instr &in = p_.code[pc];
        const auto &a = in.a;
        auto set = [&](const std::string &expr) {
            std::string n = fresh();
            line(n + " = " + expr + " : index");
            reg_[a[0]] = n;
        };
        auto bin = [&](const char *op, const std::string &x, const std::string &y) {
            set(std::string(op) + " " + x + ", " + y);
        };
        switch (in.op) {
        case Opcode::LI: {
            int64_t v = int64_t(uint64_t(uint32_t(a[1])) | (uint64_t(uint32_t(a[2])) << 32));
            set("arith.constant " + std::to_string(v));
            return;
        }
        case Opcode::MOV: reg_[a[0]] = reg_[a[1]]; return;
        case Opcode::ADD: return bin("arith.addi", reg_[a[1]], reg_[a[2]]);
        case Opcode::SUB: return bin("arith.subi", reg_[a[1]], reg_[a[2]]);
        case Opcode::MUL: return bin("arith.muli", reg_[a[1]], reg_[a[2]]);
        case Opcode::DIV: return bin("arith.divsi", reg_[a[1]], reg_[a[2]]);
        case Opcode::REM: return bin("arith.remsi", reg_[a[1]], reg_[a[2]]);
        case Opcode::MIN: return bin("arith.minsi", reg_[a[1]], reg_[a[2]]);
        case Opcode::MAX: return bin("arith.maxsi", reg_[a[1]], reg_[a[2]]);
        case Opcode::ADDI: return bin("arith.addi", reg_[a[1]], konst(a[2]));
        case Opcode::MULI: return bin("arith.muli", reg_[a[1]], konst(a[2]));
        case Opcode::SHLI: return bin("arith.shli", reg_[a[1]], konst(a[2] & 63));
        case Opcode::SHRI: return bin("arith.shrsi", reg_[a[1]], konst(a[2] & 63));
        case Opcode::CMPLT:
        case Opcode::CMPEQ: {
            std::string b = fresh();
            line(b + " = arith.cmpi " + (in.op == Opcode::CMPLT ? "slt" : "eq") + ", " + reg_[a[1]] + ", " +
                 reg_[a[2]] + " : index");
            std::string n = fresh();
            line(n + " = arith.index_cast " + b + " : i1 to index");
            reg_[a[0]] = n;
            return;
        }
        case Opcode::SEL: {
            std::string b = fresh();
            line(b + " = arith.cmpi ne, " + reg_[a[1]] + ", %_zero : index");
            set("arith.select " + b + ", " + reg_[a[2]] + ", " + reg_[a[3]]);
            return;
        }
        case Opcode::CORE_ID: {
            std::string n = fresh();
            line(n + " = ktdp.get_compute_tile_id : index");
            reg_[a[0]] = n;
            return;
        }
        case Opcode::NUM_CORES: set("arith.constant " + std::to_string(p_.num_cores)); return;
        default: break;
        }
        // LDLX (an index read from LX) and any later scalar opcode: say so rather than drop it.
        throw_error("instruction ", pc, " (", op_info(in.op).name, "): no KTIR form (docs/ktir.md lists what exports)");
    }

    void instr(size_t pc) {
        const Instr &in = p_.code[pc];
        const auto &a = in.a;
        const DType t = DType(in.dtype);
        const int64_t eb = dtype_bytes(t), lanes = sb_ / eb;
        const char *name = op_info(in.op).name;
        switch (op_info(in.op).engine) {
        case Engine::Control:
            if (in.op == Opcode::NOP) return;
            return scalar(pc);
        case Engine::Sync:
            if (in.op == Opcode::WAIT)
                line("\"spyre.wait\"() {tags = " + std::to_string(uint32_t(a[0])) + " : i32} : () -> ()");
            else
                barrier();
            return;
        case Engine::DMA: return dma(pc);
        case Engine::PE: return matmul(pc);
        case Engine::Ring: return ring(pc);
        case Engine::Vector: break;
        }
        const int64_t sticks = a[7], groups = a[8];
        std::vector<int64_t> shape{groups, sticks * lanes}, dense{sticks * lanes, 1};
        const std::string tt = tensor_type(shape, t);
        static const std::pair<Opcode, const char *> fops[] = {
            {Opcode::VADD, "arith.addf"},     {Opcode::VSUB, "arith.subf"},     {Opcode::VMUL, "arith.mulf"},
            {Opcode::VDIV, "arith.divf"},     {Opcode::VMAX, "arith.maximumf"}, {Opcode::VMIN, "arith.minimumf"},
            {Opcode::VEXP, "math.exp"},       {Opcode::VLOG, "math.log"},       {Opcode::VTANH, "math.tanh"},
            {Opcode::VRSQRT, "math.rsqrt"},   {Opcode::VSQRT, "math.sqrt"},     {Opcode::VNEG, "arith.negf"},
            {Opcode::VABS, "math.absf"},      {Opcode::VROUND, "math.roundeven"}};
        static const std::pair<Opcode, const char *> iops[] = {
            {Opcode::VADD, "arith.addi"}, {Opcode::VSUB, "arith.subi"}, {Opcode::VMUL, "arith.muli"},
            {Opcode::VMAX, "arith.maxsi"}, {Opcode::VMIN, "arith.minsi"}, {Opcode::VABS, "math.absi"}};
        const char *mlir = nullptr;
        if (t == DType::I32) {
            for (auto &p : iops)
                if (p.first == in.op) mlir = p.second;
        } else {
            for (auto &p : fops)
                if (p.first == in.op) mlir = p.second;
        }
        switch (op_info(in.op).form) {
        case VecForm::Map2: {
            if (!mlir) break;  // VFMA, and the fp ops on int32
            if (in.mode & kFoldGroups) {  // the rows of src1 into src0's row: a reduce over dimension 0
                const std::vector<int64_t> row{shape.back()};
                std::string dt = lx_tile(in, 1, t, row, {1}, pc, "dst");
                std::string init = reduce_init(lx_tile(in, 3, t, row, {1}, pc, "src0"), row, t, false);
                std::string x = load(lx_tile(in, 5, t, shape, dense, pc, "src1"), shape, t);
                std::string r = fresh(), in_v = fresh(), acc = fresh(), c = fresh();
                line(r + " = linalg.reduce ins(" + x + " : " + tt + ") outs(" + init + " : " + tensor_type(row, t) +
                     ") dimensions = [0]");
                line("  () {");
                line("  ^bb0(" + in_v + ": " + type_name(t) + ", " + acc + ": " + type_name(t) + "):");
                line("    " + c + " = " + mlir + " " + acc + ", " + in_v + " : " + type_name(t));
                line("    linalg.yield " + c + " : " + type_name(t));
                untyped_line("  }");
                store(r, dt, row, t, a[0]);
                return;
            }
            std::string dt = lx_tile(in, 1, t, shape, dense, pc, "dst");
            std::string x = load(lx_tile(in, 3, t, shape, dense, pc, "src0"), shape, t);
            std::string y;
            if (in.mode & kSrc1Scalar) {
                std::string s = load(lx_tile(in, 5, t, {groups}, {1}, pc, "src1"), {groups}, t);
                std::string e = fresh();
                line(e + " = tensor.empty() : " + tt);
                y = fresh();
                untyped_line(y + " = linalg.broadcast ins(" + s + " : " + tensor_type({groups}, t) + ") outs(" + e + " : " +
                     tt + ") dimensions = [1]");
            } else if (in.mode & kSrc1Row) {  // one row for every group: broadcast along the groups
                const int64_t n = shape.back();
                std::string s = load(lx_tile(in, 5, t, {n}, {1}, pc, "src1"), {n}, t);
                std::string e = fresh();
                line(e + " = tensor.empty() : " + tt);
                y = fresh();
                untyped_line(y + " = linalg.broadcast ins(" + s + " : " + tensor_type({n}, t) + ") outs(" + e + " : " + tt +
                     ") dimensions = [0]");
            } else {
                y = load(lx_tile(in, 5, t, shape, dense, pc, "src1"), shape, t);
            }
            std::string r = fresh();
            line(r + " = " + mlir + " " + x + ", " + y + " : " + tt);
            store(r, dt, shape, t, a[0]);
            return;
        }
        case VecForm::Map1: {
            if (in.op == Opcode::VNEG && t == DType::I32) return neg_i32(pc);
            if (in.op == Opcode::VRECIP) {
                if (t == DType::I32) break;
                std::string dt = lx_tile(in, 1, t, shape, dense, pc, "dst");
                std::string x = load(lx_tile(in, 3, t, shape, dense, pc, "src0"), shape, t);
                std::string one = fresh(), s = fresh(), r = fresh();
                line(one + " = arith.constant 1.0 : " + type_name(t));
                line(s + " = tensor.splat " + one + " : " + tt);
                line(r + " = arith.divf " + s + ", " + x + " : " + tt);
                store(r, dt, shape, t, a[0]);
                return;
            }
            if (!mlir) break;
            std::string dt = lx_tile(in, 1, t, shape, dense, pc, "dst");
            std::string x = load(lx_tile(in, 3, t, shape, dense, pc, "src0"), shape, t);
            std::string r = fresh();
            line(r + " = " + mlir + " " + x + " : " + tt);
            store(r, dt, shape, t, a[0]);
            return;
        }
        case VecForm::Copy: {
            std::string dt = lx_tile(in, 1, t, shape, dense, pc, "dst");
            std::string x = load(lx_tile(in, 3, t, shape, dense, pc, "src0"), shape, t);
            store(x, dt, shape, t, a[0]);
            return;
        }
        case VecForm::Convert: {
            const DType to = DType(a[9]);
            if (in.op == Opcode::VCVTF8) {
                // MLIR's f8 truncf has no saturating mode and the device holds codes as bytes: a
                // generic op of our own, with the format as an attribute (docs/ktir.md).
                if (!fp8_format_valid(a[5]) || !vcvtf8_types_valid(t, to)) break;
                std::string dt = lx_tile(in, 1, to, shape, dense, pc, "dst");
                std::string x = load(lx_tile(in, 3, t, shape, dense, pc, "src0"), shape, t);
                std::string r = fresh();
                line(r + " = \"" + (t == DType::U8 ? "spyre.from_fp8" : "spyre.to_fp8") + "\"(" + x + ") {format = \"" +
                     fp8_format_name(Fp8Format(a[5])) + "\"} : (" + tt + ") -> " + tensor_type(shape, to));
                store(r, dt, shape, to, a[0]);
                return;
            }
            const char *cv = t == to ? nullptr : convert_op(t, to);
            if (!cv) break;
            std::string dt = lx_tile(in, 1, to, shape, dense, pc, "dst");
            std::string x = load(lx_tile(in, 3, t, shape, dense, pc, "src0"), shape, t);
            std::string r = fresh();
            line(r + " = " + cv + " " + x + " : " + tt + " to " + tensor_type(shape, to));
            store(r, dt, shape, to, a[0]);
            return;
        }
        case VecForm::Broadcast: {
            std::string dt = lx_tile(in, 1, t, shape, dense, pc, "dst");
            std::string s = load(lx_tile(in, 3, t, {groups}, {1}, pc, "src0"), {groups}, t);
            std::string e = fresh(), r = fresh();
            line(e + " = tensor.empty() : " + tt);
            untyped_line(r + " = linalg.broadcast ins(" + s + " : " + tensor_type({groups}, t) + ") outs(" + e + " : " + tt +
                 ") dimensions = [1]");
            splats_[r] = "";
            store(r, dt, shape, t, a[0]);
            return;
        }
        case VecForm::Fill: {
            std::string dt = lx_tile(in, 1, t, shape, dense, pc, "dst");
            float v;
            uint32_t bits = uint32_t(a[9]);
            std::memcpy(&v, &bits, 4);
            std::string k = fresh(), s = fresh();
            line(k + " = arith.constant " + float_literal(v, t) + " : " + type_name(t));
            line(s + " = tensor.splat " + k + " : " + tt);
            splats_[s] = float_literal(v, t);
            store(s, dt, shape, t, a[0]);
            return;
        }
        case VecForm::Reduce: {
            // KTIR's f16 reductions import as fp32 accumulation (docs/ktir.md); an fp16 accumulator has
            // no spelling the importer reads back as itself.
            if (in.mode & kAccF16)
                throw_error("instruction ", pc, " (VREDSUM): accumulates in fp16, rounding every addition (a Halide "
                            "sum() of fp16 values), which KTIR has no form for; sum in fp32 "
                            "(sum(cast<float>(...))) to export this kernel");
            const int64_t valid = a[9] > 0 ? a[9] : sticks * lanes;
            const DType ot = t == DType::I32 ? DType::I32 : (in.mode & kDstF32) || t == DType::F32 ? DType::F32 : t;
            std::vector<int64_t> src{groups, valid}, out{groups};
            std::string dt = lx_tile(in, 1, ot, out, {1}, pc, "dst");
            std::string x = load(lx_tile(in, 3, t, src, dense, pc, "src0"), src, t);
            std::string init;
            if (in.mode & kAccumulate) {
                init = reduce_init(dt, out, ot, true);
            } else {
                std::string id = fresh(), e = fresh();
                init = fresh();
                line(id + " = arith.constant " + identity(in.op, ot) + " : " + type_name(ot));
                line(e + " = tensor.empty() : " + tensor_type(out, ot));
                line(init + " = linalg.fill ins(" + id + " : " + type_name(ot) + ") outs(" + e + " : " +
                     tensor_type(out, ot) + ") -> " + tensor_type(out, ot));
            }
            std::string comb = in.op == Opcode::VREDSUM ? (t == DType::I32 ? "arith.addi" : "arith.addf")
                               : in.op == Opcode::VREDMAX ? (t == DType::I32 ? "arith.maxsi" : "arith.maximumf")
                                                          : (t == DType::I32 ? "arith.minsi" : "arith.minimumf");
            // An f16 sum into f32 widens its input first: ktir-cpu folds a reduce's input in the
            // input's element type and rounds the fold to it before it meets the init
            // (linalg__reduce in dialects/linalg_ops.py), so a widening inside the region would
            // still round every row's sum to f16. Our importer reads the pair back as the one
            // widening instruction.
            if (ot != t) {
                std::string w = fresh();
                line(w + " = arith.extf " + x + " : " + tensor_type(src, t) + " to " + tensor_type(src, ot));
                x = w;
            }
            std::string r = fresh();
            line(r + " = linalg.reduce ins(" + x + " : " + tensor_type(src, ot) + ") outs(" + init + " : " +
                 tensor_type(out, ot) + ") dimensions = [1]");
            std::string in_v = fresh(), acc = fresh(), sum = fresh();
            // The block arguments in a ^bb0 label after an empty (), not in the (...): MLIR reads both,
            // and ktir-cpu binds a region's arguments from a label, else from its first op's operands
            // (docs/ktir.md, "What spyre-gen writes, on ktir-cpu").
            line("  () {");
            line("  ^bb0(" + in_v + ": " + type_name(ot) + ", " + acc + ": " + type_name(ot) + "):");
            line("    " + sum + " = " + comb + " " + in_v + ", " + acc + " : " + type_name(ot));
            line("    linalg.yield " + sum + " : " + type_name(ot));
            untyped_line("  }");
            store(r, dt, out, ot, a[0]);
            return;
        }
        case VecForm::Shift: {
            // The elements read, as a 1-D tile from the first one; `origin` places it before the rows.
            const ShiftSpan span = vshift_read_span(in, lanes);
            const int64_t first = span.empty() ? 0 : span.first, n = span.empty() ? 1 : span.last - span.first + 1;
            const int64_t off = int64_t(a[4]) + first * dtype_bytes(t);
            if (off < INT32_MIN || off > INT32_MAX) break;
            std::vector<int64_t> src{n};
            std::string st = view_tile(elem_addr(a[3], off + lx_shift(t), dtype_bytes(t), pc, "src0"), false, t, src, {1},
                                       a[3] ? reg_[a[3]] : "", off);
            // The elements read, from a held value that holds them all when there is one (ktir-cpu's
            // LX does not keep what a ktdp.load of part of a tile would read): an extract_slice of it,
            // flat. The slices then start from that value, so `origin` counts from its first element.
            std::string x;
            int64_t origin = first;
            const Region &need = lx_regions_.at(st);
            const bool slices = !span.empty() && shift_rows(first, n, shape.back()) <= kMaxShiftRowsElements;
            for (const Held &h : slices ? held_ : std::vector<Held>{}) {
                if (splats_.count(h.value) || h.at.base != need.base || h.at.t != t || !Exporter::dense(h.at) ||
                    h.at.lo > need.lo || need.hi > h.at.hi || h.at.sizes == need.sizes)
                    continue;
                const int64_t hn = count(h.at.sizes), k = (need.lo - h.at.lo) / dtype_bytes(t);
                if ((need.lo - h.at.lo) % dtype_bytes(t)) continue;
                const std::string hf = h.at.sizes.size() != 1 ? reshaped(h.value, h.at.sizes, {hn}, t) : h.value;
                x = fresh();
                line(x + " = tensor.extract_slice " + hf + "[" + std::to_string(k) + "] [" + std::to_string(n) +
                     "] [1] : " + tensor_type({hn}, t) + " to " + tensor_type(src, t));
                origin = first - k;
                break;
            }
            if (x.empty()) x = load(st, src, t);
            std::string dt = lx_tile(in, 1, t, shape, dense, pc, "dst");
            const char *edge = (in.mode & kEdgeClamp)            ? "clamp"
                               : (in.mode & kEdgeZero)           ? "zero"
                               : (in.mode & kEdgeMirrorImage)    ? "mirror_image"
                               : (in.mode & kEdgeMirrorInterior) ? "mirror_interior"
                                                                 : "none";
            const std::string attrs = "shift = " + std::to_string(a[5]) + " : i32, lo = " + std::to_string(a[6]) +
                                      " : i32, hi = " + std::to_string(a[9]) + " : i32, origin = " +
                                      std::to_string(origin) + " : i32, edge = \"" + edge + "\"";
            std::string r = slices ? shift_slices(x, n, first, groups, shape.back(), t, shift_edge(in.mode), a[5],
                                                  a[6], a[9], attrs)
                                   : "";
            if (r.empty()) {  // no element read (a zero edge everywhere), or too large to spell out
                r = fresh();
                line(r + " = \"spyre.shift\"(" + x + ") {" + attrs + "} : (" + tensor_type(src, t) + ") -> " + tt);
            }
            store(r, dt, shape, t, a[0]);
            return;
        }
        case VecForm::LaneSelect: {
            std::string dt = lx_tile(in, 1, t, shape, dense, pc, "dst");
            std::string x = load(lx_tile(in, 3, t, shape, dense, pc, "src0"), shape, t);
            std::string y = load(lx_tile(in, 5, t, shape, dense, pc, "src1"), shape, t);
            std::string r = lane_select_slices(x, y, shape, t, a[9]);
            if (r.empty()) {
                r = fresh();
                line(r + " = \"spyre.lane_select\"(" + x + ", " + y + ") {block = " + std::to_string(a[9]) +
                     " : i32} : (" + tt + ", " + tt + ") -> " + tt);
            }
            store(r, dt, shape, t, a[0]);
            return;
        }
        case VecForm::IndexSelect: {
            // The limit is an index value (the register's); src1 is {groups} when one per group.
            const bool scalar = in.mode & kSrc1Scalar;
            const std::vector<int64_t> s1 = scalar ? std::vector<int64_t>{groups} : shape;
            const std::vector<int64_t> s1_dense = scalar ? std::vector<int64_t>{1} : dense;
            std::string dt = lx_tile(in, 1, t, shape, dense, pc, "dst");
            std::string x = load(lx_tile(in, 3, t, shape, dense, pc, "src0"), shape, t);
            std::string y = load(lx_tile(in, 5, t, s1, s1_dense, pc, "src1"), s1, t);
            std::string lim = value(a[9], 0);
            std::string r = index_select_ops(x, y, lim, shape, scalar, (in.mode & kLimitPerGroup) != 0, t);
            if (r.empty()) {
                r = fresh();
                line(r + " = \"spyre.index_select\"(" + x + ", " + y + ", " + lim + ") {per_group = " +
                     std::to_string((in.mode & kLimitPerGroup) ? 1 : 0) + " : i32} : (" + tt + ", " +
                     tensor_type(s1, t) + ", index) -> " + tt);
            }
            store(r, dt, shape, t, a[0]);
            return;
        }
        case VecForm::Transpose: {
            const int64_t R = a[7], C = a[8];
            auto up = [&](int64_t v) { return (v + lanes - 1) / lanes * lanes; };
            std::vector<int64_t> s{R, C}, d{C, R};
            std::string dt = lx_tile(in, 1, t, d, {up(R), 1}, pc, "dst");
            std::string x = load(lx_tile(in, 3, t, s, {up(C), 1}, pc, "src0"), s, t);
            std::string e = fresh(), r = fresh();
            line(e + " = tensor.empty() : " + tensor_type(d, t));
            untyped_line(r + " = linalg.transpose ins(" + x + " : " + tensor_type(s, t) + ") outs(" + e + " : " +
                 tensor_type(d, t) + ") permutation = [1, 0]");
            store(r, dt, d, t, a[0]);
            return;
        }
        default: break;
        }
        throw_error("instruction ", pc, " (", name, (in.mode ? " with mode bits" : ""), ", ", dtype_name(t),
                    "): no KTIR form (docs/ktir.md lists what exports)");
    }

    // VNEG on i32: 0 - x (arith has no integer negation; the importer maps it back to VNEG).
    void neg_i32(size_t pc) {
        const Instr &in = p_.code[pc];
        const int64_t lanes = sb_ / 4;
        std::vector<int64_t> shape{in.a[8], in.a[7] * lanes}, dense{in.a[7] * lanes, 1};
        const std::string tt = tensor_type(shape, DType::I32);
        std::string dt = lx_tile(in, 1, DType::I32, shape, dense, pc, "dst");
        std::string x = load(lx_tile(in, 3, DType::I32, shape, dense, pc, "src0"), shape, DType::I32);
        std::string z = fresh(), sp = fresh(), r = fresh();
        line(z + " = arith.constant 0 : i32");
        line(sp + " = tensor.splat " + z + " : " + tt);
        line(r + " = arith.subi " + sp + ", " + x + " : " + tt);
        store(r, dt, shape, DType::I32, in.a[0]);
    }

    static std::string float_literal(float v, DType t) {
        char buf[32];
        if (t == DType::F16) {
            std::snprintf(buf, sizeof buf, "0x%04X", unsigned(float_to_half(v)));
        } else if (t == DType::F32) {
            uint32_t b;
            std::memcpy(&b, &v, 4);
            std::snprintf(buf, sizeof buf, "0x%08X", b);
        } else {
            double d = std::nearbyint(double(v));
            d = std::max(-2147483648.0, std::min(2147483647.0, std::isnan(d) ? 0.0 : d));
            return std::to_string(int64_t(d));
        }
        return buf;
    }
    static std::string identity(Opcode op, DType t) {
        if (op == Opcode::VREDSUM) return t == DType::I32 ? "0" : "0.0";
        bool mx = op == Opcode::VREDMAX;
        if (t == DType::I32) return mx ? "-2147483648" : "2147483647";
        if (t == DType::F16) return mx ? "0xFC00" : "0x7C00";
        return mx ? "0xFF800000" : "0x7F800000";
    }

    void dma(size_t pc) {
        const Instr &in = p_.code[pc];
        const auto &a = in.a;
        const BufferDecl &b = p_.buffers[size_t(a[1])];
        const DType t = b.type;
        const int64_t eb = dtype_bytes(t), lanes = sb_ / eb;
        const DmaDesc &d = p_.dma[size_t(a[6])];
        std::vector<int64_t> sizes, ds, ls;
        for (int k = 0; k < 3; k++)
            if (d.count[size_t(k)] > 1) {
                if (d.dram_stride[size_t(k)] % eb || d.lx_stride[size_t(k)] % eb || d.dram_stride[size_t(k)] < 0 ||
                    d.lx_stride[size_t(k)] < 0)
                    throw_error("instruction ", pc, " (", op_info(in.op).name, "): DMA descriptor ", a[6],
                                " has strides that are not whole, non-negative element counts");
                sizes.push_back(d.count[size_t(k)]);
                ds.push_back(d.dram_stride[size_t(k)] / eb);
                ls.push_back(d.lx_stride[size_t(k)] / eb);
            }
        sizes.push_back(int64_t(d.sticks) * lanes);
        ds.push_back(1);
        ls.push_back(1);
        std::string off = elem_addr(a[2], a[3], eb, pc, "device-memory");
        std::string addr = fresh();
        line(addr + " = arith.addi %" + buf_[size_t(a[1])] + ", " + off + " : index");
        if (in.op == Opcode::DMA_ST && sizes.size() == 1) {
            // A store of whole sticks of which an op wrote the first elements (a row statistic of
            // a few elements, the rest padding): the held value itself, its sticks the same.
            const int r = a[4];
            const Region want{r ? reg_[r] : "", a[5], a[5] + sizes[0] * eb, t, sizes, {1}};
            for (const Held &h : held_)
                if (h.at.base == want.base && h.at.lo == want.lo && h.at.t == t && dense(h.at) &&
                    h.at.hi < want.hi && (count(h.at.sizes) * eb + sb_ - 1) / sb_ == d.sticks) {
                    const std::vector<int64_t> n{count(h.at.sizes)};
                    lx_tile(in, 4, t, n, {1}, pc, "LX");
                    std::string ht = view_tile(addr, true, t, n, {1});
                    store(held_value(Region{want.base, want.lo, h.at.hi, t, n, {1}}, false), ht, n, t, a[0]);
                    return;
                }
        }
        std::string ht = view_tile(addr, true, t, sizes, ds);
        std::string lt = lx_tile(in, 4, t, sizes, ls, pc, "LX");
        if (in.op == Opcode::DMA_LD) {
            store(load(ht, sizes, t), lt, sizes, t, a[0], (in.mode & kDmaShared) != 0);
            return;
        }
        // A constant fill or broadcast stored whole: the value itself, in its own shape (the same
        // dense bytes), so that our importer stores the tile the value was put in.
        auto rg = lx_regions_.find(lt);
        if (rg != lx_regions_.end() && sizes.size() == 1)
            for (const Held &h : held_)
                if (splats_.count(h.value) && h.at.base == rg->second.base && h.at.lo == rg->second.lo &&
                    h.at.t == t && dense(h.at) && count(h.at.sizes) == sizes[0]) {
                    std::vector<int64_t> dense_strides(h.at.sizes.size(), 1);
                    for (size_t k = h.at.sizes.size() - 1; k > 0; k--)
                        dense_strides[k - 1] = dense_strides[k] * h.at.sizes[k];
                    store(h.value, view_tile(addr, true, t, h.at.sizes, dense_strides), h.at.sizes, t, a[0]);
                    return;
                }
        store(load(lt, sizes, t), ht, sizes, t, a[0]);
    }

    void matmul(size_t pc) {
        const Instr &in = p_.code[pc];
        const auto &a = in.a;
        const MatmulDesc &d = p_.mm[size_t(a[7])];
        std::vector<int64_t> A{d.m, d.k}, B{d.k, d.n}, C{d.m, d.n};
        // fp16 operands into fp32, or int8 operands into int32 (linalg.matmul extends i8 signed).
        const DType it = DType(in.dtype), ot = it == DType::I8 ? DType::I32 : DType::F32;
        const int64_t eb = dtype_bytes(it);
        std::string ct = lx_tile(in, 1, ot, C, {d.ldc / 4, 1}, pc, "C");
        std::string x = load(lx_tile(in, 3, it, A, {d.lda / eb, 1}, pc, "A"), A, it);
        std::string y = load(lx_tile(in, 5, it, B, {d.ldb / eb, 1}, pc, "B"), B, it);
        // fp16 operands widened to fp32 first (exactly), so that the products are summed in fp32
        // as on the PE array: ktir-cpu multiplies in the operands' type and rounds the sum to it
        // (ArithOps.matmul in ops/arith_ops.py), 196 ULP off for linear/pe. Our importer reads
        // each arith.extf whose one user is the matmul back as the fp16 operand.
        DType mt = it;
        if (it == DType::F16) {
            for (auto [v, s] : {std::pair<std::string *, const std::vector<int64_t> *>{&x, &A}, {&y, &B}}) {
                std::string w = fresh();
                line(w + " = arith.extf " + *v + " : " + tensor_type(*s, it) + " to " + tensor_type(*s, ot));
                *v = w;
            }
            mt = ot;
        }
        std::string init;
        if (in.mode & kAccumulate) {
            init = load(ct, C, ot, true);
        } else {
            std::string z = fresh(), e = fresh();
            init = fresh();
            line(z + " = arith.constant " + (ot == DType::I32 ? "0" : "0.0") + " : " + type_name(ot));
            line(e + " = tensor.empty() : " + tensor_type(C, ot));
            line(init + " = linalg.fill ins(" + z + " : " + type_name(ot) + ") outs(" + e + " : " + tensor_type(C, ot) +
                 ") -> " + tensor_type(C, ot));
        }
        std::string r = fresh();
        line(r + " = linalg.matmul ins(" + x + ", " + y + " : " + tensor_type(A, mt) + ", " + tensor_type(B, mt) +
             ") outs(" + init + " : " + tensor_type(C, ot) + ") -> " + tensor_type(C, ot));
        store(r, ct, C, ot, a[0]);
    }

    void ring(size_t pc) {
        const Instr &in = p_.code[pc];
        const auto &a = in.a;
        const DType t = in.op == Opcode::RING_REDUCE ? DType(in.dtype) : DType::F16;
        const int64_t n = int64_t(a[4]) * (sb_ / dtype_bytes(t));
        std::vector<int64_t> s{n};
        std::string tl = lx_tile(in, 2, t, s, {1}, pc, "LX");
        if (in.op == Opcode::RING_SEND) {
            std::string x = load(tl, s, t);
            line("\"spyre.ring_send\"(" + x + ") {direction = " + std::to_string(a[1]) +
                 " : i32, spyre.tag = " + std::to_string(a[0]) + " : i32} : (" + tensor_type(s, t) + ") -> ()");
            return;
        }
        if (in.op == Opcode::RING_RECV) {
            std::string x = fresh();
            line(x + " = \"spyre.ring_recv\"() {direction = " + std::to_string(a[1]) + " : i32} : () -> " +
                 tensor_type(s, t));
            store(x, tl, s, t, a[0]);
            return;
        }
        std::string x = load(tl, s, t);
        store(all_reduce(x, s, t, RedOp(a[1]), a[5], a[6]), tl, s, t, a[0]);
    }

    // The dialect's inter-tile all-reduce of `x` over every core (group_size 0) or over RING_REDUCE's
    // groups (isa.h): ktdp.inter_tile_produce of each core's partial, ktdp.inter_tile_reduce of it
    // with every member a consumer (no per-tile dependencies: each core waits for every partial of
    // its group). Group g holds the cores i with i floordiv (size stride) = g floordiv stride and
    // i mod stride = g mod stride, so g = (i floordiv (size stride)) stride + i mod stride, the
    // numbering the importer reads back. Returns the result.
    std::string all_reduce(const std::string &x, const std::vector<int64_t> &s, DType t, RedOp ro,
                           int32_t group_size = 0, int32_t group_stride = 0) {
        const std::string tt = tensor_type(s, t), n1 = std::to_string(p_.num_cores - 1);
        std::string tiles = "affine_set<(i)[g] : (i >= 0, -i + " + n1 + " >= 0)>", groups = "(g) : (g == 0)";
        if (group_size > 0) {
            const int64_t stride = std::max(1, group_stride), span = int64_t(group_size) * stride;
            const std::string T = std::to_string(stride), S = std::to_string(span);
            tiles = "affine_set<(i)[g] : (i floordiv " + S + " - g floordiv " + T + " == 0, (i - g) mod " + T +
                    " == 0, i >= 0, -i + " + n1 + " >= 0)>";
            groups = "(g) : (g >= 0, -g + " + std::to_string(p_.num_cores / group_size - 1) + " >= 0)";
        }
        const std::string fut = "!ktdp.tile_future<" + tt + ", groups = affine_set<" + groups + ">>";
        const bool ints = t == DType::I32;
        const char *comb = ro == RedOp::Sum ? (ints ? "arith.addi" : "arith.addf")
                           : ro == RedOp::Max ? (ints ? "arith.maxsi" : "arith.maximumf")
                                              : (ints ? "arith.minsi" : "arith.minimumf");
        // The identity seeds tiles that produce nothing (none here); it is the combiner's own.
        const double big = t == DType::F16 ? 65504.0 : t == DType::F32 ? 3.4028234663852886e38 : 2147483647.0;
        const double ident = ro == RedOp::Sum ? 0.0 : ro == RedOp::Max ? -big : big;
        std::string c = fresh(), e = fresh(), id = fresh(), f = fresh(), gid = fresh(), r = fresh();
        std::ostringstream lit;
        if (ints) lit << int64_t(ident);
        else lit << std::scientific << std::setprecision(9) << ident;
        line(c + " = arith.constant " + lit.str() + " : " + type_name(t));
        line(e + " = tensor.empty() : " + tt);
        line(id + " = linalg.fill ins(" + c + " : " + type_name(t) + ") outs(" + e + " : " + tt + ") -> " + tt);
        line(f + " = ktdp.inter_tile_produce producer_tiles_per_group = " + tiles + " -> " + fut + " {");
        line("^bb0(" + gid + ": index):");
        line("  ktdp.yield_partial " + x + " : " + tt);
        untyped_line("}");
        std::string lhs = fresh(), rhs = fresh(), v = fresh();
        line(r + " = ktdp.inter_tile_reduce(" + f + ") consumer_tiles_per_group = " + tiles + ", identity(" + id +
             " : " + tt + ") : " + fut + " -> " + tt + " {");
        line("^bb0(" + lhs + ": " + tt + ", " + rhs + ": " + tt + "):");
        line("  " + v + " = " + comb + " " + lhs + ", " + rhs + " : " + tt);
        line("  ktdp.yield_reduced " + v + " : " + tt);
        untyped_line("}");
        return r;
    }

    // BARRIER: the dialect has no barrier op; an all-reduce of a constant stick whose result is
    // unused waits for every core the same way (our importer reads it back as BARRIER).
    void barrier() {
        const std::vector<int64_t> s{sb_ / 2};
        std::string z = fresh(), e = fresh(), x = fresh();
        line(z + " = arith.constant 0.0 : f16");
        line(e + " = tensor.empty() : " + tensor_type(s, DType::F16));
        line(x + " = linalg.fill ins(" + z + " : f16) outs(" + e + " : " + tensor_type(s, DType::F16) + ") -> " +
             tensor_type(s, DType::F16));
        all_reduce(x, s, DType::F16, RedOp::Sum);
    }

    const DeviceProgram &p_;
    const MachineDesc &m_;
    int64_t sb_;
    // Bytes added to every LX address (ExportOptions), recorded as spyre.lx_offset.
    int64_t lx_shift_ = 0;
    // ktir-cpu keeps LX as typed allocations, each made by the first store at its address; a later
    // store of another type there is cast into the old type, and cut at its end (_write_flat in
    // memory.py). The device's LX is bytes, and our allocator reuses a dead f32 tile's bytes for an
    // f16 one (attention/unfused's probabilities over its scores). So each element type gets a copy
    // of the program's LX span of its own, the first type used at the top (spyre.lx_offset), each
    // next one `lx_space_` bytes below (spyre.lx_offset_<type>), while they fit; a type that does
    // not fit shares the top. Our importer subtracts the offset of a view's type.
    // Where there are several, each type's space is one allocation for ktir-cpu, declared at the
    // start (a store of tensor.empty(), no instruction for our importer), so no store of the program
    // makes a smaller one there that a later, longer store of the same type would be cut at, and
    // none is freed with the loop body that first stored to it. A space stays at least its own size
    // above address 0, where ktir-cpu puts the tensors it loads and computes.
    int64_t lx_space_ = 0;
    std::map<std::string, int64_t> type_shift_;  // by KTIR element type name
    std::string first_type_;
    int64_t lx_shift(DType t) {
        if (!lx_shift_) return 0;
        auto [it, fresh_type] = type_shift_.try_emplace(type_name(t), lx_shift_);
        if (fresh_type) {
            if (type_shift_.size() == 1) first_type_ = type_name(t);
            const int64_t below = lx_shift_ - int64_t(type_shift_.size() - 1) * lx_space_;
            if (below >= lx_space_) it->second = below;
        }
        return it->second;
    }
    std::string declare_space(const std::string &type, int64_t shift) const {
        const int64_t eb = type == "f16" ? 2 : type == "i8" ? 1 : 4, n = lx_space_ / eb;
        const std::string v = "%_lx_" + type, tt = "tensor<" + std::to_string(n) + "x" + type + ">",
                          mt = "memref<" + std::to_string(n) + "x" + type + ">";
        std::string s;
        s += "    " + v + "_at = arith.constant " + std::to_string(shift / eb) + " : index\n";
        s += "    " + v + "_view = ktdp.construct_memory_view " + v + "_at, sizes: [" + std::to_string(n) +
             "], strides: [1] {memory_space = #ktdp.memory_space<ct_local>} : " + mt + "\n";
        s += "    " + v + "_tile = ktdp.construct_access_tile " + v + "_view[%_zero] {access_tile_set = " +
             set_text({n}) + "} : " + mt + " -> " + tile_type({n}) + "\n";
        s += "    " + v + " = tensor.empty() : " + tt + "\n";
        s += "    ktdp.store " + v + ", " + v + "_tile : " + tt + ", " + short_tile_type({n}) + "\n";
        return s;
    }
    std::ostringstream os_;
    int ind_ = 0;
    int next_ = 0;
    std::vector<size_t> match_;
    std::vector<std::string> buf_;
    std::string reg_[kNumRegs];
    std::map<std::string, Region> lx_regions_;  // LX access tiles by SSA name
    std::vector<Held> held_;                    // LX tiles whose contents an SSA value holds
    std::map<std::string, Region> lx_home_;     // the LX tile each SSA value was first stored to
    std::set<std::string> renamed_;             // values stored to a second tile, and their new names
    std::map<std::string, std::string> splats_; // tensor.splat and linalg.broadcast values
};

}  // namespace

std::string export_ktir(const DeviceProgram &program, const MachineDesc &machine, const ExportOptions &options) {
    Exporter e(program, machine, options);
    return e.run();
}

}  // namespace spyre::ktir
