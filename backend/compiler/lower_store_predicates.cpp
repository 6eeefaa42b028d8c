#include "lower_store_predicates.h"

#include <set>

#include "affine.h"
#include "device/isa.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// The first lane's condition of a predicate `ramp(b, 1, n) <= x(k)` (or `<`): every lane after
// the first holds only when the first does.
Expr first_lane_condition(const Expr &pred, int64_t *bound) {
    Expr a, b;
    bool strict = false;
    if (const LE *le = pred.as<LE>()) {
        a = le->a, b = le->b;
    } else if (const LT *lt = pred.as<LT>()) {
        a = lt->a, b = lt->b, strict = true;
    } else {
        return Expr();
    }
    const Ramp *r = a.as<Ramp>();
    const Broadcast *k = b.as<Broadcast>();
    if (!r || !k) return Expr();
    auto stride = const_int(r->stride), last = const_int(k->value);
    if (!stride || *stride != 1 || !last) return Expr();
    *bound = strict ? *last - 1 : *last;
    return strict ? r->base < k->value : r->base <= k->value;
}

class LowerStorePredicates : public IRMutator {
public:
    explicit LowerStorePredicates(const KernelPlan &p) : plan_(p) {}
    using IRMutator::visit;

    Stmt visit(const Store *op) override {
        if (is_const_one(op->predicate) || !plan_.has(op->name)) return IRMutator::visit(op);
        const BufferInfo &b = plan_.buffer(op->name);
        const int lanes = op->value.type().lanes();
        int64_t last = 0;
        const Expr first = first_lane_condition(op->predicate, &last);
        // One stick at most along the stick dim (a dense ramp). In device memory (its rows padded to
        // whole sticks) against the Func's own end, the lanes past it are padding, never another
        // element: the store runs unpredicated. Elsewhere it keeps the stick's other lanes
        // (selected_store).
        const Ramp *dense = op->index.as<Ramp>();
        const bool one_stick = lanes <= plan_.lanes(b.type) && first.defined() && dense && is_const_one(dense->stride);
        if (!one_stick) return IRMutator::visit(op);
        if (!b.in_device_memory() || b.shape.empty() || last + 1 != b.shape[0]) {
            // In device memory under a split over the cores, another core may write the same stick
            // (shares of the stick dimension that are not whole sticks): its copy back would race.
            if (!provably_multiple(dense->base, plan_.lanes(b.type)) || (b.in_device_memory() && parallel_ > 0))
                return IRMutator::visit(op);
            return selected_store(op, first, last);
        }
        Expr value = strip_.mutate(op->value);
        // Lanes past the end read their shifted source clamped to the last lane in range: a shift
        // needs no halo stick for lanes whose results are padding (past the input's last row, on
        // the last one: spyre-fuzz-diff --seed 81 --case 173).
        ClampShifts clamp;
        clamp.lanes = lanes;
        clamp.valid = simplify(Expr(int(last)) - ramp_base(op->predicate));
        value = clamp.mutate(value);
        Stmt store = Store::make(op->name, value, op->index, op->param, const_true(lanes), op->alignment);
        // A first lane the loops keep in range (the last tile of columns padded to whole sticks)
        // needs no condition.
        const Interval at = bounds_of_expr_in_scope(first.as<LE>() ? first.as<LE>()->a : first.as<LT>()->a, loops_);
        const std::optional<int64_t> hi = at.has_upper_bound() ? const_int(simplify(at.max)) : std::nullopt;
        return hi && *hi <= last ? store : IfThenElse::make(first, store);
    }

