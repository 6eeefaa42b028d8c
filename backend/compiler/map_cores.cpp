#include "map_cores.h"

#include <numeric>

#include "user_terms.h"

#include "spyre_intrinsics.h"

#include "affine.h"
#include "device/error.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

const char *const kCoreIdVar = "spyre.core_id";
const char *const kBarrierCall = "spyre.barrier";

namespace {

Stmt barrier() { return Evaluate::make(Call::make(Int(32), kBarrierCall, {}, Call::Extern)); }

class FindParallel : public IRVisitor {
public:
    std::vector<const For *> loops;
    using IRVisitor::visit;
    void visit(const For *op) override {
        if (op->for_type == ForType::Parallel) loops.push_back(op);
        IRVisitor::visit(op);
    }
};

class WritesDevice : public IRVisitor {
public:
    explicit WritesDevice(const KernelPlan &p) : plan(p) {}
    const KernelPlan &plan;
    bool found = false;
    using IRVisitor::visit;
    void visit(const Store *op) override {
        if (plan.has(op->name) && plan.buffer(op->name).in_device_memory()) found = true;
        IRVisitor::visit(op);
    }
};

// The per-core share of a split stick dimension must be whole sticks.
class CheckSticks : public IRVisitor {
public:
    CheckSticks(const KernelPlan &p, std::string v) : plan(p), var(std::move(v)) {}
    const KernelPlan &plan;
    std::string var;
    using IRVisitor::visit;
    void check(const std::string &buf, const Expr &index) {
        const Ramp *r = index.as<Ramp>();
        if (!r || !plan.has(buf)) return;
        auto a = affine_in(r->base, {var});
        if (!a) return;
        int64_t lanes = plan.lanes(plan.buffer(buf).type);
        int64_t c = a->of(var);
        if (c % lanes) {
            // The fewest times fewer cores whose shares are whole sticks.
            const int64_t fewer = lanes / std::gcd(c, lanes);
            throw_error("Func ", func_of_loop(var), ": ring split ", var, " gives each core ", c,
                        " elements along the stick dimension of ", plan.buffer(buf).func, ", not whole sticks of ", lanes,
                        ": split it over ", fewer, " times fewer cores (", c * fewer, " elements each), or split a "
                        "dimension that is not ", plan.buffer(buf).func, "'s stick dimension");
        }
    }
    void visit(const Store *op) override {
        check(op->name, op->index);
        IRVisitor::visit(op);
    }
    void visit(const Load *op) override {
        check(op->name, op->index);
        IRVisitor::visit(op);
    }
};

class MapCores : public IRMutator {
public:
    MapCores(KernelPlan &p, int cores) : plan_(p), cores_(cores) {}
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        if (op->for_type != ForType::Parallel) {
            depth_++;
            Stmt s = IRMutator::visit(op);
            depth_--;
            return s;
        }
        std::string func = func_of_loop(op->name);
        if (depth_ > 0) {
            // ring_split(v, ...) names its loop over the cores Var("v_core"), which no directive of
            // the user's shows: say it, so that a reorder can put it last.
            const std::string var = op->name.substr(op->name.rfind('.') + 1);
            throw_error("Func ", func, ": ring split ", op->name, " must be the outermost loop of its stage; ring_split "
                        "names that loop Var(\"", var, "\"): list it last in a reorder() of ", func,
                        ", or ring_split a loop that is already outermost");
        }
        auto ext = const_int(op->extent);
        auto mn = const_int(op->min);
        if (!ext || !mn) throw_error("Func ", func, ": ring split ", op->name, " has a non-constant extent");
        if (*ext > plan_.machine.cores)
            throw_error("Func ", func, ": ring split ", op->name, " over ", *ext, " cores, but the machine has ",
                        plan_.machine.cores);
        CheckSticks cs(plan_, op->name);
        op->body.accept(&cs);
        Expr core = Variable::make(Int(32), kCoreIdVar);
        Stmt body = substitute(op->name, core + int(*mn), op->body);
        if (*ext < cores_) body = IfThenElse::make(core < int(*ext), body);
        return body;
    }

private:
    KernelPlan &plan_;
    int cores_;
    int depth_ = 0;
};

