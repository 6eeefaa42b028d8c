#include "plan_pipelines.h"

#include <algorithm>
#include <set>

#include "affine.h"
#include "device/dtype.h"
#include "plan_ring_shares.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

std::vector<Stmt> body_sequence(const Stmt &body, std::vector<std::string> *allocated) {
    std::vector<Stmt> out;
    std::vector<Stmt> work{body};
    // Depth-first, preserving order.
    std::function<void(const Stmt &)> walk = [&](const Stmt &s) {
        if (!s.defined()) return;
        if (const Block *b = s.as<Block>()) {
            walk(b->first);
            walk(b->rest);
        } else if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) {
            walk(pc->body);
        } else if (const Allocate *a = s.as<Allocate>()) {
            if (allocated) allocated->push_back(a->name);
            walk(a->body);
        } else if (s.as<Free>()) {
        } else if (const Evaluate *e = s.as<Evaluate>(); e && is_const(e->value)) {
        } else {
            out.push_back(s);
        }
    };
    walk(body);
    return out;
}

bool holds_pipeline(const Stmt &s, const KernelPlan &plan, const void *except) {
    class Finds : public IRVisitor {
    public:
        const KernelPlan *plan;
        const void *except;
        bool found = false;
        using IRVisitor::visit;
        void visit(const For *f) override {
            found |= f != except && plan->pipelines.count(f);
            if (!found) IRVisitor::visit(f);
        }
    } finds;
    finds.plan = &plan, finds.except = except;
    s.accept(&finds);
    return finds.found;
}

namespace {
// The buffers a statement loads, stores or names in a Spyre intrinsic (DMA, matmul: by string
// arguments), added to `names`.
void add_touched(const Stmt &s, std::set<std::string> &names) {
    class Touched : public IRVisitor {
    public:
        std::set<std::string> *names;
        using IRVisitor::visit;
        void visit(const Load *op) override {
            names->insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Store *op) override {
            names->insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Call *op) override {
            for (const Expr &a : op->args)
                if (const StringImm *n = a.as<StringImm>()) names->insert(n->value);
            IRVisitor::visit(op);
        }
    } touched;
    touched.names = &names;
    s.accept(&touched);
}
}  // namespace

std::vector<size_t> prefetched_loads(const std::vector<Stmt> &seq, const std::function<bool(const std::string &)> &is_tile,
                                     bool leading_only) {
    std::set<std::string> touched;  // by the statements so far
    std::vector<size_t> out;
    for (size_t i = 0; i < seq.size(); i++) {
        auto d = as_dma(seq[i]);
        if (leading_only && (!d || d->store)) break;
        if (d && !d->store && is_tile(d->lx) && !touched.count(d->lx)) out.push_back(i);
        add_touched(seq[i], touched);
    }
    return out;
}

namespace {

class Planner : public IRVisitor {
public:
    Planner(KernelPlan &p, bool extended) : plan(p), extended_(extended) {}
    KernelPlan &plan;
    using IRVisitor::visit;

