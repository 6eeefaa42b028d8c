#include "lower_shifted_loads.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "affine.h"
#include "device/error.h"
#include "device/isa.h"
#include "device/vector_shift.h"
#include "spyre_intrinsics.h"
#include "strided_stick_reads.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// A window bound that never binds (one-sided boundary conditions), still an int32 immediate.
constexpr int kUnbounded = 1 << 30;

// The integer lanes of an index expression at given values of its variables (scalars give one
// lane); nullopt for anything it does not evaluate. Halide's semantics: division rounds down,
// modulo is Euclidean, both by zero give zero; casts to 32 bits wrap.
std::optional<std::vector<int64_t>> eval_lanes(const Expr &e, const std::map<std::string, int64_t> &env) {
    using V = std::vector<int64_t>;
    const int n = e.type().lanes();
    auto lane = [](const V &v, int i) { return v.size() == 1 ? v[0] : v[size_t(i)]; };
    auto binary = [&](const Expr &a, const Expr &b, auto f) -> std::optional<V> {
        auto x = eval_lanes(a, env), y = eval_lanes(b, env);
        if (!x || !y) return std::nullopt;
        V r(static_cast<size_t>(n));
        for (int i = 0; i < n; i++) r[size_t(i)] = f(lane(*x, i), lane(*y, i));
        return r;
    };
    auto floor_div = [](int64_t a, int64_t b) -> int64_t {
        if (b == 0) return 0;
        int64_t q = a / b;
        return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    };
    auto emod = [](int64_t a, int64_t b) -> int64_t {
        if (b == 0) return 0;
        int64_t r = a % b;
        return r < 0 ? r + (b < 0 ? -b : b) : r;
    };
    if (auto c = as_const_int(e)) return V{*c};
    if (auto c = as_const_uint(e)) return V{int64_t(*c)};
    if (const Variable *v = e.as<Variable>()) {
        auto it = env.find(v->name);
        if (it == env.end()) return std::nullopt;
        return V{it->second};
    }
    if (const Broadcast *b = e.as<Broadcast>()) {
        auto x = eval_lanes(b->value, env);
        if (!x || x->size() != 1) return std::nullopt;
        return V(size_t(n), (*x)[0]);
    }
    if (const Ramp *r = e.as<Ramp>()) {
        auto b = eval_lanes(r->base, env), st = eval_lanes(r->stride, env);
        if (!b || !st || b->size() != 1 || st->size() != 1) return std::nullopt;
        V out(static_cast<size_t>(n));
        for (int i = 0; i < n; i++) out[size_t(i)] = (*b)[0] + i * (*st)[0];
        return out;
    }
    if (const Add *o = e.as<Add>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return a + b; });
    if (const Sub *o = e.as<Sub>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return a - b; });
    if (const Mul *o = e.as<Mul>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return a * b; });
    if (const Div *o = e.as<Div>()) return binary(o->a, o->b, floor_div);
    if (const Mod *o = e.as<Mod>()) return binary(o->a, o->b, emod);
    if (const Min *o = e.as<Min>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return std::min(a, b); });
    if (const Max *o = e.as<Max>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return std::max(a, b); });
    if (const EQ *o = e.as<EQ>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return int64_t(a == b); });
    if (const NE *o = e.as<NE>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return int64_t(a != b); });
    if (const LT *o = e.as<LT>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return int64_t(a < b); });
    if (const LE *o = e.as<LE>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return int64_t(a <= b); });
    if (const GT *o = e.as<GT>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return int64_t(a > b); });
    if (const GE *o = e.as<GE>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return int64_t(a >= b); });
    if (const And *o = e.as<And>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return int64_t(a && b); });
    if (const Or *o = e.as<Or>()) return binary(o->a, o->b, [](int64_t a, int64_t b) { return int64_t(a || b); });
    if (const Not *o = e.as<Not>()) {
        auto x = eval_lanes(o->a, env);
        if (!x) return std::nullopt;
        for (int64_t &v : *x) v = !v;
        return x;
    }
    if (const Select *o = e.as<Select>()) {
        auto c = eval_lanes(o->condition, env), t = eval_lanes(o->true_value, env), f = eval_lanes(o->false_value, env);
        if (!c || !t || !f) return std::nullopt;
        V r(static_cast<size_t>(n));
        for (int i = 0; i < n; i++) r[size_t(i)] = lane(*c, i) ? lane(*t, i) : lane(*f, i);
        return r;
    }
    if (const Cast *c = e.as<Cast>()) {
        if (!c->type.is_int_or_uint() || c->type.bits() > 32) return std::nullopt;
        auto x = eval_lanes(c->value, env);
        if (!x) return std::nullopt;
        for (int64_t &v : *x) {
            if (c->type.bits() == 32) v = c->type.is_int() ? int64_t(int32_t(uint32_t(v))) : int64_t(uint32_t(v));
            else if (c->type.is_bool()) v = v != 0;
            else return std::nullopt;
        }
        return x;
    }
    if (const Call *c = e.as<Call>()) {
        if (c->is_intrinsic(Call::likely) || c->is_intrinsic(Call::likely_if_innermost) ||
            c->is_intrinsic(Call::promise_clamped) || c->is_intrinsic(Call::unsafe_promise_clamped))
            return eval_lanes(c->args[0], env);
        if (c->is_intrinsic(Call::abs) && c->args.size() == 1) {
            auto x = eval_lanes(c->args[0], env);
            if (!x) return std::nullopt;
            for (int64_t &v : *x) v = v < 0 ? -v : v;
            return x;
        }
    }
    return std::nullopt;
}

