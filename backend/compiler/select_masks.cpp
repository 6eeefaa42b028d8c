// Instruction selection: select() on a comparison of the stick index with a limit (a causal mask,
// a tail mask), or on a condition of the loops outside alone (a concatenation along the rows), as
// one VSELIDX; select() on the values as a mask (VCMPLT, VCMPLE, VCMPEQ) and one VSELM. Halide vectorizes `select(t <= q, a, b)`, t along the stick and q a
// row, into a comparison of a ramp with a broadcast; over an instruction's groups the condition is
// "element e of group g is at most L (+ g)", with L from the loops outside the instruction.
#include "selector.h"

namespace spyre {
namespace selection {

namespace {

// An int vector (or scalar) expression as base + stride * lane, base a scalar expression.
std::optional<std::pair<Expr, int64_t>> lane_form(const Expr &e) {
    if (!e.type().is_vector()) return std::make_pair(e, int64_t(0));
    if (const Ramp *r = e.as<Ramp>()) {
        auto s = as_const_int(r->stride);
        if (!s || r->base.type().is_vector()) return std::nullopt;
        return std::make_pair(r->base, *s);
    }
    if (const Broadcast *b = e.as<Broadcast>()) {
        if (b->value.type().is_vector()) return std::nullopt;
        return std::make_pair(b->value, int64_t(0));
    }
    auto both = [&](const Expr &x, const Expr &y, int sign) -> std::optional<std::pair<Expr, int64_t>> {
        auto a = lane_form(x), b = lane_form(y);
        if (!a || !b) return std::nullopt;
        return std::make_pair(sign > 0 ? a->first + b->first : a->first - b->first, a->second + sign * b->second);
    };
    if (const Add *o = e.as<Add>()) return both(o->a, o->b, 1);
    if (const Sub *o = e.as<Sub>()) return both(o->a, o->b, -1);
    if (const Mul *o = e.as<Mul>()) {
        for (auto [x, y] : {std::pair{o->a, o->b}, std::pair{o->b, o->a}}) {
            const Broadcast *bc = y.as<Broadcast>();
            const int64_t *k = bc ? as_const_int(bc->value) : nullptr;
            if (!k) continue;
            if (auto a = lane_form(x)) return std::make_pair(a->first * int32_t(*k), a->second * *k);
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<MaskForm> mask_form(const Expr &cond) {
    // E <= k, from the four orders of comparison.
    Expr x, y;
    int64_t k = 0;
    bool flip = false;
    if (const LE *o = cond.as<LE>()) x = o->a, y = o->b;
    else if (const LT *o = cond.as<LT>()) x = o->a, y = o->b, k = -1;
    else if (const GE *o = cond.as<GE>()) x = o->a, y = o->b, flip = true;
    else if (const GT *o = cond.as<GT>()) x = o->a, y = o->b, k = -1, flip = true;
    else return std::nullopt;
    if (!x.type().is_int()) return std::nullopt;  // signed: the difference of the sides does not wrap
    auto lf = lane_form(flip ? y - x : x - y);
    if (!lf) return std::nullopt;
    return MaskForm{simplify(lf->first), lf->second, k};
}

std::optional<Selector::LaneMask> Selector::lane_mask(const Expr &cond, const Domain &d) {
    // A condition of the loops outside alone, as Halide vectorizes a boundary condition's row
    // test (y < 0 || y >= rows), broadcast, or scalar with no comparison of the lanes' loops
    // below (select(y >= 1, a, b) of two vectors, the test hoisted into a let): every element
    // takes src0 when it holds, none when it does not, unless it varies between the rows merged
    // into this instruction (its groups or lanes).
    auto all_or_none = [&](const Expr &c) -> std::optional<LaneMask> {
        if (!d.group_var.empty() && expr_uses_var(c, d.group_var)) return std::nullopt;
        for (const auto &l : d.lane)
            if (expr_uses_var(c, l.first)) return std::nullopt;
        LaneMask m;
        m.limit = simplify(select(c, Expr(int32_t(1) << 30), Expr(int32_t(-1))));
        return m;
    };
    if (const Broadcast *b = cond.as<Broadcast>(); b && b->value.type().is_bool()) return all_or_none(b->value);
    auto f = mask_form(cond);
    if (!f && cond.type().is_bool() && cond.type().is_scalar()) return all_or_none(cond);
    if (!f) return std::nullopt;
    const int64_t k = f->k;
    auto a = affine_in(f->base, d.vars());
    if (!a) return std::nullopt;
    // The element index e within a group is lane + sum(v * coeff) over the loops merged into it;
    // its sign s in E must be the same for all of them.
    int64_t s = d.ramp_lanes > 0 ? f->stride : 0;
    for (auto &l : d.lane) {
        const int64_t c = a->of(l.first);
        if (!s && c) s = c / l.second;
        if (c != s * l.second) return std::nullopt;
    }
    // E = s e + cg g + rest <= k.
    const int64_t cg = d.group_var.empty() ? 0 : a->of(d.group_var);
    LaneMask m;
    if (s == 0 && cg == 0) {
        // No element index in E: the condition is the same for every element of the instruction
        // (a row index against a bound: a concatenation along the rows). Every element takes src0
        // when it holds (a limit past any element), none when it does not.
        m.limit = simplify(select(a->rest <= int32_t(k), Expr(int32_t(1) << 30), Expr(int32_t(-1))));
        return m;
    }
    if (s != 1 && s != -1) return std::nullopt;
    if (s == 1) {  // e <= k - rest - cg g
        m.limit = simplify(int32_t(k) - a->rest);
        m.per_group = cg == -1;
        if (cg != 0 && cg != -1) return std::nullopt;
    } else {  // e >= rest - k + cg g: the other side where e <= rest - k - 1 + cg g
        m.limit = simplify(a->rest - int32_t(k + 1));
        m.per_group = cg == 1;
        m.swap = true;
        if (cg != 0 && cg != 1) return std::nullopt;
    }
    if (d.groups == 1) m.per_group = false;  // one group: g is 0
    return m;
}

Operand Selector::index_select(const Select *op, const Domain &d, const Operand *into) {
    auto m = lane_mask(op->condition, d);
    if (!m)
        unsupported("a select() whose condition is not a comparison of the stick index with a row index or a "
                    "value of the loops outside (t <= q + c, t < c, t >= q, ...), nor a comparison of the loops "
                    "outside alone (y < c): only those, and the select of a boundary condition, have a vector form");
    const DType t = vector_type(op->true_value);
    Operand x = to_vec(gen(m->swap ? op->false_value : op->true_value, d, nullptr), d);
    Operand y = gen(m->swap ? op->true_value : op->false_value, d, nullptr);
    if (y.row) y = to_vec(y, d);  // VSELIDX takes a whole src1 or one element per group
    const bool scalar = y.kind == Operand::Scal;
    if (scalar) y = as_src1(y, d);
    Operand r = result_for(d, t, into, {&x, &y});
    std::set<std::string> reads, writes;
    for (const Operand *o : {&x, &y})
        if (!o->buf.empty()) reads.insert(o->buf);
    if (!r.buf.empty()) writes.insert(r.buf);
    before(QVec, reads, writes);
    const int64_t sticks = sticks_per_group(d, t);
    std::vector<Reg> regs;
    Lx ld = addr(r, regs), lx = addr(x, regs), ly = addr(y, regs);
    Reg lim = eval(m->limit);
    regs.push_back(lim);
    b_.vselidx(t, kTagVec, ld, lx, ly, lim, m->per_group, scalar, int32_t(sticks), int32_t(d.groups));
    for (Reg g : regs) b_.release(g);
    after(kTagVec, QVec, reads, writes);
    if (r.temp != x.temp) free_temp(x);
    if (r.temp != y.temp) free_temp(y);
    return r;
}

Operand Selector::mask_of(const Expr &cond, const Domain &d, DType t) {
    const int64_t sticks = sticks_per_group(d, t);
    // Two masks combined element by element into the first.
    auto combine = [&](Opcode op, const Expr &x, const Expr &y) {
        Operand a = mask_of(x, d, t), b = mask_of(y, d, t);
        vinstr(op, t, a, &a, &b, sticks, d.groups);
        free_temp(b);
        return a;
    };
    if (const And *o = cond.as<And>()) return combine(Opcode::VMIN, o->a, o->b);
    if (const Or *o = cond.as<Or>()) return combine(Opcode::VMAX, o->a, o->b);
    if (const Not *o = cond.as<Not>()) {
        Operand a = mask_of(o->a, d, t), zero = as_src1(constant(0.0, t, d), d);
        vinstr(Opcode::VCMPEQ, t, a, &a, &zero, sticks, d.groups, kSrc1Scalar);
        free_temp(zero);
        return a;
    }
    if (lane_mask(cond, d)) {
        // A comparison of the stick index (or of the loops outside): 1 and 0 by one VSELIDX.
        const Type ht = Type(t == DType::F16 ? halide_type_float : t == DType::F32 ? halide_type_float : halide_type_int,
                             t == DType::F16 ? 16 : 32, cond.type().lanes());
        Expr one = make_one(ht), zero = make_zero(ht);
        Operand m = index_select(Select::make(cond, one, zero).as<Select>(), d, nullptr);
        if (!m.temp) {  // a result outside the temporaries (it cannot be: both sides are constants)
            Operand c = new_temp(t, sticks * d.groups * sb_);
            vinstr(Opcode::VCOPY, t, c, &m, nullptr, sticks, d.groups);
            return c;
        }
        return m;
    }
    // A comparison of values: a < b, a <= b and a == b directly, > and >= with the sides swapped,
    // != as the negation of ==.
    Expr a, b;
    Opcode op = Opcode::VCMPLT;
    bool negate = false;
    if (const LT *o = cond.as<LT>()) a = o->a, b = o->b;
    else if (const LE *o = cond.as<LE>()) a = o->a, b = o->b, op = Opcode::VCMPLE;
    else if (const GT *o = cond.as<GT>()) a = o->b, b = o->a;
    else if (const GE *o = cond.as<GE>()) a = o->b, b = o->a, op = Opcode::VCMPLE;
    else if (const EQ *o = cond.as<EQ>()) a = o->a, b = o->b, op = Opcode::VCMPEQ;
    else if (const NE *o = cond.as<NE>()) a = o->a, b = o->b, op = Opcode::VCMPEQ, negate = true;
    else
        unsupported("a select() whose condition " + describe(cond) +
                    " is not a comparison of values (<, <=, ==, !=, >, >=), of the stick index against a row "
                    "index, or &&, || and ! of those: only those have a vector form");
    const DType ct = vector_type(a);
    const int64_t csticks = sticks_per_group(d, ct);
    Operand x = to_vec(gen(a, d, nullptr), d);
    Operand y = gen(b, d, nullptr);
    const uint8_t mode = y.kind == Operand::Scal ? kSrc1Scalar : y.row ? kSrc1Row : 0;
    if (y.kind == Operand::Scal) y = as_src1(y, d);
    Operand m = new_temp(ct, csticks * d.groups * sb_);
    vinstr(op, ct, m, &x, &y, csticks, d.groups, mode);
    free_temp(x);
    free_temp(y);
    if (negate) {
        Operand zero = as_src1(constant(0.0, ct, d), d);
        vinstr(Opcode::VCMPEQ, ct, m, &m, &zero, csticks, d.groups, kSrc1Scalar);
        free_temp(zero);
    }
    // Masks are 0 and 1: exact in every type.
    return ct == t ? m : convert(m, t, d, nullptr);
}

Operand Selector::data_select(const Select *op, const Domain &d, const Operand *into) {
    const DType t = vector_type(op->true_value);
    const int64_t sticks = sticks_per_group(d, t);
    Operand m = mask_of(op->condition, d, t);
    Operand x = to_vec(gen(op->true_value, d, nullptr), d);
    Operand y = gen(op->false_value, d, nullptr);
    if (y.row) y = to_vec(y, d);  // VSELM takes a whole src1 or one element per group
    const uint8_t mode = y.kind == Operand::Scal ? kSrc1Scalar : 0;
    if (mode) y = as_src1(y, d);
    // VSELM reads its mask where it writes: the mask's temporary, then the destination.
    vinstr(Opcode::VSELM, t, m, &x, &y, sticks, d.groups, mode);
    free_temp(x);
    free_temp(y);
    if (!into) return m;
    vinstr(Opcode::VCOPY, t, *into, &m, nullptr, sticks, d.groups);
    free_temp(m);
    return *into;
}

}  // namespace selection
}  // namespace spyre
