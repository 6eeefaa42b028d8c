#include "classify_memory.h"

#include "affine.h"
#include "device/dtype_host.h"
#include "device/error.h"

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
            if (!k) throw_error(what, ": allocation size ", e, " is not a compile-time constant");
            elems *= *k;
        }
        b.elems = elems;
        // One-element allocations are inline reductions' accumulators: registers in spirit, LX here.
        if (op->memory_type == MemoryType::VTCM || depth_ > 0 || elems == 1) {
            b.place = Place::LX;
        } else {
            b.place = Place::DeviceTemp;
            b.shape = {elems};
            b.layout = default_layout(1);
        }
        if (plan_.has(op->name)) throw_error(what, ": internal: allocated twice");
        plan_.buffers[op->name] = b;
        IRVisitor::visit(op);
    }

private:
    KernelPlan &plan_;
    int depth_ = 0;
};

}  // namespace

void classify_memory(const Stmt &s, KernelPlan &plan) {
    Classify c(plan);
    s.accept(&c);
}

}  // namespace spyre