// A mirror edge and window that explain a gather's positions: lane j of sample s reads
// m(b_s + j), m the periodic reflection into [lo, hi] (vector_shift.h) and b_s the sample's
// unreflected first position.
struct MirrorFit {
    int edge = 0;  // kEdgeMirrorImage or kEdgeMirrorInterior
    int64_t lo = 0, hi = 0;
    int64_t b0 = 0;              // b of the first sample
    std::vector<int64_t> coef;   // b's step per unit of each loop
};

bool mirror_reads(int edge, int64_t lo, int64_t hi, int64_t b, const std::vector<int64_t> &pos) {
    const ShiftEdge e = shift_edge(uint8_t(edge));
    for (size_t j = 0; j < pos.size(); j++) {
        bool zero = false;
        if (shift_source(e, b + int64_t(j), lo, hi, &zero) != pos[j]) return false;
    }
    return true;
}

// The first positions b that could start a sample under the edge: the runs inside the window, and
// what reflects onto the first lane's position.
std::vector<int64_t> mirror_starts(int edge, int64_t lo, int64_t hi, const std::vector<int64_t> &pos) {
    std::vector<int64_t> c;
    for (size_t j = 0; j < pos.size(); j++) c.push_back(pos[j] - int64_t(j));
    const int64_t p = pos[0], d = edge == kEdgeMirrorImage ? 1 : 0;
    for (int64_t k : {2 * hi + d - p, 2 * lo - d - p}) c.push_back(k);
    // Nearest the first lane's position first: the home then sits by the elements it reads.
    std::sort(c.begin(), c.end(), [&](int64_t a, int64_t b) {
        return std::make_pair(std::llabs(a - p), a) < std::make_pair(std::llabs(b - p), b);
    });
    c.erase(std::unique(c.begin(), c.end()), c.end());
    return c;
}

