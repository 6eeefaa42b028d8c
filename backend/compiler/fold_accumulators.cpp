#include "fold_accumulators.h"

#include <algorithm>

#include "affine.h"
#include "device/error.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// Flattens Blocks and drops ProducerConsumer markers and Frees, which carry nothing we need.
void flatten(const Stmt &s, std::vector<Stmt> &out) {
    if (!s.defined()) return;
    if (const Block *b = s.as<Block>()) {
        flatten(b->first, out);
        flatten(b->rest, out);
    } else if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) {
        flatten(pc->body, out);
    } else if (s.as<Free>()) {
        return;
    } else if (const Evaluate *e = s.as<Evaluate>(); e && is_const(e->value)) {
        return;
    } else {
        out.push_back(s);
    }
}

// Replaces loads and stores of a one-element buffer by the destination element.
class Redirect : public IRMutator {
public:
    Redirect(std::string from, std::string to, Expr index) : from_(std::move(from)), to_(std::move(to)), index_(index) {}
    using IRMutator::visit;
    Expr visit(const Load *op) override {
        if (op->name != from_) return IRMutator::visit(op);
        return Load::make(op->type, to_, index_, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
    }
    Stmt visit(const Store *op) override {
        if (op->name != from_) return IRMutator::visit(op);
        return Store::make(to_, mutate(op->value), index_, Parameter(), const_true(), ModulusRemainder());
    }

private:
    std::string from_, to_;
    Expr index_;
};

class LoadsOf : public IRVisitor {
public:
    explicit LoadsOf(std::string n) : name(std::move(n)) {}
    std::string name;
    int count = 0;
    using IRVisitor::visit;
    void visit(const Load *op) override {
        if (op->name == name) count++;
        IRVisitor::visit(op);
    }
};

// Index expressions of every access, per buffer.
class Accesses : public IRVisitor {
public:
    std::map<std::string, std::vector<Expr>> loads, stores;
    bool has_alloc = false;
    using IRVisitor::visit;
    void visit(const Load *op) override {
        loads[op->name].push_back(op->index);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        stores[op->name].push_back(op->index);
        IRVisitor::visit(op);
    }
    void visit(const Allocate *op) override {
        has_alloc = true;
        IRVisitor::visit(op);
    }
};

Expr base_of(const Expr &index) {
    if (const Ramp *r = index.as<Ramp>()) return r->base;
    return index;
}

class Fold : public IRMutator {
public:
    explicit Fold(KernelPlan &p) : plan_(p) {}
    using IRMutator::visit;

    Stmt visit(const Allocate *op) override {
        Stmt body = mutate(op->body);
        auto it = plan_.buffers.find(op->name);
        if (it == plan_.buffers.end() || it->second.elems != 1 || it->second.place != Place::LX)
            return Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition, body,
                                  op->new_expr, op->free_function);
        // A Tuple's accumulators (argmax's index and value) are allocated one inside the other: the
        // copy of this one may end the innermost body.
        std::vector<const Allocate *> inner;
        Stmt rest = body;
        while (const Allocate *a = rest.as<Allocate>()) {
            inner.push_back(a);
            rest = a->body;
        }
        std::vector<Stmt> parts;
        flatten(rest, parts);
        if (parts.size() < 2) return rebuild(op, body);
        const Store *last = parts.back().as<Store>();
        const Load *src = last ? last->value.as<Load>() : nullptr;
        if (!last || !src || src->name != op->name || last->value.type().is_vector()) return rebuild(op, body);
        // The accumulator is read only by the reduction itself and the final copy.
        LoadsOf dst_reads(last->name);
        for (size_t i = 0; i + 1 < parts.size(); i++) parts[i].accept(&dst_reads);
        if (dst_reads.count) return rebuild(op, body);
        Redirect redirect(op->name, last->name, last->index);
        Stmt folded;
        for (size_t i = 0; i + 1 < parts.size(); i++) {
            Stmt s = redirect.mutate(parts[i]);
            folded = folded.defined() ? Block::make(folded, s) : s;
        }
        for (size_t i = inner.size(); i-- > 0;) folded = rebuild(inner[i], folded);
        plan_.buffers.erase(op->name);
        return folded;
    }

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        if (const Allocate *acc = body.as<Allocate>(); acc && expandable(op, acc)) {
            // One accumulator slot per iteration, allocated outside the loop: the body then splits
            // into loop nests (init, reduction, the computation of its result) like a folded one.
            const int64_t extent = *const_int(op->extent);
            plan_.buffer(acc->name).elems = extent;
            Redirect slot(acc->name, acc->name, Variable::make(Int(32), op->name) - op->min);
            Stmt loop = fission(op, slot.mutate(acc->body));
            return Allocate::make(acc->name, acc->type, acc->memory_type, {Expr(int(extent))}, acc->condition, loop);
        }
        return fission(op, body);
    }

