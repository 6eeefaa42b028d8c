#include "affine.h"

#include <numeric>

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

std::optional<int64_t> const_int(const Expr &e) {
    Expr s = simplify(e);
    if (const IntImm *i = s.as<IntImm>()) return i->value;
    if (const UIntImm *u = s.as<UIntImm>()) return int64_t(u->value);
    return std::nullopt;
}

Interval loop_range(const Expr &min, const Expr &extent, const Scope<Interval> &scope) {
    const Interval in = bounds_of_expr_in_scope(min, scope), ex = bounds_of_expr_in_scope(extent, scope);
    if (!in.is_bounded() || !ex.has_upper_bound()) return Interval::everything();
    return Interval(in.min, simplify(in.max + ex.max - 1));
}

namespace {
class Mentions : public IRVisitor {
public:
    explicit Mentions(const std::set<std::string> &v) : vars(v) {}
    const std::set<std::string> &vars;
    bool found = false;
    using IRVisitor::visit;
    void visit(const Variable *v) override {
        if (vars.count(v->name)) found = true;
    }
};
}  // namespace

bool mentions(const Expr &e, const std::set<std::string> &vars) {
    Mentions m(vars);
    e.accept(&m);
    return m.found;
}

namespace {

std::optional<Affine> scale(std::optional<Affine> a, int64_t k) {
    if (!a) return a;
    for (auto &kv : a->coeff) kv.second *= k;
    a->rest = simplify(a->rest * make_const(a->rest.type(), k));
    return a;
}

std::optional<Affine> combine(std::optional<Affine> a, std::optional<Affine> b, int sign) {
    if (!a || !b) return std::nullopt;
    for (auto &kv : b->coeff) a->coeff[kv.first] += sign * kv.second;
    for (auto it = a->coeff.begin(); it != a->coeff.end();) it = it->second == 0 ? a->coeff.erase(it) : ++it;
    a->rest = sign > 0 ? a->rest + b->rest : a->rest - b->rest;
    return a;
}

}  // namespace

bool reads_memory(const Expr &e) {
    class Find : public IRVisitor {
    public:
        bool found = false;
        using IRVisitor::visit;
        void visit(const Load *) override { found = true; }
    } f;
    e.accept(&f);
    return f.found;
}

std::optional<Affine> affine_in(const Expr &e, const std::set<std::string> &vars) {
    if (!mentions(e, vars)) return Affine{{}, e};
    if (const Variable *v = e.as<Variable>()) {
        Affine a;
        a.coeff[v->name] = 1;
        a.rest = make_zero(e.type());
        return a;
    }
    if (const Add *op = e.as<Add>()) return combine(affine_in(op->a, vars), affine_in(op->b, vars), +1);
    if (const Sub *op = e.as<Sub>()) return combine(affine_in(op->a, vars), affine_in(op->b, vars), -1);
    if (const Mul *op = e.as<Mul>()) {
        if (auto k = const_int(op->b)) return scale(affine_in(op->a, vars), *k);
        if (auto k = const_int(op->a)) return scale(affine_in(op->b, vars), *k);
        return std::nullopt;
    }
    if (const Cast *op = e.as<Cast>()) {
        if (op->type.is_int() && op->value.type().is_int()) return affine_in(op->value, vars);
        return std::nullopt;
    }
    return std::nullopt;
}

bool provably_multiple(const Expr &e0, int64_t k) {
    if (k <= 1) return true;
    Expr e = simplify(e0);
    if (auto c = const_int(e)) return *c % k == 0;
    if (const Add *op = e.as<Add>()) return provably_multiple(op->a, k) && provably_multiple(op->b, k);
    if (const Sub *op = e.as<Sub>()) return provably_multiple(op->a, k) && provably_multiple(op->b, k);
    if (const Mul *op = e.as<Mul>()) {
        auto scaled = [&](const Expr &c, const Expr &x) {
            auto v = const_int(c);
            if (!v) return false;
            int64_t g = std::gcd(std::abs(*v), k);
            return g == k || provably_multiple(x, k / g);
        };
        return scaled(op->b, op->a) || scaled(op->a, op->b);
    }
    if (const Cast *op = e.as<Cast>()) return op->type.is_int() && provably_multiple(op->value, k);
    if (const Min *op = e.as<Min>()) return provably_multiple(op->a, k) && provably_multiple(op->b, k);
    if (const Max *op = e.as<Max>()) return provably_multiple(op->a, k) && provably_multiple(op->b, k);
    return false;  // a variable or an opaque term: any integer
}

}  // namespace spyre
