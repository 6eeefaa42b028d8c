#include "lower_shifted_loads.h"

#include <algorithm>

#include "affine.h"
#include "device/isa.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// A window bound that never binds (one-sided boundary conditions), still an int32 immediate.
constexpr int kUnbounded = 1 << 30;

class LowerShiftedLoads : public IRMutator {
public:
    explicit LowerShiftedLoads(const KernelPlan &p) : plan_(p) {}
    using IRMutator::visit;

    struct Window {
        Expr lo, hi;  // inclusive coordinate bounds; undefined: unbounded
    };

    Expr visit(const Load *op) override {
        if (auto s = shifted(op)) return make_shift(*s);
        return IRMutator::visit(op);
    }

    // select(cond on the lanes' coordinate, 0, read) or select(cond, read, 0): the read with a
    // zero edge outside the lanes where it is taken.
    // One element spread over a vector (what a clamp leaves of a read past a row's end, a row's
    // last element): a shifted read whose window is that element. Only for an address that moves
    // with the rows by whole sticks and sits at a constant place within its stick, so that per-row
    // values (a row's mean) and one value for all rows stay scalars.
    Expr visit(const Broadcast *op) override {
        const Load *l = op->value.as<Load>();
        if (l && !l->index.type().is_vector() && op->lanes > 1 && !const_int(l->index)) {
            const int64_t lanes = plan_.machine.stick_bytes / l->type.bytes();
            int64_t rem = 0;
            if (lanes > 1 && reduce_expr_modulo(l->index, lanes, &rem) && rem != 0) {
                ShiftCall s;
                Type vt = l->type.with_lanes(op->lanes);
                s.home = Load::make(vt, l->name, Ramp::make(simplify(l->index - int(rem)), 1, op->lanes), l->image,
                                    l->param, const_true(op->lanes), ModulusRemainder());
                s.edge = kEdgeClamp;
                s.lo = s.hi = Expr(int(rem));
                return make_shift(s);
            }
        }
        return IRMutator::visit(op);
    }

    // A shuffle of one row's lanes that clamps at its ends (Halide's repeat_edge on a row whose
    // ends it knows).
    Expr visit(const Shuffle *op) override {
        if (auto s = shuffled(op)) return make_shift(*s);
        return IRMutator::visit(op);
    }

    Expr visit(const Select *op) override {
        // select(false, a, b) is b: what a boundary condition leaves where it cannot bind.
        if (is_const_zero(op->condition)) return mutate(op->false_value);
        if (is_const_one(op->condition)) return mutate(op->true_value);
        if (op->type.is_vector()) {
            bool zero_t = is_zero_vector(op->true_value), zero_f = is_zero_vector(op->false_value);
            if (zero_t != zero_f) {
                // A boundary condition: the read where the condition lets it through, else 0.
                const Expr &value = zero_t ? op->false_value : op->true_value;
                if (const Broadcast *bc = value.as<Broadcast>()) {
                    if (auto e = windowed_broadcast(bc, op->condition, !zero_t)) return *e;
                }
                Window w;
                Expr coord;
                if (window_of(op->condition, !zero_t, w, coord))
                    if (auto e = zeroed(value, w, coord)) return *e;
            } else if (!zero_t) {
                // Two reads, each on its side of a one-sided window (RoPE's rotate-half: -in(x + d/2)
                // on the first half of each head, in(x - d/2) on the second): the sum of the two,
                // each zero outside its side. A zero that was -0 in the read may come out +0.
                Window in_w, out_w;
                Expr coord;
                if (window_of(op->condition, true, in_w, coord) && in_w.lo.defined() != in_w.hi.defined()) {
                    if (in_w.hi.defined()) out_w.lo = simplify(in_w.hi + 1);
                    else out_w.hi = simplify(in_w.lo - 1);
                    auto a = zeroed(op->true_value, in_w, coord), b2 = zeroed(op->false_value, out_w, coord);
                    if (a && b2) return *a + *b2;
                }
            }
        }
        return IRMutator::visit(op);
    }

    // a <= b for every value of the enclosing loops (a clamp of the row that never binds where a
    // select takes the read: RoPE's partner reads, clamped to the tensor for Halide's bounds).
    bool never_above(const Expr &a, const Expr &b) {
        if (can_prove(a <= b)) return true;
        Interval i = bounds_of_expr_in_scope(simplify(a - b), loops_);
        auto hi = i.has_upper_bound() ? const_int(i.max) : std::nullopt;
        return hi && *hi <= 0;
    }

    Stmt visit(const For *op) override {
        loops_.push(op->name, Interval(op->min, simplify(op->min + op->extent - 1)));
        Stmt r = IRMutator::visit(op);
        loops_.pop(op->name);
        return r;
    }

