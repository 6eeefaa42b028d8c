#include "partition_tails.h"

#include <set>

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// Whether a loop extent, allocation size or condition in a Stmt depends on `var` (directly or
// through the lets that hold it).
class DependsOnVar : public IRVisitor {
public:
    explicit DependsOnVar(const std::string &var) { tainted_.insert(var); }
    bool found = false;

private:
    using IRVisitor::visit;
    std::set<std::string> tainted_;

    bool reads_tainted(const Expr &e) const {
        struct Reads : IRVisitor {
            const std::set<std::string> *names;
            bool hit = false;
            using IRVisitor::visit;
            void visit(const Variable *v) override { hit = hit || names->count(v->name); }
        } r;
        r.names = &tainted_;
        e.accept(&r);
        return r.hit;
    }
    template<typename LetT>
    void let(const LetT *op) {
        op->value.accept(this);
        if (reads_tainted(op->value)) tainted_.insert(op->name);
        op->body.accept(this);
    }
    void visit(const LetStmt *op) override { let(op); }
    void visit(const Let *op) override { let(op); }
    void visit(const For *op) override {
        found = found || reads_tainted(op->min) || reads_tainted(op->extent);
        IRVisitor::visit(op);
    }
    void visit(const Allocate *op) override {
        for (const Expr &e : op->extents) found = found || reads_tainted(e);
        IRVisitor::visit(op);
    }
    void visit(const IfThenElse *op) override {
        found = found || reads_tainted(op->condition);
        IRVisitor::visit(op);
    }
};

bool depends_on(const Stmt &s, const std::string &var) {
    DependsOnVar d(var);
    s.accept(&d);
    return d.found;
}

class PartitionTails : public IRMutator {
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        const int64_t *min = as_const_int(op->min), *extent = as_const_int(op->extent);
        const bool parallel = op->for_type == ForType::Parallel, serial = op->for_type == ForType::Serial;
        if (!(parallel || serial) || !min || !extent || *extent < 3 || !depends_on(op->body, op->name))
            return IRMutator::visit(op);
        const int64_t last = *min + *extent - 1;
        // Only the last iteration may differ: a split's guarded tail, whose guards and clamps hold
        // for every earlier iteration. With two or more earlier iterations, a bound that changes
        // on every iteration (a causal mask's, left to tighten_extents) is not taken for one.
        Scope<Interval> first;
        first.push(op->name, Interval(Expr(int(*min)), Expr(int(last - 1))));
        Stmt rest = simplify(op->body, true, first);
        if (depends_on(rest, op->name)) return IRMutator::visit(op);
        rest = mutate(rest);
        // The last iteration runs past its share, its loops' iterations past it guarded: trim them.
        Stmt tail = mutate(simplify(trim_no_ops(simplify(substitute(op->name, Expr(int(last)), op->body)))));
        if (parallel) {
            Stmt body = IfThenElse::make(Variable::make(Int(32), op->name) < int(last), rest, tail);
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        }
        return Block::make(For::make(op->name, op->min, Expr(int(*extent - 1)), op->for_type, op->device_api, rest), tail);
    }
};

}  // namespace

Stmt partition_tails(const Stmt &s) { return PartitionTails().mutate(s); }

}  // namespace spyre
