// Visiting every Load of an expression or statement, outermost first: the passes that ask which buffers an
// expression reads (a store reading its own element, the buffers a value loads) share it.
#pragma once

#include "Halide.h"

namespace spyre {

// Calls f(const Halide::Internal::Load *) for each Load in e (an Expr or a Stmt), including those
// inside the indices of others.
template <typename Node, typename F>
void visit_loads(const Node &e, F f) {
    class V : public Halide::Internal::IRVisitor {
    public:
        F *f;
        using Halide::Internal::IRVisitor::visit;
        void visit(const Halide::Internal::Load *op) override {
            (*f)(op);
            Halide::Internal::IRVisitor::visit(op);
        }
    } v;
    v.f = &f;
    e.accept(&v);
}

}  // namespace spyre