    // A read (or its negation) with a zero edge outside the lanes whose coordinate coord + j is in
    // the window.
    std::optional<Expr> zeroed(const Expr &value, const Window &w, const Expr &coord) {
        if (const Sub *neg = value.as<Sub>()) {
            if (!is_zero_vector(neg->a)) return std::nullopt;
            auto r = zeroed(neg->b, w, coord);
            if (!r) return std::nullopt;
            return Expr(neg->a - *r);
        }
        std::optional<ShiftCall> s;
        clamp_lo_ = clamp_hi_ = true;
        if (const Load *ld = value.as<Load>()) s = shifted(ld, true);
        else if (const Shuffle *sh = value.as<Shuffle>()) s = shuffled(sh);
        if (!s) return std::nullopt;
        // Lane j is taken when coord + j is in the window; it reads home position k = j + shift,
        // so the window in home positions is [lo - coord + shift, hi - coord + shift].
        ShiftCall z = *s;
        z.edge = kEdgeZero;
        z.lo = simplify((w.lo.defined() ? w.lo : Expr(-kUnbounded)) - coord + s->shift);
        z.hi = simplify((w.hi.defined() ? w.hi : Expr(kUnbounded)) - coord + s->shift);
        // The clamp of a repeat_edge read (if any) must not bind on the lanes taken.
        const int w_lanes = value.type().lanes();
        bool lo_ok = !s->edge || !clamp_lo_ || never_above(s->lo, z.lo) || never_above(s->lo, max(z.lo, s->shift));
        bool hi_ok = !s->edge || !clamp_hi_ || never_above(z.hi, s->hi) ||
                     never_above(min(z.hi, s->shift + w_lanes - 1), s->hi);
        if (!lo_ok || !hi_ok) return std::nullopt;
        return make_shift(rehome(z));
    }

    // A zero window entirely in the next (or previous) stick of the home: that stick as the home,
    // so that the home is a stick the read needs (and the staging copy the other reads' copy).
    static ShiftCall rehome(ShiftCall s) {
        const Load *home = s.home.as<Load>();
        const Ramp *r = home ? home->index.as<Ramp>() : nullptr;
        auto lo = const_int(s.lo), hi = const_int(s.hi);
        if (!r) return s;
        const int lanes = r->lanes;
        int moved = 0;
        if (lo && *lo >= lanes) moved = int(*lo / lanes) * lanes;
        else if (hi && *hi < 0) moved = -int((-*hi + lanes - 1) / lanes) * lanes;
        if (!moved) return s;
        s.home = Load::make(home->type, home->name, Ramp::make(simplify(r->base + moved), 1, lanes), home->image,
                            home->param, home->predicate, ModulusRemainder());
        s.shift -= moved;
        s.lo = simplify(s.lo - moved);
        s.hi = simplify(s.hi - moved);
        return s;
    }

private:
    static bool is_zero_vector(const Expr &e) {
        const Broadcast *b = e.as<Broadcast>();
        return b && is_const_zero(b->value);
    }

    // The lanes where `cond` is `want`, as a window of coordinate = ramp base + lane.
    bool window_of(const Expr &cond, bool want, Window &w, Expr &coord) {
        // want: cond true inside the window (an And of bounds); !want: true outside (an Or).
        if (want) {
            if (const And *a = cond.as<And>()) return window_of(a->a, true, w, coord) && window_of(a->b, true, w, coord);
        } else {
            if (const Or *o = cond.as<Or>()) return window_of(o->a, false, w, coord) && window_of(o->b, false, w, coord);
        }
        // One bound: ramp < K, ramp <= K, K < ramp, K <= ramp (Halide's simplifier keeps these forms).
        Expr a, b;
        bool strict;
        if (const LT *lt = cond.as<LT>()) a = lt->a, b = lt->b, strict = true;
        else if (const LE *le = cond.as<LE>()) a = le->a, b = le->b, strict = false;
        else return false;
        const Ramp *ra = a.as<Ramp>(), *rb = b.as<Ramp>();
        const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
        Expr base, k;
        bool ramp_left;
        if (ra && bb && is_const_one(ra->stride)) base = ra->base, k = bb->value, ramp_left = true;
        else if (rb && ba && is_const_one(rb->stride)) base = rb->base, k = ba->value, ramp_left = false;
        else return false;
        if (coord.defined() && !equal(coord, base) && !can_prove(coord == base)) return false;
        coord = base;
        // The lane is inside when the comparison is `want`.
        // ramp < k (true) -> v <= k-1 ; ramp <= k -> v <= k ; k < ramp -> v >= k+1 ; k <= ramp -> v >= k.
        bool upper = ramp_left == want;  // the comparison bounds v from above when it holds inside
        Expr bound;
        if (ramp_left) bound = want ? (strict ? k - 1 : k) : (strict ? k : k + 1);
        else bound = want ? (strict ? k + 1 : k) : (strict ? k : k - 1);
        bound = simplify(bound);
        if (upper) {
            if (w.hi.defined()) return false;
            w.hi = bound;
        } else {
            if (w.lo.defined()) return false;
            w.lo = bound;
        }
        return true;
    }

