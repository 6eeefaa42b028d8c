#include "normalize_stmt.h"

#include <set>

#include "device/error.h"
#include "user_terms.h"
#include "visit_loads.h"

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
        Expr value = mutate(op->value);
        check_not_overwritten(op->name, value, body);
        return substitute(op->name, value, body);
    }

    Expr visit(const Let *op) override { return mutate(substitute(op->name, op->value, op->body)); }


    // Halide may allocate a Func twice in disjoint scopes (a split loop's main part and its tail);
    // the later passes key buffers by name, so the second one gets a name of its own.
    Stmt visit(const Allocate *op) override {
        std::string name = op->name;
        Stmt body = op->body;
        if (!allocated_.insert(name).second) {
            name = op->name + "$part" + std::to_string(allocated_.size());
            body = rename_buffer(body, op->name, name);
            allocated_.insert(name);
        }
        return Allocate::make(name, op->type, op->memory_type, op->extents, op->condition, mutate(body),
                              op->new_expr, op->free_function);
    }

    // Every loop starts at 0: the later passes read footprints as coefficient x [0, extent).
    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        Expr mn = simplify(mutate(op->min));
        if (!is_const_zero(mn)) body = substitute(op->name, Variable::make(Int(32), op->name) + mn, body);
        return For::make(op->name, 0, simplify(mutate(op->extent)), op->for_type, op->device_api, body);
    }

private:
    static Stmt rename_buffer(const Stmt &s, const std::string &from, const std::string &to) {
        class R : public IRMutator {
        public:
            std::string from, to;
            using IRMutator::visit;
            Expr visit(const Load *op) override {
                Expr idx = mutate(op->index);
                return Load::make(op->type, op->name == from ? to : op->name, idx, op->image, op->param,
                                  mutate(op->predicate), op->alignment);
            }
            Stmt visit(const Store *op) override {
                return Store::make(op->name == from ? to : op->name, mutate(op->value), mutate(op->index), op->param,
                                   mutate(op->predicate), op->alignment);
            }
            Stmt visit(const Free *op) override { return Free::make(op->name == from ? to : op->name); }
            Stmt visit(const ProducerConsumer *op) override {
                return ProducerConsumer::make(op->name == from ? to : op->name, op->is_producer, mutate(op->body));
            }
        } r;
        r.from = from, r.to = to;
        return r.mutate(s);
    }

    std::set<std::string> allocated_;

    // Substituting a let moves its loads to the uses. Halide keeps a loaded value in a let when a
    // store between the load and a use overwrites it (a Tuple update whose elements read each
    // other's old values); substituted, the use would read the new value. The device has no vector
    // registers to hold such a value, so this is refused, never compiled to a different result.
    static void check_not_overwritten(const std::string &name, const Expr &value, const Stmt &body) {
        std::set<std::string> loaded;
        visit_loads(value, [&](const Load *l) { loaded.insert(l->name); });
        if (loaded.empty()) return;
        class V : public IRVisitor {
        public:
            const std::string *name;
            const std::set<std::string> *loaded;
            std::string stored, hazard;
            using IRVisitor::visit;
            void visit(const Variable *op) override {
                if (op->name == *name && !stored.empty() && hazard.empty()) hazard = stored;
            }
            void visit(const Store *op) override {
                IRVisitor::visit(op);  // the value and index are read before the store
                if (stored.empty() && loaded->count(op->name)) stored = op->name;
            }
            void visit(const For *op) override {
                op->min.accept(this);
                op->extent.accept(this);
                op->body.accept(this);
                op->body.accept(this);  // a later iteration sees an earlier one's stores
            }
        } v;
        v.name = &name, v.loaded = &loaded;
        body.accept(&v);
        if (v.hazard.empty()) return;
        const std::string func = v.hazard.substr(0, v.hazard.rfind('.') == std::string::npos ? v.hazard.size()
                                                                                             : v.hazard.rfind('.'));
        // Halide's buffer of a Tuple element ("state.1") as the user reads it: state[1].
        const std::string element = in_user_terms(v.hazard);
        throw_error("Func ", func, ": a value read from ", element, " is used after ", element,
                    " is overwritten in the same update (a Tuple update whose elements read each other's old "
                    "values); the back end keeps no such value, so order the Tuple's elements so that each is "
                    "stored after every element that reads its old value");
    }


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

namespace {
// strict_float() only marks what Halide must not rewrite; the device is always strict. Removed
// after the last simplification, which would otherwise refactor the float arithmetic.
class StripStrictFloat : public IRMutator {
public:
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        if (op->is_intrinsic(Call::strict_float)) return mutate(op->args[0]);
        return IRMutator::visit(op);
    }
};
}  // namespace

Stmt normalize_stmt(const Stmt &s, const KernelPlan &plan) {
    // widening_mul and friends become plain casts and arithmetic the selector knows.
    Stmt r = Normalize(plan).mutate(lower_intrinsics(s));
    return StripStrictFloat().mutate(simplify(r));
}

}  // namespace spyre
