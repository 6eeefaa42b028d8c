#include "plan_ring_shares.h"


#include "device/error.h"
#include "map_cores.h"
#include "plan_pipelines.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// The tile a load writes is one contiguous LX range (what a ring transfer moves).
bool dense_in_lx(const DmaCall &d, int64_t lanes) {
    int64_t expect = (d.run + lanes - 1) / lanes * lanes;
    for (const DmaDim &dim : d.dims) {
        if (dim.count > 1 && dim.lx_stride != expect) return false;
        expect *= dim.count;
    }
    return true;
}

// Whether the load reads the same device memory on every core of each run of `g` cores.
bool same_across_runs(const DmaCall &d, int g, int cores) {
    for (int c = 0; c < cores; c++) {
        int first = c / g * g;
        if (c == first) continue;
        Expr here = substitute(kCoreIdVar, Expr(c), d.dram_offset);
        Expr there = substitute(kCoreIdVar, Expr(first), d.dram_offset);
        if (!is_const_zero(simplify(here - there))) return false;
    }
    return true;
}

class RingSharePlanner : public IRVisitor {
public:
    RingSharePlanner(KernelPlan &p, const Stmt &r) : plan(p), root(r) {}
    KernelPlan &plan;
    Stmt root;
    using IRVisitor::visit;

    void visit(const For *op) override {
        const bool pipelined = plan.pipelines.count(op) != 0;
        if (pipelined) enclosing_.push_back(op);
        int g = plan.loops.ring_share_group(op->name);
        if (g != 0) mark(op, g);
        loops_.push_back(op);
        IRVisitor::visit(op);
        loops_.pop_back();
        if (pipelined) enclosing_.pop_back();
    }

private:
    std::vector<const For *> enclosing_;  // pipelined loops around the current one, outermost first
    std::vector<const For *> loops_;      // every loop around the current one, outermost first

    void mark(const For *op, int g) {
        std::string where = "ring_share on " + op->name;  // in user terms: "loop ko of acc's update 1 (its ring share)"
        if (g < 2 || plan.num_cores % g != 0)
            throw_error(where, ": runs of ", g, " cores do not divide the kernel's ", plan.num_cores,
                        " cores (a run needs at least 2)");
        // When the loop's tiles fit LX whole, the back end stages them around an enclosing loop
        // instead (which is then the pipelined one): share the tiles there.
        const For *at = op;
        if (!plan.pipelines.count(op) && !enclosing_.empty()) at = enclosing_.back();
        if (!plan.pipelines.count(at)) return share_unpipelined(op, g, where);
        if (plan.ring_shares.count(at)) return;  // shared already, for the same run length
        share_at(at, g, where);
    }

    // No double buffering around the loop: share the loads inside it one at a time.
    void share_unpipelined(const For *op, int g, const std::string &where) {
        class Loads : public IRVisitor {
        public:
            std::vector<std::pair<const Evaluate *, DmaCall>> found;
            using IRVisitor::visit;
            void visit(const Evaluate *e) override {
                if (auto d = as_dma(Stmt(e)); d && !d->store) found.push_back({e, *d});
            }
        } loads;
        op->body.accept(&loads);
        // Tiles that fit whole are loaded once, just before the loop (and the Func's other loops,
        // such as its initialisation), in the statements around it: take those loads.
        const std::string func = op->name.substr(0, op->name.find('.') + 1);
        for (size_t level = loops_.size() + 1; loads.found.empty() && level-- > 0;) {
            // The statements around the loop (or around the Func's loop that holds it), innermost first.
            std::vector<Stmt> seq = body_sequence(level == 0 ? root : loops_[level - 1]->body);
            size_t i = 0;
            while (i < seq.size() && !holds(seq[i], op)) i++;
            if (i == seq.size()) continue;
            while (i-- > 0) {
                const For *f = seq[i].as<For>();
                if (f && f->name.compare(0, func.size(), func) == 0) continue;
                const Evaluate *e = seq[i].as<Evaluate>();
                auto d = e ? as_dma(seq[i]) : std::nullopt;
                if (!d || d->store) break;
                loads.found.push_back({e, *d});
            }
        }
        std::vector<std::string> varying;
        int shared = 0;
        for (const auto &l : loads.found) {
            const BufferInfo &lx = plan.buffer(l.second.lx);
            if (same_across_runs(l.second, g, plan.num_cores) && dense_in_lx(l.second, plan.lanes(lx.type))) {
                plan.ring_shared_loads[l.first] = g;
                shared++;
            } else {
                varying.push_back(l.second.dram);
            }
        }
        if (shared == 0) no_shared_tile(where, g, varying);
    }

    // Whether s is the loop or holds it.
    static bool holds(const Stmt &s, const For *op) {
        class Find : public IRVisitor {
        public:
            const For *target;
            bool found = false;
            using IRVisitor::visit;
            void visit(const For *f) override {
                if (f == target) found = true;
                else if (!found) IRVisitor::visit(f);
            }
        } find;
        find.target = op;
        s.accept(&find);
        return find.found;
    }

    [[noreturn]] static void no_shared_tile(const std::string &where, int g, const std::vector<std::string> &varying) {
        std::string list;
        for (const std::string &v : varying) list += (list.empty() ? "" : ", ") + v;
        throw_error(where, ": no tile staged at this loop is the same on every core of a run of ", g, " cores (",
                    list.empty() ? "no loads" : "each core reads its own tile of " + list,
                    "); share an operand that the run's cores all need, or change the core split");
    }

    void share_at(const For *op, int g, const std::string &where) {
        KernelPlan::RingShare share;
        share.group = g;
        std::vector<std::string> varying;
        for (const Stmt &s : body_sequence(op->body)) {  // the leading loads, as the pipeline issues them
            auto d = as_dma(s);
            if (!d || d->store) break;
            const BufferInfo &lx = plan.buffer(d->lx);
            if (same_across_runs(*d, g, plan.num_cores) && dense_in_lx(*d, plan.lanes(lx.type)))
                share.tiles.insert(d->lx);
            else
                varying.push_back(d->dram);
        }
        if (share.tiles.empty()) no_shared_tile(where, g, varying);
        plan.ring_shares[op] = share;
    }
};

}  // namespace

void plan_ring_shares(const Stmt &s, KernelPlan &plan) {
    RingSharePlanner p(plan, s);
    s.accept(&p);
}

}  // namespace spyre