    // select(lanes in a window, one element spread, 0) where the lanes' coordinates are known (the
    // vector at a row's end): all lanes, none, or one lane that reads the element (a zero edge).
    std::optional<Expr> windowed_broadcast(const Broadcast *bc, const Expr &cond, bool want) {
        const Load *l = bc->value.as<Load>();
        Window w;
        Expr coord;
        if (!l || l->index.type().is_vector() || !window_of(cond, want, w, coord)) return std::nullopt;
        auto c = const_int(coord);
        auto wl = w.lo.defined() ? const_int(w.lo) : std::optional<int64_t>(INT32_MIN);
        auto wh = w.hi.defined() ? const_int(w.hi) : std::optional<int64_t>(INT32_MAX);
        if (!c || !wl || !wh) return std::nullopt;
        const int lanes_w = bc->lanes;
        const int64_t j0 = std::max<int64_t>(0, *wl - *c), j1 = std::min<int64_t>(lanes_w - 1, *wh - *c);
        if (j1 < j0) return Expr(make_zero(bc->type));
        if (j0 == 0 && j1 == lanes_w - 1) return mutate(Expr(bc));
        const int64_t lanes = plan_.machine.stick_bytes / l->type.bytes();
        int64_t rem = 0;
        if (j0 != j1 || !reduce_expr_modulo(l->index, lanes, &rem)) return std::nullopt;
        ShiftCall s;
        s.home = Load::make(l->type.with_lanes(lanes_w), l->name, Ramp::make(simplify(l->index - int(rem)), 1, lanes_w),
                            l->image, l->param, const_true(lanes_w), ModulusRemainder());
        s.shift = int(rem - j0);
        s.edge = kEdgeZero;
        s.lo = s.hi = Expr(int(rem));
        return make_shift(s);
    }

    // Lane j of a shuffle of loads of one row reads element b + d[j] of it (b the first load's
    // base): a shifted read when d[j] = clamp(j + c, lo, hi), with the home the stick holding b.
    std::optional<ShiftCall> shuffled(const Shuffle *op) {
        if (!op->type.is_vector() || op->vectors.empty()) return std::nullopt;
        const int64_t lanes = plan_.machine.stick_bytes / op->type.bytes();
        std::vector<int64_t> flat;  // offset of each concatenated lane from the first load's base
        Expr base0;
        const Load *first = nullptr;
        for (const Expr &v : op->vectors) {
            const Load *l = v.as<Load>();
            if (!l) return std::nullopt;
            Expr b = l->index;
            int n = 1;
            if (const Ramp *r = l->index.as<Ramp>()) {
                if (!is_const_one(r->stride)) return std::nullopt;
                b = r->base, n = r->lanes;
            } else if (l->index.type().is_vector()) {
                return std::nullopt;
            }
            if (!first) first = l, base0 = b;
            if (l->name != first->name) return std::nullopt;
            auto d = const_int(simplify(b - base0));
            if (!d) return std::nullopt;
            for (int i = 0; i < n; i++) flat.push_back(*d + i);
        }
        const int w = op->type.lanes();
        std::vector<int64_t> d(static_cast<size_t>(w));
        for (int j = 0; j < w; j++) {
            int idx = op->indices[size_t(j)];
            if (idx < 0 || size_t(idx) >= flat.size()) return std::nullopt;
            d[size_t(j)] = flat[size_t(idx)];
        }
        const int64_t lo = *std::min_element(d.begin(), d.end()), hi = *std::max_element(d.begin(), d.end());
        std::optional<int64_t> c;
        for (int64_t cand = lo - w; cand <= hi && !c; cand++) {
            bool fits = true;
            for (int j = 0; j < w && fits; j++) fits = d[size_t(j)] == std::clamp<int64_t>(j + cand, lo, hi);
            if (fits) c = cand;
        }
        if (!c) return std::nullopt;
        int64_t rem = 0;
        if (!reduce_expr_modulo(base0, lanes, &rem)) return std::nullopt;
        ShiftCall s;
        s.home = Load::make(op->type, first->name, Ramp::make(simplify(base0 - int(rem)), 1, w), first->image,
                            first->param, const_true(w), ModulusRemainder());
        s.shift = int(*c + rem);
        if (lo != *c || hi != *c + w - 1) {  // the clamp binds somewhere
            s.edge = kEdgeClamp;
            s.lo = Expr(int(lo + rem));
            s.hi = Expr(int(hi + rem));
        }
        return s;
    }

