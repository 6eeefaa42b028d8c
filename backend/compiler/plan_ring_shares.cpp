#include "plan_ring_shares.h"

#include <cctype>
#include <cstring>

#include "device/error.h"
#include "map_cores.h"
#include "plan_pipelines.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

int ring_share_group(const std::string &loop_name) {
    size_t at = loop_name.rfind(kRingShareSuffix);
    if (at == std::string::npos) return 0;
    std::string digits = loop_name.substr(at + std::strlen(kRingShareSuffix));
    if (digits.empty() || digits.size() > 4) return 0;
    for (char c : digits)
        if (!std::isdigit(static_cast<unsigned char>(c))) return 0;
    return std::stoi(digits);
}

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

class Planner : public IRVisitor {
public:
    explicit Planner(KernelPlan &p) : plan(p) {}
    KernelPlan &plan;
    using IRVisitor::visit;

    void visit(const For *op) override {
        int g = ring_share_group(op->name);
        if (g == 0) return IRVisitor::visit(op);
        std::string where = "ring_share on loop " + op->name;
        if (g < 2 || plan.num_cores % g != 0)
            throw_error(where, ": runs of ", g, " cores do not divide the kernel's ", plan.num_cores,
                        " cores (a run needs at least 2)");
        auto it = plan.pipelines.find(op);
        if (it == plan.pipelines.end())
            throw_error(where, ": the loop's tiles are not double-buffered (no DMA-staged tile at this loop, or two "
                               "copies do not fit the usable LX), so there is nothing to share");
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
        if (share.tiles.empty()) {
            std::string list;
            for (const std::string &v : varying) list += (list.empty() ? "" : ", ") + v;
            throw_error(where, ": no tile staged at this loop is the same on every core of a run of ", g,
                        " cores (", list.empty() ? "no loads" : "each core reads its own tile of " + list,
                        "); share an operand that the run's cores all need, or change the core split");
        }
        plan.ring_shares[op] = share;
        IRVisitor::visit(op);
    }
};

}  // namespace

void plan_ring_shares(const Stmt &s, KernelPlan &plan) {
    Planner p(plan);
    s.accept(&p);
}

}  // namespace spyre
