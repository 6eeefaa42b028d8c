#include "lower_gathers.h"

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "affine.h"
#include "device/error.h"
#include "device/layout.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// One read of an id buffer inside another access's index.
struct IndexRead {
    const Load *id = nullptr;
    std::string outer;  // the buffer the index addresses
    Expr outer_index;
    bool outer_store = false;
};

// e with every load replaced by the variable gather$id.
Expr ids_as_variable(const Expr &e) {
    class Sub : public IRMutator {
    public:
        using IRMutator::visit;
        Expr visit(const Load *op) override { return Variable::make(op->type, "gather$id"); }
    } sub;
    return sub.mutate(e);
}

// The loads of buffers (in device memory, or ids a schedule put in LX) that appear in the index of
// another load or store.
class FindIndexReads : public IRVisitor {
public:
    explicit FindIndexReads(const KernelPlan &p) : plan_(p) {}
    std::vector<IndexRead> reads;

private:
    using IRVisitor::visit;
    const KernelPlan &plan_;
    IndexRead where_;  // the access whose index is being visited (outer empty: none)

    void index_of(const std::string &name, const Expr &index, bool store) {
        const IndexRead saved = where_;
        where_.outer = name;
        where_.outer_index = index;
        where_.outer_store = store;
        index.accept(this);
        where_ = saved;
    }
    void visit(const Load *op) override {
        if (!where_.outer.empty() && plan_.has(op->name)) {
            IndexRead r = where_;
            r.id = op;
            reads.push_back(r);
        }
        index_of(op->name, op->index, false);
        op->predicate.accept(this);
    }
    void visit(const Store *op) override {
        op->value.accept(this);
        index_of(op->name, op->index, true);
        op->predicate.accept(this);
    }
};

// The parts of an index that read memory (a clamped id), each replaced by a variable gather$atom<i>
// so that the index is affine in them: what multiplies each is its row stride, however Halide
// distributed the products (((clamp(id) * 4) + xo) * 64 for a table of 256-wide rows in tiles).
class Atoms : public IRMutator {
public:
    std::vector<Expr> atoms;

private:
    using IRMutator::visit;
    Expr atom(const Expr &e) {
        if (!reads_memory(e)) return e;
        atoms.push_back(e);
        return Variable::make(Int(32), "gather$atom" + std::to_string(atoms.size() - 1));
    }
    Expr visit(const Add *op) override { return Add::make(mutate(op->a), mutate(op->b)); }
    Expr visit(const Sub *op) override { return Sub::make(mutate(op->a), mutate(op->b)); }
    Expr visit(const Mul *op) override {
        if (is_const(op->b)) return Mul::make(mutate(op->a), op->b);
        if (is_const(op->a)) return Mul::make(op->a, mutate(op->b));
        return atom(Expr(op));
    }
    Expr visit(const Cast *op) override {
        if (op->type.is_int() && op->value.type().is_int()) return Cast::make(op->type, mutate(op->value));
        return atom(Expr(op));
    }
    Expr visit(const Load *op) override { return atom(Expr(op)); }
    Expr visit(const Min *op) override { return atom(Expr(op)); }
    Expr visit(const Max *op) override { return atom(Expr(op)); }
    Expr visit(const Select *op) override { return atom(Expr(op)); }
    Expr visit(const Div *op) override { return atom(Expr(op)); }
    Expr visit(const Mod *op) override { return atom(Expr(op)); }
    Expr visit(const Call *op) override { return atom(Expr(op)); }
};

class RedirectIds : public IRMutator {
public:
    explicit RedirectIds(const std::map<std::string, std::string> &to) : to_(to) {}

private:
    using IRMutator::visit;
    const std::map<std::string, std::string> &to_;
    Expr visit(const Load *op) override {
        auto it = to_.find(op->name);
        if (it == to_.end()) return IRMutator::visit(op);
        return Load::make(op->type, it->second, mutate(op->index), Buffer<>(), Parameter(), mutate(op->predicate),
                          ModulusRemainder());
    }
};

}  // namespace