// Stages outside ring-split loops: device-memory writers run on core 0, LX fills everywhere.
class Stages : public IRMutator {
public:
    Stages(KernelPlan &p, MapCores &m) : plan(p), mc(m) {}
    KernelPlan &plan;
    MapCores &mc;
    using IRMutator::visit;
    Stmt visit(const Allocate *op) override {
        return Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition, mutate(op->body),
                              op->new_expr, op->free_function);
    }
    Stmt visit(const ProducerConsumer *op) override {
        return ProducerConsumer::make(op->name, op->is_producer, mutate(op->body));
    }
    Stmt visit(const Block *op) override { return Block::make(mutate(op->first), mutate(op->rest)); }
    Stmt visit(const For *op) override { return stage(Stmt(op)); }
    Stmt visit(const Store *op) override { return stage(Stmt(op)); }
    Stmt visit(const IfThenElse *op) override { return stage(Stmt(op)); }
    Stmt stage(const Stmt &s) {
        FindParallel inner;
        s.accept(&inner);
        if (!inner.loops.empty()) return Block::make(mc.mutate(s), barrier());
        WritesDevice wd(plan);
        s.accept(&wd);
        if (!wd.found) return s;
        Expr core = Variable::make(Int(32), kCoreIdVar);
        return Block::make(IfThenElse::make(core == 0, s), barrier());
    }
};

// An LX buffer filled under a ring split holds, on each core, only that core's share: every read
// must come from the same split (or, after a ring reduction, from the core's own slice).
class CheckLxSplits : public IRVisitor {
public:
    explicit CheckLxSplits(const KernelPlan &p) : plan(p) {}
    const KernelPlan &plan;
    struct Share {
        int64_t cores, stride;
        std::string writer;
    };
    std::map<std::string, Share> shares;
    bool reading = false;
    std::vector<const For *> par;
    using IRVisitor::visit;
    void visit(const For *op) override {
        if (op->for_type == ForType::Parallel) par.push_back(op);
        IRVisitor::visit(op);
        if (op->for_type == ForType::Parallel) par.pop_back();
    }
    Expr base(const Expr &i) {
        if (const Ramp *r = i.as<Ramp>()) return r->base;
        return i;
    }
    void visit(const Store *op) override {
        IRVisitor::visit(op);
        if (reading || par.empty() || !plan.has(op->name) || plan.buffer(op->name).place != Place::LX) return;
        auto a = affine_in(base(op->index), {par.back()->name});
        auto e = const_int(par.back()->extent);
        if (a && e && a->of(par.back()->name) != 0)
            shares[op->name] = Share{*e, a->of(par.back()->name), func_of_loop(par.back()->name)};
    }
    void visit(const Load *op) override {
        IRVisitor::visit(op);
        if (!reading) return;
        auto it = shares.find(op->name);
        if (it == shares.end()) return;
        const Share &sh = it->second;
        Expr b = base(op->index);
        bool ok = false;
        if (!par.empty()) {
            auto a = affine_in(b, {par.back()->name});
            auto e = const_int(par.back()->extent);
            ok = a && e && *e == sh.cores && a->of(par.back()->name) == sh.stride;
        }
        if (!ok) {
            auto a = affine_in(b, {kCoreIdVar});
            ok = a && a->of(kCoreIdVar) == sh.stride;
        }
        if (!ok)
            throw_error("Func ", plan.buffer(op->name).func, " is kept in LX and computed split over ", sh.cores,
                        " cores (by ", sh.writer, "), but it is read ",
                        par.empty() ? std::string("outside any ring split")
                                    : "under the ring split " + par.back()->name + " with another share",
                        "; split its consumers the same way, or keep it in device memory (device_root)");
    }
};

