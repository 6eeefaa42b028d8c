// The importer's tensor ops: splats, extracts, reshapes, broadcasts, elementwise arith / math /
// named linalg ops, conversions, reductions, matmul, transpose, the ring collectives and shifted
// stick access (ktir_importer.h).
#include <algorithm>

#include "device/vector_shift.h"
#include "ktir_importer.h"

namespace spyre::ktir::lowering {

void Importer::splat(const Op &op) {
    Val v;
    v.k = Val::T;
    Tens &x = v.x;
    const Type &rt = op.result_types[0];
    if (rt.kind != Type::Tensor) throw_error("line ", op.line, ": ", op.name, ": result must be a tensor");
    x.t = dtype_of(rt, op);
    x.shape = rt.shape;
    Val &src = val(op.operands[0], op);
    if (src.k == Val::S) {
        if (!src.s.known) throw_error("line ", op.line, ": ", op.name, ": the value must be a constant");
        x.kind = Tens::Splat;
        x.splat = src.s.is_float ? src.s.f : double(src.s.c);
        if (x.t == DType::F16) x.splat = half_to_float(float_to_half(float(x.splat)));
    } else if (src.k == Val::T && src.x.kind == Tens::InLx && src.x.shape.empty()) {
        x.kind = Tens::Bcast;  // an element of a tensor (tensor.extract)
        x.uniform = true;
        x.src = src.x.at;
        extend_life(op.operands[0], op.results[0]);
        if (src.x.t != x.t) throw_error("line ", op.line, ": ", op.name, ": element types differ");
    } else {
        throw_error("line ", op.line, ": ", op.name, ": fills with a constant or a tensor.extract element only");
    }
    define(op, 0, v);
}

void Importer::extract(const Op &op) {
    Tens t = tensor(op.operands[0], op);
    if (t.kind != Tens::InLx)
        throw_error("line ", op.line, ": tensor.extract: the tensor must be in LX (loaded or computed)");
    if (op.indices.size() != t.shape.size())
        throw_error("line ", op.line, ": tensor.extract: ", op.indices.size(), " subscripts for a rank ",
                    t.shape.size(), " tensor");
    int64_t off = t.at.off;
    for (size_t d = 0; d < t.shape.size(); d++) {
        Scalar i = eval(op.indices[d], op);
        if (!i.known || i.c < 0 || i.c >= t.shape[d])
            throw_error("line ", op.line, ": tensor.extract: subscripts must be constants inside the tensor");
        off += i.c * t.bstride[d];
    }
    Val v;
    v.k = Val::T;
    v.x.kind = Tens::InLx;
    v.x.t = t.t;
    v.x.at = Lx(t.at.reg, int32_t(off));
    extend_life(op.operands[0], op.results[0]);  // the element stays in the tensor's LX
    define(op, 0, v);
}

// tensor.reshape: the same elements in the same order under a new shape. In LX that is the same bytes
// when the innermost dimension stays and the rows are back to back (rows padded to sticks), or when
// the tensor is dense.
Val Importer::general_reshape(const Op &op, const Tens &x, const std::vector<int64_t> &out) {
    if (op.operands.size() != 2) throw_error("line ", op.line, ": tensor.reshape: expected a tensor and a shape");
    auto sc = shape_consts_.find(op.operands[1]);
    if (sc == shape_consts_.end())
        throw_error("line ", op.line, ": tensor.reshape: the shape %", op.operands[1],
                    " must be an arith.constant dense<[...]> (a run-time shape is not supported)");
    if (sc->second != out)
        throw_error("line ", op.line, ": tensor.reshape: the shape operand and the result type ",
                    op.result_types[0].text(), " differ");
    if (elements(out) != elements(x.shape))
        throw_error("line ", op.line, ": tensor.reshape: ", elements(x.shape), " elements cannot become ",
                    elements(out));
    Val v;
    v.k = Val::T;
    v.x = x;
    v.x.alloc = -1;  // aliases the source's allocation
    v.x.shape = out;
    const int64_t eb = dtype_bytes(x.t);
    std::vector<int64_t> bs = dense_strides(out);  // elements; scaled to bytes below
    if (!out.empty() && !x.shape.empty() && out.back() == x.shape.back()) {
        const int64_t row = geo(x, op, "the reshaped tensor").sticks * sb_;  // rows back to back
        for (size_t d = 0; d + 1 < bs.size(); d++) bs[d] = bs[d] / out.back() * row;
        bs.back() = eb;
    } else if (packed(x)) {
        for (int64_t &b : bs) b *= eb;
    } else {
        throw_error("line ", op.line, ": tensor.reshape: a reshape that changes the innermost dimension of a "
                    "tensor whose rows are padded to sticks is not supported (it would move elements in LX)");
    }
    v.x.bstride = bs;
    extend_life(op.operands[0], op.results[0]);
    return v;
}

void Importer::reshape(const Op &op) {
    if (shift_parts_.count(op.operands[0])) {  // a part of a shifted read: the same elements in row-major order
        ShiftPart p = shift_parts_.at(op.operands[0]);
        p.shape = op.result_types[0].shape;
        if (elements(p.shape) != int64_t(p.map.size()))
            throw_error("line ", op.line, ": ", op.name, ": changes the number of elements");
        shift_parts_[op.results[0]] = p;
        keep_source_alive(p.root, op.results[0]);
        keep_source_alive(p.root2, op.results[0]);
        return;
    }
    Tens x = tensor(op.operands[0], op);
    const Type &rt = op.result_types[0];
    std::vector<int64_t> out = rt.shape;
    Val v;
    v.k = Val::T;
    if (x.kind != Tens::InLx) {
        v.x = x;
        v.x.shape = out;
        if (x.kind == Tens::Bcast && !x.uniform && !x.row)
            throw_error("line ", op.line, ": ", op.name, ": reshaping a broadcast is not supported");
        v.x.alloc = -1;
        return define(op, 0, v);
    }
    if (op.name == "tensor.reshape") return define(op, 0, general_reshape(op, x, out));
    bool collapse = op.name == "tensor.collapse_shape";
    const std::vector<int64_t> &big = collapse ? x.shape : out;
    const std::vector<int64_t> &small = collapse ? out : x.shape;
    if (op.reassoc.size() != small.size())
        throw_error("line ", op.line, ": ", op.name, ": ", op.reassoc.size(), " groups for ", small.size(), " dims");
    if (small.empty()) {  // `[]`: to or from a rank-0 tensor, whose other side is all ones
        if (elements(big) != 1)
            throw_error("line ", op.line, ": ", op.name, ": a rank-0 tensor has one element, not ", elements(big));
        v.x = x;
        v.x.alloc = -1;
        v.x.shape = out;
        v.x.bstride.assign(out.size(), dtype_bytes(x.t));
        extend_life(op.operands[0], op.results[0]);
        return define(op, 0, v);
    }
    std::vector<int64_t> bs(big.size(), 0);
    size_t next = 0;
    for (size_t g = 0; g < op.reassoc.size(); g++) {
        const std::vector<int64_t> &grp = op.reassoc[g];
        int64_t prod = 1;
        for (int64_t d : grp) {
            if (d != int64_t(next) || size_t(d) >= big.size())
                throw_error("line ", op.line, ": ", op.name, ": reassociation must list the dims in order");
            prod = wrap_mul(prod, big[size_t(d)]);
            next++;
        }
        if (grp.empty() || prod != small[g])
            throw_error("line ", op.line, ": ", op.name, ": group ", g, " does not multiply to ", small[g]);
        if (collapse) {
            // The collapsed dims must be contiguous: each stride = the next one's span.
            for (size_t k = 0; k + 1 < grp.size(); k++) {
                size_t d = size_t(grp[k]);
                if (big[d] != 1 && x.bstride[d] != x.bstride[d + 1] * big[d + 1])
                    throw_error("line ", op.line, ": tensor.collapse_shape: dims ", d, " and ", d + 1,
                                " are not contiguous in LX (rows padded to sticks)");
            }
        } else {
            int64_t st = x.bstride[g];
            for (size_t k = grp.size(); k-- > 0;) {
                bs[size_t(grp[k])] = st;
                st = wrap_mul(st, big[size_t(grp[k])]);
            }
        }
    }
    if (next != big.size()) throw_error("line ", op.line, ": ", op.name, ": reassociation misses dims");
    v.x = x;
    v.x.alloc = -1;
    v.x.shape = out;
    if (collapse) {
        v.x.bstride.clear();
        for (const auto &grp : op.reassoc) v.x.bstride.push_back(x.bstride[size_t(grp.back())]);
    } else {
        v.x.bstride = bs;
    }
    // The result aliases the source: the source's allocation must live as long.
    extend_life(op.operands[0], op.results[0]);
    define(op, 0, v);
}

void Importer::extend_life(const std::string &from, const std::string &to) {
    auto a = du_.find(from), b = du_.find(to);
    if (a != du_.end() && b != du_.end()) a->second.last = std::max(a->second.last, b->second.last);
}

void Importer::broadcast(const Op &op) {
    Tens s = tensor(op.operands[0], op);
    const Type &rt = op.result_types[0];
    Val v;
    v.k = Val::T;
    v.x.t = dtype_of(rt, op);
    v.x.shape = rt.shape;
    if (s.t != v.x.t) throw_error("line ", op.line, ": linalg.broadcast: element types differ");
    size_t r = rt.shape.size();
    if (s.kind == Tens::Splat) {
        v.x.kind = Tens::Splat;
        v.x.splat = s.splat;
        return define(op, 0, v);
    }
    if (s.kind != Tens::InLx) throw_error("line ", op.line, ": linalg.broadcast: the input must be in LX");
    if (s.shape.size() + op.dims.size() != r)
        throw_error("line ", op.line, ": linalg.broadcast: input rank plus dimensions must be the result rank");
    v.x.kind = Tens::Bcast;
    v.x.src = s.at;
    if (elements(s.shape) == 1) {
        v.x.uniform = true;
    } else if (op.dims.size() == 1 && op.dims[0] == int64_t(r - 1) && packed(s)) {
        v.x.uniform = false;  // one element per row
    } else if (std::find(op.dims.begin(), op.dims.end(), int64_t(r - 1)) == op.dims.end() && r >= 2 &&
               packed(s) && elements(s.shape) == s.shape.back() && s.shape.back() == rt.shape.back() &&
               row_operand_user(op.results[0])) {
        // One row for every row, read by the one element-wise op that uses it: its row operand.
        v.x.row = true;
    } else if (std::find(op.dims.begin(), op.dims.end(), int64_t(r - 1)) == op.dims.end()) {
        // Rows repeated along outer dimensions (torch-spyre's [12, 64] -> [12, 2, 64], dimensions = [1]):
        // copy them row by row.
        return define(op, 0, row_broadcast(op, s, rt));
    } else {
        throw_error("line ", op.line, ": linalg.broadcast: supported are broadcasts of one element, of one "
                    "element per row (dimensions = [last], packed input) and of whole rows along outer "
                    "dimensions (the innermost dimension not among `dimensions`)");
    }
    if (kept_where_stored(op.results[0])) {
        // Read only by its first store (later reads are of the tile it was stored to).
        auto a = du_.find(op.operands[0]);
        if (a != du_.end()) a->second.last = std::max(a->second.last, info_.at(du_[op.results[0]].users[0]).index);
    } else {
        extend_life(op.operands[0], op.results[0]);
    }
    define(op, 0, v);
}

bool Importer::row_operand_user(const std::string &value) const {
    static const std::set<std::string> elementwise = {
        "arith.addf",  "arith.addi",    "arith.subf",    "arith.subi",    "arith.mulf",  "arith.muli",
        "arith.divf",  "arith.maximumf", "arith.maxnumf", "arith.maxsi",  "arith.minimumf", "arith.minnumf",
        "arith.minsi", "linalg.add",    "linalg.sub",    "linalg.mul",    "linalg.div",  "linalg.max",
        "linalg.min"};
    auto du = du_.find(value);
    return du != du_.end() && du->second.users.size() == 1 && elementwise.count(du->second.users[0]->name);
}

void Importer::copy_row_to_rows(const Op &op, const Tens &row, const Tens &dst, int64_t rows, int64_t sticks) {
    vec_emit(op, Opcode::VCOPY, row.t, dst, &row, nullptr, Geo{1, sticks});
    for (int64_t done = 1; done < rows;) {
        const int64_t n = std::min(done, rows - done);
        Tens src = dst, to = dst;
        to.at.off = int32_t(to.at.off + done * sticks * sb_);
        src.shape = to.shape = {n, row.shape.back()};
        src.bstride = to.bstride = {sticks * sb_, dst.bstride.back()};
        vec_emit(op, Opcode::VCOPY, row.t, to, &src, nullptr, Geo{n, sticks});
        done += n;
    }
}

Val Importer::row_broadcast(const Op &op, const Tens &s, const Type &rt) {
    constexpr int64_t kMaxRows = 1 << 16;  // one VCOPY per row: bound the program's size
    Val v;
    v.k = Val::T;
    const size_t r = rt.shape.size();
    std::vector<bool> bcast(r, false);
    for (int64_t d : op.dims) {
        if (d < 0 || d >= int64_t(r) || bcast[size_t(d)])
            throw_error("line ", op.line, ": linalg.broadcast: dimension ", d, " is out of range or repeated");
        bcast[size_t(d)] = true;
    }
    // Output dimension d that is not broadcast reads input dimension in_dim[d].
    std::vector<int64_t> in_dim(r, -1);
    for (size_t d = 0, k = 0; d < r; d++)
        if (!bcast[d]) {
            if (rt.shape[d] != s.shape[k])
                throw_error("line ", op.line, ": linalg.broadcast: input dimension ", k, " (", s.shape[k],
                            ") differs from result dimension ", d, " (", rt.shape[d], ")");
            in_dim[d] = int64_t(k++);
        }
    Geo gs = geo(s, op, "the broadcast input");
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < r; d++) rows *= rt.shape[d];
    if (rows > kMaxRows)
        throw_error("line ", op.line, ": linalg.broadcast: ", rows, " result rows are more than the ", kMaxRows,
                    " the importer copies one by one");
    v.x = destination(op, op.results[0], s.t, rt.shape, gs.sticks, true, Geo{rows, gs.sticks});
    Geo g = geo(v.x, op, "the broadcast");
    if (g.sticks != gs.sticks) throw_error("line ", op.line, ": linalg.broadcast: row layouts differ");
    int64_t in_rows = 1;
    for (size_t k = 0; k + 1 < s.shape.size(); k++) in_rows *= s.shape[k];
    if (in_rows == 1) {
        // One row for every row (torch-spyre's zeros: [1, 64] -> [1, 64, 128, 64]).
        copy_row_to_rows(op, s, v.x, rows, g.sticks);
        return v;
    }
    for (int64_t i = 0; i < rows; i++) {
        int64_t rest = i, src_off = 0;
        for (size_t d = r - 1; d-- > 0;) {
            int64_t idx = rest % rt.shape[d];
            rest /= rt.shape[d];
            if (in_dim[d] >= 0) src_off += idx * s.bstride[size_t(in_dim[d])];
        }
        Tens src = s, d = v.x;
        src.at.off = int32_t(src.at.off + src_off);
        d.at.off = int32_t(d.at.off + i * g.sticks * sb_);
        vec_emit(op, Opcode::VCOPY, s.t, d, &src, nullptr, Geo{1, g.sticks});
    }
    return v;
}

