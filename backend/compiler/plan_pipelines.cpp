#include "plan_pipelines.h"

#include <algorithm>

#include "affine.h"
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

namespace {

class Planner : public IRVisitor {
public:
    explicit Planner(KernelPlan &p) : plan(p) {}
    KernelPlan &plan;
    using IRVisitor::visit;

    void visit(const For *op) override {
        auto ext = const_int(op->extent);
        if (!ext || *ext < 2) return IRVisitor::visit(op);
        std::vector<std::string> allocated;
        std::vector<Stmt> seq = body_sequence(op->body, &allocated);
        std::vector<std::string> tiles;
        auto local_lx = [&](const std::string &b) {
            return std::find(allocated.begin(), allocated.end(), b) != allocated.end() && plan.has(b) &&
                   plan.buffer(b).place == Place::LX;
        };
        for (const Stmt &s : seq) {  // leading loads
            auto d = as_dma(s);
            if (!d || d->store) break;
            if (local_lx(d->lx)) tiles.push_back(d->lx);
        }
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
        for (const Stmt &s : seq) {
            auto d = as_dma(s);
            if (!d || d->store) break;
            if (stores.dev.count(d->dram)) return IRVisitor::visit(op);
        }
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
        for (const std::string &t : tiles) plan.buffer(t).copies = 2;
        plan.pipelines[op] = tiles;
        // Nested loops are not pipelined again: their DMA belongs to this pipeline's iterations.
    }
};

}  // namespace

void plan_pipelines(const Stmt &s, KernelPlan &plan) {
    Planner p(plan);
    s.accept(&p);
}

}  // namespace spyre
