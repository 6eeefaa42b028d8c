#include "allocate_lx.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "device/error.h"
#include "device/lx_arena.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Allocator : public IRVisitor {
public:
    explicit Allocator(KernelPlan &p) : plan(p) {}
    KernelPlan &plan;
    LxArena lx{0, /*reclaim_top=*/true};  // buffers freed where their scope ends: a stack
    int64_t peak = 0;
    std::vector<std::string> live, at_peak;
    std::set<std::string> pinned;  // tiles of the enclosing pipelined loops
    using IRVisitor::visit;

    // Whole sticks; and at least a whole fp16 stick's worth of elements (64), because instruction
    // selection computes per-group scalars as vectors of that many elements (select_vector.cpp,
    // scalar_value) and so reads that far past a short fp32 or int32 buffer.
    int64_t footprint(const BufferInfo &b) const {
        int64_t sb = plan.machine.stick_bytes;
        int64_t eb = dtype_bytes(b.type), half_lanes = sb / 2;
        int64_t elems = b.bytes() / eb;
        int64_t bytes = std::max(b.bytes(), (elems + half_lanes - 1) / half_lanes * half_lanes * eb);
        return (bytes + sb - 1) / sb * sb * b.copies;
    }

    // A pipelined loop's tiles are written by the prefetch of the next iteration while the rest of
    // the body runs, so they are live for the whole loop, wherever their Allocate sits inside it.
    void visit(const For *op) override {
        auto it = plan.pipelines.find(op);
        if (it == plan.pipelines.end()) return IRVisitor::visit(op);
        std::vector<std::string> tiles;
        for (const std::string &t : it->second)
            if (!plan.in_place_tiles.count(t)) tiles.push_back(t);  // allocated where they are
        std::vector<int> ids;
        for (const std::string &t : tiles) {
            BufferInfo &b = plan.buffer(t);
            ids.push_back(*lx.alloc(footprint(b)));
            b.lx_offset = int32_t(std::min<int64_t>(lx.offset(ids.back()), INT32_MAX));
            live.push_back(t);
            pinned.insert(t);
        }
        if (lx.top() > peak) {
            peak = lx.top();
            at_peak = live;
        }
        op->body.accept(this);
        for (size_t i = ids.size(); i-- > 0;) lx.free(ids[i]);
        for (size_t i = 0; i < tiles.size(); i++) live.pop_back();
        for (const std::string &t : tiles) pinned.erase(t);
    }

    void visit(const Allocate *op) override {
        if (pinned.count(op->name)) return op->body.accept(this);
        if (!plan.has(op->name) || plan.buffer(op->name).place != Place::LX) return IRVisitor::visit(op);
        BufferInfo &b = plan.buffer(op->name);
        const int id = *lx.alloc(footprint(b));
        b.lx_offset = int32_t(std::min<int64_t>(lx.offset(id), INT32_MAX));
        live.push_back(op->name);
        if (lx.top() > peak) {
            peak = lx.top();
            at_peak = live;
        }
        op->body.accept(this);
        live.pop_back();
        lx.free(id);
    }
};

}  // namespace

void allocate_lx(const Stmt &s, KernelPlan &plan) {
    const int64_t usable = plan.machine.lx_usable_bytes;
    for (int attempt = 0; attempt < 2; attempt++) {
        Allocator a(plan);
        s.accept(&a);
        plan.lx_peak_bytes = a.peak;
        if (a.peak <= usable) return;
        if (attempt == 0 && !plan.pipelines.empty()) {
            // Give up double buffering before giving up the kernel.
            for (auto &kv : plan.pipelines)
                for (const std::string &b : kv.second) plan.buffer(b).copies = 1;
            plan.pipelines.clear();
            plan.in_place_tiles.clear();
            continue;
        }
        std::ostringstream os;
        const std::string &top = a.at_peak.empty() ? plan.kernel_name : plan.buffer(a.at_peak.back()).func;
        os << "Func " << top << ": LX overflow: the kernel needs " << a.peak << " bytes of LX per core at its peak, "
           << "the usable LX is " << usable << " bytes; live there:";
        for (const std::string &n : a.at_peak) {
            const BufferInfo &b = plan.buffer(n);
            os << " " << n << " (" << a.footprint(b) << " bytes)";
        }
        os << ". Tile the Func (split) or keep less of it in the scratchpad";
        throw Error(os.str(), ErrorKind::LxOverflow, "LX overflow");
    }
}

}  // namespace spyre