// Each core reads only the elements of an LX buffer that it wrote itself: a buffer filled under a
// ring split holds on each core that core's share alone, and a consumer split the same way may still
// reach past it (a stencil's row y - 1 at the first row of a share, which the neighbouring core
// computed). Checked core by core: each parallel loop's body with its core fixed, simplified (so
// that the per-core branches partition_tails-style lowering leaves are pruned), gives the elements
// every access reaches. Buffers combined across cores by a ring reduction, and accesses whose
// reach is not provable, are left to CheckLxSplits' stride rule.
class CoreSpans : public IRVisitor {
public:
    explicit CoreSpans(const KernelPlan &p) : plan(p) {}
    struct Hull {
        bool known = true;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        void add(const Hull &h) {
            known = known && h.known;
            lo = std::min(lo, h.lo);
            hi = std::max(hi, h.hi);
        }
        bool covers(const Hull &h) const { return known && h.known && (h.lo > h.hi || (lo <= h.lo && h.hi <= hi)); }
    };
    std::map<std::string, Hull> written, read;
    std::set<std::string> ring_reduced;
    bool skip_parallel = false;  // visiting a stage outside the ring splits: their bodies are not its
    bool writes_device = false;

    using IRVisitor::visit;
    void visit(const For *op) override {
        if (skip_parallel && op->for_type == ForType::Parallel) return;
        op->min.accept(this);
        op->extent.accept(this);
        ScopedBinding<Interval> bind(loops, op->name, loop_range(expand(op->min), expand(op->extent), loops));
        op->body.accept(this);
    }
    void visit(const LetStmt *op) override {
        op->value.accept(this);
        ScopedBinding<Expr> bind(lets, op->name, expand(op->value));
        op->body.accept(this);
    }
    void visit(const Store *op) override {
        IRVisitor::visit(op);
        if (!plan.has(op->name)) return;
        if (plan.buffer(op->name).place != Place::LX) {
            writes_device = true;
            return;
        }
        written[op->name].add(reach(op->index));
    }
    void visit(const Load *op) override {
        IRVisitor::visit(op);
        if (plan.has(op->name) && plan.buffer(op->name).place == Place::LX) read[op->name].add(reach(op->index));
    }
    void visit(const Evaluate *op) override {
        if (auto rr = as_ring_reduce(Stmt(op))) ring_reduced.insert(rr->lx);
        IRVisitor::visit(op);
    }

private:
    const KernelPlan &plan;
    Scope<Interval> loops;
    Scope<Expr> lets;

    Expr expand(const Expr &e) const {
        std::map<std::string, Expr> m;
        for (auto it = lets.cbegin(); it != lets.cend(); ++it) m[it.name()] = it.value();
        return m.empty() ? e : substitute(m, e);
    }
    Hull reach(const Expr &index) const {
        Hull h;
        Expr base = index;
        int64_t extra = 0;
        if (const Ramp *r = index.as<Ramp>()) {
            auto st = as_const_int(r->stride);
            if (!st) return Hull{false};
            base = r->base;
            extra = int64_t(r->lanes - 1) * *st;
        }
        Interval b = bounds_of_expr_in_scope(expand(base), loops);
        if (!b.is_bounded()) return Hull{false};
        auto lo = const_int(simplify(b.min)), hi = const_int(simplify(b.max));
        if (!lo || !hi) return Hull{false};
        h.lo = std::min(*lo, *lo + extra);
        h.hi = std::max(*hi, *hi + extra);
        return h;
    }
};

// The statements that run one after another at the top of the kernel (as Stages maps them).
void top_level_stages(const Stmt &s, std::vector<Stmt> &out) {
    if (const Block *b = s.as<Block>()) {
        top_level_stages(b->first, out);
        top_level_stages(b->rest, out);
    } else if (const Allocate *a = s.as<Allocate>()) {
        top_level_stages(a->body, out);
    } else if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) {
        top_level_stages(pc->body, out);
    } else if (s.defined()) {
        out.push_back(s);
    }
}

// The buffers allocated outside every ring split: one per core on Spyre, one for all in Halide's
// meaning (a buffer allocated inside a split is each core's own there too).
std::set<std::string> allocated_outside_splits(const Stmt &s) {
    class V : public IRVisitor {
    public:
        std::set<std::string> names;
        using IRVisitor::visit;
        void visit(const For *op) override {
            if (op->for_type != ForType::Parallel) IRVisitor::visit(op);
        }
        void visit(const Allocate *op) override {
            names.insert(op->name);
            IRVisitor::visit(op);
        }
    } v;
    s.accept(&v);
    return v.names;
}