bool Importer::element_arith(const Op &op) {
    if (op.result_types.size() != 1 || op.result_types[0].kind != Type::Float) return false;
    if (op.name.rfind("arith.", 0) != 0 && op.name.rfind("math.", 0) != 0) return false;
    bool element = false;
    for (const std::string &o : op.operands) {
        const Val &v = val(o, op);
        if (v.k != Val::T) continue;
        if (v.x.kind != Tens::InLx || !v.x.shape.empty())
            throw_error("line ", op.line, ": ", op.name, ": %", o, " is a tensor, the result a scalar");
        if (v.x.at.reg.id != 0 || v.x.at.off % sb_ != 0)
            throw_error("line ", op.line, ": ", op.name, ": %", o, " is an element in LX that is not the first of "
                        "its stick; float arithmetic on a run-time element works on the first element of a stick "
                        "(a reduction's result, tensor.extract at [0])");
        element = true;
    }
    return element;
}

bool Importer::element_to_register(const Op &op) {
    static const std::set<std::string> casts = {"arith.fptosi",      "arith.fptoui", "arith.index_cast",
                                                "arith.index_castui", "arith.extsi",  "arith.extui",
                                                "arith.trunci"};
    if (!casts.count(op.name) || op.operands.size() != 1 || op.result_types.size() != 1 ||
        !op.result_types[0].scalar())
        return false;
    const Val &v = val(op.operands[0], op);
    if (v.k != Val::T) return false;
    const Tens x = v.x;
    const bool to_int = op.name == "arith.fptosi" || op.name == "arith.fptoui";
    if (x.kind != Tens::InLx || !x.shape.empty() || (to_int ? x.t == DType::I32 : x.t != DType::I32))
        throw_error("line ", op.line, ": ", op.name, ": %", op.operands[0], " is ",
                    x.shape.empty() ? std::string("an element of ") + dtype_name(x.t) : std::string("a tensor"),
                    "; an element read into a register is a float converted by fptosi / fptoui or an i32 element");
    if (explicit_)
        throw_error("line ", op.line, ": ", op.name, ": reading an LX element into a register is not supported in an "
                    "explicitly synchronised function (spyre.sync)");
    Lx at = x.at;
    Tens converted;
    if (to_int) {
        if (x.at.reg.id != 0 || x.at.off % sb_ != 0)
            throw_error("line ", op.line, ": ", op.name, ": %", op.operands[0], " is an element in LX that is not the "
                        "first of its stick; a float element is converted at the start of a stick (a reduction's "
                        "result, tensor.extract at [0])");
        converted = new_tensor(DType::I32, {}, op);
        vec_emit(op, Opcode::VCVT, x.t, converted, &x, nullptr, Geo{1, 1}, 0, 0, 0, 0, 0, 0, DType::I32);
        at = converted.at;
    }
    // LDLX reads LX as it issues: whatever writes the element first.
    Access a;
    a.reads.push_back(range_at(at, 4));
    hz_.wait(hz_.touching(a));
    Reg r = new_reg(op);
    b_.ldlx(r, at);
    if (to_int) lx_free(converted.alloc);
    define(op, 0, reg_val(r));
    return true;
}

