// Instruction selection: scalar code (index expressions into registers) and LX operand addresses.
#include "selector.h"
#include "map_cores.h"

namespace spyre {
namespace selection {

// Whether `e` is at least 0 for every value the loops around it take (a variable that is not a
// loop's may be anything).
bool Selector::never_negative(const Expr &e) const {
    Scope<Interval> scope;
    for (const auto &[v, n] : st_.extents) scope.push(v, Interval(Expr(0), Expr(int32_t(std::max<int64_t>(n - 1, 0)))));
    scope.push(kCoreIdVar, Interval(Expr(0), Expr(int32_t(std::max(plan_.num_cores - 1, 0)))));
    const Interval in = bounds_of_expr_in_scope(e, scope);
    if (!in.has_lower_bound()) return false;
    auto lo = const_int(simplify(in.min));
    return lo && *lo >= 0;
}

Reg Selector::euclidean(const Expr &a, const Expr &b, bool quotient) {
    auto c = const_int(b);
    auto bin = [&](Opcode op) {
        Reg ra = eval(a), rb = eval(b);
        b_.op3(op, ra, ra, rb);
        b_.release(rb);
        return ra;
    };
    if (c && *c > 0 && never_negative(a)) return bin(quotient ? Opcode::DIV : Opcode::REM);
    Reg ra = eval(a), rb = eval(b);
    Reg r = b_.alloc(), mag = b_.alloc();
    b_.op3(Opcode::REM, r, ra, rb);
    if (c) {
        b_.li(mag, *c < 0 ? -*c : *c);
    } else {
        b_.li(mag, 0);
        b_.op3(Opcode::SUB, mag, mag, rb);
        b_.op3(Opcode::MAX, mag, mag, rb);  // |b|
    }
    b_.op3(Opcode::ADD, r, r, mag);
    b_.op3(Opcode::REM, r, r, mag);  // the remainder in [0, |b|)
    b_.release(mag);
    if (!quotient) {
        b_.release(ra);
        b_.release(rb);
        return r;
    }
    b_.op3(Opcode::SUB, ra, ra, r);
    b_.op3(Opcode::DIV, ra, ra, rb);
    b_.release(r);
    b_.release(rb);
    return ra;
}

Reg Selector::eval(const Expr &e0) {
    Expr e = simplify(e0);
    if (auto c = const_int(e)) {
        Reg r = b_.alloc();
        b_.li(r, *c);
        return r;
    }
    if (const Variable *v = e.as<Variable>()) {
        auto it = st_.vars.find(v->name);
        if (it == st_.vars.end())
            throw_error("kernel ", plan_.kernel_name, ": the device code needs '", v->name,
                        "', which is not known at compile time (buffer metadata or a parameter); shapes and "
                        "parameters must be fixed when compiling for Spyre");
        Reg r = b_.alloc();
        b_.mov(r, it->second);
        return r;
    }
    auto bin = [&](Expr a, Expr bb, Opcode op) {
        Reg ra = eval(a);
        auto cb = const_int(bb);
        if (cb && *cb >= INT32_MIN && *cb <= INT32_MAX && (op == Opcode::ADD || op == Opcode::MUL)) {
            if (op == Opcode::ADD) b_.addi(ra, ra, int32_t(*cb));
            else b_.muli(ra, ra, int32_t(*cb));
            return ra;
        }
        Reg rb = eval(bb);
        b_.op3(op, ra, ra, rb);
        b_.release(rb);
        return ra;
    };
    if (const Add *op = e.as<Add>()) return bin(op->a, op->b, Opcode::ADD);
    if (const Sub *op = e.as<Sub>()) {
        if (auto cb = const_int(op->b)) return bin(op->a, Expr(int32_t(-*cb)), Opcode::ADD);
        return bin(op->a, op->b, Opcode::SUB);
    }
    if (const Mul *op = e.as<Mul>()) return bin(op->a, op->b, Opcode::MUL);
    // Halide divides and takes remainders Euclidean (the remainder is never negative); DIV and REM
    // truncate toward zero, as C does. The two agree when the numerator cannot be negative and the
    // divisor is a positive constant; otherwise the remainder is corrected into [0, |b|) and the
    // quotient taken from it ((a - r) / b divides exactly). An address such as
    // (x*32 - 192) / 160 for x = 0 is -2 in Halide and -1 truncated: a row off.
    if (const Div *op = e.as<Div>()) return euclidean(op->a, op->b, true);
    if (const Mod *op = e.as<Mod>()) return euclidean(op->a, op->b, false);
    if (const Min *op = e.as<Min>()) return bin(op->a, op->b, Opcode::MIN);
    if (const Max *op = e.as<Max>()) return bin(op->a, op->b, Opcode::MAX);
    if (const LT *op = e.as<LT>()) return bin(op->a, op->b, Opcode::CMPLT);
    if (const GT *op = e.as<GT>()) return bin(op->b, op->a, Opcode::CMPLT);
    if (const LE *op = e.as<LE>()) return bin(op->a, op->b + 1, Opcode::CMPLT);
    if (const GE *op = e.as<GE>()) return bin(op->b, op->a + 1, Opcode::CMPLT);
    if (const EQ *op = e.as<EQ>()) return bin(op->a, op->b, Opcode::CMPEQ);
    if (const NE *op = e.as<NE>()) {
        Reg r = bin(op->a, op->b, Opcode::CMPEQ);
        Reg z = b_.alloc();
        b_.li(z, 0);
        b_.op3(Opcode::CMPEQ, r, r, z);
        b_.release(z);
        return r;
    }
    if (const And *op = e.as<And>()) return bin(op->a, op->b, Opcode::MIN);
    if (const Or *op = e.as<Or>()) return bin(op->a, op->b, Opcode::MAX);
    if (const Not *op = e.as<Not>()) {
        Reg r = eval(op->a);
        Reg z = b_.alloc();
        b_.li(z, 0);
        b_.op3(Opcode::CMPEQ, r, r, z);
        b_.release(z);
        return r;
    }
    if (const Select *op = e.as<Select>()) {
        Reg c = eval(op->condition), t = eval(op->true_value), f = eval(op->false_value);
        b_.emit(Instr{Opcode::SEL, 0, 0, {c.id, c.id, t.id, f.id}});
        b_.release(t);
        b_.release(f);
        return c;
    }
    if (const Cast *op = e.as<Cast>(); op && op->type.is_int_or_uint()) return eval(op->value);
    // An int32 read from LX (a gather's id, staged by lower_gathers): LDLX, once whatever writes the
    // buffer is done.
    if (const Load *op = e.as<Load>()) {
        if (!plan_.has(op->name) || plan_.buffer(op->name).place != Place::LX || op->type != Halide::Int(32))
            throw_internal("kernel ", plan_.kernel_name, ": internal: index expression ", e,
                           " reads ", op->name, ", which is not an int32 LX buffer (lower_gathers stages the ids)");
        wait(hz_.touching(access({op->name}, {})));
        Operand o;
        o.type = DType::I32;
        o.base = lx_base(op->name);
        o.index = op->index;
        std::vector<Reg> regs;
        const Lx at = addr(o, regs);
        Reg r = b_.alloc();
        b_.ldlx(r, at);
        for (Reg x : regs) b_.release(x);
        return r;
    }
    // |x| (mirror_interior of a row index): max(x, -x).
    if (const Call *op = e.as<Call>(); op && op->is_intrinsic(Call::abs) && op->type.is_int_or_uint())
        return bin(op->args[0], make_zero(op->args[0].type()) - op->args[0], Opcode::MAX);
    throw_error("kernel ", plan_.kernel_name, ": index expression ", e, " has no scalar form on Spyre");
}

int32_t Selector::lx_base(const std::string &name) {
    const BufferInfo &bi = plan_.buffer(name);
    if (bi.place != Place::LX) throw_internal("kernel ", plan_.kernel_name, ": internal: ", name, " is not in LX");
    int32_t off = bi.lx_offset;
    auto it = st_.parity.find(name);
    if (it != st_.parity.end() && it->second) off += int32_t((bi.bytes() + sb_ - 1) / sb_ * sb_);
    return off;
}

Lx Selector::addr(const Operand &o, std::vector<Reg> &regs) {
    Expr bytes = simplify(o.index * dtype_bytes(o.type));
    if (auto c = const_int(bytes)) return Lx(int32_t(o.base + *c));
    Reg r = eval(bytes);
    regs.push_back(r);
    return Lx(r, o.base);
}

}  // namespace selection
}  // namespace spyre