// Samples are the iterations of the loops, the first loop varying fastest; range[i] = (min, extent).
std::optional<MirrorFit> fit_mirror(const std::vector<std::vector<int64_t>> &pos,
                                    const std::vector<std::pair<int64_t, int64_t>> &range, int64_t lanes,
                                    const std::vector<std::pair<int64_t, int64_t>> &windows) {
    for (auto [lo, hi] : windows) {
        if (hi < lo) continue;
        const int64_t w = hi - lo + 1;
        for (int edge : {int(kEdgeMirrorImage), int(kEdgeMirrorInterior)}) {
            // The positions repeat with this period, so b is known up to a multiple of it.
            const int64_t period = edge == kEdgeMirrorImage ? 2 * w : std::max<int64_t>(2 * (w - 1), 1);
            MirrorFit f{edge, lo, hi, 0, std::vector<int64_t>(range.size(), 0)};
            bool ok = false;
            for (int64_t b : mirror_starts(edge, lo, hi, pos[0]))
                if (mirror_reads(edge, lo, hi, b, pos[0])) {
                    f.b0 = b, ok = true;
                    break;
                }
            // Each loop's step moves b by whole sticks (the shift stays the same in every iteration).
            int64_t stride = 1;
            for (size_t i = 0; i < range.size() && ok; i++) {
                if (range[i].second >= 2) {
                    const std::vector<int64_t> &pi = pos[size_t(stride)];
                    bool found = false;
                    for (int64_t b : mirror_starts(edge, lo, hi, pi)) {
                        for (int64_t u = 0; u <= 2 * lanes && !found; u++) {
                            const int64_t t = u % 2 ? (u + 1) / 2 : -(u / 2);  // 0, 1, -1, 2, -2, ...
                            const int64_t cand = b + t * period;
                            if ((cand - f.b0) % lanes == 0 && mirror_reads(edge, lo, hi, cand, pi))
                                f.coef[i] = cand - f.b0, found = true;
                        }
                        if (found) break;
                    }
                    ok = found;
                }
                stride *= range[i].second;
            }
            for (size_t s2 = 0; s2 < pos.size() && ok; s2++) {
                int64_t b = f.b0, k = int64_t(s2);
                for (size_t i = 0; i < range.size(); i++) {
                    b += f.coef[i] * (k % range[i].second);
                    k /= range[i].second;
                }
                ok = mirror_reads(edge, lo, hi, b, pos[s2]);
            }
            if (ok) return f;
        }
    }
    return std::nullopt;
}

class LowerShiftedLoads : public IRMutator {
public:
    explicit LowerShiftedLoads(const KernelPlan &p) : plan_(p) {}
    using IRMutator::visit;

    struct Window {
        Expr lo, hi;  // inclusive coordinate bounds; undefined: unbounded
    };

    Expr visit(const Load *op) override {
        if (auto s = strided(op)) return make_stride(*s);
        if (auto s = shifted(op)) return make_shift(*s);
        if (auto s = mirrored(op)) return make_shift(*s);
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
        if (auto s = upsampled(op)) return make_stride(*s);
        if (auto s = shuffled(op)) return make_shift(*s);
        // interleave_vectors(even, odd): Halide's form of select(x % 2 == 0, a, b) with x vectorized,
        // each side computed on every other element (stride-2 reads). Each side computed on all
        // lanes instead (its reads shifted to the lanes it fills), then one lane select.
        if (op->is_interleave() && op->vectors.size() == 2 && op->vectors[0].type().lanes() == op->vectors[1].type().lanes()) {
            const int n = op->vectors[0].type().lanes();
            auto even = widened(op->vectors[0], 0, n), odd = widened(op->vectors[1], 1, n);
            if (even && odd) return mutate(make_lane_select(LaneSelectCall{*even, *odd, 1}));
            // Nothing later reads stride-2 vectors: say what the algorithm did, not what it became.
            std::string func = store_;
            if (plan_.has(store_)) func = plan_.buffer(store_).func;
            if (equal(op->vectors[0], op->vectors[1]))
                throw_error("Func ", func, ": stick_vectorize: it reads each element twice along the stick dimension "
                            "(an index such as x / 2, an upsample), and what it repeats is not a read of one row "
                            "at consecutive elements, which VSTRIDE repeats (Halide repeats an index, as it does for an "
                            "input of one column); stick_vectorize a wider output or read a wider input");
            throw_error("Func ", func, ": stick_vectorize: an interleaving of even and odd lanes (what Halide makes "
                        "of a select() on x % 2) whose sides are not element-wise arithmetic of reads along the "
                        "stick dimension has no Spyre vector form");
        }
        return IRMutator::visit(op);
    }