void check_core_spans(const Stmt &s, const KernelPlan &plan, int num_cores) {
    using Hull = CoreSpans::Hull;
    const std::set<std::string> shared = allocated_outside_splits(s);
    // Most kernels fill no such buffer under a split: nothing to check, and no body to simplify
    // once per core.
    class FillsShared : public IRVisitor {
    public:
        FillsShared(const KernelPlan &p, const std::set<std::string> &b) : plan(p), bufs(b) {}
        const KernelPlan &plan;
        const std::set<std::string> &bufs;
        int depth = 0;
        bool found = false;
        using IRVisitor::visit;
        void visit(const For *op) override {
            depth += op->for_type == ForType::Parallel;
            IRVisitor::visit(op);
            depth -= op->for_type == ForType::Parallel;
        }
        void visit(const Store *op) override {
            found |= depth > 0 && bufs.count(op->name) && plan.has(op->name) && plan.buffer(op->name).place == Place::LX;
            IRVisitor::visit(op);
        }
    } fills(plan, shared);
    s.accept(&fills);
    if (!fills.found) return;
    std::vector<Stmt> stages;
    top_level_stages(s, stages);
    // Per core: what it writes and reads of each LX buffer, and which buffers a split writes.
    std::vector<std::map<std::string, Hull>> writes(static_cast<size_t>(num_cores)), reads(static_cast<size_t>(num_cores));
    std::map<std::string, std::string> split_writer;  // buffer -> the ring split loop that fills it
    std::set<std::string> excluded;
    auto take = [&](const CoreSpans &v, int core) {
        for (const auto &[b, h] : v.written) writes[size_t(core)][b].add(h);
        for (const auto &[b, h] : v.read) reads[size_t(core)][b].add(h);
        excluded.insert(v.ring_reduced.begin(), v.ring_reduced.end());
    };
    for (const Stmt &stage : stages) {
        FindParallel fp;
        stage.accept(&fp);
        for (const For *loop : fp.loops) {
            auto ext = const_int(loop->extent);
            auto mn = const_int(loop->min);
            if (!ext || !mn || *ext > num_cores) return;  // reported by MapCores
            for (int c = 0; c < int(*ext); c++) {
                CoreSpans v(plan);
                simplify(substitute(loop->name, Expr(int(c + *mn)), loop->body)).accept(&v);
                take(v, c);
                for (const auto &kv : v.written) split_writer.emplace(kv.first, loop->name);
            }
        }
        // The stage's work outside its ring splits: on core 0 when it writes device memory, else
        // on every core (map_cores' Stages).
        CoreSpans outside(plan);
        outside.skip_parallel = true;
        stage.accept(&outside);
        for (int c = 0; c < (outside.writes_device ? 1 : num_cores); c++) take(outside, c);
    }
    for (const auto &[buf, writer] : split_writer) {
        if (excluded.count(buf) || !shared.count(buf)) continue;
        for (int c = 0; c < num_cores; c++) {
            auto r = reads[size_t(c)].find(buf);
            if (r == reads[size_t(c)].end() || !r->second.known) continue;
            auto w = writes[size_t(c)].find(buf);
            const Hull none;
            const Hull &have = w == writes[size_t(c)].end() ? none : w->second;
            if (!have.known || have.covers(r->second)) continue;
            std::string computed = have.lo > have.hi ? std::string("none of it")
                                                     : "elements " + std::to_string(have.lo) + " to " + std::to_string(have.hi);
            throw_error("Func ", plan.buffer(buf).func, " is kept in LX, each core computing its share of it (",
                        writer, "), but core ", c, " reads its elements ", r->second.lo, " to ", r->second.hi,
                        " and computed ", computed, ": a core would read rows another core computed (a consumer that "
                        "reads a window around its rows, or that splits them otherwise); compute it at the "
                        "consumer's split (scratchpad_store_at), or keep it in device memory (device_root)");
        }
    }
}