    // A read of a vector that starts between sticks, or through a clamped index; with `any`, also
    // one that is stick-aligned (for a select around it).
    std::optional<ShiftCall> shifted(const Load *op, bool any = false) {
        if (!op->type.is_vector()) return std::nullopt;
        const int64_t lanes = plan_.machine.stick_bytes / op->type.bytes();
        if (lanes < 1) return std::nullopt;
        Expr index = op->index, off = make_zero(Int(32));
        if (const Add *a = index.as<Add>()) {
            if (const Broadcast *b = a->b.as<Broadcast>()) index = a->a, off = b->value;
            else if (const Broadcast *b2 = a->a.as<Broadcast>()) index = a->b, off = b2->value;
        }
        Expr lo, hi;
        bool clamped = false;
        while (true) {
            if (const Min *m = index.as<Min>()) {
                const Broadcast *b = m->b.as<Broadcast>();
                if (!b || hi.defined()) return std::nullopt;
                hi = b->value, index = m->a, clamped = true;
            } else if (const Max *m = index.as<Max>()) {
                const Broadcast *b = m->b.as<Broadcast>();
                if (!b || lo.defined()) return std::nullopt;
                lo = b->value, index = m->a, clamped = true;
            } else {
                break;
            }
        }
        const Ramp *r = index.as<Ramp>();
        if (!r || !is_const_one(r->stride)) return std::nullopt;
        if (!clamped && !is_const_zero(off)) {
            // in[ramp + broadcast]: the same as one ramp.
            return shifted_ramp(op, simplify(r->base + off), r->lanes, lanes, any);
        }
        if (!clamped) return shifted_ramp(op, r->base, r->lanes, lanes, any);
        clamp_lo_ = lo.defined(), clamp_hi_ = hi.defined();
        // Halide may move a constant of the coordinate out of the clamp (max(ramp(x), 2) + row - 2):
        // move it back, so that the offset left is the row's stick-aligned start.
        Expr base = r->base;
        int64_t off_rem = 0;
        if (!reduce_expr_modulo(off, lanes, &off_rem)) return std::nullopt;
        if (off_rem) {
            off = simplify(off - int(off_rem));
            base = simplify(base + int(off_rem));
            if (lo.defined()) lo = simplify(lo + int(off_rem));
            if (hi.defined()) hi = simplify(hi + int(off_rem));
        }
        int64_t rem = 0;
        if (!reduce_expr_modulo(base, lanes, &rem)) return std::nullopt;
        int shift = int(rem > lanes / 2 ? rem - lanes : rem);
        Expr home_x = simplify(base - shift);  // the home's first lane, in the clamped coordinate
        ShiftCall s;
        s.home = Load::make(op->type, op->name, Ramp::make(simplify(off + home_x), 1, r->lanes), op->image, op->param,
                            op->predicate, ModulusRemainder());
        s.shift = shift;
        s.edge = kEdgeClamp;
        // An unbounded side still moves with the home, as a bound of the row does.
        s.lo = simplify((lo.defined() ? lo : Expr(-kUnbounded)) - home_x);
        s.hi = simplify((hi.defined() ? hi : Expr(kUnbounded)) - home_x);
        return s;
    }

    std::optional<ShiftCall> shifted_ramp(const Load *op, const Expr &base, int w, int64_t lanes, bool any) {
        int64_t rem = 0;
        if (!reduce_expr_modulo(base, lanes, &rem)) return std::nullopt;
        if (rem == 0 && !any) return std::nullopt;
        int shift = int(rem > lanes / 2 ? rem - lanes : rem);
        ShiftCall s;
        s.home = Load::make(op->type, op->name, Ramp::make(simplify(base - shift), 1, w), op->image, op->param, op->predicate,
                            ModulusRemainder());
        s.shift = shift;
        return s;
    }

    const KernelPlan &plan_;
    bool clamp_lo_ = true, clamp_hi_ = true;  // which sides of the last clamped read bound it
    Scope<Interval> loops_;                   // the enclosing loops' ranges
};

}  // namespace

Stmt lower_shifted_loads(const Stmt &s, const KernelPlan &plan) { return LowerShiftedLoads(plan).mutate(s); }

}  // namespace spyre
