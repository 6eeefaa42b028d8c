#include "lower_ring_reductions.h"

#include "affine.h"
#include "device/error.h"
#include "map_cores.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// For each LX buffer written under a parallel loop: that loop's extent and the stride of its
// variable in the buffer's index (the slice of one core).
struct Partials {
    int64_t cores = 0;
    int64_t stride = 0;
};

class FindPartials : public IRVisitor {
public:
    explicit FindPartials(const KernelPlan &p) : plan(p) {}
    const KernelPlan &plan;
    std::map<std::string, Partials> found;
    std::vector<const For *> parallel;
    using IRVisitor::visit;
    void visit(const For *op) override {
        if (op->for_type == ForType::Parallel) parallel.push_back(op);
        IRVisitor::visit(op);
        if (op->for_type == ForType::Parallel) parallel.pop_back();
    }
    void visit(const Store *op) override {
        IRVisitor::visit(op);
        if (parallel.empty() || !plan.has(op->name) || plan.buffer(op->name).place != Place::LX) return;
        const For *p = parallel.back();
        auto ext = const_int(p->extent);
        auto a = affine_in(op->index, {p->name});
        if (!ext || !a || a->of(p->name) <= 0) return;
        found[op->name] = Partials{*ext, a->of(p->name)};
    }
};

class Lower : public IRMutator {
public:
    Lower(KernelPlan &p, std::map<std::string, Partials> partials) : plan_(p), partials_(std::move(partials)) {}
    using IRMutator::visit;

    // Ring reductions run on every core, so each goes just before the outermost loop of its merge,
    // where core mapping leaves it outside any core-0-only stage.
    Stmt visit(const For *op) override {
        depth_++;
        Stmt r = merge(op);
        depth_--;
        if (depth_ > 0 || pending_.empty()) return r;
        std::vector<Stmt> seq = pending_;
        pending_.clear();
        seq.push_back(r);
        return Block::make(seq);
    }

    Stmt merge(const For *op) {
        // A merge: for v in cores: D[i] = D[i] op B[v * stride + rest], with D[i] free of v.
        const Store *st = op->body.as<Store>();
        if (!st || op->for_type != ForType::Serial) return IRMutator::visit(op);
        int red = -1;
        Expr acc, val;
        if (const Add *a = st->value.as<Add>()) red = 0, acc = a->a, val = a->b;
        else if (const Max *a = st->value.as<Max>()) red = 1, acc = a->a, val = a->b;
        else if (const Min *a = st->value.as<Min>()) red = 2, acc = a->a, val = a->b;
        const Load *d = acc.defined() ? acc.as<Load>() : nullptr;
        const Load *b = val.defined() ? val.as<Load>() : nullptr;
        if (!d || !b || d->name != st->name || !equal(d->index, st->index)) return IRMutator::visit(op);
        auto it = partials_.find(b->name);
        auto ext = const_int(op->extent);
        if (it == partials_.end() || !ext || *ext != it->second.cores || stmt_uses_var(Stmt(st), op->name) == false)
            return IRMutator::visit(op);
        auto ai = affine_in(b->index, {op->name});
        if (!ai || ai->of(op->name) != it->second.stride || expr_uses_var(st->index, op->name))
            return IRMutator::visit(op);
        const BufferInfo &bi = plan_.buffer(b->name);
        int64_t stride = it->second.stride;
        if ((stride * dtype_bytes(bi.type)) % plan_.machine.stick_bytes)
            throw_error("Func ", plan_.buffer(st->name).func, ": ring split of its reduction leaves ", stride,
                        " partial values per core, not whole sticks of ", plan_.lanes(bi.type),
                        "; reduce more values per core or keep the reduction on one core");
        Expr core = Variable::make(Int(32), kCoreIdVar);
        RingReduceCall rr;
        rr.lx = b->name;
        rr.offset = core * int(stride);
        rr.elems = stride;
        rr.op = red;
        reduced_.insert(b->name);
        // The merge of one core's slice, which now holds every core's contribution.
        Expr combined = substitute(op->name, core, val);
        Expr value = red == 0 ? acc + combined : red == 1 ? max(acc, combined) : min(acc, combined);
        pending_.push_back(make_ring_reduce(rr));
        return Store::make(st->name, value, st->index, st->param, st->predicate, st->alignment);
    }

    std::set<std::string> reduced_;

private:
    KernelPlan &plan_;
    std::map<std::string, Partials> partials_;
    std::vector<Stmt> pending_;
    int depth_ = 0;
};

}  // namespace

Stmt lower_ring_reductions(const Stmt &s, KernelPlan &plan) {
    FindPartials fp(plan);
    s.accept(&fp);
    if (fp.found.empty()) return s;
    Lower l(plan, fp.found);
    return l.mutate(s);
}

}  // namespace spyre