    // A loop around nothing but a condition of the loops outside it runs under that condition: the
    // staging of the loop's nest then sees the iterations the condition leaves (infer_dma).
    Stmt visit(const For *op) override {
        ScopedBinding<Interval> bind(loops_, op->name, loop_range(op->min, op->extent, loops_));
        const int parallel = op->for_type == ForType::Parallel;
        parallel_ += parallel;
        Stmt body = mutate(op->body);
        parallel_ -= parallel;
        const IfThenElse *c = body.as<IfThenElse>();
        if (c && !c->else_case.defined() && hoisted_.count(c) && !expr_uses_var(c->condition, op->name)) {
            Stmt loop = For::make(op->name, op->min, op->extent, op->for_type, op->device_api, c->then_case);
            Stmt s = IfThenElse::make(c->condition, loop);
            hoisted_.insert(s.as<IfThenElse>());
            return s;
        }
        return body.same_as(op->body) ? Stmt(op)
                                      : For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
    }
    Stmt visit(const LetStmt *op) override {
        ScopedBinding<Interval> bind(loops_, op->name, bounds_of_expr_in_scope(op->value, loops_));
        return IRMutator::visit(op);
    }

private:
    // Any other predicated store of one stick at most, on a stick boundary (to LX, or where the
    // predicate is not the buffer's own end): it runs when its first lane is in range, and its
    // other lanes keep what the stick held (a select of the predicate, the vector unit's
    // lane-index select), so it writes what Halide's predicated store writes whatever the stick's
    // other elements are. Its loads read whole sticks (their masked lanes feed only lanes the
    // select drops).
    Stmt selected_store(const Store *op, const Expr &first, int64_t last) {
        const int lanes = op->value.type().lanes();
        ClampShifts clamp;
        clamp.lanes = lanes;
        clamp.valid = simplify(Expr(int(last)) - ramp_base(op->predicate));
        const Expr value = clamp.mutate(strip_.mutate(op->value));
        const Expr old = Load::make(op->value.type(), op->name, op->index, Buffer<>(), op->param, const_true(lanes),
                                    op->alignment);
        Stmt store = Store::make(op->name, select(op->predicate, value, old), op->index, op->param, const_true(lanes),
                                 op->alignment);
        const Interval at = bounds_of_expr_in_scope(first.as<LE>() ? first.as<LE>()->a : first.as<LT>()->a, loops_);
        const std::optional<int64_t> hi = at.has_upper_bound() ? const_int(simplify(at.max)) : std::nullopt;
        if (hi && *hi <= last) return store;
        Stmt s = IfThenElse::make(first, store);
        hoisted_.insert(s.as<IfThenElse>());
        return s;
    }

    static Expr ramp_base(const Expr &pred) {
        const Expr a = pred.as<LE>() ? pred.as<LE>()->a : pred.as<LT>()->a;
        return a.as<Ramp>()->base;
    }
    // Plain shifts of the store's width: lane j reads home position j + shift; the lanes in range
    // are j <= valid (strictly: valid - 1 for `<`, which first_lane_condition's bound already is).
    class ClampShifts : public IRMutator {
    public:
        int lanes = 0;
        Expr valid;
        using IRMutator::visit;
        Expr visit(const Call *op) override {
            std::optional<ShiftCall> sc = as_shift(Expr(op));
            // Only a window fixed along the row (a tail tile at a known column): the edge of a
            // shift must not move with the loops within a row (infer_dma stages by it).
            const std::optional<int64_t> v = const_int(valid);
            if (!sc || sc->edge != 0 || sc->home.type().lanes() != lanes || !v || *v >= lanes - 1)
                return IRMutator::visit(op);
            sc->edge = kEdgeClamp;
            sc->lo = Expr(-(1 << 30));
            sc->hi = simplify(valid + sc->shift);
            return make_shift(*sc);
        }
    };
    // The loads of the store's value carry the same predicate: under the first lane's condition
    // they read whole sticks (their masked lanes feed only the padding).
    class StripLoadPredicates : public IRMutator {
    public:
        using IRMutator::visit;
        Expr visit(const Load *op) override {
            if (is_const_one(op->predicate)) return IRMutator::visit(op);
            return Load::make(op->type, op->name, mutate(op->index), op->image, op->param,
                              const_true(op->type.lanes()), op->alignment);
        }
    };
    const KernelPlan &plan_;
    StripLoadPredicates strip_;
    Scope<Interval> loops_;  // the loops' (and lets') ranges around
    std::set<const IfThenElse *> hoisted_;
    int parallel_ = 0;  // ring-split (parallel) loops around  // this pass's first-lane conditions (only these move out of loops)
};

}  // namespace

Stmt lower_store_predicates(const Stmt &s, const KernelPlan &plan) { return LowerStorePredicates(plan).mutate(s); }

}  // namespace spyre