private:
    // A one-element LX accumulator allocated in each iteration of a serial loop, whose result is
    // computed into a device or LX buffer one element an iteration (mean[y] = sum[0] / n: the copy
    // folding cannot remove, and the vector unit cannot store one element at a time). Expanding
    // it to one slot per iteration costs `extent` elements of LX, kept within an eighth of it.
    bool expandable(const For *op, const Allocate *acc) const {
        auto extent = const_int(op->extent);
        auto it = plan_.buffers.find(acc->name);
        if (!extent || !is_const(op->min) || op->for_type != ForType::Serial || it == plan_.buffers.end() ||
            it->second.elems != 1 || it->second.place != Place::LX ||
            *extent * dtype_bytes(it->second.type) > plan_.machine.lx_usable_bytes / 8)
            return false;
        std::vector<Stmt> parts;
        flatten(acc->body, parts);
        if (parts.size() < 2) return false;
        if (tuple_partner(op->name, acc)) return true;
        const Store *result = parts.back().as<Store>();
        if (!result || result->name == acc->name || result->value.type().is_vector()) return false;
        // One element an iteration: an update of an outer accumulator (sum[0] += f(inner[0]),
        // the same element every iteration) gains nothing.
        auto at = affine_in(result->index, {op->name});
        if (!at || at->of(op->name) == 0) return false;
        LoadsOf reads(acc->name);
        result->value.accept(&reads);
        return reads.count > 0;
    }

    // The other element of a Tuple reduction (argmax's value beside its index) whose partner was
    // folded into a buffer that moves with loop v: the reduction's loop body is the pair of their
    // stores, one reading the other's element (out[v] = select(acc[0] < x, r, out[v])).
    // One slot per iteration lets the pair run over all the rows at once, like the partner.
    static bool tuple_partner(const std::string &v, const Allocate *acc) {
        class V : public IRVisitor {
        public:
            const std::string &v, &acc;
            bool found = false;
            V(const std::string &v, const std::string &acc) : v(v), acc(acc) {}
            using IRVisitor::visit;
            void visit(const Block *b) override {
                // Two stores of a loop body, each reading the other's element and its own.
                const Store *s0 = b->first.as<Store>(), *s1 = b->rest.as<Store>();
                if (!s0 || !s1 || s0->value.type().is_vector() || s1->value.type().is_vector())
                    return IRVisitor::visit(b);
                for (const Store *s : {s0, s1}) {
                    const Store *o = s == s0 ? s1 : s0;
                    if (s->name != acc || o->name == acc) continue;
                    auto at = affine_in(o->index, {v});
                    LoadsOf partner(o->name), own(acc);
                    s->value.accept(&partner);
                    o->value.accept(&own);
                    found |= at && at->of(v) != 0 && partner.count + own.count > 0;
                }
            }
        } vis(v, acc->name);
        acc->body.accept(&vis);
        return vis.found;
    }

    // Splits the loop into one loop per statement of its body where that is safe (see visit(For)).
    Stmt fission(const For *op, const Stmt &body) {
        std::vector<Stmt> parts;
        flatten(body, parts);
        // Bodies that mix a bare store with loops (an inline reduction's init and its loop) are
        // split, and bodies of perfect nests (a Tuple update's elements, row by row): each part
        // then becomes one instruction over all the rows instead of one per row. Other outer
        // loops are kept, which would only lose locality.
        bool mixed = std::any_of(parts.begin(), parts.end(), [](const Stmt &p) { return p.as<Store>() != nullptr; });
        bool nests = std::all_of(parts.begin(), parts.end(), [](const Stmt &p) { return perfect_nest(p); });
        if (parts.size() < 2 || !(mixed || nests) || op->for_type != ForType::Serial || !fissionable(op->name, parts))
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        Stmt out;
        for (const Stmt &s : parts) {
            Stmt loop = For::make(op->name, op->min, op->extent, op->for_type, op->device_api, s);
            out = out.defined() ? Block::make(out, loop) : loop;
        }
        return out;
    }

