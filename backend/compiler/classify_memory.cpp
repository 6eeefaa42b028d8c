#include "classify_memory.h"

#include "affine.h"
#include "device/dtype_host.h"
#include "device/error.h"
#include "visit_loads.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Classify : public IRVisitor {
public:
    explicit Classify(KernelPlan &p) : plan_(p) {}
    using IRVisitor::visit;

    void visit(const For *op) override {
        depth_++;
        IRVisitor::visit(op);
        depth_--;
    }

    void visit(const Allocate *op) override {
        std::string what = "Func " + op->name;
        BufferInfo b;
        b.name = op->name;
        b.func = op->name;
        if (!op->type.is_scalar() || !dtype_from_host(op->type, &b.type))
            throw_error(what, ": element type ", op->type, " is not supported on Spyre (", kDeviceTypesText, " are)");
        int64_t elems = 1;
        for (const Expr &e : op->extents) {
            auto k = const_int(e);
            // Said in the schedule's terms: the usual cause is a tile whose rows depend on where it
            // is (a mirror boundary condition on the rows of an input staged with stage_in_lx).
            if (!k && op->name.find("_wrapper") != std::string::npos) {
                // stage_in_lx's copy of an input ("in_im$3_global_wrapper$0"): named by the input.
                const size_t g = op->name.find("_global_wrapper");
                std::string input = op->name.substr(0, g != std::string::npos ? g : op->name.find("_wrapper"));
                input = input.substr(0, input.find('$'));
                if (input.size() > 3 && input.compare(input.size() - 3, 3, "_im") == 0) input.resize(input.size() - 3);
                what = "the LX copy of " + input + " (stage_in_lx)";
            }
            if (!k)
                throw_error(what, ": its size changes from one iteration of the loops around it to the next "
                                  "(a boundary condition such as mirror_image or mirror_interior on the rows makes "
                                  "the rows a tile reads depend on the tile); Spyre needs a size fixed at compile "
                                  "time: let the back end stage that input (no stage_in_lx) or apply the boundary "
                                  "condition to a Func computed at root");

            elems *= *k;
        }
        b.elems = elems;
        // One-element allocations are inline reductions' accumulators: registers in spirit, LX here.
        if (op->memory_type == MemoryType::VTCM || depth_ > 0 || elems == 1) {
            b.place = Place::LX;
            if (elems > 1) b.elems = std::max(elems, masked_read_reach(op));
        } else {
            b.place = Place::DeviceTemp;
            b.shape = {elems};
            b.layout = default_layout(1);
            b.slack_elems = read_slack(op, plan_.lanes(b.type));
            auto at = plan_.stick_count_outside.find(op->name);
            if (at != plan_.stick_count_outside.end()) place_stick_count(b, op, at->second, what);
        }
        if (plan_.has(op->name)) throw_internal(what, ": internal: allocated twice");
        plan_.buffers[op->name] = b;
        IRVisitor::visit(op);
    }

private:
    // Elements past the end of a flat device temp that its widest vector read may reach: none when
    // every read is one stick at most, else that read's width in whole sticks.
    static int64_t read_slack(const Allocate *op, int64_t lanes_per_stick) {
        int64_t widest = 0;
        visit_loads(op->body, [&](const Load *l) {
            if (l->name == op->name) widest = std::max<int64_t>(widest, l->type.lanes());
        });
        return widest > lanes_per_stick ? (widest + lanes_per_stick - 1) / lanes_per_stick * lanes_per_stick : 0;
    }

    // How far into an LX buffer its masked vector reads reach, in elements. Halide masks the lanes of
    // a tail vector past a Func's end; lower_store_predicates drops the mask on the loads (the vector
    // unit reads whole sticks), so a consumer whose vectors are wider than the buffer's tail (an
    // int32 copy of 130 columns read 128 lanes at a time) reads past it. The buffer is allocated to
    // the end of the widest such read; a read whose start the loops do not bound reaches to the
    // allocation rounded up to its width.
    static int64_t masked_read_reach(const Allocate *op) {
        class Reach : public IRVisitor {
        public:
            const Allocate *alloc = nullptr;
            int64_t elems = 0, reach = 0;
            Scope<Interval> loops;
            using IRVisitor::visit;
            void visit(const For *f) override {
                ScopedBinding<Interval> bind(loops, f->name, loop_range(f->min, f->extent, loops));
                IRVisitor::visit(f);
            }
            void visit(const LetStmt *l) override {
                ScopedBinding<Interval> bind(loops, l->name, bounds_of_expr_in_scope(l->value, loops));
                IRVisitor::visit(l);
            }
            void visit(const Load *l) override {
                IRVisitor::visit(l);
                if (l->name != alloc->name || is_const_one(l->predicate)) return;
                const int64_t lanes = l->type.lanes();
                const Ramp *r = l->index.as<Ramp>();
                const Interval at = r ? bounds_of_expr_in_scope(r->base, loops) : Interval();
                const std::optional<int64_t> hi = at.has_upper_bound() ? const_int(simplify(at.max)) : std::nullopt;
                const std::optional<int64_t> stride = r ? const_int(r->stride) : std::nullopt;
                if (hi && stride && *stride == 1) {
                    reach = std::max(reach, *hi + lanes);
                } else {
                    reach = std::max(reach, (elems + lanes - 1) / lanes * lanes);
                }
            }
        } v;
        v.alloc = op;
        v.elems = 1;
        for (const Expr &e : op->extents) v.elems *= *as_const_int(e);
        op->body.accept(&v);
        return v.reach;
    }

    // A device_layout with the stick count outside storage dim `at`: the buffer keeps its storage
    // dims (innermost first, as Halide flattens them) with the stick count moved, which instruction
    // selection reaches through place_dma (layout_dma.h). Halide's rows are the layout's only when
    // they are whole sticks.
    void place_stick_count(BufferInfo &b, const Allocate *op, const KernelPlan::StickCountPlace &place,
                           const std::string &what) {
        const int rank = int(op->extents.size()), at = place.outside;
        if (int(place.storage_dims.size()) != rank)
            throw_internal(what, ": internal: ", rank, " extents for ", place.storage_dims.size(), " storage dims");
        std::vector<int64_t> shape;  // the allocation's extents are in the Func's dim order
        for (int d : place.storage_dims) shape.push_back(*as_const_int(op->extents.at(size_t(d))));
        const int64_t lanes = plan_.lanes(b.type);
        if (shape[0] % lanes)
            throw_error(what, ": a device_layout with its stick count outside a dimension needs rows of whole sticks; "
                              "its rows hold ", shape[0], " elements (stick_vectorize its first dimension, or keep the "
                              "stick count innermost)");
        b.shape = shape;
        b.layout.stick_dim = 0;
        b.layout.order.clear();
        for (int d = rank - 1; d >= 1; d--) {
            if (d == at) b.layout.order.push_back(0);
            b.layout.order.push_back(d);
        }
    }

    KernelPlan &plan_;
    int depth_ = 0;
};

}  // namespace

void classify_memory(const Stmt &s, KernelPlan &plan) {
    Classify c(plan);
    s.accept(&c);
}

}  // namespace spyre
