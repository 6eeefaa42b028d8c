#include "normalize_stmt.h"

#include "device/error.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Normalize : public IRMutator {
public:
    explicit Normalize(const KernelPlan &p) : plan_(p) {}
    using IRMutator::visit;

    Stmt visit(const AssertStmt *) override { return Evaluate::make(0); }

    Stmt visit(const LetStmt *op) override {
        Stmt body = mutate(op->body);
        // Host-side buffer metadata: with fixed shapes nothing on the device needs it. A use that
        // survives is reported by instruction selection as an unknown variable.
        if (mentions_buffer_metadata(op->value) || !stmt_uses_var(body, op->name)) return body;
        return substitute(op->name, mutate(op->value), body);
    }

    Expr visit(const Let *op) override { return mutate(substitute(op->name, op->value, op->body)); }

    // Every loop starts at 0: the later passes read footprints as coefficient x [0, extent).
    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        Expr mn = simplify(mutate(op->min));
        if (!is_const_zero(mn)) body = substitute(op->name, Variable::make(Int(32), op->name) + mn, body);
        return For::make(op->name, 0, simplify(mutate(op->extent)), op->for_type, op->device_api, body);
    }

private:
    static bool mentions_buffer_metadata(const Expr &e) {
        bool found = false;
        class V : public IRVisitor {
        public:
            bool *found;
            using IRVisitor::visit;
            void visit(const Call *c) override {
                if (c->name.rfind("_halide_buffer_get", 0) == 0) *found = true;
                IRVisitor::visit(c);
            }
        } v;
        v.found = &found;
        e.accept(&v);
        return found;
    }
    const KernelPlan &plan_;
};

}  // namespace

Stmt normalize_stmt(const Stmt &s, const KernelPlan &plan) {
    // widening_mul and friends become plain casts and arithmetic the selector knows.
    Stmt r = Normalize(plan).mutate(lower_intrinsics(s));
    return simplify(r);
}

}  // namespace spyre