void Importer::tensor_op(const Op &op) {
    std::string n = op.name;
    std::vector<std::string> ins = op.operands;
    if (n.rfind("linalg.", 0) == 0) {
        ins.resize(size_t(op.n_ins));
        static const std::map<std::string, std::string> named = {
            {"linalg.add", "arith.addf"}, {"linalg.sub", "arith.subf"},   {"linalg.mul", "arith.mulf"},
            {"linalg.div", "arith.divf"}, {"linalg.max", "arith.maximumf"}, {"linalg.min", "arith.minimumf"},
            {"linalg.exp", "math.exp"},   {"linalg.log", "math.log"},     {"linalg.tanh", "math.tanh"},
            {"linalg.sqrt", "math.sqrt"}, {"linalg.rsqrt", "math.rsqrt"}, {"linalg.abs", "math.absf"},
            {"linalg.negf", "arith.negf"}, {"linalg.copy", "copy"}};
        auto it = named.find(n);
        if (it == named.end()) throw_error("line ", op.line, ": unsupported operation '", n, "'");
        n = it->second;
    }
    const Type &rt = op.result_types[0];
    DType t = dtype_of(rt, op);
    std::vector<Tens> a;
    for (const std::string &o : ins) {
        const Val &sv = val(o, op);
        if (rt.kind != Type::Tensor && sv.k == Val::S) {  // a float constant beside an element (element_arith)
            if (!sv.s.known || !sv.s.is_float)
                throw_error("line ", op.line, ": ", op.name, ": %", o, " must be a float constant or --arg value");
            Tens c;
            c.kind = Tens::Splat;
            c.t = t;
            c.splat = t == DType::F16 ? half_to_float(float_to_half(float(sv.s.f))) : sv.s.f;
            a.push_back(c);
            continue;
        }
        a.push_back(tensor(o, op));
    }
    for (const Tens &x : a)
        if (x.shape != rt.shape)
            throw_error("line ", op.line, ": ", op.name, ": operand shapes differ from the result's (broadcast "
                        "with linalg.broadcast first)");
    static const std::map<std::string, Opcode> bin = {
        {"arith.addf", Opcode::VADD},     {"arith.addi", Opcode::VADD},     {"arith.subf", Opcode::VSUB},
        {"arith.subi", Opcode::VSUB},     {"arith.mulf", Opcode::VMUL},     {"arith.muli", Opcode::VMUL},
        {"arith.divf", Opcode::VDIV},     {"arith.maximumf", Opcode::VMAX}, {"arith.maxnumf", Opcode::VMAX},
        {"arith.maxsi", Opcode::VMAX},    {"arith.minimumf", Opcode::VMIN}, {"arith.minnumf", Opcode::VMIN},
        {"arith.minsi", Opcode::VMIN}};
    static const std::map<std::string, Opcode> un = {
        {"math.exp", Opcode::VEXP},   {"math.log", Opcode::VLOG},     {"math.tanh", Opcode::VTANH},
        {"math.rsqrt", Opcode::VRSQRT}, {"math.sqrt", Opcode::VSQRT}, {"math.absf", Opcode::VABS},
        {"math.absi", Opcode::VABS},  {"arith.negf", Opcode::VNEG},   {"copy", Opcode::VCOPY},
        {"math.roundeven", Opcode::VROUND}};
    static const std::set<std::string> cvt = {"arith.extf",   "arith.truncf", "arith.sitofp", "arith.fptosi",
                                              "arith.uitofp", "arith.fptoui", "arith.extsi",  "arith.extui",
                                              "arith.trunci"};
    if (cvt.count(n)) {
        // Bytes are signless i8: the op says how to read them (a narrowing keeps the same low bits).
        Tens x = a.at(0);
        if (n == "arith.extf" && (widens_into_a_reduce(op, x, t) || widens_into_a_matmul(op, x, t))) {
            // The reduce widens as it sums, the PE array as it multiplies (the forms spyre-gen writes
            // for ktir-cpu): no instruction here.
            Val v;
            v.k = Val::T;
            v.x = x;
            v.x.alloc = -1;
            v.x.widened = true;
            extend_life(op.operands[0], op.results[0]);
            return define(op, 0, v);
        }
        if (dtype_is_byte(x.t)) x.t = n == "arith.uitofp" || n == "arith.extui" ? DType::U8 : DType::I8;
        return convert(op, x, t);
    }
    auto bi = bin.find(n);
    if (bi != bin.end()) {
        if (a.size() != 2) throw_error("line ", op.line, ": ", op.name, ": expected two operands");
        return binary(op, bi->second, a[0], a[1], t);
    }
    auto ui = un.find(n);
    if (ui != un.end()) {
        if (a.size() != 1) throw_error("line ", op.line, ": ", op.name, ": expected one operand");
        Tens x = a[0].kind == Tens::InLx ? a[0] : materialize(a[0], op, nullptr);
        Geo g = geo(x, op, "the operand");
        Val v;
        v.k = Val::T;
        v.x = destination(op, op.results[0], t, rt.shape, g.sticks, true, g);
        vec_emit(op, ui->second, t, v.x, &x, nullptr, g, 0, 0);
        return define(op, 0, v);
    }
    throw_error("line ", op.line, ": unsupported operation '", op.name, "' on tensors");
}

void Importer::binary(const Op &op, Opcode oc, Tens x, Tens y, DType t) {
    const std::vector<int64_t> &shape = x.shape;
    bool commutative = oc == Opcode::VADD || oc == Opcode::VMUL || oc == Opcode::VMAX || oc == Opcode::VMIN;
    Val v;
    v.k = Val::T;
    // 1 / y: the reciprocal.
    if (oc == Opcode::VDIV && x.kind == Tens::Splat && x.splat == 1.0 && t != DType::I32) {
        Tens yy = y.kind == Tens::InLx ? y : materialize(y, op, nullptr);
        Geo g = geo(yy, op, "the operand");
        v.x = destination(op, op.results[0], t, shape, g.sticks, true, g);
        vec_emit(op, Opcode::VRECIP, t, v.x, &yy, nullptr, g, 0, 0);
        return define(op, 0, v);
    }
    // 0 - y on i32: the negation (exact; for floats 0 - y and -y differ in the sign of zero).
    if (oc == Opcode::VSUB && t == DType::I32 && x.kind == Tens::Splat && x.splat == 0) {
        Tens yy = y.kind == Tens::InLx ? y : materialize(y, op, nullptr);
        Geo g = geo(yy, op, "the operand");
        v.x = destination(op, op.results[0], t, shape, g.sticks, true, g);
        vec_emit(op, Opcode::VNEG, t, v.x, &yy, nullptr, g, 0, 0);
        return define(op, 0, v);
    }
    if (x.kind != Tens::InLx && y.kind == Tens::InLx && commutative) std::swap(x, y);
    if (x.kind != Tens::InLx) x = materialize(x, op, nullptr);
    Geo g = geo(x, op, "the first operand");
    uint8_t mode = 0;
    Tens src1 = y;
    Geo ig = g;
    int64_t s1_elems = 0;
    if (y.kind == Tens::Splat) {
        // One element in LX, applied to every group as a scalar.
        src1 = new_tensor(t, {1}, op);
        vec_emit(op, Opcode::VFILL, t, src1, nullptr, nullptr, Geo{1, 1}, 0, 0, y.splat);
        mode = kSrc1Scalar;
        ig = Geo{1, g.groups * g.sticks};
        s1_elems = 1;
    } else if (y.kind == Tens::Bcast && y.row) {
        src1.kind = Tens::InLx;
        src1.at = y.src;
        mode = kSrc1Row;
        s1_elems = g.sticks * (sb_ / dtype_bytes(t));
    } else if (y.kind == Tens::Bcast) {
        src1.kind = Tens::InLx;
        src1.at = y.src;
        mode = kSrc1Scalar;
        if (y.uniform) {
            ig = Geo{1, g.groups * g.sticks};
            s1_elems = 1;
        } else {
            s1_elems = g.groups;
        }
    } else if (y.kind == Tens::Empty) {
        throw_error("line ", op.line, ": ", op.name, ": reads a tensor.empty value, which holds no data");
    } else {
        Geo g2 = geo(y, op, "the second operand");
        if (g2.groups != g.groups || g2.sticks != g.sticks)
            throw_error("line ", op.line, ": ", op.name, ": operands have different LX layouts (", g.groups, "x",
                        g.sticks, " and ", g2.groups, "x", g2.sticks, " groups x sticks)");
    }
    v.x = destination(op, op.results[0], t, shape, g.sticks, true, g);
    vec_emit(op, oc, t, v.x, &x, &src1, ig, mode, 0, 0, 0, s1_elems);
    if (y.kind == Tens::Splat) lx_free(src1.alloc);
    define(op, 0, v);
}

// An f16 tensor widened to f32 whose one user is a linalg.reduce of its innermost dimension that
// reads it as its input: the device's reduction widens as it sums, so the pair is one instruction.
bool Importer::widens_into_a_reduce(const Op &op, const Tens &x, DType to) const {
    if (x.kind != Tens::InLx || x.t != DType::F16 || to != DType::F32 || x.shape.empty()) return false;
    auto uses = du_.find(op.results[0]);
    if (uses == du_.end() || uses->second.users.size() != 1) return false;
    const Op &r = *uses->second.users[0];
    return r.name == "linalg.reduce" && r.n_ins == 1 && !r.operands.empty() && r.operands[0] == op.results[0] &&
           r.dims.size() == 1 && r.dims[0] == int64_t(x.shape.size() - 1) && r.result_types.size() == 1 &&
           dtype_of(r.result_types[0], r) == DType::F32;
}

// An f16 tensor widened to f32 whose one user is a linalg.matmul with an f32 result that reads it
// as an operand: the PE array multiplies f16 operands into f32 sums, so the widening is exact and
// part of the matmul.
bool Importer::widens_into_a_matmul(const Op &op, const Tens &x, DType to) const {
    if (x.kind != Tens::InLx || x.t != DType::F16 || to != DType::F32 || x.shape.size() != 2) return false;
    auto uses = du_.find(op.results[0]);
    if (uses == du_.end() || uses->second.users.size() != 1) return false;
    const Op &mm = *uses->second.users[0];
    return mm.name == "linalg.matmul" && mm.n_ins == 2 && mm.operands.size() == 3 &&
           (mm.operands[0] == op.results[0]) != (mm.operands[1] == op.results[0]) && mm.result_types.size() == 1 &&
           dtype_of(mm.result_types[0], mm) == DType::F32;
}