    void visit(const For *op) override {
        auto ext = const_int(op->extent);
        if (!ext || *ext < 2 || (depth_ > 0 && marked(op->name))) return IRVisitor::visit(op);
        std::vector<std::string> allocated;
        std::vector<Stmt> seq = body_sequence(op->body, &allocated);
        std::vector<std::string> tiles;
        auto local_lx = [&](const std::string &b) {
            return std::find(allocated.begin(), allocated.end(), b) != allocated.end() && plan.has(b) &&
                   plan.buffer(b).place == Place::LX;
        };
        // A load into a buffer of an outer loop can be issued an iteration early when it is the
        // only write to that buffer in the loop and each iteration's region lies past the
        // previous one's (a Func stored outside and computed here, Halide's sliding window): an
        // iteration reads only regions loaded by itself and earlier ones.
        std::set<std::string> in_place;
        for (const Stmt &s : extended_ ? seq : std::vector<Stmt>{}) {
            auto d = as_dma(s);
            if (!d || d->store || local_lx(d->lx) || !plan.has(d->lx) || plan.buffer(d->lx).place != Place::LX) continue;
            if (advances(*d, op->name) && writes_to(op->body, d->lx) == 1) in_place.insert(d->lx);
        }
        const std::vector<size_t> prefetched =
            prefetched_loads(seq, [&](const std::string &b) { return local_lx(b) || in_place.count(b) > 0; }, !extended_);
        for (size_t i : prefetched) tiles.push_back(as_dma(seq[i])->lx);
        const bool has_loads = !tiles.empty();
        for (auto it = seq.rbegin(); it != seq.rend(); ++it) {  // trailing stores
            auto d = as_dma(*it);
            if (!d || !d->store) break;
            if (local_lx(d->lx)) tiles.push_back(d->lx);
        }
        if (tiles.empty()) return IRVisitor::visit(op);
        // A prefetch must not read device memory that this loop writes: the write of one iteration
        // could still be in flight when the next iteration's load is issued.
        class Stores : public IRVisitor {
        public:
            std::set<std::string> dev;
            using IRVisitor::visit;
            void visit(const Evaluate *e) override {
                if (auto d = as_dma(Stmt(e)); d && d->store) dev.insert(d->dram);
            }
        } stores;
        op->body.accept(&stores);
        for (size_t i : prefetched)
            if (stores.dev.count(as_dma(seq[i])->dram)) return IRVisitor::visit(op);
        // A loop that only stores (an output tile written back after an inner loop streams its
        // operands, as in a matmul) gives way to an inner loop that loads: overlapping the operand
        // stream matters more than overlapping one store per tile, and both may not fit LX.
        if (!has_loads) {
            size_t before = plan.pipelines.size();
            IRVisitor::visit(op);
            if (plan.pipelines.size() > before) return;
        }
        std::sort(tiles.begin(), tiles.end());
        tiles.erase(std::unique(tiles.begin(), tiles.end()), tiles.end());
        for (const std::string &t : tiles) {
            if (in_place.count(t)) plan.in_place_tiles.insert(t);
            else plan.buffer(t).copies = 2;
        }
        plan.pipelines[op] = tiles;
        // A loop inside is pipelined too when this one only loads (its store tags are then free for
        // the inner one: select_pipelines.cpp), one level deep: an outer loop that fetches a chunk
        // of operands per iteration (key tiles of attention) around an inner loop of tiles.
        bool trailing_store = false;
        for (auto it = seq.rbegin(); it != seq.rend(); ++it) {
            auto d = as_dma(*it);
            if (!d || !d->store) break;
            trailing_store |= local_lx(d->lx);
        }
        // Not around or inside a ring-shared or phased loop: those keep the tags and the order of
        // loads that select_pipelines gives a loop of its own.
        if (extended_ && depth_ == 0 && has_loads && !trailing_store && !marked(op->name)) {
            const size_t before = plan.pipelines.size();
            depth_++;
            op->body.accept(this);
            depth_--;
            // The next iteration's loads are then issued from inside the inner loop (a piece per
            // iteration, select_pipelines.cpp): a tile that only statements before that loop touch
            // is free again by then, and needs no second copy.
            if (plan.pipelines.size() > before) single_copy_before_inner(op, seq, tiles, in_place);
        }
    }

    void single_copy_before_inner(const For *op, const std::vector<Stmt> &seq, const std::vector<std::string> &tiles,
                                  const std::set<std::string> &in_place) {
        size_t inner = 0;
        while (inner < seq.size() && !holds_pipeline(seq[inner], plan, op)) inner++;
        std::set<std::string> late;  // touched from the inner loop on
        for (size_t i = inner; i < seq.size(); i++) add_touched(seq[i], late);
        for (const std::string &t : tiles)
            if (!in_place.count(t) && !late.count(t)) plan.buffer(t).copies = 1;
    }

private:
    // Whether the LX region a load writes moves on by at least its own extent from one iteration
    // of loop `var` to the next.
    bool advances(const DmaCall &d, const std::string &var) const {
        auto a = affine_in(d.lx_offset, {var});
        if (!a || a->of(var) <= 0) return false;
        const int64_t eb = dtype_bytes(plan.buffer(d.lx).type), sb = plan.machine.stick_bytes;
        int64_t extent = (d.run * eb + sb - 1) / sb * sb;
        for (const DmaDim &dim : d.dims) extent += (dim.count - 1) * dim.lx_stride * eb;
        return extent <= a->of(var) * eb;
    }
    // The stores and loads by DMA into buffer `b` in `s`.
    static int writes_to(const Stmt &s, const std::string &b) {
        class Count : public IRVisitor {
        public:
            const std::string *b;
            int n = 0;
            using IRVisitor::visit;
            void visit(const Store *op) override {
                n += op->name == *b;
                IRVisitor::visit(op);
            }
            void visit(const Evaluate *op) override {
                if (auto d = as_dma(Stmt(op)); d && !d->store && d->lx == *b) n++;
                IRVisitor::visit(op);
            }
        } c;
        c.b = &b;
        s.accept(&c);
        return c.n;
    }
    bool marked(const std::string &loop) const {
        return plan.loops.dma_phases(loop) || plan.loops.ring_share_group(loop) > 0;
    }
    bool extended_;
    int depth_ = 0;  // pipelined loops around
};

}  // namespace

void plan_pipelines(const Stmt &s, KernelPlan &plan, bool extended) {
    plan.extended_pipelines = extended;
    Planner p(plan, extended);
    s.accept(&p);
}

}  // namespace spyre