    // Halide's form of a read at (x + c) / k with x vectorized: an interleave of k reads of one row
    // whose starts are the first's or one past it, in that order (side r reads from one past where
    // r >= k - start), or of k equal upsamples (x / 2 / 2). One strided read of step -k.
    std::optional<StrideCall> upsampled(const Shuffle *op) {
        const int k = int(op->vectors.size());
        if (!op->is_interleave() || k < 2 || k > kMaxLaneStep) return std::nullopt;
        // The sides as Halide wrote them (a read both taps share is named: t4 = in[ramp(b, 1, n)] in
        // interleave(a, t4) and interleave(t4, c); the read itself), and as lowered here.
        std::vector<Expr> sides, lowered;
        for (const Expr &v : op->vectors) {
            Expr side = v;
            if (const Variable *var = side.as<Variable>(); var && vector_lets_.contains(var->name))
                side = vector_lets_.get(var->name);
            sides.push_back(side);
            lowered.push_back(mutate(side));
        }
        auto nested = as_stride(lowered[0]);
        if (nested && nested->step < 0 && nested->start == 0 && int64_t(k) * -nested->step <= kMaxLaneStep) {
            for (const Expr &v : lowered)
                if (!equal(v, lowered[0])) return std::nullopt;
            return StrideCall{nested->home, 0, k * nested->step, op->type.lanes()};
        }
        const Load *first = sides[0].as<Load>();
        const Ramp *r0 = first ? first->index.as<Ramp>() : nullptr;
        if (!r0 || !is_const_one(r0->stride) || !is_const_one(first->predicate)) return std::nullopt;
        int ones = 0;
        for (const Expr &v : sides) {
            const Load *l = v.as<Load>();
            const Ramp *r = l ? l->index.as<Ramp>() : nullptr;
            if (!r || l->name != first->name || !is_const_one(r->stride) || !is_const_one(l->predicate) ||
                r->lanes != r0->lanes)
                return std::nullopt;
            auto c = const_int(simplify(with_lets(r->base - r0->base)));
            if (!c || (*c != 0 && *c != 1) || (*c == 0 && ones > 0)) return std::nullopt;
            ones += int(*c);
        }
        if (ones == 0) return StrideCall{sides[0], 0, -k, op->type.lanes()};
        // With start > 0 the last lane reads one past the first side's last: the home holds them
        // all, from the stick of the first where its place in that stick is fixed (else staging
        // takes the rows whole or says why not).
        const int64_t lanes = plan_.machine.stick_bytes / first->type.bytes();
        int64_t rem = 0;
        const int n = (ones + op->type.lanes() - 1) / k + 1;
        if (!reduce_expr_modulo(r0->base, lanes, &rem)) {
            Expr home = Load::make(first->type.with_lanes(n), first->name, Ramp::make(r0->base, 1, n), first->image,
                                   first->param, const_true(n), ModulusRemainder());
            return StrideCall{home, ones, -k, op->type.lanes()};
        }
        const int64_t w = (rem + n - 1 + lanes) / lanes * lanes;
        Expr home = Load::make(first->type.with_lanes(int(w)), first->name, Ramp::make(simplify(r0->base - int(rem)), 1, int(w)),
                               first->image, first->param, const_true(int(w)), ModulusRemainder());
        return StrideCall{home, int(ones + rem * k), -k, op->type.lanes()};
    }

