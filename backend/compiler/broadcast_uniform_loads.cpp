#include "broadcast_uniform_loads.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class BroadcastUniformLoads : public IRMutator {
    using IRMutator::visit;

    Expr visit(const Load *op) override {
        Expr e = IRMutator::visit(op);
        const Load *l = e.as<Load>();
        const int lanes = l ? l->type.lanes() : 1;
        // A ramp or a broadcast index is already in the form flatten_nested_ramps handles.
        if (lanes == 1 || !is_const_one(l->predicate) || l->index.as<Ramp>() || l->index.as<Broadcast>()) return e;
        Expr first = simplify(extract_lane(l->index, 0));
        for (int i = 1; i < lanes; i++)
            if (!is_const_zero(simplify(extract_lane(l->index, i) - first))) return e;
        Expr scalar = Load::make(l->type.element_of(), l->name, first, l->image, l->param, const_true(),
                                 ModulusRemainder{});
        return Broadcast::make(scalar, lanes);
    }
};

}  // namespace

Stmt broadcast_uniform_loads(const Stmt &s) { return BroadcastUniformLoads().mutate(s); }

}  // namespace spyre
