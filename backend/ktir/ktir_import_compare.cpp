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

}  // namespace spyre::ktir::lowering