    // A read of every step-th element along the stick (in(2 * x + c)): the dense home row that
    // holds them, from the stick where the first one is, and the lanes it picks. Left as it is
    // where the first element's place in its stick is not fixed (the refusal names the stride).
    std::optional<StrideCall> strided(const Load *op) {
        const Ramp *r = op->index.as<Ramp>();
        const int64_t *step = r ? as_const_int(r->stride) : nullptr;
        const int64_t lanes = plan_.machine.stick_bytes / op->type.bytes();
        if (!step || *step < 2 || *step >= lanes || *step > kMaxLaneStep) return std::nullopt;
        // A split's tail guarded lane by lane: that is the cause to name, not the stride.
        if (!is_const_one(op->predicate)) {
            const std::string func = plan_.has(store_) ? plan_.buffer(store_).func : store_;
            throw_error("Func ", func, ": ", predicated_vector_refusal(r->lanes));
        }
        int64_t rem = 0;
        if (!reduce_expr_modulo(r->base, lanes, &rem)) return std::nullopt;
        const int64_t w = (rem + *step * (r->lanes - 1) + lanes) / lanes * lanes;
        Expr home = Load::make(op->type.with_lanes(int(w)), op->name, Ramp::make(simplify(r->base - int(rem)), 1, int(w)),
                               op->image, op->param, const_true(int(w)), ModulusRemainder());
        return StrideCall{home, int(rem), int(*step), r->lanes};
    }

    // Side p (0 even, 1 odd) of an interleave, of n lanes, as a vector of 2n lanes whose lane 2i + p
    // is the side's lane i (the other lanes are discarded by the lane select): a stride-2 read from
    // b becomes the dense read from b - p; element-wise operations follow their operands.
    std::optional<Expr> widened(const Expr &e, int p, int n) {
        const int w = 2 * n;
        if (e.type().lanes() != n) return std::nullopt;
        if (const Load *l = e.as<Load>()) {
            Expr index;
            if (const Ramp *r = l->index.as<Ramp>()) {
                if (!is_const(r->stride, 2)) return std::nullopt;
                index = Ramp::make(simplify(r->base - p), 1, w);
                // Between sticks, the discarded lane at one end would read past the elements the
                // side reads (past the row at the tensor's end): clamped to them, it never does.
                const int64_t lanes = plan_.machine.stick_bytes / l->type.bytes();
                int64_t rem = 0;
                if (lanes > 1 && (!reduce_expr_modulo(index.as<Ramp>()->base, lanes, &rem) || rem != 0))
                    index = max(min(index, Broadcast::make(simplify(r->base + (w - 2)), w)), Broadcast::make(r->base, w));
            } else if (const Broadcast *b = l->index.as<Broadcast>()) {
                index = Broadcast::make(b->value, w);
            } else {
                return std::nullopt;
            }
            return Load::make(l->type.with_lanes(w), l->name, index, l->image, l->param, const_true(w), ModulusRemainder());
        }
        if (const Broadcast *b = e.as<Broadcast>()) return Broadcast::make(b->value, w);
        if (const Shuffle *sh = e.as<Shuffle>()) return widened_shuffle(sh, p, w);
        if (const Select *sel = e.as<Select>()) {
            if (is_const_one(sel->condition)) return widened(sel->true_value, p, n);
            if (is_const_zero(sel->condition)) return widened(sel->false_value, p, n);
            return std::nullopt;
        }
        if (const Cast *c = e.as<Cast>()) {
            auto v = widened(c->value, p, n);
            if (!v) return std::nullopt;
            return Cast::make(c->type.with_lanes(w), *v);
        }
        if (const Call *c = e.as<Call>()) {
            if (c->call_type != Call::PureExtern && c->call_type != Call::PureIntrinsic) return std::nullopt;
            std::vector<Expr> args;
            for (const Expr &a : c->args) {
                if (!a.type().is_vector()) {
                    args.push_back(a);
                    continue;
                }
                auto v = widened(a, p, n);
                if (!v) return std::nullopt;
                args.push_back(*v);
            }
            return Call::make(c->type.with_lanes(w), c->name, args, c->call_type, c->func, c->value_index, c->image,
                              c->param);
        }
        // Element-wise binary operations.
        auto bin = [&](const Expr &a, const Expr &b, auto make) -> std::optional<Expr> {
            auto x = widened(a, p, n), y = widened(b, p, n);
            if (!x || !y) return std::nullopt;
            return make(*x, *y);
        };
        if (const Add *o = e.as<Add>()) return bin(o->a, o->b, [](Expr a, Expr b) { return Add::make(a, b); });
        if (const Sub *o = e.as<Sub>()) return bin(o->a, o->b, [](Expr a, Expr b) { return Sub::make(a, b); });
        if (const Mul *o = e.as<Mul>()) return bin(o->a, o->b, [](Expr a, Expr b) { return Mul::make(a, b); });
        if (const Div *o = e.as<Div>()) return bin(o->a, o->b, [](Expr a, Expr b) { return Div::make(a, b); });
        if (const Min *o = e.as<Min>()) return bin(o->a, o->b, [](Expr a, Expr b) { return Min::make(a, b); });
        if (const Max *o = e.as<Max>()) return bin(o->a, o->b, [](Expr a, Expr b) { return Max::make(a, b); });
        return std::nullopt;
    }

