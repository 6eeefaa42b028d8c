// The importer's compares and selects on values in LX (ktir_importer.h): arith.cmpf (and arith.cmpi,
// which IBM's kernels also apply to f16 tensors, as ktir-cpu evaluates it) of tensors or of single
// elements, giving a mask in the operands' type, and arith.select by such a mask. The vector unit
// compares with VCMPLT, VCMPLE and VCMPEQ (1 where the condition holds, else 0) and selects with
// VSELM, which reads its mask from its destination.
#include "ktir_importer.h"

namespace spyre::ktir::lowering {

namespace {

// A predicate as one of the device's three compares: operands swapped or not, result negated or not.
struct Compare {
    Opcode oc;
    bool swap, negate;
};

bool compare_of(const std::string &p, bool cmpi, Compare *c) {
    // cmpi's predicates on the values as numbers (ktir-cpu: NumPy's comparisons of the data).
    static const std::map<std::string, Compare> f = {
        {"oeq", {Opcode::VCMPEQ, false, false}}, {"une", {Opcode::VCMPEQ, false, true}},
        {"olt", {Opcode::VCMPLT, false, false}}, {"ole", {Opcode::VCMPLE, false, false}},
        {"ogt", {Opcode::VCMPLT, true, false}},  {"oge", {Opcode::VCMPLE, true, false}},
        // Unordered: true also for NaN, the negation of the ordered opposite.
        {"ult", {Opcode::VCMPLE, true, true}},   {"ule", {Opcode::VCMPLT, true, true}},
        {"ugt", {Opcode::VCMPLE, false, true}},  {"uge", {Opcode::VCMPLT, false, true}}};
    static const std::map<std::string, Compare> i = {
        {"eq", {Opcode::VCMPEQ, false, false}},  {"ne", {Opcode::VCMPEQ, false, true}},
        {"slt", {Opcode::VCMPLT, false, false}}, {"ult", {Opcode::VCMPLT, false, false}},
        {"sle", {Opcode::VCMPLE, false, false}}, {"ule", {Opcode::VCMPLE, false, false}},
        {"sgt", {Opcode::VCMPLT, true, false}},  {"ugt", {Opcode::VCMPLT, true, false}},
        {"sge", {Opcode::VCMPLE, true, false}},  {"uge", {Opcode::VCMPLE, true, false}}};
    const auto &m = cmpi ? i : f;
    auto it = m.find(p);
    if (it == m.end()) return false;
    *c = it->second;
    return true;
}

}  // namespace

bool Importer::compares_in_lx(const Op &op) {
    if (op.result_types.size() != 1) return false;
    if (op.result_types[0].kind == Type::Tensor) return true;
    // Scalars: a compare or select of an element in LX (a tensor.extract, a reduction's result).
    for (const std::string &o : op.operands)
        if (val(o, op).k == Val::T) return true;
    return false;
}

Tens Importer::operand_or_splat(const std::string &name, DType t, const Op &op) {
    const Val &v = val(name, op);
    if (v.k == Val::T) return tensor(name, op);
    if (v.k != Val::S || !v.s.known)
        throw_error("line ", op.line, ": ", op.name, ": %", name,
                    " is a value in a register; a compare or select in LX takes tensors, elements in LX and constants");
    Tens c;
    c.kind = Tens::Splat;
    c.t = t;
    const double x = v.s.is_float ? v.s.f : double(v.s.c);
    c.splat = t == DType::F16 ? half_to_float(float_to_half(float(x))) : x;
    return c;
}

void Importer::compare(const Op &op) {
    if (op.operands.size() != 2) throw_error("line ", op.line, ": ", op.name, ": expected two operands");
    // The operands' element type: a tensor's (or an element's) among them.
    DType t = DType::F32;
    bool typed = false;
    for (const std::string &o : op.operands)
        if (val(o, op).k == Val::T) t = tensor(o, op).t, typed = true;
    if (!typed || !(t == DType::F16 || t == DType::F32 || t == DType::I32))
        throw_error("line ", op.line, ": ", op.name, ": compares ", typed ? dtype_name(t) : "no tensor",
                    "; the vector unit compares f16, f32 and i32");
    Compare c;
    if (!compare_of(op.predicate, op.name == "arith.cmpi", &c))
        throw_error("line ", op.line, ": ", op.name, ": predicate '", op.predicate,
                    "' has no vector form (oeq, une, olt, ole, ogt, oge, ult, ule, ugt, uge; cmpi: eq, ne, slt, sle, "
                    "sgt, sge and their unsigned forms)");
    Tens x = operand_or_splat(op.operands[0], t, op), y = operand_or_splat(op.operands[1], t, op);
    if (c.swap) std::swap(x, y);
    if (x.kind == Tens::Splat && y.kind == Tens::Splat)
        throw_error("line ", op.line, ": ", op.name, ": compares two constants");
    binary(op, c.oc, x, y, t);
    vals_[op.results[0]].x.negated = c.negate;
}

void Importer::mask_select(const Op &op) {
    if (op.operands.size() != 3) throw_error("line ", op.line, ": arith.select: expected three operands");
    const Val &mv = val(op.operands[0], op);
    if (mv.k != Val::T)
        throw_error("line ", op.line, ": arith.select: the condition %", op.operands[0],
                    " is a register value but the operands are in LX; select by a compare of tensors or elements");
    const Tens mask = mv.x;
    const Type &rt = op.result_types[0];
    const DType t = dtype_of(rt, op);
    Tens a = operand_or_splat(op.operands[1], t, op), b = operand_or_splat(op.operands[2], t, op);
    if (mask.negated) std::swap(a, b);
    const std::vector<int64_t> shape = rt.kind == Type::Tensor ? rt.shape : std::vector<int64_t>{};
    for (const Tens *x : {&mask, static_cast<const Tens *>(&a), static_cast<const Tens *>(&b)})
        if (x->kind != Tens::Splat && x->shape != shape)
            throw_error("line ", op.line, ": arith.select: operand shapes differ from the result's");
    if (a.kind != Tens::InLx) a = materialize(a, op, nullptr);
    if (b.kind != Tens::InLx) b = materialize(b, op, nullptr);
    const Tens m = mask.kind == Tens::InLx ? mask : materialize(mask, op, nullptr);
    Geo g = geo(a, op, "the first operand");
    Geo gb = geo(b, op, "the second operand"), gm = geo(m, op, "the condition");
    if (gb.groups != g.groups || gb.sticks != g.sticks || gm.groups != g.groups || gm.sticks * dtype_bytes(t) != g.sticks * dtype_bytes(m.t))
        throw_error("line ", op.line, ": arith.select: operands have different LX layouts");
    Val v;
    v.k = Val::T;
    v.x = destination(op, op.results[0], t, shape, g.sticks, true, g);
    // VSELM reads the mask from its destination: the mask there first, in the values' type.
    if (m.t == t) vec_emit(op, Opcode::VCOPY, t, v.x, &m, nullptr, g);
    else vec_emit(op, Opcode::VCVT, m.t, v.x, &m, nullptr, gm, 0, 0, 0, 0, 0, 0, t);
    vec_emit(op, Opcode::VSELM, t, v.x, &a, &b, g);
    define(op, 0, v);
}

void Importer::generate(const Op &op) {
    auto refuse = [&](const auto &...why) {
        throw_error("line ", op.line, ": tensor.generate: ", why...,
                    "; a generated tensor has a device form when it is 2-D and its body selects between two constants "
                    "by a compare of its two indices (arith.cmpi, then arith.select, then tensor.yield: a causal mask)");
    };
    const Type &rt = op.result_types[0];
    if (!op.operands.empty()) refuse("its extents are values");
    if (rt.kind != Type::Tensor || rt.shape.size() != 2) refuse("the result is ", rt.text());
    const Region &r = op.regions.at(0);
    if (r.args.size() != 2 || r.ops.size() != 3 || r.ops[0].name != "arith.cmpi" || r.ops[1].name != "arith.select" ||
        r.ops[2].name != "tensor.yield")
        refuse("its body is not a compare, a select and a yield");
    const Op &cmp = r.ops[0], &sel = r.ops[1], &yield = r.ops[2];
    if (cmp.operands.size() != 2 || cmp.results.empty() || sel.operands.size() != 3 || sel.results.empty() ||
        sel.operands[0] != cmp.results[0] || yield.operands.size() != 1 || yield.operands[0] != sel.results[0])
        refuse("its select does not take the compare's result, or its yield the select's");
    const std::string &i = r.args[0], &j = r.args[1];
    const bool ij = cmp.operands[0] == i && cmp.operands[1] == j, ji = cmp.operands[0] == j && cmp.operands[1] == i;
    if (!ij && !ji) refuse("its compare is not of its two indices");
    // The condition as "j <= i + limit" (VSELIDX's lane test, the limit growing with the row), or its
    // negation (the select's operands swapped).
    std::string p = cmp.predicate;
    if (p.size() == 3 && p[0] == 'u') p[0] = 's';  // indices are non-negative: signed and unsigned agree
    if (ji) {  // the same condition with the operands the other way round
        static const std::map<std::string, std::string> flip = {{"sle", "sge"}, {"slt", "sgt"}, {"sge", "sle"}, {"sgt", "slt"}};
        auto f = flip.find(p);
        p = f == flip.end() ? p : f->second;
    }
    int64_t limit = 0;
    bool swap = false;
    if (p == "sge") limit = 0;                      // j <= i
    else if (p == "sgt") limit = -1;                // j <= i - 1
    else if (p == "slt") limit = 0, swap = true;    // not j <= i
    else if (p == "sle") limit = -1, swap = true;   // not j <= i - 1
    else refuse("its compare's predicate is '", cmp.predicate, "'");
    const DType t = dtype_of(rt, op);
    auto constant = [&](const std::string &name) {
        const Val &v = val(name, op);
        if (v.k != Val::S || !v.s.known) refuse("%", name, " is not a constant");
        Tens c;
        c.kind = Tens::Splat;
        c.t = t;
        c.shape = rt.shape;
        const double x = v.s.is_float ? v.s.f : double(v.s.c);
        c.splat = t == DType::F16 ? half_to_float(float_to_half(float(x))) : x;
        return materialize(c, op, nullptr);
    };
    Tens a = constant(sel.operands[1]), b = constant(sel.operands[2]);
    if (swap) std::swap(a, b);
    const Geo g = geo(a, op, "the generated tensor");
    Val v;
    v.k = Val::T;
    v.x = destination(op, op.results[0], t, rt.shape, g.sticks, true, g);
    Access acc;
    acc.reads = {range_of(a), range_of(b)};
    acc.writes.push_back(range_of(v.x));
    before(QVec, acc);
    const int tag = tag_for(op, QVec);
    Reg l = new_reg(op);
    b_.li(l, limit);
    b_.vselidx(t, tag, v.x.at, a.at, b.at, l, /*per_group=*/true, false, int32_t(g.sticks), int32_t(g.groups));
    after(tag, QVec, acc);
    for (const Tens *x : {&a, &b})
        if (x->alloc >= 0) lx_free(x->alloc);
    define(op, 0, v);
}

}  // namespace spyre::ktir::lowering