void Importer::convert(const Op &op, Tens x, DType to, int fp8) {
    if (x.kind != Tens::InLx) x = materialize(x, op, nullptr);
    const int64_t eb = dtype_bytes(x.t), eo = dtype_bytes(to);
    Geo g = geo(x, op, "the operand");
    if (x.t == to && fp8 < 0) {
        Val v;
        v.k = Val::T;
        v.x = x;
        v.x.alloc = -1;
        extend_life(op.operands[0], op.results[0]);
        return define(op, 0, v);
    }
    int64_t group_out = g.sticks * (sb_ / eb) * eo;
    if (group_out % sb_ != 0) {
        if (g.groups == 1 && x.alloc >= 0) g.sticks += 1;  // our allocations have room for an even count
        group_out = g.sticks * (sb_ / eb) * eo;
        if (group_out % sb_ != 0)
            throw_error("line ", op.line, ": ", op.name, ": ", g.sticks, " sticks of ", dtype_name(x.t),
                        " do not convert to whole sticks of ", dtype_name(to));
    }
    Val v;
    v.k = Val::T;
    v.x = destination(op, op.results[0], to, x.shape, group_out / sb_, true, Geo{g.groups, group_out / sb_});
    if (fp8 >= 0) {
        // fp8 codes are signless i8 in KTIR and u8 on the device.
        const DType from = dtype_is_byte(x.t) ? DType::U8 : x.t, dst_t = dtype_is_byte(to) ? DType::U8 : to;
        vec_emit(op, Opcode::VCVTF8, from, v.x, &x, nullptr, g, 0, fp8, 0, 0, 0, 0, dst_t);
    } else {
        vec_emit(op, Opcode::VCVT, x.t, v.x, &x, nullptr, g, 0, 0, 0, 0, 0, 0, to);
    }
    define(op, 0, v);
}

void Importer::fp8_convert(const Op &op) {
    const bool encode = op.name == "spyre.to_fp8";
    auto f = op.attrs.find("format");
    if (f == op.attrs.end() || f->second.kind != Attr::String || (f->second.s != "e4m3" && f->second.s != "e5m2"))
        throw_error("line ", op.line, ": ", op.name, ": needs format = \"e4m3\" or \"e5m2\"");
    const Fp8Format fmt = f->second.s == "e4m3" ? Fp8Format::E4M3 : Fp8Format::E5M2;
    if (op.operands.size() != 1 || op.result_types.size() != 1 || op.result_types[0].kind != Type::Tensor)
        throw_error("line ", op.line, ": ", op.name, ": takes one tensor and returns one tensor");
    Tens x = tensor(op.operands[0], op);
    const Type &rt = op.result_types[0];
    const DType to = dtype_of(rt, op);
    if (x.shape != rt.shape) throw_error("line ", op.line, ": ", op.name, ": operand and result shapes differ");
    const bool x_float = x.t == DType::F16 || x.t == DType::F32, to_float = to == DType::F16 || to == DType::F32;
    if (encode ? !(x_float && dtype_is_byte(to)) : !(dtype_is_byte(x.t) && to_float))
        throw_error("line ", op.line, ": ", op.name, ": converts ", dtype_name(x.t), " to ", dtype_name(to),
                    encode ? "; it encodes f16 or f32 values into i8 fp8 codes"
                           : "; it decodes i8 fp8 codes into f16 or f32 values");
    convert(op, x, to, int(fmt));
}

// The combining op of a linalg.reduce region: one op of the two block arguments (either may pass
// through arith.extf), or ktir-cpu's max / min as a compare and a select of the same two. Anything
// else is refused: an op that does not combine the two arguments would be read as a plain sum.
std::string Importer::combiner(const Op &op) {
    if (!op.combiner.empty()) return op.combiner;
    if (op.regions.size() != 1) throw_error("line ", op.line, ": linalg.reduce: missing the combining region");
    const Region &r = op.regions[0];
    if (r.args.size() != 2) throw_error("line ", op.line, ": linalg.reduce: the region takes two arguments");
    std::map<std::string, int> arg;  // value -> which block argument it is (through extf)
    arg[r.args[0]] = 0;
    arg[r.args[1]] = 1;
    std::vector<const Op *> body;
    const Op *yield = nullptr;
    for (const Op &o : r.ops) {
        if (o.name == "linalg.yield") yield = &o;
        else if (o.name == "arith.extf" && o.operands.size() == 1 && arg.count(o.operands[0]) && o.results.size() == 1)
            arg[o.results[0]] = arg[o.operands[0]];
        else body.push_back(&o);
    }
    auto of_both = [&](const Op &o, size_t first) {
        return o.operands.size() == first + 2 && arg.count(o.operands[first]) && arg.count(o.operands[first + 1]) &&
               arg[o.operands[first]] != arg[o.operands[first + 1]];
    };
    auto bad = [&](const std::string &why, int line = 0) -> std::string {
        throw_error("line ", line ? line : op.line, ": linalg.reduce: ", why,
                    " (supported: one op of the two region arguments, or arith.cmpf / cmpi and arith.select of "
                    "them for a max or min)");
    };
    if (body.empty()) bad("the region has no combining op");
    const Op &last = *body.back();
    if (!yield || yield->operands.size() != 1 || last.results.size() != 1 || yield->operands[0] != last.results[0])
        bad("the region must yield its combining op's result");
    if (body.size() == 2 && (body[0]->name == "arith.cmpf" || body[0]->name == "arith.cmpi") &&
        last.name == "arith.select" && of_both(*body[0], 0) && of_both(last, 1) && body[0]->results.size() == 1 &&
        last.operands[0] == body[0]->results[0]) {
        const std::string &p = body[0]->predicate;
        const bool greater = p == "ogt" || p == "oge" || p == "ugt" || p == "uge" || p == "sgt" || p == "sge";
        const bool less = p == "olt" || p == "ole" || p == "ult" || p == "ule" || p == "slt" || p == "sle";
        if (!greater && !less) bad("a compare with predicate '" + p + "' is not a max or min");
        // select(a < b, a, b) is min when the select picks the compare's first operand first.
        const bool same_order = last.operands[1] == body[0]->operands[0];
        const bool is_max = greater == same_order;
        const bool ints = body[0]->name == "arith.cmpi";
        return is_max ? (ints ? "arith.maxsi" : "arith.maximumf") : (ints ? "arith.minsi" : "arith.minimumf");
    }
    if (body.size() != 1) bad("the region must hold one combining op", body[1]->line);
    if (!of_both(last, 0)) bad(last.name + " must combine the two region arguments", last.line);
    return last.name;
}

void Importer::fold_rows(const Op &op, Tens x, Tens init, Opcode red, double ident) {
    const Opcode oc = red == Opcode::VREDSUM ? Opcode::VADD : red == Opcode::VREDMAX ? Opcode::VMAX : Opcode::VMIN;
    const std::vector<int64_t> row{x.shape[1]};
    if (init.shape != row) throw_error("line ", op.line, ": linalg.reduce: init shape does not match");
    if (init.t != x.t)
        throw_error("line ", op.line, ": linalg.reduce: a reduction over the rows (dimensions = [0]) keeps its "
                    "element type (", dtype_name(x.t), " into ", dtype_name(init.t), ")");
    if (x.kind != Tens::InLx) x = materialize(x, op, nullptr);
    Geo g = geo(x, op, "the input");
    const int64_t elems = g.sticks * (sb_ / dtype_bytes(x.t));
    if (init.kind == Tens::Splat || init.kind == Tens::Empty) {  // an empty init: the identity
        Tens c = new_tensor(x.t, row, op, g.sticks);
        vec_emit(op, Opcode::VFILL, x.t, c, nullptr, nullptr, Geo{1, g.sticks}, 0, 0,
                 init.kind == Tens::Splat ? init.splat : ident);
        init = c;
    } else if (init.kind != Tens::InLx || !packed(init)) {  // a broadcast or a strided view: packed first
        init = materialize(init, op, nullptr);
    }
    // Into the tile its result is stored to (or a new one), from the init: one instruction.
    Val v;
    v.k = Val::T;
    v.x = destination(op, op.results[0], x.t, row, g.sticks, true, Geo{1, g.sticks});
    vec_emit(op, oc, x.t, v.x, &init, &x, g, kFoldGroups, 0, 0, elems, 0, elems, x.t);
    define(op, 0, v);
}