    // A shuffle of reads (what a clamp leaves at a row's end) on one side of an interleave: lane
    // 2i + p takes the shuffle's lane i and the other lane its neighbour in the row, so that the
    // widened shuffle is again a clamped run when the narrow one was.
    std::optional<Expr> widened_shuffle(const Shuffle *sh, int p, int w) {
        int total = 0;
        for (const Expr &v : sh->vectors) total += v.type().lanes();
        std::vector<int> idx(static_cast<size_t>(w));
        for (int i = 0; i < w / 2; i++) {
            const int k = sh->indices[size_t(i)];
            const int other = p == 0 ? k + 1 : k - 1;
            idx[size_t(2 * i + p)] = k;
            idx[size_t(2 * i + 1 - p)] = other >= 0 && other < total ? other : k;
        }
        return Shuffle::make(sh->vectors, idx);
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

    // Vector reads bound by name, for the interleaves that read them (upsampled), and every value
    // bound around the statement, innermost last, to compare the reads' addresses.
    Scope<Expr> vector_lets_;
    std::vector<std::pair<std::string, Expr>> lets_;
    template <typename LetOrStmt>
    auto visit_let(const LetOrStmt *op) -> decltype(IRMutator::visit(op)) {
        lets_.emplace_back(op->name, op->value);
        const bool read = op->value.type().is_vector() && op->value.template as<Load>();
        if (read) vector_lets_.push(op->name, op->value);
        auto r = IRMutator::visit(op);
        if (read) vector_lets_.pop(op->name);
        lets_.pop_back();
        return r;
    }
    Expr with_lets(Expr e) const {
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) e = substitute(it->first, it->second, e);
        return e;
    }
    Stmt visit(const LetStmt *op) override { return visit_let(op); }
    Expr visit(const Let *op) override { return visit_let(op); }

