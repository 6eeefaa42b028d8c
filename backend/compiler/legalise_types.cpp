#include "legalise_types.h"

#include <map>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "carried_reads.h"
#include "device/error.h"
#include "visit_loads.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

// (A namespace of its own: the library compiles in unity batches, where another file's helpers share
// the anonymous namespace.)
namespace legalise {
namespace {

// The integer types the vector unit has no arithmetic for: 8 and 16 bits, and uint32 (what Halide's
// abs of an int32 gives).
bool is_narrow_int(const Type &t) {
    return t.is_int_or_uint() && !t.is_bool() && (t.bits() == 8 || t.bits() == 16 || (t.is_uint() && t.bits() == 32));
}

std::string narrow_type_name(const Type &t) { return (t.is_int() ? "int" : "uint") + std::to_string(t.bits()); }

int64_t narrow_min(const Type &t) { return t.is_int() ? -(int64_t(1) << (t.bits() - 1)) : 0; }
int64_t narrow_max(const Type &t) {
    return t.is_int() ? (int64_t(1) << (t.bits() - 1)) - 1 : (int64_t(1) << t.bits()) - 1;
}

// A constant integer (or a broadcast of one), of any signedness.
std::optional<int64_t> const_value(const Expr &e) {
    if (const int64_t *i = as_const_int(e)) return *i;
    if (const uint64_t *u = as_const_uint(e)) return int64_t(*u);
    return std::nullopt;
}

// A constant as a narrow type holds it.
int64_t typed_value(int64_t c, const Type &t) {
    if (t.is_int()) return t.bits() == 8 ? int64_t(int8_t(c)) : int64_t(int16_t(c));
    return t.bits() == 8 ? int64_t(uint8_t(c)) : t.bits() == 16 ? int64_t(uint16_t(c)) : int64_t(uint32_t(c));
}

bool is_power_of_two(int64_t c) { return c > 0 && (c & (c - 1)) == 0; }

// floor(a / b) for b > 0.
int64_t floor_div64(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// A value of a narrow type as the pass computes it. Narrow: `e` is an expression of the value's own
// type that the device handles as it is (a load, a constant, data movement). Wide: `e` is an int32
// expression congruent to the value modulo 2^bits (equal to it when its bounds lie in the type's
// range). The bounds are those of e's value, when known.
struct Legal {
    Expr e;
    bool wide = false;
    bool bounded = false;
    int64_t lo = 0, hi = 0;
};

class LegaliseTypes : public IRMutator {
public:
    using IRMutator::visit;

    // Only the values stored are rewritten: indices, loop bounds and conditions are scalar
    // arithmetic of the control unit (int64 registers), and Halide's later simplifications and
    // bounds of them expect its own types.
    Expr mutate(const Expr &e) override {
        if (!in_value_) return e;
        if (e.defined() && is_narrow_int(e.type())) return narrowed(legal(e), e.type());
        return IRMutator::mutate(e);
    }
    using IRMutator::mutate;

    Expr visit(const Load *op) override { return op; }  // its index is an address

    Stmt visit(const For *op) override {
        loops_.push_back(op->name);
        Stmt r = IRMutator::visit(op);
        loops_.pop_back();
        return r;
    }

    // A Func of a 16-bit integer type kept inside the kernel (in LX, or a temporary in device memory)
    // is stored in int32, as Halide legalises a type its target lacks: the device has no 16-bit type
    // to hold it. Its values go in exactly (a value that may wrap past 16 bits is refused, as for
    // any use of its value), and each read of it is an int32 of the type's range.
    Stmt visit(const Allocate *op) override {
        if (!(op->type.is_int_or_uint() && op->type.bits() == 16)) return IRMutator::visit(op);
        Widened w{op->type, narrow_min(op->type), narrow_max(op->type)};
        // What is stored bounds what is read back (a blur's uint16 sums of three bytes stay below
        // 766), unless a store reads the buffer itself.
        if (std::optional<std::pair<int64_t, int64_t>> r = stored_range(op->name, op->type, op->body))
            w.lo = r->first, w.hi = r->second;
        widened_[op->name] = w;
        Stmt body = mutate(op->body);
        widened_.erase(op->name);
        return Allocate::make(op->name, Int(32), op->memory_type, op->extents, op->condition, body, op->new_expr,
                              op->free_function);
    }

    Stmt visit(const Store *op) override {
        store_ = op->name;
        if (is_narrow_int(op->value.type())) refuse_narrow_reduction(op);
        in_value_ = true;
        auto w = widened_.find(op->name);
        Expr value = w != widened_.end() ? exact(legal(op->value), op->value.type(), "its store into " + op->name).e
                                         : mutate(op->value);
        in_value_ = false;
        if (value.same_as(op->value)) return op;
        return Store::make(op->name, value, op->index, op->param, op->predicate, op->alignment);
    }

    // A conversion of a narrow value to a wider or float type reads the value itself; to int32 from
    // uint32, its bits.
    Expr visit(const Cast *op) override {
        const Type from = op->value.type();
        if (!is_narrow_int(from)) return IRMutator::visit(op);
        Legal v = legal(op->value);
        if (!v.wide) return Cast::make(op->type, v.e);
        const bool bits = op->type.is_int_or_uint() && !op->type.is_bool() && op->type.bits() <= from.bits();
        Expr x = bits ? v.e : exact(v, from, "a conversion to " + type_to_c_type(op->type.element_of(), false)).e;
        return x.type() == op->type ? x : Cast::make(op->type, x);
    }

    // Comparisons of narrow values compare the values themselves, in int32.
    template <typename T>
    Expr compare(const T *op) {
        if (!is_narrow_int(op->a.type())) return IRMutator::visit(op);
        const Type t = op->a.type();
        Expr a = exact(legal(op->a), t, "a comparison").e, b = exact(legal(op->b), t, "a comparison").e;
        return T::make(a, b);
    }
    Expr visit(const LT *op) override { return compare(op); }
    Expr visit(const LE *op) override { return compare(op); }
    Expr visit(const GT *op) override { return compare(op); }
    Expr visit(const GE *op) override { return compare(op); }
    Expr visit(const EQ *op) override { return compare(op); }
    Expr visit(const NE *op) override { return compare(op); }

private:
    std::string store_;
    bool in_value_ = false;
    struct Widened {
        Type t;  // the buffer's own type
        int64_t lo, hi;  // the values stored in it
    };
    std::map<std::string, Widened> widened_;  // 16-bit buffers stored in int32

    // The union of the values the stores into `name` write, or nullopt when one reads `name` or is
    // unbounded.
    std::optional<std::pair<int64_t, int64_t>> stored_range(const std::string &name, const Type &t, const Stmt &body) {
        std::vector<const Store *> stores;
        class Find : public IRVisitor {
        public:
            const std::string *name;
            std::vector<const Store *> *out;
            using IRVisitor::visit;
            void visit(const Store *op) override {
                if (op->name == *name) out->push_back(op);
                IRVisitor::visit(op);
            }
        } find;
        find.name = &name;
        find.out = &stores;
        body.accept(&find);
        std::optional<std::pair<int64_t, int64_t>> r;
        const std::string saved_store = store_;
        for (const Store *st : stores) {
            bool self = false;
            visit_loads(st->value, [&](const Load *l) { self |= l->name == name; });
            if (self) return std::nullopt;
            store_ = st->name;
            in_value_ = true;
            const Legal v = exact(legal(st->value), t, "its store into " + name);
            in_value_ = false;
            store_ = saved_store;
            if (!v.bounded) return std::nullopt;
            r = r ? std::pair<int64_t, int64_t>{std::min(r->first, v.lo), std::max(r->second, v.hi)}
                  : std::pair<int64_t, int64_t>{v.lo, v.hi};
        }
        return r;
    }
    std::vector<std::string> loops_;  // the loops around, outermost first

    // An update that reads the element it writes, over a loop its index does not move with (a
    // reduction, or a recurrence such as acc = acc * v + c): its accumulator stays a byte buffer, on
    // which the vector unit has no arithmetic; the widened form would only be refused later, as one
    // element at a time.
    void refuse_narrow_reduction(const Store *op) {
        if (loops_.empty() || expr_uses_var(op->index, loops_.back())) return;
        bool reads_own = false;
        visit_loads(op->value, [&](const Load *l) { reads_own |= l->name == op->name && equal(l->index, op->index); });
        if (!reads_own) return;
        refuse("its update accumulates " + narrow_type_name(op->value.type()) + " values over loop " +
               user_loop_name(loops_.back()) + " (a reduction): the vector unit reduces fp16, fp32 and int32 only, "
               "and the back end widens byte arithmetic but not a byte accumulator; accumulate in int32 (e.g. "
               "sum(cast<int32_t>(...)), or an int32 Func) and narrow the result");
    }

    [[noreturn]] void refuse(const std::string &what) const {
        throw_error("Func ", store_.empty() ? std::string("(kernel)") : store_, ": ", what);
    }

    static Type wide_type(const Type &t) { return Int(32, t.lanes()); }

    static Legal range_of(Expr e, const Type &t) {
        Legal l;
        l.e = std::move(e);
        l.bounded = true;
        l.lo = narrow_min(t), l.hi = narrow_max(t);
        return l;
    }

    static bool in_range(const Legal &l, const Type &t) {
        return l.bounded && l.lo >= narrow_min(t) && l.hi <= narrow_max(t);
    }

    // Bounds [lo, hi] if they fit int32 (the device's int32 wraps: past it a value is only congruent).
    static Legal wide_value(Expr e, bool bounded, int64_t lo, int64_t hi) {
        Legal l;
        l.e = std::move(e);
        l.wide = true;
        l.bounded = bounded && lo >= INT32_MIN && hi <= INT32_MAX;
        if (l.bounded) l.lo = lo, l.hi = hi;
        return l;
    }

    // A narrow value (a load, a constant, data movement) in int32: sign- or zero-extended by the
    // conversion, which keeps the value for 8 and 16 bits; a uint32 keeps its bits (its value when
    // below 2^31).
    Legal widen(const Legal &v, const Type &t) {
        Legal r = v;
        r.wide = true;
        if (auto c = const_value(v.e)) {
            // The constant as the type holds it, and its int32 bits.
            const int64_t k = typed_value(*c, t);
            return wide_value(make_const(wide_type(t), int64_t(int32_t(uint32_t(k)))), true, k, k);
        }
        return wide_value(Cast::make(wide_type(t), v.e), v.bounded, v.lo, v.hi);
    }

    // The value in int32, exactly: a bytes value that may have wrapped is narrowed and widened again;
    // a 16-bit one cannot be (no 16-bit type), nor a uint32 of 2^31 or more (no uint32 type).
    Legal exact(const Legal &v, const Type &t, const std::string &what) {
        Legal x = v.wide ? v : widen(v, t);
        if (in_range(x, t)) return x;
        if (t.bits() == 8) return wide_value(Cast::make(wide_type(t), Cast::make(t, x.e)), true, narrow_min(t), narrow_max(t));
        if (t.bits() == 32)
            refuse("a uint32 value (such as Halide's abs of an int32) that may be 2^31 or more is used by " + what +
                   ": the vector unit has no uint32 type and computes one in int32, which keeps its bits but not "
                   "its value past 2^31; cast it to int32 first (cast<int32_t>(abs(x)) is exact)");
        refuse("a " + narrow_type_name(t) + " value that may wrap past " + std::to_string(t.bits()) + " bits is used by " +
               what + ": the vector unit computes 16-bit integers in int32 and has no 16-bit type to wrap them in, so "
               "it takes them only where they provably stay in range (as sums and products of a few bytes do); "
               "compute in int32 (cast<int32_t>) instead, or narrow to 8 bits first");
    }

    // The value modulo 2^bits, in int32.
    Legal congruent(const Legal &v, const Type &t) { return v.wide ? v : widen(v, t); }

    // A narrow value back in its own type, where it leaves the pass's arithmetic (a store, a call).
    static Expr narrowed(const Legal &v, const Type &t) {
        if (!v.wide) return v.e;
        // The conversion keeps the low bits: Halide's wrap. (A 16-bit type has no device form; the
        // selector says so for what reaches it.)
        return Cast::make(t, v.e);
    }

    Legal arith(const Type &t, char op, const Expr &a0, const Expr &b0) {
        Legal a = congruent(legal(a0), t), b = congruent(legal(b0), t);
        const bool bounded = a.bounded && b.bounded;
        int64_t lo = 0, hi = 0;
        Expr r;
        if (op == '+') {
            r = Add::make(a.e, b.e);
            if (bounded) lo = a.lo + b.lo, hi = a.hi + b.hi;
        } else if (op == '-') {
            r = Sub::make(a.e, b.e);
            if (bounded) lo = a.lo - b.hi, hi = a.hi - b.lo;
        } else {
            r = Mul::make(a.e, b.e);
            if (bounded) {
                const int64_t p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
                lo = *std::min_element(p, p + 4), hi = *std::max_element(p, p + 4);
            }
        }
        return wide_value(r, bounded, lo, hi);
    }

    // floor(x / c) for c > 0 of an exact value x, through fp32 (legalise_types.h says why it is
    // exact): a bias m * c makes the numerator non-negative, the conversion to int32 truncates, and m
    // is taken off again. A power of two multiplies by its exact reciprocal.
    Legal floor_div(const Legal &x, int64_t c, const std::string &what) {
        if (c == 1) return x;
        if (!x.bounded) refuse(what + " of a value whose range is unknown");
        const int64_t m = x.lo < 0 ? (-x.lo + c - 1) / c : 0, bias = m * c;
        if (x.hi + bias + c >= (int64_t(1) << 22))
            refuse(what + " by " + std::to_string(c) + " of values up to " + std::to_string(x.hi) +
                   ", which fp32 does not hold exactly");
        const Type it = x.e.type(), ft = Float(32, it.lanes());
        Expr n = bias ? Add::make(x.e, make_const(it, bias)) : x.e;
        Expr f = Cast::make(ft, n);
        Expr q = is_power_of_two(c) ? Mul::make(f, make_const(ft, 1.0 / double(c))) : Div::make(f, make_const(ft, double(c)));
        Expr r = Cast::make(it, q);
        if (m) r = Sub::make(r, make_const(it, m));
        return wide_value(r, true, floor_div64(x.lo, c), floor_div64(x.hi, c));
    }

    // x mod c (c > 0), Halide's Euclidean remainder: x - c * floor(x / c).
    Legal floor_mod(const Legal &x, int64_t c, const std::string &what) {
        if (c == 1) return wide_value(make_zero(x.e.type()), true, 0, 0);
        if (x.bounded && x.lo >= 0 && x.hi < c) return x;
        Legal q = floor_div(x, c, what);
        return wide_value(Sub::make(x.e, Mul::make(q.e, make_const(x.e.type(), c))), true, 0, c - 1);
    }

    // The constant divisor (or shift, or mask) of an operation, or a refusal naming what to write.
    int64_t constant_operand(const Expr &e, const std::string &what, const std::string &instead) {
        if (auto c = const_value(e)) return *c;
        refuse(what + " of " + narrow_type_name(e.type()) + " values by a value that is not a constant has no Spyre "
               "vector form (" + instead + ")");
    }

    Legal divide(const Expr &a0, const Expr &b0, const Type &t, bool mod) {
        const std::string what = mod ? "a modulo (%)" : "an integer division";
        int64_t c = constant_operand(b0, what, "the back end divides bytes by constants; divide in float and cast");
        c = typed_value(c, t);
        if (c == 0) return range_of(make_zero(t), t);  // Halide: x / 0 and x % 0 are 0
        Legal x = exact(legal(a0), t, what);
        const int64_t ac = std::llabs(c);
        if (mod) return floor_mod(x, ac, what);  // Euclidean: the same for c and -c
        Legal q = floor_div(x, ac, what);
        if (c > 0) return q;
        // A negative divisor: Halide's Euclidean quotient is -floor(x / |c|).
        return wide_value(Sub::make(make_zero(q.e.type()), q.e), true, -q.hi, -q.lo);
    }

    Legal shift(const Call *op, const Type &t, bool left) {
        const std::string name = left ? "shift_left (<<)" : "shift_right (>>)";
        int64_t k = constant_operand(op->args[1], "a " + name, "shift by a constant");
        if (k < 0) left = !left, k = -k;  // Halide shifts the other way by a negative amount
        if (k >= t.bits())
            refuse("a " + name + " of " + narrow_type_name(t) + " values by " + std::to_string(k) +
                   ", their width or more, has no Spyre vector form");
        const int64_t p = int64_t(1) << k;
        if (left) {
            Legal a = congruent(legal(op->args[0]), t);
            return wide_value(Mul::make(a.e, make_const(a.e.type(), p)), a.bounded, a.lo * p, a.hi * p);
        }
        return floor_div(exact(legal(op->args[0]), t, "a shift_right (>>)"), p, "a shift_right (>>)");
    }

    // x & (2^k - 1): the low k bits, x mod 2^k. Other bitwise operations have no arithmetic form.
    Legal bitwise_and(const Call *op, const Type &t) {
        for (int i = 0; i < 2; i++) {
            auto c = const_value(op->args[1 - i]);
            if (!c) continue;
            const uint64_t mask = uint64_t(*c) & ((uint64_t(1) << t.bits()) - 1);
            if (mask == (uint64_t(1) << t.bits()) - 1) return legal(op->args[i]);
            if (!is_power_of_two(int64_t(mask) + 1)) continue;
            return floor_mod(exact(legal(op->args[i]), t, "a bitwise &"), int64_t(mask) + 1, "a bitwise &");
        }
        refuse_bitwise(op, t);
    }

    [[noreturn]] void refuse_bitwise(const Call *op, const Type &t) {
        const char *sym = op->is_intrinsic(Call::bitwise_and)   ? "&"
                          : op->is_intrinsic(Call::bitwise_or)  ? "|"
                          : op->is_intrinsic(Call::bitwise_xor) ? "^"
                                                                : "~";
        refuse(std::string("a bitwise ") + sym + " (" + op->name + ") of " + narrow_type_name(t) +
               " values has no Spyre vector form: the vector unit has no bitwise operations (of them it computes "
               "x & (2^k - 1), as x % 2^k, and shifts by constants, as products and floor quotients); write it "
               "with arithmetic");
    }

    // The bits of Halide's abs of an int32 (a uint32) as an int32: one VABS (the selector takes the
    // pair).
    static Expr abs_bits(const Expr &x) {
        return Cast::make(x.type(), Call::make(x.type().with_code(halide_type_uint), Call::abs, {x}, Call::PureIntrinsic));
    }

    Legal call(const Call *op, const Expr &e, const Type &t) {
        if (op->is_intrinsic(Call::likely) || op->is_intrinsic(Call::likely_if_innermost) ||
            op->is_intrinsic(Call::promise_clamped) || op->is_intrinsic(Call::unsafe_promise_clamped))
            return legal(op->args[0]);
        if (op->is_intrinsic(Call::abs) && op->args[0].type() == Int(32, t.lanes())) {
            // Halide's abs of an int32 is a uint32: its bits as an int32, VABS's (abs(INT32_MIN)
            // wraps to INT32_MIN, which is 2^31's).
            return wide_value(abs_bits(mutate(op->args[0])), false, 0, 0);
        }
        if (op->is_intrinsic(Call::abs) && is_narrow_int(op->args[0].type())) {
            const Type at = op->args[0].type();
            Legal x = exact(legal(op->args[0]), at, "an abs");
            const int64_t hi = std::max(std::llabs(x.lo), std::llabs(x.hi));
            const int64_t lo = x.lo >= 0 ? x.lo : x.hi <= 0 ? -x.hi : 0;
            // VABS of the value (abs_bits): exact, as the value is far inside int32.
            return wide_value(abs_bits(x.e), true, lo, hi);
        }
        if (op->is_intrinsic(Call::absd) && is_narrow_int(op->args[0].type()) && op->args[0].type().bits() < 32) {
            const Type at = op->args[0].type();
            Legal a = exact(legal(op->args[0]), at, "an absd"), b = exact(legal(op->args[1]), at, "an absd");
            Expr d = Sub::make(a.e, b.e);
            const int64_t hi = std::max(a.hi - b.lo, b.hi - a.lo);
            return wide_value(abs_bits(d), true, 0, hi);
        }
        if (op->is_intrinsic(Call::shift_left)) return shift(op, t, true);
        if (op->is_intrinsic(Call::shift_right)) return shift(op, t, false);
        if (op->is_intrinsic(Call::bitwise_and)) return bitwise_and(op, t);
        if (op->is_intrinsic(Call::bitwise_or) || op->is_intrinsic(Call::bitwise_xor) ||
            op->is_intrinsic(Call::bitwise_not))
            refuse_bitwise(op, t);
        // Anything else (an fp8 encode, a shifted read, an operation the selector refuses by name) is
        // left as it is, its arguments narrowed.
        return range_of(IRMutator::mutate(e), t);
    }

    // (a & b) + ((a ^ b) >> 1), the floor of the mean of a and b without overflow: how Halide lowers
    // halving_add, which it finds in i8((i16(a) + i16(b)) / 2) and the like. As floor((a + b) / 2)
    // of the values in int32 it needs no bitwise operation.
    std::optional<Legal> halving_add(const Add *op, const Type &t) {
        for (int i = 0; i < 2; i++) {
            const Call *a = (i ? op->b : op->a).as<Call>();
            Expr half = i ? op->a : op->b, xored;
            if (!a || !a->is_intrinsic(Call::bitwise_and)) continue;
            if (const Div *d = half.as<Div>(); d && const_value(d->b) == 2) xored = d->a;
            if (const Call *sh = half.as<Call>(); sh && sh->is_intrinsic(Call::shift_right) && const_value(sh->args[1]) == 1)
                xored = sh->args[0];
            const Call *x = xored.defined() ? xored.as<Call>() : nullptr;
            if (!x || !x->is_intrinsic(Call::bitwise_xor)) continue;
            const bool same = (equal(a->args[0], x->args[0]) && equal(a->args[1], x->args[1])) ||
                              (equal(a->args[0], x->args[1]) && equal(a->args[1], x->args[0]));
            if (!same) continue;
            Legal p = exact(legal(a->args[0]), t, "a halving add"), q = exact(legal(a->args[1]), t, "a halving add");
            return floor_div(wide_value(Add::make(p.e, q.e), true, p.lo + q.lo, p.hi + q.hi), 2, "a halving add");
        }
        return std::nullopt;
    }

    static bool has_boolean_ops(const Expr &e) {
        bool found = false;
        visit_with(e, [&](const IRNode *n) {
            found |= n->node_type == IRNodeType::And || n->node_type == IRNodeType::Or || n->node_type == IRNodeType::Not;
        });
        return found;
    }

    template <typename F>
    static void visit_with(const Expr &e, F f) {
        class V : public IRVisitor {
        public:
            F *f;
            using IRVisitor::visit;
            void visit(const And *op) override { (*f)(op), IRVisitor::visit(op); }
            void visit(const Or *op) override { (*f)(op), IRVisitor::visit(op); }
            void visit(const Not *op) override { (*f)(op), IRVisitor::visit(op); }
        } v;
        v.f = &f;
        e.accept(&v);
    }

    Legal select(const Select *op, const Type &t) {
        Expr c = mutate(op->condition);
        Legal a = legal(op->true_value), b = legal(op->false_value);
        const bool both_bounded = a.bounded && b.bounded;
        const int64_t lo = std::min(a.lo, b.lo), hi = std::max(a.hi, b.hi);
        // Data movement stays narrow: a select on the coordinates, or on one comparison of values
        // (its mask is converted to the values' type). A mask of && , || or ! combines in the
        // values' type, which the bytes have no min or max for: such a select is computed in int32.
        if (!a.wide && !b.wide && !(c.type().is_vector() && has_boolean_ops(c))) {
            Legal r = range_of(Select::make(c, a.e, b.e), t);
            if (both_bounded) r.lo = lo, r.hi = hi;
            return r;
        }
        Legal x = congruent(a, t), y = congruent(b, t);
        return wide_value(Select::make(c, x.e, y.e), x.bounded && y.bounded, std::min(x.lo, y.lo), std::max(x.hi, y.hi));
    }

    Legal cast(const Cast *op, const Type &t) {
        const Type from = op->value.type();
        if (is_narrow_int(from)) {
            Legal v = legal(op->value);
            if (t.bits() > from.bits()) {
                // A widening reads the value itself; its bounds say whether it is in the new type's range
                // (an int8 made uint16 wraps when negative).
                Legal x = exact(v, from, "a conversion to " + narrow_type_name(t));
                return wide_value(x.e, x.bounded, x.lo, x.hi);
            }
            // Same width or narrower: the low bits, which a congruent value has.
            if (!v.wide && t.bits() == 8) return range_of(Cast::make(t, v.e), t);
            Legal x = congruent(v, from);
            return wide_value(x.e, x.bounded, x.lo, x.hi);
        }
        Expr v = mutate(op->value);
        if (from.is_bool()) {
            // A condition as a number: 1 where it holds, 0 elsewhere.
            return wide_value(Select::make(v, make_one(wide_type(t)), make_zero(wide_type(t))), true, 0, 1);
        }
        if (t.bits() == 8) return range_of(Cast::make(t, v), t);  // VCVT: the low bits of the int32 conversion
        // 16 or 32 bits of an int32 value: its bits. Of a float in range, its int32 conversion (not
        // for a uint32: past 2^31 the two conversions differ).
        if (from == wide_type(t)) return wide_value(v, false, 0, 0);
        if (t.bits() == 32 || !(from.is_float() || from.is_int_or_uint())) return range_of(Cast::make(t, v), t);
        return wide_value(Cast::make(wide_type(t), v), false, 0, 0);
    }

    // The value of a narrow-typed expression.
    Legal legal(const Expr &e) {
        const Type t = e.type();
        if (auto c = const_value(e)) {
            Legal r = range_of(e, t);
            r.lo = r.hi = typed_value(*c, t);
            return r;
        }
        if (const Broadcast *b = e.as<Broadcast>()) {
            Legal v = legal(b->value);
            v.e = Broadcast::make(v.e, b->lanes);
            return v;
        }
        if (const Add *o = e.as<Add>()) {
            if (auto h = halving_add(o, t)) return *h;
            return arith(t, '+', o->a, o->b);
        }
        if (const Sub *o = e.as<Sub>()) return arith(t, '-', o->a, o->b);
        if (const Mul *o = e.as<Mul>()) return arith(t, '*', o->a, o->b);
        if (const Min *o = e.as<Min>()) {
            Legal a = exact(legal(o->a), t, "a min"), b = exact(legal(o->b), t, "a min");
            return wide_value(Min::make(a.e, b.e), true, std::min(a.lo, b.lo), std::min(a.hi, b.hi));
        }
        if (const Max *o = e.as<Max>()) {
            Legal a = exact(legal(o->a), t, "a max"), b = exact(legal(o->b), t, "a max");
            return wide_value(Max::make(a.e, b.e), true, std::max(a.lo, b.lo), std::max(a.hi, b.hi));
        }
        if (const Div *o = e.as<Div>()) return divide(o->a, o->b, t, false);
        if (const Mod *o = e.as<Mod>()) return divide(o->a, o->b, t, true);
        if (const Select *o = e.as<Select>()) return select(o, t);
        if (const Cast *o = e.as<Cast>()) return cast(o, t);
        if (const Call *o = e.as<Call>()) return call(o, e, t);
        if (const Load *l = e.as<Load>()) {
            // A read of a 16-bit buffer stored in int32: the value, in its type's range.
            auto w = widened_.find(l->name);
            if (w != widened_.end())
                return wide_value(Load::make(wide_type(t), l->name, l->index, l->image, l->param, l->predicate,
                                             l->alignment),
                                  true, w->second.lo, w->second.hi);
        }
        // Loads, variables, shuffles: data movement, their parts narrowed.
        return range_of(IRMutator::mutate(e), t);
    }
};

}  // namespace
}  // namespace legalise

Stmt legalise_types(const Stmt &s) { return legalise::LegaliseTypes().mutate(s); }

}  // namespace spyre