void Importer::reduce(const Op &op) {
    if (op.n_ins != 1 || op.operands.size() != 2)
        throw_error("line ", op.line, ": linalg.reduce: one input and one init are supported");
    Tens x = tensor(op.operands[0], op);
    Tens init = tensor(op.operands[1], op);
    std::string c = combiner(op);
    Opcode oc;
    double ident;
    if (c == "arith.addf" || c == "arith.addi") {
        oc = Opcode::VREDSUM;
        ident = 0;
    } else if (c == "arith.maximumf" || c == "arith.maxnumf" || c == "arith.maxsi") {
        oc = Opcode::VREDMAX;
        ident = -INFINITY;
    } else if (c == "arith.minimumf" || c == "arith.minnumf" || c == "arith.minsi") {
        oc = Opcode::VREDMIN;
        ident = INFINITY;
    } else {
        throw_error("line ", op.line, ": linalg.reduce: combining op '", c, "' has no device form (add, max, min)");
    }
    size_t r = x.shape.size();
    if (x.t == DType::I32 && oc != Opcode::VREDSUM) ident = oc == Opcode::VREDMAX ? -2147483648.0 : 2147483647.0;
    if (r == 2 && op.dims.size() == 1 && op.dims[0] == 0) return fold_rows(op, x, init, oc, ident);
    if (r == 0 || op.dims.size() != 1 || op.dims[0] != int64_t(r - 1))
        throw_error("line ", op.line, ": linalg.reduce: only the innermost dimension (dimensions = [", r ? r - 1 : 0,
                    "]) or the rows of a 2-D tensor (dimensions = [0]) reduce on the vector unit");
    std::vector<int64_t> oshape(x.shape.begin(), x.shape.end() - 1);
    if (init.shape != oshape) throw_error("line ", op.line, ": linalg.reduce: init shape does not match");
    DType ot = init.t;
    if (x.widened && ot != DType::F32)
        throw_internal("line ", op.line, ": linalg.reduce: internal: a widened input into ", dtype_name(ot));
    x.widened = false;  // read as f16, into the f32 init (kDstF32 below)
    if (x.kind != Tens::InLx) x = materialize(x, op, nullptr);
    Geo g = geo(x, op, "the input");
    uint8_t mode = 0;
    if (ot != x.t) {
        if (!(x.t == DType::F16 && ot == DType::F32))
            throw_error("line ", op.line, ": linalg.reduce: ", dtype_name(x.t), " reduces into ", dtype_name(x.t),
                        " or (from f16) f32, not ", dtype_name(ot));
        mode |= kDstF32;
    }
    Val v;
    v.k = Val::T;
    bool ident_init = init.kind == Tens::Empty || (init.kind == Tens::Splat && init.splat == ident);
    if (init.kind == Tens::InLx) {
        if (!packed(init)) throw_error("line ", op.line, ": linalg.reduce: the init must be packed in LX");
        if (du_[op.operands[1]].last > info_.at(&op).index)
            throw_error("line ", op.line, ": linalg.reduce: init %", op.operands[1],
                        " is used after the reduction, which accumulates into it; copy it first");
        v.x = init;
        mode |= kAccumulate;
        extend_life(op.operands[1], op.results[0]);
        // The result reuses the init's allocation.
        vals_[op.operands[1]].x.alloc = -1;
        v.x.alloc = init.alloc;
    } else {
        // A constant init that is not the identity is filled in first, in sticks: into our own LX.
        v.x = ident_init ? destination(op, op.results[0], ot, oshape, 0, false, Geo{}, true)
                         : new_tensor(ot, oshape, op);
        if (!packed(v.x)) v.x = new_tensor(ot, oshape, op);
        if (!ident_init) {
            if (init.kind != Tens::Splat)
                throw_error("line ", op.line, ": linalg.reduce: init must be a constant or a tensor in LX");
            vec_emit(op, Opcode::VFILL, ot, v.x, nullptr, nullptr, Geo{1, (g.groups * dtype_bytes(ot) + sb_ - 1) / sb_},
                     0, 0, init.splat);
            mode |= kAccumulate;
        }
    }
    int64_t inner = x.shape.back();
    const int64_t lanes = sb_ / dtype_bytes(x.t);
    int32_t valid = inner == g.sticks * lanes ? 0 : int32_t(inner);
    vec_emit(op, oc, x.t, v.x, &x, nullptr, g, mode, valid, 0, 0, 0, g.groups, ot);
    define(op, 0, v);
}

void Importer::matmul(const Op &op) {
    if (op.n_ins != 2 || op.operands.size() != 3)
        throw_error("line ", op.line, ": linalg.matmul: expects ins(A, B) outs(C)");
    Tens A = tensor(op.operands[0], op), B = tensor(op.operands[1], op), C = tensor(op.operands[2], op);
    if (A.shape.size() != 2 || B.shape.size() != 2 || C.shape.size() != 2 || A.shape[1] != B.shape[0] ||
        C.shape[0] != A.shape[0] || C.shape[1] != B.shape[1])
        throw_error("line ", op.line, ": linalg.matmul: shapes must be MxK, KxN and MxN");
    // f16 x f16 into f32 (or f16), or i8 x i8 into i32.
    const bool int8 = A.t == DType::I8 && B.t == DType::I8;
    if (!int8 && (A.t != DType::F16 || B.t != DType::F16))
        throw_error("line ", op.line, ": linalg.matmul: the PE array multiplies f16 or i8 operands");
    if (int8 && C.t != DType::I32) throw_error("line ", op.line, ": linalg.matmul: i8 operands accumulate into i32");
    const DType acc_t = int8 ? DType::I32 : DType::F32;
    const int64_t eb = dtype_bytes(A.t);
    if (A.kind != Tens::InLx) A = materialize(A, op, nullptr);
    if (B.kind != Tens::InLx) B = materialize(B, op, nullptr);
    const int64_t m = A.shape[0], k = A.shape[1], n = B.shape[1];
    for (const Tens *x : {&A, &B})
        if (x->bstride[0] % sb_ != 0 && x->shape[0] > 1)
            throw_error("line ", op.line, ": linalg.matmul: operand rows must be whole sticks apart in LX");
    bool f16_out = C.t == DType::F16;
    if (C.t != acc_t && !f16_out) throw_error("line ", op.line, ": linalg.matmul: the result is f32 or f16");
    uint8_t acc_mode = 0;
    Tens out;
    if (C.kind == Tens::InLx && !f16_out) {
        if (du_[op.operands[2]].last > info_.at(&op).index)
            throw_error("line ", op.line, ": linalg.matmul: init %", op.operands[2],
                        " is used after the matmul, which accumulates into it; copy it first");
        out = C;
        acc_mode = kAccumulate;
        vals_[op.operands[2]].x.alloc = -1;
        extend_life(op.operands[2], op.results[0]);
    } else {
        if (C.kind == Tens::InLx || (C.kind == Tens::Splat && C.splat != 0))
            throw_error("line ", op.line, ": linalg.matmul: an f16 result starts from zero (outs must be "
                        "tensor.empty or a zero fill)");
        if (C.kind == Tens::Bcast) throw_error("line ", op.line, ": linalg.matmul: init must be in LX or zero");
        if (f16_out) {
            const int64_t sticks = round_up(n * 4, sb_) / sb_;
            out = new_tensor(DType::F32, C.shape, op, sticks + sticks % 2);
            // An odd count leaves a stick a row the PE does not write: zero it, for the conversion.
            if (sticks % 2) vec_emit(op, Opcode::VFILL, DType::F32, out, nullptr, nullptr, Geo{m, sticks + 1}, 0, 0, 0.0);
        } else {
            out = destination(op, op.results[0], acc_t, C.shape, 0, false);
        }
        if (C.kind == Tens::Splat && C.splat != 0) acc_mode = kAccumulate;
    }
    if (out.bstride[0] % sb_ != 0 && m > 1)
        throw_error("line ", op.line, ": linalg.matmul: result rows must be whole sticks apart in LX");
    MatmulDesc d;
    d.m = int32_t(m);
    d.n = int32_t(n);
    d.k = int32_t(k);
    d.lda = int32_t(m > 1 ? A.bstride[0] : round_up(k * eb, sb_));
    d.ldb = int32_t(k > 1 ? B.bstride[0] : round_up(n * eb, sb_));
    d.ldc = int32_t(m > 1 ? out.bstride[0] : round_up(n * 4, sb_));
    const int di = b_.intern_mm_desc(d);
    Access acc;
    acc.reads.push_back(range_of(A));
    acc.reads.push_back(range_of(B));
    acc.writes.push_back(range_of(out));
    if (acc_mode) acc.reads.push_back(range_of(out));
    before(QPE, acc);
    int tag = tag_for(op, QPE);
    if (f16_out && explicit_) throw_error("line ", op.line, ": linalg.matmul: explicit sync needs an f32 result");
    b_.matmul(tag, out.at, A.at, B.at, di, acc_mode != 0, A.t);
    after(tag, QPE, acc);
    Val v;
    v.k = Val::T;
    if (f16_out) {
        // The f32 product's rows are an even number of sticks (out, above), so that they convert to
        // whole f16 sticks: N = 32 columns fill one f32 stick, whose zero-filled neighbour becomes
        // the f16 row's padding lanes.
        const int64_t s1 = round_up(n * 4, sb_) / sb_, f32_sticks = s1 + s1 % 2;
        const Geo g{m, f32_sticks};
        const int64_t half = f32_sticks / 2;
        v.x = destination(op, op.results[0], DType::F16, C.shape, half, true, Geo{g.groups, half});
        vec_emit(op, Opcode::VCVT, DType::F32, v.x, &out, nullptr, g, 0, 0, 0, 0, 0, 0, DType::F16);
        lx_free(out.alloc);
    } else {
        v.x = out;
    }
    define(op, 0, v);
}

void Importer::transpose(const Op &op) {
    if (op.n_ins != 1 || op.operands.size() != 2)
        throw_error("line ", op.line, ": linalg.transpose: expected one input and one init");
    const size_t r = op.dims.size();
    if (r > 2) return batched_transpose(op);
    if (op.dims != std::vector<int64_t>{1, 0})
        throw_error("line ", op.line, ": linalg.transpose: a permutation of 2 dimensions must be [1, 0]");
    Tens x = tensor(op.operands[0], op);
    if (x.kind != Tens::InLx) x = materialize(x, op, nullptr);
    if (x.shape.size() != 2) throw_error("line ", op.line, ": linalg.transpose: the input must be 2-D");
    const int64_t lanes = sb_ / dtype_bytes(x.t);
    const int64_t R = x.shape[0], C = x.shape[1];
    if (R > 1 && x.bstride[0] != round_up(C, lanes) * dtype_bytes(x.t))
        throw_error("line ", op.line, ": linalg.transpose: input rows must be padded to whole sticks, no more");
    Val v;
    v.k = Val::T;
    std::vector<int64_t> os{C, R};
    const Op *st = lx_store_of(op, op.results[0]);
    v.x = Tens();
    if (st) {
        Tile tl = tile_of(st->operands[1], *st);
        check_row_end(tl, *st);
        Tens d = tile_tensor(tl, *st);
        if (tl.shape == os && tl.v.t == x.t && (C == 1 || d.bstride[0] == round_up(R, lanes) * dtype_bytes(x.t))) {
            v.x = d;
            skip_.insert(st);
        }
    }
    if (v.x.shape.empty()) v.x = new_tensor(x.t, os, op);
    Access acc;
    acc.reads.push_back(range_of(x));
    acc.writes.push_back(range_of(v.x));
    before(QVec, acc);
    int tag = tag_for(op, QVec);
    b_.vtranspose(x.t, tag, v.x.at, x.at, int32_t(R), int32_t(C));
    after(tag, QVec, acc);
    define(op, 0, v);
}