Stmt lower_gathers(const Stmt &s, KernelPlan &plan) {
    FindIndexReads find(plan);
    s.accept(&find);
    if (find.reads.empty()) return s;

    // A scatter first: its update also reads the buffer at the same positions (h(bin) += 1, a
    // histogram), and that read is not the cause.
    for (const IndexRead &r : find.reads)
        if (r.outer_store)
            throw_error("kernel ", plan.kernel_name, ": writing '", plan.has(r.outer) ? plan.buffer(r.outer).func : r.outer,
                        "' at positions given by '", plan.buffer(r.id->name).func,
                        "' (a scatter, as a histogram's update is) has no form on Spyre: the DMA and the vector unit "
                        "write at positions fixed by the program");
    std::set<std::string> id_buffers;
    for (const IndexRead &r : find.reads) {
        const BufferInfo &ids = plan.buffer(r.id->name);
        const std::string func = plan.has(r.outer) ? plan.buffer(r.outer).func : r.outer;
        auto refuse = [&](const auto &...why) {
            throw_error("kernel ", plan.kernel_name, ": reading '", func, "' at a position given by '", ids.func, "': ", why...);
        };
        if (r.id->type.is_vector())
            refuse("the positions are ", r.id->type,
                   " vectors, one per lane of a vectorized loop; a gather fetches whole rows, one position at a time: "
                   "vectorize along the first dimension of '", func, "' instead, or, where the positions run along "
                   "the output's first dimension, gather into a Func of its own whose first dimension is the row's "
                   "(g(x, i) = ", func, "(x, position(i)), stick_vectorize(x)) and read that Func transposed");
        if (r.id->type != Int(32))
            refuse("the positions are ", r.id->type, "; a gather reads one int32 position at a time (cast the ids to int32)");
        if (reads_memory(r.id->index))
            refuse("the position of '", ids.func, "' is itself read from memory; one level of indirection has a form");
        const BufferInfo &table = plan.buffer(r.outer);
        if (!table.in_device_memory())
            refuse("'", func, "' is in LX; a gather reads rows of an input or of a Func stored in device memory");
        if (table.shape.size() < 2)
            refuse("'", func, "' has one dimension, its stick dimension: a gather fetches whole rows (index a dimension "
                   "other than the first by the ids)");
        // The term of the row offset that holds the id must be the id's row times whole padded rows.
        const int64_t lanes = plan.lanes(table.type);
        const int64_t row = (table.shape[0] + lanes - 1) / lanes * lanes;
        const Ramp *ramp = r.outer_index.as<Ramp>();
        Atoms atoms;
        const Expr base = atoms.mutate(ramp ? ramp->base : r.outer_index);
        std::set<std::string> atom_vars;
        for (size_t i = 0; i < atoms.atoms.size(); i++) atom_vars.insert("gather$atom" + std::to_string(i));
        const std::optional<Affine> form = affine_in(base, atom_vars);
        for (size_t i = 0; i < atoms.atoms.size(); i++) {
            const int64_t k = form ? form->of("gather$atom" + std::to_string(i)) : 0;
            if (k == 0 || k % row != 0 || (ramp && reads_memory(ramp->stride)))
                refuse("the ids give a position in the stick dimension (dimension 0) of '", func,
                       "'; a gather fetches whole rows: index a dimension other than the first by the ids");
            // The rows it reaches: the clamp's bounds, inside the table.
            const int64_t rows = table.elems / row;
            // The id may be any int32: bounded only by what the index does with it.
            Scope<Interval> any_id;
            any_id.push("gather$id", Interval(Int(32).min(), Int(32).max()));
            const Interval in = bounds_of_expr_in_scope(ids_as_variable(atoms.atoms[i]), any_id);
            const auto lo = in.has_lower_bound() ? as_const_int(simplify(in.min)) : nullptr;
            const auto hi = in.has_upper_bound() ? as_const_int(simplify(in.max)) : nullptr;
            // prove_bounds refused an unbounded read before lowering; this guards the DMA offsets.
            if (!lo || !hi || *lo < 0 || (*hi + 1) * (std::abs(k) / row) > rows)
                throw_internal("kernel ", plan.kernel_name, ": internal: the rows of '", func, "' read at positions given by '",
                               ids.func, "' are not bounded by its ", rows, " rows after prove_bounds");
        }
        const DeviceLayout row_major = default_layout(int(ids.shape.size()));
        if (ids.in_device_memory() &&
            (ids.layout.stick_dim != 0 || (!ids.layout.order.empty() && ids.layout.order != row_major.order)))
            refuse("'", ids.func, "' has a device layout of its own; give the ids the default (row-major) layout");
        if (ids.in_device_memory()) id_buffers.insert(r.id->name);  // in LX already: read in place
    }

    // Each id buffer whole into LX, once, before the kernel's work.
    std::map<std::string, std::string> staged;
    std::vector<std::pair<std::string, int64_t>> order;
    for (const std::string &name : id_buffers) {
        const BufferInfo &ids = plan.buffer(name);
        const int64_t image = device_geometry(ids.layout, ids.shape, ids.type, plan.machine.stick_bytes).total_bytes;
        if (image > kGatherIdsLxBudget)
            throw_error("kernel ", plan.kernel_name, ": the ids '", ids.func, "' take ", image,
                        " bytes; a gather keeps them whole in LX, at most ", kGatherIdsLxBudget,
                        " bytes (split the pipeline over fewer positions)");
        BufferInfo b;
        b.name = name + ".lxids";
        b.func = ids.func;
        b.type = ids.type;
        b.place = Place::LX;
        b.elems = image / dtype_bytes(ids.type);
        b.staging = true;
        plan.buffers[b.name] = b;
        staged[name] = b.name;
        order.push_back({name, b.elems});
    }
    Stmt body = RedirectIds(staged).mutate(s);
    std::vector<Stmt> loads;
    for (const auto &[name, elems] : order) {
        DmaCall d;
        d.dram = name;
        d.lx = staged[name];
        d.dram_offset = Expr(0);
        d.lx_offset = Expr(0);
        d.run = elems;
        loads.push_back(make_dma(d));
    }
    loads.push_back(body);
    body = Block::make(loads);
    for (const auto &[name, elems] : order)
        body = Allocate::make(staged[name], Int(32), MemoryType::VTCM, {Expr(elems)}, const_true(), body);
    return body;
}

}  // namespace spyre
