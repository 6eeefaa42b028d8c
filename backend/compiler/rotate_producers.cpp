#include "rotate_producers.h"

#include <algorithm>
#include <set>

#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// Buffers a statement loads from and stores to.
struct Touched : public IRVisitor {
    explicit Touched(const LoopDirectives &l) : loops(l) {}
    const LoopDirectives &loops;
    std::set<std::string> loads, stores;
    bool pe = false;   // holds a PE-array matmul loop
    bool dma = false;  // moves device memory
    using IRVisitor::visit;
    void visit(const Evaluate *op) override {
        dma |= as_dma(Stmt(op)).has_value();
        IRVisitor::visit(op);
    }
    void visit(const Load *op) override {
        loads.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        stores.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const For *op) override {
        pe |= loops.pe(op->name);
        IRVisitor::visit(op);
    }
};

// Renames a buffer's loads and stores.
class Rename : public IRMutator {
public:
    Rename(const std::string &from, const std::string &to) : from_(from), to_(to) {}
    using IRMutator::visit;
    Expr visit(const Load *op) override {
        Expr index = mutate(op->index);
        if (op->name != from_) return Load::make(op->type, op->name, index, op->image, op->param, op->predicate, op->alignment);
        return Load::make(op->type, to_, index, Buffer<>(), Parameter(), op->predicate, op->alignment);
    }
    Stmt visit(const Store *op) override {
        Expr value = mutate(op->value), index = mutate(op->index);
        return Store::make(op->name == from_ ? to_ : op->name, value, index, op->param, op->predicate, op->alignment);
    }
    Stmt visit(const ProducerConsumer *op) override {
        Stmt body = mutate(op->body);
        return ProducerConsumer::make(op->name == from_ ? to_ : op->name, op->is_producer, body);
    }
    Stmt visit(const Free *op) override { return Free::make(op->name == from_ ? to_ : op->name); }

private:
    std::string from_, to_;
};

// Puts `next` right after the Free of `buf` (Halide frees a buffer after its last use).
class InsertAfterFree : public IRMutator {
public:
    InsertAfterFree(const std::string &buf, const Stmt &next) : buf_(buf), next_(next) {}
    bool done = false;
    using IRMutator::visit;
    Stmt visit(const Free *op) override {
        if (op->name != buf_ || done) return op;
        done = true;
        return Block::make(Stmt(op), next_);
    }

private:
    std::string buf_;
    Stmt next_;
};

class Rotate : public IRMutator {
public:
    explicit Rotate(KernelPlan &p) : plan_(p) {}
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        // The trip count may be a register's (a causal key loop): pairs, then a last odd iteration.
        const Expr count = op->extent;
        auto n = as_const_int(count);
        const Allocate *alloc = body.as<Allocate>();
        if ((n && *n < 2) || op->for_type != ForType::Serial || !alloc || !plan_.has(alloc->name) ||
            plan_.buffer(alloc->name).place != Place::LX || !is_const_zero(op->min))
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        const std::string buf = alloc->name;
        // The body: the buffer's producer (a matmul on the PE array writing only it), then the rest.
        const Block *seq = alloc->body.as<Block>();
        const ProducerConsumer *prod = seq ? seq->first.as<ProducerConsumer>() : nullptr;
        Touched p(plan_.loops), r(plan_.loops);
        if (prod) {
            prod->accept(&p);
            seq->rest.accept(&r);
        }
        // Only compute from LX (a matmul's K pipeline keeps its own double buffering).
        const bool fits = prod && prod->is_producer && prod->name == buf && p.pe && !p.dma &&
                          p.stores == std::set<std::string>{buf};
        bool independent = fits;
        // The next iteration's producer moves before the rest of this one: it must read nothing the
        // rest writes.
        for (const std::string &b : p.loads)
            if (b != buf && r.stores.count(b)) independent = false;
        if (!independent) return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);

        const std::string odd = buf + ".odd";
        BufferInfo twin = plan_.buffer(buf);
        twin.name = odd;
        plan_.buffers[odd] = twin;
        const std::string pair = op->name + ".pair";
        const Expr pv = Variable::make(Int(32), pair);
        auto iteration = [&](const Stmt &s, const Expr &j) { return substitute(op->name, simplify(j), s); };
        auto named = [&](const Stmt &s, int parity) { return parity ? Rename(buf, odd).mutate(s) : s; };
        const Stmt produce = Stmt(prod);
        // Iteration 2 pair + parity, producing iteration j + 1 after its last read of its buffer.
        auto one = [&](int parity) {
            const Expr j = pv * 2 + parity;
            Stmt next = named(iteration(produce, j + 1), 1 - parity);
            if (parity == 1) next = IfThenElse::make(j + 1 < count, next);
            InsertAfterFree ins(parity ? odd : buf, next);
            Stmt rest = ins.mutate(named(iteration(seq->rest, j), parity));
            if (!ins.done) rest = Block::make(rest, next);
            return rest;
        };
        auto when = [](const Expr &cond, const Stmt &s) {
            Expr c = simplify(cond);
            if (is_const_one(c)) return s;
            if (is_const_zero(c)) return Stmt();
            return IfThenElse::make(c, s);
        };
        std::vector<Stmt> seq_out;
        seq_out.push_back(when(count > 0, iteration(produce, 0)));
        seq_out.push_back(For::make(pair, 0, simplify(count / 2), ForType::Serial, op->device_api,
                                    Block::make(one(0), one(1))));
        seq_out.push_back(when(count % 2 == 1, iteration(seq->rest, count - 1)));  // parity 0, nothing next
        seq_out.erase(std::remove_if(seq_out.begin(), seq_out.end(), [](const Stmt &s) { return !s.defined(); }),
                      seq_out.end());
        Stmt s = Block::make(seq_out);
        for (const std::string &b : {odd, buf})
            s = Allocate::make(b, alloc->type, alloc->memory_type, alloc->extents, alloc->condition, s);
        return s;
    }

private:
    KernelPlan &plan_;
};

}  // namespace

Stmt rotate_producers(const Stmt &s, KernelPlan &plan) { return Rotate(plan).mutate(s); }

}  // namespace spyre