// A permutation that swaps the two innermost dimensions and permutes the outer ones (torch-spyre's
// relayout `permutation = [1, 0, 3, 2]`): one VTRANSPOSE per block, the outer permutation in where
// each block is read from.
void Importer::batched_transpose(const Op &op) {
    constexpr int64_t kMaxBlocks = 1 << 14;  // one instruction per block: bound the program's size
    const std::vector<int64_t> &p = op.dims;
    const size_t r = p.size();
    std::vector<bool> seen(r, false);
    for (int64_t d : p) {
        if (d < 0 || d >= int64_t(r) || seen[size_t(d)])
            throw_error("line ", op.line, ": linalg.transpose: permutation is not a permutation of 0..", r - 1);
        seen[size_t(d)] = true;
    }
    if (p[r - 1] != int64_t(r - 2) || p[r - 2] != int64_t(r - 1))
        throw_error("line ", op.line, ": linalg.transpose: of permutations of more than 2 dimensions, those that "
                    "swap the two innermost dimensions are supported (the others move whole rows)");
    Tens x = tensor(op.operands[0], op);
    if (x.kind != Tens::InLx) x = materialize(x, op, nullptr);
    if (x.shape.size() != r) throw_error("line ", op.line, ": linalg.transpose: the input must have ", r, " dimensions");
    const int64_t eb = dtype_bytes(x.t), lanes = sb_ / eb;
    const int64_t R = x.shape[r - 2], C = x.shape[r - 1];
    if (R > 1 && x.bstride[r - 2] != round_up(C, lanes) * eb)
        throw_error("line ", op.line, ": linalg.transpose: input rows must be padded to whole sticks, no more");
    std::vector<int64_t> os(r);
    for (size_t k = 0; k < r; k++) os[k] = x.shape[size_t(p[k])];
    if (op.result_types[0].shape != os)
        throw_error("line ", op.line, ": linalg.transpose: the result type ", op.result_types[0].text(),
                    " is not the permuted input shape");
    int64_t blocks = 1;
    for (size_t k = 0; k + 2 < r; k++) blocks *= os[k];
    if (blocks > kMaxBlocks)
        throw_error("line ", op.line, ": linalg.transpose: ", blocks, " blocks are more than the ", kMaxBlocks,
                    " the importer transposes one by one");
    Val v;
    v.k = Val::T;
    v.x = new_tensor(x.t, os, op);
    const int64_t out_block = C * v.x.bstride[r - 2];  // C rows of the transposed block
    for (int64_t b = 0; b < blocks; b++) {
        int64_t rest = b, src_off = 0;
        for (size_t k = r - 2; k-- > 0;) {
            int64_t idx = rest % os[k];
            rest /= os[k];
            src_off += idx * x.bstride[size_t(p[k])];
        }
        Tens src = x, dst = v.x;
        src.at.off = int32_t(src.at.off + src_off);
        src.shape = {R, C};
        src.bstride = {x.bstride[r - 2], x.bstride[r - 1]};
        dst.at.off = int32_t(dst.at.off + b * out_block);
        dst.shape = {C, R};
        dst.bstride = {v.x.bstride[r - 2], v.x.bstride[r - 1]};
        Access acc;
        acc.reads.push_back(range_of(src));
        acc.writes.push_back(range_of(dst));
        before(QVec, acc);
        int tag = tag_for(op, QVec);
        b_.vtranspose(x.t, tag, dst.at, src.at, int32_t(R), int32_t(C));
        after(tag, QVec, acc);
    }
    define(op, 0, v);
}

void Importer::ring_reduce(const Op &op) {
    auto get = [&](const char *key) -> std::string {
        auto it = op.attrs.find(key);
        if (it == op.attrs.end() || it->second.kind != Attr::Dialect)
            throw_error("line ", op.line, ": ktdp.reduce: needs ", key, " = #ktdp....<...>");
        std::string s;
        for (char c : it->second.body)
            if (!std::isspace((unsigned char)c)) s += c;
        return s;
    };
    std::string kind = get("kind"), mode = get("mode"), across = get("across");
    if (mode != "all_reduce")
        throw_error("line ", op.line, ": ktdp.reduce: only mode all_reduce has a device form (RING_REDUCE)");
    if (across != "0") throw_error("line ", op.line, ": ktdp.reduce: only across grid_axis<0> is supported");
    RedOp ro = kind == "sum" ? RedOp::Sum : kind == "max" ? RedOp::Max : kind == "min" ? RedOp::Min : RedOp(-1);
    if (int(ro) < 0) throw_error("line ", op.line, ": ktdp.reduce: kind must be sum, max or min");
    ring_reduce_of(op, op.operands[0], ro, dtype_of(op.result_types[0], op), nullptr);
}

void Importer::ring_reduce_of(const Op &op, const std::string &in, RedOp ro, DType rt,
                              const std::vector<int64_t> *shape, int32_t group_size, int32_t group_stride) {
    Tens x = tensor(in, op);
    if (x.t != rt) throw_error("line ", op.line, ": ", op.name, ": the result's element type differs from the input's");
    if (x.kind != Tens::InLx) x = materialize(x, op, nullptr);
    const int64_t bytes = elements(x.shape) * dtype_bytes(x.t);
    // Less than a stick (one row's sum, ktir-cpu's 2x2 rmsnorm): reduced in a stick of its own, whose
    // other lanes combine with each other and are not read.
    const bool part_stick = bytes < sb_ && packed(x);
    if (!packed(x) || (bytes % sb_ != 0 && !part_stick))
        throw_error("line ", op.line, ": ", op.name, ": the tensor must fill whole sticks, packed, or fit in one "
                    "(RING_REDUCE combines whole sticks)");
    Val v;
    v.k = Val::T;
    const Op *st = part_stick ? nullptr : lx_store_of(op, op.results[0]);
    Tens at = x;
    if (part_stick || du_[in].last > info_.at(&op).index) {
        at = new_tensor(x.t, x.shape, op);
        materialize(x, op, &at);
    } else {
        vals_[in].x.alloc = -1;
    }
    if (st) {  // the exported form stores the result back where it was
        Tens d = tile_tensor(tile_of(st->operands[1], *st), *st);
        if (d.at.reg.id == at.at.reg.id && d.at.off == at.at.off) skip_.insert(st);
    }
    int32_t sticks = int32_t(std::max<int64_t>(1, bytes / sb_));
    Access acc;
    acc.reads.push_back(range_at(at.at, int64_t(sticks) * sb_));
    acc.writes.push_back(range_at(at.at, int64_t(sticks) * sb_));
    if (!explicit_) drain();  // every core's partial is complete before the collective
    before(QRing, acc);
    const Op &tag_op = st && skip_.count(st) ? *st : op;
    int tag = tag_for(tag_op, QRing);
    b_.ring_reduce(x.t, tag, ro, at.at, sticks, group_size, group_stride);
    after(tag, QRing, acc);
    if (shape && *shape != at.shape) {  // a result of another shape over the same packed elements
        at.shape = *shape;
        at.bstride.assign(shape->size(), dtype_bytes(at.t));
        for (size_t i = shape->size(); i-- > 1;) at.bstride[i - 1] = at.bstride[i] * (*shape)[i];
    }
    v.x = at;
    define(op, 0, v);
}

void Importer::ring_transfer(const Op &op) {
    auto d = op.attrs.find("direction");
    if (d == op.attrs.end() || d->second.kind != Attr::Int || (d->second.i != 1 && d->second.i != -1))
        throw_error("line ", op.line, ": ", op.name, ": needs direction = 1 or -1");
    bool send = op.name == "spyre.ring_send";
    Val v;
    if (send) {
        if (op.operands.size() != 1) throw_error("line ", op.line, ": spyre.ring_send: takes one tensor");
        Tens x = tensor(op.operands[0], op);
        if (x.kind != Tens::InLx || !packed(x) || (elements(x.shape) * dtype_bytes(x.t)) % sb_)
            throw_error("line ", op.line, ": spyre.ring_send: the tensor must be in LX, packed, whole sticks");
        Access acc;
        acc.reads.push_back(range_of(x));
        before(QRing, acc);
        int tag = tag_for(op, QRing);
        b_.ring_send(tag, int(d->second.i), x.at, int32_t(elements(x.shape) * dtype_bytes(x.t) / sb_));
        after(tag, QRing, acc);
        return;
    }
    if (op.result_types.size() != 1 || op.result_types[0].kind != Type::Tensor)
        throw_error("line ", op.line, ": spyre.ring_recv: returns one tensor");
    const Type &rt = op.result_types[0];
    DType t = dtype_of(rt, op);
    v.k = Val::T;
    const Op *tag_op = &op;
    Tens dst = packed_result(op, t, rt.shape, &tag_op);
    if (!packed(dst) || (elements(rt.shape) * dtype_bytes(t)) % sb_)
        throw_error("line ", op.line, ": spyre.ring_recv: the tensor must be packed, whole sticks");
    Access acc;
    acc.writes.push_back(range_of(dst));
    before(QRing, acc);
    int tag = tag_for(*tag_op, QRing);
    b_.ring_recv(tag, int(d->second.i), dst.at, int32_t(elements(rt.shape) * dtype_bytes(t) / sb_));
    after(tag, QRing, acc);
    v.x = dst;
    define(op, 0, v);
}

