#include "lower_gathers.h"

#include <cstdlib>
#include <functional>
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
    const Load *outer_load = nullptr;  // the access whose index it is, if a load
    std::string outer;  // the buffer the index addresses
    Type outer_type;    // the type of its elements
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

    void index_of(const Load *load, const std::string &name, Type type, const Expr &index, bool store) {
        const IndexRead saved = where_;
        where_.outer_load = load;
        where_.outer = name;
        where_.outer_type = type.element_of();
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
        index_of(op, op->name, op->type, op->index, false);
        op->predicate.accept(this);
    }
    void visit(const Store *op) override {
        op->value.accept(this);
        index_of(nullptr, op->name, op->value.type(), op->index, true);
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

// The multiples of each id in an index (its atoms: the clamped ids).
std::vector<int64_t> id_terms(const Expr &index, Atoms &atoms) {
    const Expr base = atoms.mutate(index);
    std::set<std::string> atom_vars;
    for (size_t i = 0; i < atoms.atoms.size(); i++) atom_vars.insert("gather$atom" + std::to_string(i));
    const std::optional<Affine> form = affine_in(base, atom_vars);
    std::vector<int64_t> ks;
    for (size_t i = 0; i < atoms.atoms.size(); i++) ks.push_back(form ? form->of("gather$atom" + std::to_string(i)) : 0);
    return ks;
}

// Loads (and, with `stores`, stores) of some buffers made accesses of their LX copies.
class RedirectIds : public IRMutator {
public:
    explicit RedirectIds(const std::map<std::string, std::string> &to, bool stores = false) : to_(to), stores_(stores) {}

private:
    using IRMutator::visit;
    const std::map<std::string, std::string> &to_;
    const bool stores_;
    Expr visit(const Load *op) override {
        auto it = to_.find(op->name);
        if (it == to_.end()) return IRMutator::visit(op);
        return Load::make(op->type, it->second, mutate(op->index), Buffer<>(), Parameter(), mutate(op->predicate),
                          ModulusRemainder());
    }
    Stmt visit(const Store *op) override {
        auto it = to_.find(op->name);
        if (!stores_ || it == to_.end()) return IRMutator::visit(op);
        return Store::make(it->second, mutate(op->value), mutate(op->index), Parameter(), mutate(op->predicate),
                           ModulusRemainder());
    }
};

// Lane `lane` of a vector index as a scalar expression (ramps and broadcasts taken apart, vector
// loads made scalar); undefined where that has no such form (a vector variable, a shuffle).
Expr lanes_of(const Expr &e, const Expr &lane) {
    class Lane : public IRMutator {
    public:
        explicit Lane(const Expr &l) : lane_(l) {}
        bool ok = true;

    private:
        using IRMutator::visit;
        const Expr lane_;
        Expr visit(const Ramp *op) override { return mutate(op->base) + mutate(op->stride) * lane_; }
        Expr visit(const Broadcast *op) override { return mutate(op->value); }
        Expr visit(const Load *op) override {
            return Load::make(op->type.element_of(), op->name, mutate(op->index), op->image, op->param, const_true(),
                              ModulusRemainder());
        }
        // What has no lane form fails the whole; a scalar stands in for it so that the nodes
        // around it are still built of one type (Min::make of a vector and a scalar throws).
        Expr visit(const Variable *op) override {
            if (op->type.is_scalar()) return op;
            ok = false;
            return make_zero(op->type.element_of());
        }
        Expr visit(const Shuffle *op) override {
            ok = false;
            return make_zero(op->type.element_of());
        }
        Expr visit(const VectorReduce *op) override {
            ok = false;
            return make_zero(op->type.element_of());
        }
        Expr visit(const Call *op) override {
            if (op->type.is_scalar()) return IRMutator::visit(op);
            // A call on the lanes (likely(), promise_clamped(), abs()): the same call on one lane.
            std::vector<Expr> args;
            for (const Expr &a : op->args) {
                args.push_back(mutate(a));
                ok &= args.back().type().is_scalar();
            }
            if (!ok || op->call_type == Call::Halide || op->call_type == Call::Image) {
                ok = false;
                return make_zero(op->type.element_of());
            }
            return Call::make(op->type.element_of(), op->name, args, op->call_type, op->func, op->value_index,
                              op->image, op->param);
        }
    } m(lane);
    Expr r = m.mutate(e);
    return m.ok && r.type().is_scalar() ? r : Expr();
}

// A gather of single elements along the stick dimension (cross-entropy's target logit,
// `logits(clamp(target(t), 0, V - 1), t)`): each such scalar load becomes a DMA of the stick that
// holds the element into a one-stick LX buffer of its own, just before the store that reads it, and
// a read of that stick at the element's lane.
class StageElements : public IRMutator {
public:
    // Each load: its stick's LX buffer and the lanes of a stick.
    explicit StageElements(const std::map<const Load *, std::pair<std::string, int64_t>> &to) : to_(to) {}
    // Fetches no statement took (an element read where none is placed): lower_gathers checks none is left.
    bool left_over() const { return !dmas_.empty(); }

private:
    using IRMutator::visit;
    const std::map<const Load *, std::pair<std::string, int64_t>> &to_;
    std::vector<Stmt> dmas_;
    Expr visit(const Load *op) override {
        auto it = to_.find(op);
        if (it == to_.end()) return IRMutator::visit(op);
        const std::string &stick = it->second.first;
        const Expr lanes = Expr(int(it->second.second));
        const int vl = op->type.lanes();
        // A vector's lanes one by one, each into its place in a vector of them (stick.lanes).
        const std::string lane = stick + ".lane";
        const Expr index = vl > 1 ? lanes_of(op->index, Variable::make(Int(32), lane)) : op->index;
        DmaCall d;
        d.dram = op->name;
        d.lx = stick;
        d.dram_offset = (index / lanes) * lanes;
        d.lx_offset = Expr(0);
        d.run = it->second.second;
        const Expr element = Load::make(op->type.element_of(), stick, index % lanes, Buffer<>(), Parameter(),
                                        vl > 1 ? const_true() : op->predicate, ModulusRemainder());
        if (vl == 1) {
            dmas_.push_back(make_dma(d));
            return element;
        }
        const std::string gathered = stick + ".lanes";
        const Stmt one = Block::make(make_dma(d), Store::make(gathered, element, Variable::make(Int(32), lane), Parameter(),
                                                              const_true(), ModulusRemainder()));
        dmas_.push_back(For::make(lane, 0, vl, ForType::Serial, DeviceAPI::None, one));
        return Load::make(op->type, gathered, Ramp::make(0, 1, vl), Buffer<>(), Parameter(), const_true(vl),
                          ModulusRemainder());
    }
    // The statement `make` builds, after the fetches the element reads in its own expressions need.
    template <typename F>
    Stmt after_fetches(F &&make) {
        const std::vector<Stmt> outer = std::move(dmas_);
        dmas_.clear();
        Stmt s = make();
        std::vector<Stmt> mine = std::move(dmas_);
        dmas_ = outer;
        if (mine.empty()) return s;
        mine.push_back(s);
        return Block::make(mine);
    }
    Stmt visit(const Store *op) override {
        return after_fetches([&] { return IRMutator::visit(op); });
    }
    // A value Halide bound once for a body (a let, a condition): its fetches before the statement
    // (the body's own stores place theirs).
    // `e` mutated into `out`, and the fetches its element reads need.
    std::vector<Stmt> fetches_of(const Expr &e, Expr &out) {
        const std::vector<Stmt> outer = std::move(dmas_);
        dmas_.clear();
        out = mutate(e);
        std::vector<Stmt> mine = std::move(dmas_);
        dmas_ = outer;
        return mine;
    }
    Stmt visit(const LetStmt *op) override {
        Expr value;
        std::vector<Stmt> s = fetches_of(op->value, value);
        s.push_back(LetStmt::make(op->name, value, mutate(op->body)));
        return Block::make(s);
    }
    Stmt visit(const IfThenElse *op) override {
        Expr cond;
        std::vector<Stmt> s = fetches_of(op->condition, cond);
        s.push_back(IfThenElse::make(cond, mutate(op->then_case), op->else_case.defined() ? mutate(op->else_case) : Stmt()));
        return Block::make(s);
    }
};

}  // namespace