// After mapping, a buffer every access of which is core * stride + (within the slice) only ever
// holds the core's own slice: allocate just the slice and drop the core offset.
class ShrinkShares : public IRMutator {
public:
    ShrinkShares(KernelPlan &p, std::map<std::string, int64_t> strides) : plan(p), strides(std::move(strides)) {}
    KernelPlan &plan;
    std::map<std::string, int64_t> strides;
    using IRMutator::visit;

    static Expr base(const Expr &i) {
        if (const Ramp *r = i.as<Ramp>()) return r->base;
        return i;
    }
    // Keeps only the buffers whose every access moves with the core by exactly the stride.
    void check(const Stmt &s) {
        class V : public IRVisitor {
        public:
            ShrinkShares *self;
            using IRVisitor::visit;
            void look(const std::string &name, const Expr &index) {
                auto it = self->strides.find(name);
                if (it == self->strides.end()) return;
                auto a = affine_in(base(index), {kCoreIdVar});
                if (!a || a->of(kCoreIdVar) != it->second) self->strides.erase(it);
            }
            void visit(const Load *op) override {
                look(op->name, op->index);
                IRVisitor::visit(op);
            }
            void visit(const Store *op) override {
                look(op->name, op->index);
                IRVisitor::visit(op);
            }
            void visit(const Evaluate *op) override {
                if (auto rr = as_ring_reduce(Stmt(op))) look(rr->lx, rr->offset);
                IRVisitor::visit(op);
            }
        } v;
        v.self = this;
        s.accept(&v);
    }
    Expr shifted(const std::string &name, const Expr &index) {
        Expr off = Variable::make(Int(32), kCoreIdVar) * int(strides.at(name));
        if (const Ramp *r = index.as<Ramp>()) return Ramp::make(simplify(r->base - off), r->stride, r->lanes);
        return simplify(index - off);
    }
    Expr visit(const Load *op) override {
        if (!strides.count(op->name)) return IRMutator::visit(op);
        return Load::make(op->type, op->name, shifted(op->name, mutate(op->index)), op->image, op->param,
                          mutate(op->predicate), op->alignment);
    }
    Stmt visit(const Store *op) override {
        if (!strides.count(op->name)) return IRMutator::visit(op);
        return Store::make(op->name, mutate(op->value), shifted(op->name, mutate(op->index)), op->param,
                           mutate(op->predicate), op->alignment);
    }
    // A ring reduction of the core's slice addresses it the same way.
    Stmt visit(const Evaluate *op) override {
        auto rr = as_ring_reduce(Stmt(op));
        if (!rr || !strides.count(rr->lx)) return IRMutator::visit(op);
        rr->offset = shifted(rr->lx, rr->offset);
        return make_ring_reduce(*rr);
    }
    Stmt visit(const Allocate *op) override {
        auto it = strides.find(op->name);
        if (it == strides.end()) return IRMutator::visit(op);
        plan.buffer(op->name).elems = it->second;
        return Allocate::make(op->name, op->type, op->memory_type, {Expr(it->second)}, op->condition,
                              mutate(op->body), op->new_expr, op->free_function);
    }
};

}  // namespace

Stmt map_cores(const Stmt &s, KernelPlan &plan) {
    FindParallel fp;
    s.accept(&fp);
    int cores = 1;
    for (const For *f : fp.loops)
        if (auto e = const_int(f->extent)) cores = std::max<int>(cores, int(*e));
    if (cores > plan.machine.cores) cores = int(plan.machine.cores + 1);  // reported by MapCores below
    plan.num_cores = std::min<int>(cores, int(plan.machine.cores));
    MapCores mc(plan, plan.num_cores);
    if (fp.loops.empty()) return s;
    CheckLxSplits check(plan);
    s.accept(&check);  // the shares
    check.reading = true;
    s.accept(&check);  // their readers
    check_core_spans(s, plan, plan.num_cores);

    Stages stages(plan, mc);
    Stmt mapped = stages.mutate(s);
    std::map<std::string, int64_t> strides;
    for (auto &kv : check.shares) strides[kv.first] = kv.second.stride;
    ShrinkShares shrink(plan, strides);
    shrink.check(mapped);
    return shrink.strides.empty() ? mapped : shrink.mutate(mapped);
}

}  // namespace spyre