// The source of a shifted read is read by the last insert_slice, not only where it is an operand:
// it lives as long as each part made of it.
void Importer::keep_source_alive(const std::string &root, const std::string &part) {
    if (root.empty()) return;
    auto r = du_.find(root), p = du_.find(part);
    if (r != du_.end() && p != du_.end()) r->second.last = std::max(r->second.last, p->second.last);
}

Importer::ShiftPart Importer::shift_part(const std::string &name, const Op &op) {
    auto it = shift_parts_.find(name);
    if (it != shift_parts_.end()) return it->second;
    const Tens &x = tensor(name, op);
    ShiftPart p;
    p.t = x.t;
    p.shape = x.shape;
    const int64_t n = elements(x.shape);
    if (n > (int64_t(1) << 24)) throw_error("line ", op.line, ": ", op.name, ": %", name, " is too large to slice");
    if (x.kind == Tens::Splat && x.splat == 0) {
        p.map.assign(size_t(n), -1);
    } else if (x.kind == Tens::InLx && packed(x) && (x.shape.size() == 1 || x.shape.size() == 2)) {
        // 2-D: a lane select's source (a shifted read's must be 1-D: emit_shift checks)
        p.root = name;
        for (int64_t i = 0; i < n; i++) p.map.push_back(i);
    } else {
        throw_error("line ", op.line, ": ", op.name, ": %", name,
                    " is not a 1-D or 2-D packed tensor in LX or a zero splat: tensor.extract_slice and "
                    "insert_slice are read only as parts of a shifted read or a lane select (docs/ktir.md)");
    }
    return p;
}

void Importer::slice(const Op &op) {
    const bool insert = op.name == "tensor.insert_slice";
    const size_t rank = op.offsets.size();
    ShiftPart src = shift_part(op.operands[0], op);
    ShiftPart big = insert ? shift_part(op.operands[1], op) : src;
    if (big.shape.size() != rank || src.t != big.t)
        throw_error("line ", op.line, ": ", op.name, ": offsets of ", rank, " dimensions for a tensor of ",
                    big.shape.size());
    // The slice's elements, row-major over `sizes`, and where each lies in `big`.
    int64_t count = 1;
    for (size_t d = 0; d < rank; d++) {
        if (op.sizes[d] < 0 || op.strides[d] < 1 || op.offsets[d] < 0 ||
            (op.sizes[d] > 0 && op.offsets[d] + (op.sizes[d] - 1) * op.strides[d] >= big.shape[d]))
            throw_error("line ", op.line, ": ", op.name, ": the slice leaves the tensor in dimension ", d);
        count *= op.sizes[d];
    }
    if (insert && count != int64_t(src.map.size()))
        throw_error("line ", op.line, ": ", op.name, ": the source has ", src.map.size(), " elements, the slice ", count);
    ShiftPart r;
    r.t = src.t;
    r.shape = op.result_types[0].shape;
    if (!insert && elements(r.shape) != count)
        throw_error("line ", op.line, ": ", op.name, ": the result has ", elements(r.shape), " elements, the slice ", count);
    if (insert) {
        if (elements(r.shape) != int64_t(big.map.size()))
            throw_error("line ", op.line, ": ", op.name, ": the result and the destination differ in elements");
        r.map = big.map;
    }
    std::vector<int64_t> idx(rank, 0);
    for (int64_t e = 0; !insert && e < count; e++) {
        int64_t flat = 0;
        for (size_t d = 0; d < rank; d++) flat = flat * big.shape[d] + op.offsets[d] + idx[d] * op.strides[d];
        r.map.push_back(big.map[size_t(flat)]);
        for (size_t d = rank; d-- > 0;) {
            if (++idx[d] < op.sizes[d]) break;
            idx[d] = 0;
        }
    }
    if (insert) {
        // The sources of the result: big's, then src's (its elements renumbered to big's roots).
        r.root = big.root;
        r.root2 = big.root2;
        auto slot = [&](const std::string &name) -> int64_t {
            if (name.empty()) return -1;
            if (r.root.empty() || r.root == name) {
                r.root = name;
                return 0;
            }
            if (r.root2.empty() || r.root2 == name) {
                r.root2 = name;
                return kSecondRoot;
            }
            throw_error("line ", op.line, ": ", op.name, ": reads three sources (%", r.root, ", %", r.root2, ", %",
                        name, "); a lane select has two");
        };
        const int64_t s1 = slot(src.root), s2 = slot(src.root2);
        idx.assign(rank, 0);
        for (int64_t e = 0; e < count; e++) {
            int64_t flat = 0;
            for (size_t d = 0; d < rank; d++) flat = flat * big.shape[d] + op.offsets[d] + idx[d] * op.strides[d];
            const int64_t m = src.map[size_t(e)];
            r.map[size_t(flat)] = m < 0 ? -1 : m >= kSecondRoot ? m - kSecondRoot + s2 : m + s1;
            for (size_t d = rank; d-- > 0;) {
                if (++idx[d] < op.sizes[d]) break;
                idx[d] = 0;
            }
        }
    } else {
        r.root = src.root;
        r.root2 = src.root2;
    }
    const bool lsel = op.attrs.count("spyre.lane_select") > 0;
    if (!op.attrs.count("spyre.shift") && !lsel) {
        shift_parts_[op.results[0]] = r;
        keep_source_alive(r.root, op.results[0]);
        keep_source_alive(r.root2, op.results[0]);
        return;
    }
    const char *attr = lsel ? "spyre.lane_select" : "spyre.shift";
    if (!insert) throw_error("line ", op.line, ": ", op.name, ": ", attr, " belongs on a tensor.insert_slice");
    if (lsel) return emit_lane_select_slices(op, r);
    if (!r.root2.empty())
        throw_error("line ", op.line, ": ", op.name, ": reads two sources (%", r.root, ", %", r.root2,
                    "); a shifted read has one");
    if (r.root.empty()) throw_error("line ", op.line, ": ", op.name, ": a shifted read of no source element");
    emit_shift(op, "spyre.", r.root, &r.map);
}

void Importer::shift(const Op &op) {
    if (op.operands.size() != 1)
        throw_error("line ", op.line, ": spyre.shift: takes one tensor and returns a 2-D tensor (groups x row)");
    emit_shift(op, "", op.operands[0], nullptr);
}

void Importer::emit_shift(const Op &op, const std::string &prefix, const std::string &src,
                          const std::vector<int64_t> *map) {
    const std::string what = map ? op.name : "spyre.shift";
    auto int_attr = [&](const char *name) {
        auto a = op.attrs.find(prefix + name);
        if (a == op.attrs.end() || a->second.kind != Attr::Int || a->second.i < INT32_MIN || a->second.i > INT32_MAX)
            throw_error("line ", op.line, ": ", what, ": needs ", prefix, name, " = <i32>");
        return int32_t(a->second.i);
    };
    auto e = op.attrs.find(prefix + "edge");
    static const std::map<std::string, uint8_t> edges = {{"none", 0},
                                                         {"clamp", kEdgeClamp},
                                                         {"zero", kEdgeZero},
                                                         {"mirror_image", kEdgeMirrorImage},
                                                         {"mirror_interior", kEdgeMirrorInterior}};
    auto edge = e == op.attrs.end() || e->second.kind != Attr::String ? edges.end() : edges.find(e->second.s);
    if (edge == edges.end())
        throw_error("line ", op.line, ": ", what, ": needs ", prefix,
                    "edge = \"none\", \"clamp\", \"zero\", \"mirror_image\" or \"mirror_interior\"");
    const uint8_t mode = edge->second;
    const int32_t sh = int_attr("shift"), lo = int_attr("lo"), hi = int_attr("hi"), origin = int_attr("origin");
    if (mode && lo > hi) throw_error("line ", op.line, ": ", what, ": edge window [", lo, ", ", hi, "] is empty");
    if (op.result_types.size() != 1 || op.result_types[0].kind != Type::Tensor || op.result_types[0].shape.size() != 2)
        throw_error("line ", op.line, ": ", what, ": takes one tensor and returns a 2-D tensor (groups x row)");
    Tens x = tensor(src, op);
    if (x.kind != Tens::InLx || !packed(x) || x.shape.size() != 1)
        throw_error("line ", op.line, ": ", what, ": the source must be a packed 1-D tensor in LX");
    const Type &rt = op.result_types[0];
    const DType t = dtype_of(rt, op);
    if (t != x.t) throw_error("line ", op.line, ": ", what, ": source and result element types differ");
    const int64_t eb = dtype_bytes(t), lanes = sb_ / eb, groups = rt.shape[0], row = rt.shape[1];
    if (groups < 1 || row < 1 || row % lanes || row / lanes > INT32_MAX || groups > INT32_MAX)
        throw_error("line ", op.line, ": ", what, ": rows of ", row, " elements are not whole sticks of ", lanes);
    // The home (the rows' base) is `origin` elements before the source tensor's first element.
    const int64_t base_off = int64_t(x.at.off) - int64_t(origin) * eb;
    if (base_off < INT32_MIN || base_off > INT32_MAX || (x.at.reg.id == 0 && base_off % sb_))
        throw_error("line ", op.line, ": ", what, ": the rows' base (", origin,
                    " elements before the source) is not on a stick boundary");
    Instr probe;
    probe.op = Opcode::VSHIFT, probe.mode = mode;
    probe.a[5] = sh, probe.a[6] = lo, probe.a[7] = int32_t(row / lanes), probe.a[8] = int32_t(groups), probe.a[9] = hi;
    const ShiftSpan span = vshift_read_span(probe, lanes);
    if (!span.empty() && (span.first < origin || span.last >= origin + x.shape[0]))
        throw_error("line ", op.line, ": ", what, ": reads elements [", span.first - origin, ", ", span.last - origin,
                    "] of a source of ", x.shape[0]);
    if (map) {  // the parts must compute what the attributes say, element by element
        const int64_t row_ = row;
        if (int64_t(map->size()) != groups * row_)
            throw_error("line ", op.line, ": ", what, ": the slices hold ", map->size(), " elements, not ", groups * row_);
        for (int64_t g = 0; g < groups; g++)
            for (int64_t j = 0; j < row_; j++) {
                bool zero = false;
                const int64_t p = shift_source(shift_edge(mode), j + sh, lo, hi, &zero);
                const int64_t want = zero ? -1 : g * row_ + p - origin, got = (*map)[size_t(g * row_ + j)];
                if (got != want)
                    throw_error("line ", op.line, ": ", what, ": element (", g, ", ", j, ") of the slices reads ",
                                got < 0 ? std::string("zero") : "source element " + std::to_string(got), ", ", prefix,
                                "shift and its edge say ",
                                want < 0 ? std::string("zero") : "source element " + std::to_string(want));
            }
    }
    Val v;
    v.k = Val::T;
    const Op *tag_op = &op;
    Tens dst = packed_result(op, t, rt.shape, &tag_op);
    if (!packed(dst)) throw_error("line ", op.line, ": ", what, ": the result must be packed");
    Access acc;
    acc.reads.push_back(range_of(x));
    acc.writes.push_back(range_of(dst));
    before(QVec, acc);
    int tag = tag_for(*tag_op, QVec);
    b_.vshift(t, tag, dst.at, Lx(x.at.reg, int32_t(base_off)), sh, int32_t(row / lanes), int32_t(groups), mode, lo, hi);
    after(tag, QVec, acc);
    v.x = dst;
    define(op, 0, v);
}

