#include "tighten_extents.h"

#include "affine.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Tighten : public IRMutator {
public:
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Expr extent = fixed(op->extent);
        // Inside the body the loop variable is in [0, extent - 1]; the body runs only when that
        // is not empty, so what holds for every value in it holds wherever the body runs.
        loops_.push_back({op->name, Interval(0, simplify(extent - 1))});
        Stmt body = mutate(op->body);
        loops_.pop_back();
        if (extent.same_as(op->extent) && body.same_as(op->body)) return op;
        return For::make(op->name, 0, extent, op->for_type, op->device_api, body);
    }

    Stmt visit(const Allocate *op) override {
        std::vector<Expr> extents;
        bool changed = false;
        for (const Expr &e : op->extents) {
            extents.push_back(fixed(e));
            changed |= !extents.back().same_as(e);
        }
        Stmt body = mutate(op->body);
        if (!changed && body.same_as(op->body)) return op;
        return Allocate::make(op->name, op->type, op->memory_type, extents, op->condition, body, op->new_expr,
                              op->free_function);
    }

    Stmt visit(const IfThenElse *op) override {
        if (!is_const(op->condition) && lower_bound(op->condition).defined() && can_prove(lower_bound(op->condition)))
            return mutate(op->then_case);
        return IRMutator::visit(op);
    }

private:
    // e, or the constant it always equals here: its constant upper bound when the loops around
    // prove it at least that.
    Expr fixed(const Expr &e) const {
        if (is_const(e) || loops_.empty()) return e;
        const Expr ub = find_constant_bound(e, Direction::Upper);
        if (!ub.defined() || !const_int(ub)) return e;
        const Expr lo = lower_bound(e);
        return lo.defined() && can_prove(lo >= ub) ? ub : e;
    }

    // A lower bound of e over the loops around (for a condition: true when it always holds). The
    // loops are taken one at a time from the innermost: a loop's bounds are expressions of the
    // loops outside it, which stay related to the rest of e until their own turn (jo - rj with
    // rj in [0, jo - 1] is at least 1, where bounding jo and rj together would say 1 - 7).
    Expr lower_bound(const Expr &e) const {
        Expr lo = e;
        for (auto it = loops_.rbegin(); it != loops_.rend(); ++it) {
            if (!expr_uses_var(lo, it->first)) continue;
            Scope<Interval> one;
            one.push(it->first, it->second);
            const Interval b = bounds_of_expr_in_scope(lo, one);
            if (!b.has_lower_bound()) return Expr();
            lo = simplify(b.min);
        }
        return lo;
    }

    std::vector<std::pair<std::string, Interval>> loops_;  // outermost first
};

}  // namespace

// No simplify of the whole Stmt here: normalize_stmt has taken the strict_float marks off, and
// simplifying again would refactor the float arithmetic.
Stmt tighten_extents(const Stmt &s) { return Tighten().mutate(s); }

}  // namespace spyre