Stmt lower_gathers(const Stmt &s, KernelPlan &plan) {
    FindIndexReads find(plan);
    s.accept(&find);
    if (find.reads.empty()) return s;

    std::set<std::string> id_buffers;
    // Ids in device memory are copied whole into LX as they are laid out: row-major only.
    auto stage_ids = [&](const BufferInfo &ids, const std::string &name, const std::function<void(const std::string &)> &refuse) {
        const DeviceLayout row_major = default_layout(int(ids.shape.size()));
        if (ids.in_device_memory() &&
            (ids.layout.stick_dim != 0 || (!ids.layout.order.empty() && ids.layout.order != row_major.order)))
            refuse("'" + ids.func + "' has a device layout of its own; give the ids the default (row-major) layout");
        if (ids.in_device_memory()) id_buffers.insert(name);  // in LX already: read in place
    };
    // Scatters first (a histogram's update also reads the bins it writes, and that read is not the
    // cause of any refusal): the written buffer is kept whole in LX, on one core.
    std::map<std::string, Type> scatter_targets;  // in device memory: their LX copies' element types
    for (const IndexRead &r : find.reads) {
        if (!r.outer_store) continue;
        const BufferInfo &ids = plan.buffer(r.id->name);
        const BufferInfo &dst = plan.buffer(r.outer);
        auto refuse = [&](const auto &...why) {
            throw_error("kernel ", plan.kernel_name, ": writing '", dst.func, "' at positions given by '", ids.func,
                        "' (a scatter, as a histogram's update is): ", why...);
        };
        if (r.id->type.is_vector())
            refuse("the positions are ", r.id->type, " vectors, one per lane of a vectorized loop; a scatter writes "
                   "one position at a time (leave the update's loops unvectorized)");
        if (r.id->type != Int(32))
            refuse("the positions are ", r.id->type, "; a scatter reads one int32 position at a time: compute them in "
                   "a Func of their own (bin(x, y) = cast<int32_t>(", ids.func, "(x, y)), with scratchpad_root()) "
                   "and write at clamp(bin(...), 0, n - 1)");
        if (reads_memory(r.id->index))
            refuse("the position of '", ids.func, "' is itself read from memory; one level of indirection has a form");
        Atoms atoms;
        const std::vector<int64_t> ks = r.outer_index.type().is_vector() ? std::vector<int64_t>{}
                                                                          : id_terms(r.outer_index, atoms);
        if (ks.size() != 1 || ks[0] != 1)
            refuse("the positions choose whole rows or vectors; a scatter writes single elements of its first "
                   "dimension (h(clamp(position(r), 0, n - 1), y) += ...), one at a time");
        if (plan.num_cores > 1)
            refuse("a scatter runs on one core (each core's writes would need combining): remove the ring_split "
                   "of '", dst.func, "'");
        if (dst.in_device_memory()) {
            const DeviceLayout natural = default_layout(int(dst.shape.size()));
            if (dst.layout.stick_dim != 0 || (!dst.layout.order.empty() && dst.layout.order != natural.order))
                refuse("'", dst.func, "' has a device layout of its own; a scatter writes the default (row-major) layout");
            const int64_t image = device_geometry(dst.layout, dst.shape, dst.type, plan.machine.stick_bytes).total_bytes;
            if (image > kScatterLxBudget)
                refuse("'", dst.func, "' takes ", image, " bytes; a scatter keeps the Func it writes whole in LX, at most ",
                       kScatterLxBudget, " bytes");
            scatter_targets[r.outer] = r.outer_type;
        }
        stage_ids(ids, r.id->name, [&](const std::string &why) { refuse(why); });
    }
    std::map<const Load *, std::pair<std::string, int64_t>> elements;  // gathers of single elements
    for (const IndexRead &r : find.reads) {
        if (r.outer_store) continue;
        const BufferInfo &ids = plan.buffer(r.id->name);
        const std::string func = plan.has(r.outer) ? plan.buffer(r.outer).func : r.outer;
        auto refuse = [&](const auto &...why) {
            throw_error("kernel ", plan.kernel_name, ": reading '", func, "' at a position given by '", ids.func, "': ", why...);
        };
        if (scatter_targets.count(r.outer)) {
            // A scatter's buffer, in LX whole: read in place at the position's element.
            stage_ids(ids, r.id->name, [&](const std::string &why) { refuse(why); });
            continue;
        }
        // A read of one element per position: a scalar load whose index is the id plus terms of the
        // loops, or a vector load whose every lane is one (its lanes are gathered one by one).
        Atoms lane0;
        const Expr scalar_index = r.id->type.is_vector() ? lanes_of(r.outer_index, Variable::make(Int(32), "gather$lane"))
                                                         : r.outer_index;
        const std::vector<int64_t> lane0_ks = scalar_index.defined() ? id_terms(scalar_index, lane0) : std::vector<int64_t>{};
        const bool element = r.outer_load && lane0_ks.size() == 1 && lane0_ks[0] == 1 && !r.outer_index.as<Ramp>() &&
                             (!r.id->type.is_vector() || is_const_one(r.outer_load->predicate));
        if (r.id->type.is_vector() && !element)
            refuse("the positions are ", r.id->type,
                   " vectors, one per lane of a vectorized loop; a gather fetches whole rows, one position at a time: "
                   "vectorize along the first dimension of '", func, "' instead, or, where the positions run along "
                   "the output's first dimension, gather into a Func of its own whose first dimension is the row's "
                   "(g(x, i) = ", func, "(x, position(i)), stick_vectorize(x)) and read that Func transposed");
        if (r.id->type.element_of() != Int(32))
            refuse("the positions are ", r.id->type, "; a gather reads one int32 position at a time (cast the ids to int32)");
        if (reads_memory(r.id->index))
            refuse("the position of '", ids.func, "' is itself read from memory; one level of indirection has a form");
        const BufferInfo &table = plan.buffer(r.outer);
        if (!table.in_device_memory())
            refuse("'", func, "' is in LX; a gather reads rows of an input or of a Func stored in device memory");
        const int64_t lanes = plan.lanes(table.type);
        const int64_t row = (table.shape[0] + lanes - 1) / lanes * lanes;
        if (element && !elements.count(r.outer_load)) {
            // One element of the stick dimension: its stick comes by a DMA, the element from its lane.
            const DeviceLayout natural = default_layout(int(table.shape.size()));
            if (table.layout.stick_dim != 0 || (!table.layout.order.empty() && table.layout.order != natural.order))
                refuse("'", func, "' has a device layout of its own; a gather of single elements reads the "
                       "default (row-major) layout");
            Scope<Interval> any_id;
            any_id.push("gather$id", Interval(Int(32).min(), Int(32).max()));
            const Interval in = bounds_of_expr_in_scope(ids_as_variable(lane0.atoms[0]), any_id);
            const auto lo = in.has_lower_bound() ? as_const_int(simplify(in.min)) : nullptr;
            const auto hi = in.has_upper_bound() ? as_const_int(simplify(in.max)) : nullptr;
            if (!lo || !hi || *lo < 0 || *hi >= table.shape[0])
                throw_internal("kernel ", plan.kernel_name, ": internal: the elements of '", func,
                               "' read at positions given by '", ids.func, "' are not bounded by its ",
                               table.shape[0], " columns after prove_bounds");
            auto add_buffer = [&](const std::string &name, int64_t elems) {
                BufferInfo b;
                b.name = name;
                b.func = table.func;
                b.type = table.type;
                b.place = Place::LX;
                b.elems = elems;
                b.staging = true;
                plan.buffers[name] = b;
            };
            const std::string name = r.outer + ".elem" + std::to_string(elements.size());
            elements[r.outer_load] = {name, lanes};
            add_buffer(name, lanes);
            const int vl = r.outer_load->type.lanes();
            if (vl > 1) add_buffer(name + ".lanes", (vl + lanes - 1) / lanes * lanes);
        }
        // The term of the row offset that holds the id must be the id's row times whole padded rows.
        const Ramp *ramp = r.outer_index.as<Ramp>();
        Atoms atoms;
        const std::vector<int64_t> ks = element ? std::vector<int64_t>{} : id_terms(ramp ? ramp->base : r.outer_index, atoms);
        for (size_t i = 0; i < ks.size(); i++) {
            const int64_t k = ks[i];
            if (table.shape.size() < 2)
                refuse("'", func, "' has one dimension, its stick dimension, and the ids do not give a single element "
                       "of it: a gather fetches whole rows, or one element per position (", func, "(position(i)))");
            if (k == 1 && ramp)
                refuse("the ids give where a vector starts in the stick dimension (dimension 0) of '", func,
                       "'; a gather fetches whole rows, or single elements in a loop that is not vectorized");
            if (k == 0 || k % row != 0 || (ramp && reads_memory(ramp->stride)))
                refuse("the ids give a position in the stick dimension (dimension 0) of '", func,
                       "' other than one element's; a gather fetches whole rows (index a dimension other than the "
                       "first by the ids) or single elements (", func, "(position(i), i))");
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
        stage_ids(ids, r.id->name, [&](const std::string &why) { refuse(why); });
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
    // Each scatter target whole in LX, laid out as its device image; an output copied out at the end.
    std::map<std::string, std::string> whole;
    std::vector<Stmt> copies_out;
    for (const auto &[name, type] : scatter_targets) {
        const BufferInfo &dst = plan.buffer(name);
        BufferInfo b;
        b.name = name + ".lxwhole";
        b.func = dst.func;
        b.type = dst.type;
        b.place = Place::LX;
        b.elems = device_geometry(dst.layout, dst.shape, dst.type, plan.machine.stick_bytes).total_bytes / dtype_bytes(dst.type);
        b.staging = true;
        plan.buffers[b.name] = b;
        whole[name] = b.name;
        if (dst.place == Place::DeviceOutput) {
            DmaCall d;
            d.store = true;
            d.dram = name;
            d.lx = b.name;
            d.dram_offset = Expr(0);
            d.lx_offset = Expr(0);
            d.run = b.elems;
            copies_out.push_back(make_dma(d));
        }
    }
    StageElements stage_elements(elements);
    Stmt body = stage_elements.mutate(s);
    if (stage_elements.left_over())
        throw_internal("kernel ", plan.kernel_name, ": internal: a gathered element is read outside a store, a let "
                       "or a condition, where lower_gathers places no fetch for it");
    body = RedirectIds(staged).mutate(body);
    if (!whole.empty()) body = RedirectIds(whole, true).mutate(body);
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
    for (const Stmt &c : copies_out) loads.push_back(c);
    body = Block::make(loads);
    for (const auto &[name, type] : scatter_targets)
        body = Allocate::make(whole[name], type, MemoryType::VTCM, {Expr(plan.buffer(whole[name]).elems)}, const_true(), body);
    for (const auto &[name, elems] : order)
        body = Allocate::make(staged[name], Int(32), MemoryType::VTCM, {Expr(elems)}, const_true(), body);
    for (const auto &[load, stick] : elements) {
        body = Allocate::make(stick.first, load->type.element_of(), MemoryType::VTCM, {Expr(int(stick.second))},
                              const_true(), body);
        if (load->type.is_vector())
            body = Allocate::make(stick.first + ".lanes", load->type.element_of(), MemoryType::VTCM,
                                  {Expr(int(plan.buffer(stick.first + ".lanes").elems))}, const_true(), body);
    }
    return body;
}

}  // namespace spyre