    Stmt visit(const Store *op) override {
        store_ = op->name;
        return IRMutator::visit(op);
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
        // A boundary condition's window is fixed (the tensor's edges); one that moves with a loop
        // (a causal mask: key t kept where t <= q) is a select on the stick index (select_masks.cpp).
        if (expr_uses_vars(bound, loops_)) return false;
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
        if (!c) return mirror_shuffled(op, d, first, base0, lanes);
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

    // A gather whose index is Halide's mirror_image or mirror_interior of the lanes' coordinate (a
    // select of the coordinate, a modulo of it and its reflection): found by evaluating the index at
    // every iteration of the loops it depends on and fitting a mirror edge to the positions read.
    // Every lane of every iteration is checked, so what fits reads what Halide's index reads.
    std::optional<ShiftCall> mirrored(const Load *op) {
        if (!op->type.is_vector()) return std::nullopt;
        const int w = op->type.lanes();
        const int64_t lanes = plan_.machine.stick_bytes / op->type.bytes();
        if (lanes < 1 || w % lanes) return std::nullopt;
        Expr index = op->index, row = make_zero(Int(32));
        if (const Add *a = index.as<Add>()) {
            if (const Broadcast *b = a->b.as<Broadcast>()) index = a->a, row = b->value;
            else if (const Broadcast *b2 = a->a.as<Broadcast>()) index = a->b, row = b2->value;
        }
        // A ramp down the row is a whole vector reflected at the row's end.
        const Ramp *r = index.as<Ramp>();
        if ((r && !is_const(r->stride, -1)) || index.as<Broadcast>() || !index.type().is_vector()) return std::nullopt;
        // The loops the index depends on, each with a constant range.
        std::vector<std::string> vars;
        std::vector<std::pair<int64_t, int64_t>> range;  // min, extent
        bool ok = true;
        struct Vars : IRVisitor {
            std::vector<std::string> names;
            using IRVisitor::visit;
            void visit(const Variable *v) override {
                if (std::find(names.begin(), names.end(), v->name) == names.end()) names.push_back(v->name);
            }
        } found;
        index.accept(&found);
        for (const std::string &v : found.names) {
            if (!loops_.contains(v)) return std::nullopt;
            Interval i = loops_.get(v);
            auto mn = const_int(i.min), mx = const_int(i.max);
            if (!mn || !mx || *mx < *mn) return std::nullopt;
            vars.push_back(v);
            range.push_back({*mn, *mx - *mn + 1});
        }
        // A loop that moves every lane by the same amount (the rows, when Halide folds the row into
        // the index) joins the row offset, so that the samples are positions within one row.
        std::map<std::string, int64_t> base_env;
        for (size_t i = 0; i < vars.size(); i++) base_env[vars[i]] = range[i].first;
        auto p0 = eval_lanes(index, base_env);
        if (!p0 || int(p0->size()) != w) return std::nullopt;
        auto uniform_step = [&](size_t i) -> std::optional<int64_t> {
            if (range[i].second < 2) return std::nullopt;
            auto env = base_env;
            env[vars[i]] += 1;
            auto p1 = eval_lanes(index, env);
            env[vars[i]] = range[i].first + range[i].second - 1;
            auto p2 = eval_lanes(index, env);
            if (!p1 || !p2 || int(p1->size()) != w || int(p2->size()) != w) return std::nullopt;
            const int64_t step = (*p1)[0] - (*p0)[0];
            for (int j = 0; j < w; j++)
                if ((*p1)[size_t(j)] - (*p0)[size_t(j)] != step ||
                    (*p2)[size_t(j)] - (*p0)[size_t(j)] != step * (range[i].second - 1))
                    return std::nullopt;
            return step;
        };
        for (size_t i = 0; i < vars.size();) {
            auto step = uniform_step(i);
            if (!step) {
                i++;
                continue;
            }
            row = row + (Variable::make(Int(32), vars[i]) - int(range[i].first)) * int(*step);
            index = substitute(vars[i], Expr(int(range[i].first)), index);
            base_env.erase(vars[i]);
            vars.erase(vars.begin() + long(i));
            range.erase(range.begin() + long(i));
        }
        int64_t points = 1;
        for (auto &r : range) points *= r.second, ok = ok && points <= 4096;
        if (!ok) return std::nullopt;
        std::vector<std::vector<int64_t>> pos;
        for (int64_t pnt = 0; pnt < points; pnt++) {
            std::map<std::string, int64_t> env;
            int64_t k = pnt;
            for (size_t i = 0; i < vars.size(); i++) {
                env[vars[i]] = range[i].first + k % range[i].second;
                k /= range[i].second;
            }
            auto p = eval_lanes(index, env);
            if (!p || int(p->size()) != w) return std::nullopt;
            pos.push_back(std::move(*p));
        }
        // The window: the positions seen, or the row of the buffer read (a vector all of whose lanes
        // reflect does not show where the window ends).
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (const auto &p : pos)
            for (int64_t v : p) lo = std::min(lo, v), hi = std::max(hi, v);
        std::vector<std::pair<int64_t, int64_t>> windows{{lo, hi}};
        if (plan_.has(op->name) && !plan_.buffer(op->name).shape.empty())
            windows.push_back({0, plan_.buffer(op->name).shape[0] - 1});
        auto fit = fit_mirror(pos, range, lanes, windows);
        if (!fit) return std::nullopt;
        const int64_t b0 = fit->b0;
        const std::vector<int64_t> &coef = fit->coef;
        const int64_t rem = ((b0 % lanes) + lanes) % lanes;
        const int shift = int(rem > lanes / 2 ? rem - lanes : rem);
        Expr home_x = Expr(int(b0 - shift));
        for (size_t i = 0; i < vars.size(); i++)
            if (coef[i]) home_x = home_x + (Variable::make(Int(32), vars[i]) - int(range[i].first)) * int(coef[i]);
        home_x = simplify(home_x);
        ShiftCall s;
        s.home = Load::make(op->type, op->name, Ramp::make(simplify(row + home_x), 1, w), op->image, op->param,
                            const_true(w), ModulusRemainder());
        s.shift = shift;
        s.edge = fit->edge;
        s.lo = simplify(int(fit->lo) - home_x);
        s.hi = simplify(int(fit->hi) - home_x);
        return s;
    }

    // A shuffle of one row's lanes that reflects at a row's end (mirror_image or mirror_interior where
    // Halide knows the row's end): positions d[j] from the first load's base.
    std::optional<ShiftCall> mirror_shuffled(const Shuffle *op, const std::vector<int64_t> &d, const Load *first,
                                             const Expr &base0, int64_t lanes) {
        const int w = op->type.lanes();
        const int64_t lo = *std::min_element(d.begin(), d.end()), hi = *std::max_element(d.begin(), d.end());
        auto fit = fit_mirror({d}, {}, lanes, {{lo, hi}});
        int64_t rem = 0;
        if (!fit || !reduce_expr_modulo(base0, lanes, &rem)) return std::nullopt;
        ShiftCall s;
        s.home = Load::make(op->type, first->name, Ramp::make(simplify(base0 - int(rem)), 1, w), first->image,
                            first->param, const_true(w), ModulusRemainder());
        s.shift = int(fit->b0 + rem);
        s.edge = fit->edge;
        s.lo = Expr(int(fit->lo + rem));
        s.hi = Expr(int(fit->hi + rem));
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
        // The nearer stick as the home, but the stick that holds the whole read when one does (a
        // vector narrower than a stick, e.g. 32 int8 lanes at element 96): the next stick may lie
        // past the buffer's end.
        int shift = int(rem > lanes / 2 && rem + w > lanes ? rem - lanes : rem);
        ShiftCall s;
        s.home = Load::make(op->type, op->name, Ramp::make(simplify(base - shift), 1, w), op->image, op->param, op->predicate,
                            ModulusRemainder());
        s.shift = shift;
        return s;
    }

    const KernelPlan &plan_;
    bool clamp_lo_ = true, clamp_hi_ = true;  // which sides of the last clamped read bound it
    std::string store_;                       // the buffer the current Store writes (for messages)
    Scope<Interval> loops_;                   // the enclosing loops' ranges
};

}  // namespace

Stmt lower_shifted_loads(const Stmt &s, const KernelPlan &plan) { return LowerShiftedLoads(plan).mutate(s); }

}  // namespace spyre