private:
    // Loops around one store and nothing else.
    static bool perfect_nest(Stmt s) {
        while (const For *f = s.as<For>()) s = f->body;
        return s.as<Store>() != nullptr;
    }

    static Stmt rebuild(const Allocate *op, const Stmt &body) {
        return Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition, body, op->new_expr,
                              op->free_function);
    }

    // Every buffer written in the loop is accessed at c * v + an offset with one common c != 0,
    // and the offsets of all its accesses (over the loops inside) lie within |c| elements of each
    // other, so iteration v touches only its own elements and the statements can run as separate
    // loops. A scan's read of what the previous iteration wrote (row v - 1) is not its own
    // element: fission would run one statement's iterations before the other's writes it reads.
    static bool fissionable(const std::string &v, const std::vector<Stmt> &parts) {
        Accesses acc;
        for (const Stmt &s : parts) s.accept(&acc);
        if (acc.has_alloc) return false;
        Scope<Interval> inner;
        for (const Stmt &s : parts) inner_loops(s, inner);
        std::set<std::string> vars{v};
        for (const auto &kv : acc.stores) {
            std::optional<int64_t> c;
            Expr first;                     // the first access's offset; the others are placed from it
            int64_t lo = 0, hi = 0;         // over all accesses and the loops inside, relative to first
            auto check = [&](const Expr &idx) {
                auto a = affine_in(base_of(idx), vars);
                if (!a || a->of(v) == 0) return false;
                if (c && *c != a->of(v)) return false;
                c = a->of(v);
                if (!first.defined()) first = a->rest;
                Interval b = bounds_of_expr_in_scope(simplify(a->rest - first), inner);
                auto l = b.has_lower_bound() ? const_int(b.min) : std::nullopt;
                auto h = b.has_upper_bound() ? const_int(b.max) : std::nullopt;
                if (!l || !h) return false;
                lo = std::min(lo, *l);
                hi = std::max(hi, *h + idx.type().lanes() - 1);
                return true;
            };
            for (const Expr &i : kv.second)
                if (!check(i)) return false;
            auto lit = acc.loads.find(kv.first);
            if (lit != acc.loads.end())
                for (const Expr &i : lit->second)
                    if (!check(i)) return false;
            if (hi - lo >= std::llabs(*c)) return false;
        }
        return true;
    }

    // The ranges of the loops inside `s` (constant extents; others leave their variable unbounded).
    static void inner_loops(const Stmt &s, Scope<Interval> &scope) {
        class V : public IRVisitor {
        public:
            Scope<Interval> *scope;
            using IRVisitor::visit;
            void visit(const For *f) override {
                auto mn = const_int(f->min), ext = const_int(f->extent);
                if (mn && ext && !scope->contains(f->name))
                    scope->push(f->name, Interval(Expr(int(*mn)), Expr(int(*mn + *ext - 1))));
                IRVisitor::visit(f);
            }
        } v;
        v.scope = &scope;
        s.accept(&v);
    }

    KernelPlan &plan_;
};

}  // namespace

Stmt fold_accumulators(const Stmt &s, KernelPlan &plan) { return Fold(plan).mutate(s); }

}  // namespace spyre