void Importer::lane_select(const Op &op) {
    auto b = op.attrs.find("block");
    if (b == op.attrs.end() || b->second.kind != Attr::Int || b->second.i < 1 || b->second.i > INT32_MAX)
        throw_error("line ", op.line, ": spyre.lane_select: needs block = <positive i32>");
    if (op.operands.size() != 2 || op.result_types.size() != 1 || op.result_types[0].kind != Type::Tensor)
        throw_error("line ", op.line, ": spyre.lane_select: takes two tensors and returns one");
    lane_select_of(op, op.operands[0], op.operands[1], b->second.i);
}

// The lane select spelt in slices (docs/ktir.md, "Lane selects"): element j of row g of the result
// must be element (g, j) of the first source where (j / w) % 2 == 0, else of the second; the first
// source is the one column 0 reads, the second the one column w reads.
void Importer::emit_lane_select_slices(const Op &op, const ShiftPart &r) {
    auto b = op.attrs.find("spyre.lane_select");
    if (b == op.attrs.end() || b->second.kind != Attr::Int || b->second.i < 1 || b->second.i > INT32_MAX)
        throw_error("line ", op.line, ": ", op.name, ": needs spyre.lane_select = <positive i32>");
    const int64_t w = b->second.i;
    if (r.shape.size() != 2 || r.shape[1] <= w)
        throw_error("line ", op.line, ": ", op.name, ": a lane select's result is rows of more than ",
                    "spyre.lane_select = ", w, " elements");
    const int64_t rows = r.shape[0], row = r.shape[1];
    auto name = [&](int64_t m) { return m < 0 ? std::string() : m >= kSecondRoot ? r.root2 : r.root; };
    const std::string a = name(r.map[0]), c = name(r.map[size_t(w)]);
    for (int64_t g = 0; g < rows; g++)
        for (int64_t j = 0; j < row; j++) {
            const int64_t e = g * row + j, m = r.map[size_t(e)];
            const std::string &want = (j / w) % 2 == 0 ? a : c;
            if (m < 0 || name(m) != want || m % kSecondRoot != e)
                throw_error("line ", op.line, ": ", op.name, ": element (", g, ", ", j, ") ",
                            m < 0 ? std::string("is zero") : "reads %" + name(m) + "[" + std::to_string(m % kSecondRoot) + "]",
                            ", but spyre.lane_select = ", w, " reads %", want.empty() ? "?" : want, "[", e, "] there");
        }
    lane_select_of(op, a, c, w);
}

void Importer::lane_select_of(const Op &op, const std::string &xa, const std::string &ya, int64_t block) {
    const Type &rt = op.result_types[0];
    const DType t = dtype_of(rt, op);
    Tens x = tensor(xa, op), y = tensor(ya, op);
    for (const Tens *s : {&x, &y}) {
        if (s->kind != Tens::InLx)
            throw_error("line ", op.line, ": spyre.lane_select: the operands must be tensors in LX");
        if (s->t != t || s->shape != rt.shape)
            throw_error("line ", op.line, ": spyre.lane_select: operand types or shapes differ from the result's");
    }
    Geo g = geo(x, op, "the first operand"), g2 = geo(y, op, "the second operand");
    if (g2.groups != g.groups || g2.sticks != g.sticks)
        throw_error("line ", op.line, ": spyre.lane_select: operands have different LX layouts (", g.groups, "x",
                    g.sticks, " and ", g2.groups, "x", g2.sticks, " groups x sticks)");
    two_source_select(op, t, rt, x, y, g, [&](int tag, Lx dst) {
        b_.vlsel(t, tag, dst, x.at, y.at, int32_t(block), int32_t(g.sticks), int32_t(g.groups));
    });
}

void Importer::two_source_select(const Op &op, DType t, const Type &rt, const Tens &x, const Tens &y, const Geo &g,
                                 const std::function<void(int tag, Lx dst)> &emit) {
    Val v;
    v.k = Val::T;
    v.x = destination(op, op.results[0], t, rt.shape, g.sticks, true, g);
    Access acc;
    acc.reads.push_back(range_of(x));
    acc.reads.push_back(range_of(y));
    acc.writes.push_back(range_of(v.x));
    before(QVec, acc);
    const int tag = tag_for(op, QVec);
    emit(tag, v.x.at);
    after(tag, QVec, acc);
    define(op, 0, v);
}

void Importer::index_select(const Op &op) {
    const char *what = "spyre.index_select";
    auto pg = op.attrs.find("per_group");
    if (pg == op.attrs.end() || pg->second.kind != Attr::Int || (pg->second.i != 0 && pg->second.i != 1))
        throw_error("line ", op.line, ": ", what, ": needs per_group = 0 or 1 (i32)");
    if (op.operands.size() != 3 || op.result_types.size() != 1 || op.result_types[0].kind != Type::Tensor)
        throw_error("line ", op.line, ": ", what, ": takes two tensors and an index, and returns one tensor");
    index_select_of(op, op.operands[0], op.operands[1], op.operands[2], pg->second.i);
}

void Importer::index_select_of(const Op &op, const std::string &xn, const std::string &yn, const std::string &limit,
                               int64_t per_group) {
    const std::string what = op.name == "arith.select" ? "arith.select (spyre.index_select)" : op.name;
    if (op.result_types.size() != 1 || op.result_types[0].kind != Type::Tensor)
        throw_error("line ", op.line, ": ", what, ": returns one tensor");
    const Type &rt = op.result_types[0];
    const DType t = dtype_of(rt, op);
    if (rt.shape.size() != 2)
        throw_error("line ", op.line, ": ", what, ": the result must be rows x lanes (2-D), got ", rt.text());
    Tens x = tensor(xn, op), y = tensor(yn, op);
    for (const Tens *s : {&x, &y})
        if (s->kind != Tens::InLx || s->t != t)
            throw_error("line ", op.line, ": ", what, ": the operands must be tensors in LX of the result's type");
    const bool one_per_row = y.shape.size() == 1 && y.shape[0] == rt.shape[0] && y.bstride.size() == 1 &&
                        y.bstride[0] == dtype_bytes(t);
    if (x.shape != rt.shape || (!one_per_row && y.shape != rt.shape))
        throw_error("line ", op.line, ": ", what, ": the first operand must have the result's shape, the second "
                    "that shape or one element per row");
    Geo g = geo(x, op, "the first operand");
    if (!one_per_row) {
        Geo g2 = geo(y, op, "the second operand");
        if (g2.groups != g.groups || g2.sticks != g.sticks)
            throw_error("line ", op.line, ": ", what, ": operands have different LX layouts (", g.groups, "x", g.sticks,
                        " and ", g2.groups, "x", g2.sticks, " groups x sticks)");
    }
    Scalar lim = scalar(limit, op);
    Reg temp;
    Reg rl = reg_of(lim, op, &temp);
    two_source_select(op, t, rt, x, y, g, [&](int tag, Lx dst) {
        b_.vselidx(t, tag, dst, x.at, y.at, rl, per_group == 1, one_per_row, int32_t(g.sticks), int32_t(g.groups));
    });
}

Tens Importer::packed_result(const Op &op, DType t, const std::vector<int64_t> &shape, const Op **tag_op) {
    if (const Op *st = lx_store_of(op, op.results[0])) {
        Tens dst = tile_tensor(tile_of(st->operands[1], *st), *st);
        if (packed(dst)) {
            skip_.insert(st);
            *tag_op = st;
            return dst;
        }
    }
    return new_tensor(t, shape, op);
}

}  // namespace spyre::ktir::lowering
