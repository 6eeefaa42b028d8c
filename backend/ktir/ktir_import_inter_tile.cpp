// The importer's inter-tile communication (ktir_importer.h): `ktdp.inter_tile_produce` names each
// tile's partial, `ktdp.inter_tile_reduce` combines the partials of its group and delivers the
// result (RFC 0682's produce / deliver pair, as ktir-mlir-frontend defines it). On the device that
// is RING_REDUCE, an all-reduce over every core of the program or over each group of evenly spaced
// cores; a reduce whose result nothing reads and whose partial is a constant is a pure synchronisation, BARRIER (how our exporter
// writes one, docs/ktir.md).
#include <algorithm>
#include <functional>

#include "ktir_importer.h"

namespace spyre::ktir::lowering {

namespace {

// Whether the integer set holds at the given dimension and symbol values.
bool holds(const IntegerSet &s, const std::vector<int64_t> &dims, const std::vector<int64_t> &syms, const Op &op,
           const char *what) {
    std::function<int64_t(const IExpr &, int)> ev = [&](const IExpr &e, int depth) -> int64_t {
        if (depth > 64) throw_error("line ", op.line, ": ", op.name, ": ", what, " is nested too deeply");
        auto arg = [&](size_t i) { return ev(e.args[i], depth + 1); };
        auto floor_div = [&](int64_t a, int64_t b) {
            if (b == 0) throw_error("line ", op.line, ": ", op.name, ": ", what, " divides by zero");
            if (b == -1) return wrap_mul(-1, a);  // INT64_MIN / -1 would trap
            int64_t q = a / b;
            return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
        };
        switch (e.kind) {
        case IExpr::Const: return e.c;
        case IExpr::Dim:
            if (e.c < 0 || size_t(e.c) >= dims.size()) break;
            return dims[size_t(e.c)];
        case IExpr::Sym:
            if (e.c < 0 || size_t(e.c) >= syms.size()) break;
            return syms[size_t(e.c)];
        case IExpr::Add: return wrap_add(arg(0), arg(1));
        case IExpr::Mul: return wrap_mul(arg(0), arg(1));
        case IExpr::Neg: return wrap_mul(-1, arg(0));
        case IExpr::FloorDiv: return floor_div(arg(0), arg(1));
        case IExpr::CeilDiv: return wrap_mul(-1, floor_div(wrap_mul(-1, arg(0)), arg(1)));
        case IExpr::Mod: {
            int64_t b = arg(1);
            return wrap_add(arg(0), wrap_mul(wrap_mul(-1, floor_div(arg(0), b)), b));
        }
        case IExpr::Value:
            throw_error("line ", op.line, ": ", op.name, ": ", what, " reads the SSA value %", e.name,
                        "; tile sets must be constant");
        }
        throw_error("line ", op.line, ": ", op.name, ": ", what, " uses a dimension or symbol it does not declare");
    };
    if (int(dims.size()) != s.dims || int(syms.size()) != s.syms)
        throw_error("line ", op.line, ": ", op.name, ": ", what, " must be affine_set<",
                    syms.empty() ? "(g)" : "(i)[g]", " : ...>, it has ", s.dims, " dimensions and ", s.syms, " symbols");
    for (size_t k = 0; k < s.exprs.size(); k++) {
        int64_t v = ev(s.exprs[k], 0);
        if (s.equality[k] ? v != 0 : v < 0) return false;
    }
    return true;
}

const IntegerSet &set_attr(const Op &op, const char *key) {
    auto it = op.attrs.find(key);
    if (it == op.attrs.end() || it->second.kind != Attr::Set || !it->second.set)
        throw_error("line ", op.line, ": ", op.name, ": needs ", key, " = affine_set<...>");
    return *it->second.set;
}

}  // namespace

void Importer::inter_tile_produce(const Op &op) {
    if (op.results.size() != 1 || op.regions.size() != 1 || !op.operands.empty())
        throw_error("line ", op.line, ": ktdp.inter_tile_produce: takes no operands and has one result (the future) "
                    "and one region (the producer's)");
    auto pt = op.attrs.find("partial_types");
    if (pt == op.attrs.end() || pt->second.items.size() != 1)
        throw_error("line ", op.line, ": ktdp.inter_tile_produce: one partial per tile is supported (the future carries ",
                    pt == op.attrs.end() ? 0 : pt->second.items.size(), ")");
    const IntegerSet &producers = set_attr(op, "producer_tiles_per_group");
    const IntegerSet &groups = set_attr(op, "groups");
    // Each tile's group: the one g of the groups set whose producer set holds the tile.
    std::vector<int> group_of(size_t(num_cores_), -1);
    std::vector<std::vector<int64_t>> members;  // per group in the set, its tiles in order
    for (int64_t g = 0; g < num_cores_; g++) {
        if (!holds(groups, {g}, {}, op, "the tile_future's groups")) continue;
        members.emplace_back();
        for (int64_t i = 0; i < num_cores_; i++) {
            if (!holds(producers, {i}, {g}, op, "producer_tiles_per_group")) continue;
            if (group_of[size_t(i)] >= 0)
                throw_error("line ", op.line, ": ktdp.inter_tile_produce: tile ", i, " produces for groups ",
                            group_of[size_t(i)], " and ", g, " (a tile belongs to one group)");
            group_of[size_t(i)] = int(g);
            members.back().push_back(i);
        }
        if (members.back().empty())
            throw_error("line ", op.line, ": ktdp.inter_tile_produce: group ", g, " has no producer tile");
    }
    for (int64_t i = 0; i < num_cores_; i++)
        if (group_of[size_t(i)] < 0)
            throw_error("line ", op.line, ": ktdp.inter_tile_produce: tile ", i, " of the grid's ", num_cores_,
                        " produces for no group; RING_REDUCE, the device's inter-tile reduction, combines a "
                        "partial from every core, so every tile must produce");
    // The device's groups (isa.h, RING_REDUCE): equal groups of `size` cores `stride` apart, tiling
    // the cores in order, core c's group starting at c - c % (size * stride) + c % stride.
    const int64_t size = int64_t(members[0].size());
    const int64_t stride = size > 1 ? members[0][1] - members[0][0] : 1;
    bool device_form = stride >= 1 && num_cores_ % (size * stride) == 0;
    for (const auto &m : members) {
        device_form = device_form && int64_t(m.size()) == size;
        for (size_t k = 1; device_form && k < m.size(); k++) device_form = m[k] - m[k - 1] == stride;
    }
    for (int64_t c = 0; device_form && c < num_cores_; c++)
        device_form = members[size_t(std::find_if(members.begin(), members.end(), [&](const auto &m) {
                                          return std::find(m.begin(), m.end(), c) != m.end();
                                      }) - members.begin())][0] == c - c % (size * stride) + c % stride;
    if (!device_form)
        throw_error("line ", op.line, ": ktdp.inter_tile_produce: its ", members.size(), " groups of tiles have no "
                    "device form: RING_REDUCE groups are equal, their cores evenly spaced (size cores stride apart, "
                    "e.g. 4 adjacent tiles, or every second tile), and tile the grid (docs/ktir.md)");
    // The region: the tile's ops for its partial, %gid bound to its group's index in the set.
    const Region &r = op.regions[0];
    const Op *term = terminator(r);
    if (!term || term->name != "ktdp.yield_partial" || term->operands.size() != 1)
        throw_error("line ", op.line, ": ktdp.inter_tile_produce: the region must end in ktdp.yield_partial of one "
                    "tensor");
    if (r.args.size() > 1)
        throw_error("line ", op.line, ": ktdp.inter_tile_produce: the region takes one argument (%gid), not ",
                    r.args.size());
    if (r.args.size() == 1) {
        // The group index as a function of the core: (c / span) * stride + c % stride orders the
        // groups by their first core, which is how the sets number them in IBM's examples.
        const int64_t span = size * stride;
        for (int64_t c = 0; c < num_cores_; c++)
            if (du_[r.args[0]].users.size() && group_of[size_t(c)] != c / span * stride + c % stride)
                throw_error("line ", op.line, ": ktdp.inter_tile_produce: the region reads %", r.args[0],
                            ", and tile ", c, " is in group ", group_of[size_t(c)], ", not in group (tile / ", span,
                            ") * ", stride, " + tile % ", stride, " as the device numbers them");
        Scalar core;
        if (members.size() == 1) {
            core.known = true;  // one group: %gid is 0
        } else {
            core.r = new_reg(op);
            b_.core_id(core.r);
            Scalar k;
            k.known = true;
            k.c = span;
            Scalar hi = scalar_op(Opcode::DIV, core, k, op);
            k.c = stride;
            hi = scalar_op(Opcode::MUL, hi, k, op);
            core = scalar_op(Opcode::ADD, hi, scalar_op(Opcode::REM, core, k, op), op);
        }
        Val v = scalar_val(core);
        hold_scalar(v);
        vals_[r.args[0]] = v;
    }
    for (const Op &o : r.ops) {
        if (&o == term) break;
        if (!skip_.count(&o)) {
            lower(o);
            free_temps();
        }
        release_dead(info_.at(&o).end);
    }
    const std::string &partial = term->operands[0];
    if (val(partial, *term).k != Val::T)
        throw_error("line ", term->line, ": ktdp.yield_partial: %", partial, " must be a tensor");
    // The partial is read where the future is delivered.
    extend_life(partial, op.results[0]);
    futures_[op.results[0]] = Future{partial, pt->second.items[0].type, &op,
                                     int32_t(members.size() == 1 ? 0 : size), int32_t(members.size() == 1 ? 0 : stride)};
    Val none;
    define(op, 0, none);
}

RedOp Importer::tile_combiner(const Op &op) {
    const Region &r = op.regions[0];
    if (r.args.size() != 2)
        throw_error("line ", op.line, ": ktdp.inter_tile_reduce: the combiner takes two arguments (%lhs, %rhs), not ",
                    r.args.size());
    const Op *yield = terminator(r), *comb = nullptr;
    for (const Op &o : r.ops) {
        if (&o == yield || o.name == "tensor.empty") continue;
        if (comb)
            throw_error("line ", o.line, ": ktdp.inter_tile_reduce: the combiner must hold one combining op (",
                        comb->name, " and ", o.name, ")");
        comb = &o;
    }
    if (!comb) throw_error("line ", op.line, ": ktdp.inter_tile_reduce: the combiner has no combining op");
    if (!yield || yield->name != "ktdp.yield_reduced" || yield->operands.size() != 1 || comb->results.size() != 1 ||
        yield->operands[0] != comb->results[0])
        throw_error("line ", op.line, ": ktdp.inter_tile_reduce: the combiner must end in ktdp.yield_reduced of its "
                    "combining op's result");
    const bool two_args = comb->operands.size() >= 2 &&
                          ((comb->operands[0] == r.args[0] && comb->operands[1] == r.args[1]) ||
                           (comb->operands[0] == r.args[1] && comb->operands[1] == r.args[0]));
    if (!two_args)
        throw_error("line ", comb->line, ": ktdp.inter_tile_reduce: ", comb->name,
                    " must combine the region's two arguments");
    static const std::pair<const char *, RedOp> kOps[] = {
        {"linalg.add", RedOp::Sum},        {"arith.addf", RedOp::Sum},        {"arith.addi", RedOp::Sum},
        {"linalg.max", RedOp::Max},        {"arith.maximumf", RedOp::Max},    {"arith.maxnumf", RedOp::Max},
        {"arith.maxsi", RedOp::Max},       {"linalg.min", RedOp::Min},        {"arith.minimumf", RedOp::Min},
        {"arith.minnumf", RedOp::Min},     {"arith.minsi", RedOp::Min},
    };
    for (const auto &k : kOps)
        if (comb->name == k.first) return k.second;
    throw_error("line ", comb->line, ": ktdp.inter_tile_reduce: the combiner ", comb->name,
                " has no device form (RING_REDUCE adds, takes the maximum or the minimum)");
}

void Importer::inter_tile_reduce(const Op &op) {
    if (op.operands.empty() || op.results.size() != 1 || op.regions.size() != 1)
        throw_error("line ", op.line, ": ktdp.inter_tile_reduce: takes a future (and identities) and has one result "
                    "and one region (the combiner)");
    auto fit = futures_.find(op.operands[0]);
    if (fit == futures_.end())
        throw_error("line ", op.line, ": ktdp.inter_tile_reduce: %", op.operands[0],
                    " is not the result of a ktdp.inter_tile_produce");
    const Future &fut = fit->second;
    if (op.attrs.count("producer_dependency_per_consumer"))
        throw_error("line ", op.line, ": ktdp.inter_tile_reduce: producer_dependency_per_consumer (per-tile "
                    "dependencies) has no device form: RING_REDUCE gives every core the combination of every "
                    "core's partial");
    // Every core receives its group's combination; the consumer set may name fewer (the others'
    // results are then unused), but not none.
    const IntegerSet &consumers = set_attr(op, "consumer_tiles_per_group");
    bool any = false;
    for (int64_t g = 0; g < num_cores_ && !any; g++)
        for (int64_t i = 0; i < num_cores_ && !any; i++) any = holds(consumers, {i}, {g}, op, "consumer_tiles_per_group");
    if (!any) throw_error("line ", op.line, ": ktdp.inter_tile_reduce: consumer_tiles_per_group holds no tile");
    if (op.result_types[0].kind != Type::Tensor)
        throw_error("line ", op.line, ": ktdp.inter_tile_reduce: its result must be a tensor");
    const Type &rt = op.result_types[0];
    if (elements(rt.shape) != elements(fut.type.shape) || rt.bits != fut.type.bits || rt.elem != fut.type.elem)
        throw_error("line ", op.line, ": ktdp.inter_tile_reduce: the result ", rt.text(),
                    " must hold the partial's elements (", fut.type.text(), ")");
    const RedOp ro = tile_combiner(op);
    // The identity only seeds tiles that produce nothing; every core produces here.
    Tens x = tensor(fut.partial, op);
    if (du_[op.results[0]].users.empty() && (x.kind == Tens::Splat || x.kind == Tens::Empty)) {
        if (!explicit_) drain();
        b_.barrier();
        Val none;
        return define(op, 0, none);
    }
    ring_reduce_of(op, fut.partial, ro, DType(dtype_of(rt, op)), &rt.shape, fut.group_size, fut.group_stride);
}

}  // namespace spyre::ktir::lowering
