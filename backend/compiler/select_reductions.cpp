// Instruction selection: reductions on the vector unit (VRED*) and ring reductions across cores.
#include "selector.h"
#include "carried_reads.h"

#include <sstream>

namespace spyre {
namespace selection {

auto Selector::reduction_of(const Store *st) -> std::optional<Reduction> {
    auto match = [&](const Expr &acc, const Expr &v, Opcode op) -> std::optional<Reduction> {
        const Load *l = acc.as<Load>();
        if (l && l->name == st->name && equal(l->index, st->index)) return Reduction{op, v};
        return std::nullopt;
    };
    if (const Add *a = st->value.as<Add>()) {
        if (auto r = match(a->a, a->b, Opcode::VREDSUM)) return r;
        return match(a->b, a->a, Opcode::VREDSUM);
    }
    if (const Max *a = st->value.as<Max>()) {
        if (auto r = match(a->a, a->b, Opcode::VREDMAX)) return r;
        return match(a->b, a->a, Opcode::VREDMAX);
    }
    if (const Min *a = st->value.as<Min>()) {
        if (auto r = match(a->a, a->b, Opcode::VREDMIN)) return r;
        return match(a->b, a->a, Opcode::VREDMIN);
    }
    return std::nullopt;
}

bool Selector::emit_fold(const std::vector<Loop> &loops, const Store *st, const Domain &d, size_t k) {
    const Loop &rows = loops[k - 1];
    const Ramp *ramp = st->index.as<Ramp>();
    auto acc_load = [&](const Expr &e) {
        const Load *l = e.as<Load>();
        return l && l->name == st->name && equal(l->index, st->index);
    };
    // The accumulator first: on ties max and min keep their second operand, the row's, as the loop does.
    Opcode op;
    Expr e;
    if (const Add *a = st->value.as<Add>()) {
        op = Opcode::VADD;
        e = acc_load(a->a) ? a->b : acc_load(a->b) ? a->a : Expr();
    } else if (const Max *a = st->value.as<Max>()) {
        op = Opcode::VMAX;
        if (acc_load(a->a)) e = a->b;
    } else if (const Min *a = st->value.as<Min>()) {
        op = Opcode::VMIN;
        if (acc_load(a->a)) e = a->b;
    }
    if (!e.defined() || !ramp || reads_buffer(e, st->name)) return false;
    const DType t = plan_.buffer(st->name).type;
    if ((d.elems * dtype_bytes(t)) % sb_ || vector_type(e) != t) return false;
    // E's rows follow one another along the loop: each vector read moves by a row of the lanes.
    AccessCoeffs acc;
    collect(e, false, acc);
    std::set<std::string> all = var_set(loops);
    auto coeff = [&](const Expr &idx) {
        auto a = affine_in(idx, all);
        return a ? a->of(rows.name) : INT64_MIN;
    };
    bool ok = acc.trans.empty() && acc.strided.empty() && acc.windows.empty() && acc.masks.empty() && acc.scalar_vars.empty() &&
              !has_select(e);
    for (auto &a : acc.vec) ok &= coeff(a.first) == d.elems;
    // No value per row: a per-group scalar is computed over whole fp16 sticks of rows, which reads
    // past a short buffer of them (the next row's prefetch may be landing there).
    for (auto &s : acc.scal) ok &= coeff(s.first) == 0;
    if (!ok) return false;
    // All the rows at once, or chunks of them (a loop over chunks outside) while E's temporaries
    // would not fit beside the buffers.
    const size_t mark = b_.size();
    const PendingSet pending = hz_.pending();
    const int64_t peak = st_.temp_peak;
    const auto temps = st_.temps;  // a retry forgets the slots the larger step made
    for (int64_t chunk = rows.extent; chunk >= 1; chunk--) {
        if (rows.extent % chunk) continue;
        std::vector<Loop> outer(loops.begin(), loops.begin() + long(k - 1));
        Expr ec = e;
        if (chunk < rows.extent) {
            const std::string c = rows.name + ".fold_chunk";
            outer.push_back(Loop{c, rows.extent / chunk});
            ec = substitute(rows.name, Variable::make(Int(32), c) * int32_t(chunk) + Variable::make(Int(32), rows.name),
                            e);
        }
        Domain dg = d;
        dg.group_var = rows.name;
        dg.groups = chunk;
        emit_loops(outer, outer.size(), [&] {
            Operand a = at_buffer(st->name, t, simplify(affine_in(ramp->base, dg.vars())->rest));
            Operand v = to_vec(gen(ec, dg, nullptr), dg);
            vinstr(op, t, a, &a, &v, sticks_per_group(dg, t), chunk, kFoldGroups);
            free_temp(v);
            reset_temps();
        });
        if (temp_base_ + st_.temp_peak <= plan_.machine.lx_usable_bytes) return true;
        b_.truncate(mark);
        hz_.set_pending(pending);
        st_.temp_peak = peak;
        st_.temps = temps;
    }
    return false;
}

Domain Selector::reduction_domain(const std::vector<Loop> &loops, const Expr &index, const Expr &v, DType vt,
                                  size_t &k) {
    std::set<std::string> all = var_set(loops);
    auto ai = affine_in(index, all);
    if (!ai) unsupported("reduction destination index is not affine");
    // Reduction loops: the innermost loops the destination does not depend on.
    k = loops.size();
    Domain d;
    d.padded = true;
    while (k > 0 && ai->of(loops[k - 1].name) == 0) {
        const Loop &l = loops[k - 1];
        d.lane.push_back({l.name, d.elems});
        d.elems *= l.extent;
        k--;
    }
    if (d.lane.empty()) unsupported("a reduction without a reduction loop");
    // A group: the next loop out, when destinations are consecutive and source rows back to back.
    if (k > 0 && ai->of(loops[k - 1].name) == 1) group_rows(loops, v, vt, d, k);
    return d;
}

void Selector::group_rows(const std::vector<Loop> &loops, const Expr &v, DType vt, Domain &d, size_t &k) {
    const Loop &g = loops[k - 1];
    const std::set<std::string> all = var_set(loops);
    AccessCoeffs acc;
    collect(v, false, acc);
    const int64_t row = sticks_per_group(d, vt) * plan_.lanes(vt);
    for (auto &s : acc.scal) {
        auto a = affine_in(s.first, all);
        if (!a) continue;
        bool lane = false;
        for (auto &lv : d.lane) lane |= a->of(lv.first) != 0;
        const int64_t c = a->of(g.name);
        if (lane ? c != row : (c != 0 && c != 1)) return;
    }
    d.group_var = g.name;
    d.groups = g.extent;
    k--;
}

void Selector::emit_reduction(const std::vector<Loop> &loops, const Store *st, const Reduction &red) {
    const BufferInfo &dst = plan_.buffer(st->name);
    Expr v = red.value;
    DType vt = dtype_of(v.type());
    uint8_t mode = kAccumulate;
    if (dst.type == DType::F32 && vt == DType::F16) mode |= kDstF32;
    if (const Cast *c = v.as<Cast>(); c && dst.type == DType::F32 && dtype_of(c->value.type()) == DType::F16) {
        v = c->value;  // accumulate the fp16 values in fp32 directly
        vt = DType::F16;
        mode |= kDstF32;
    }
    if (dst.type != vt && !(mode & kDstF32)) unsupported("reduces " + std::string(dtype_name(vt)) + " values into " + dtype_name(dst.type));
    // Halide adds fp16 values in fp16, rounding every step; so does the device when told to.
    if (red.op == Opcode::VREDSUM && dst.type == DType::F16 && vt == DType::F16) mode |= kAccF16;
    size_t k = 0;
    Domain d = reduction_domain(loops, st->index, v, vt, k);
    emit_loops(loops, k, [&] {
        Operand o;
        o.kind = Operand::Scal;
        o.type = dst.type;
        o.buf = st->name;
        o.base = lx_base(st->name);
        auto a = affine_in(st->index, d.vars());
        o.index = simplify(a->rest);
        Operand src = gen(v, d, nullptr);
        if (src.kind != Operand::Vec) unsupported("reduces a value that does not vary along the reduction");
        int64_t sticks = sticks_per_group(d, vt);
        vinstr(red.op, vt, o, &src, nullptr, sticks, d.groups, mode, int32_t(d.elems));
        free_temp(src);
        reset_temps();
    });
}

// a < b, written either way round (Halide's argmax() writes it both ways in one update).
static bool strict_less(const Expr &c, Expr &a, Expr &b) {
    if (const LT *lt = c.as<LT>()) return a = lt->a, b = lt->b, true;
    if (const GT *gt = c.as<GT>()) return a = gt->b, b = gt->a, true;
    return false;
}

// Halide lowers argmax(x) over r, a Tuple (index, value), to a loop body of two stores:
//   I[i] = select(V[j] < x, r, I[i]);  V[j] = select(x > V[j], x, V[j])
// (argmin: x < V[j]). The index store comes first, so both see the value before this element: an
// element replaces the running pair only when strictly beyond it, and the first extreme wins.
auto Selector::arg_reduction_of(const Block *body) -> std::optional<ArgReduction> {
    const Store *is = body->first.as<Store>(), *vs = body->rest.as<Store>();
    if (!is || !vs || is->name == vs->name || is->value.type().is_vector() || vs->value.type().is_vector())
        return std::nullopt;
    auto is_own = [](const Expr &e, const Store *st) {
        const Load *l = e.as<Load>();
        return l && l->name == st->name && equal(l->index, st->index);
    };
    const Select *isel = is->value.as<Select>();
    if (!isel || !is_own(isel->false_value, is)) return std::nullopt;
    Expr lo, hi;  // the index store's condition: lo < hi
    if (!strict_less(isel->condition, lo, hi)) return std::nullopt;
    Opcode op;
    Expr x;
    if (is_own(lo, vs)) op = Opcode::VREDARGMAX, x = hi;
    else if (is_own(hi, vs)) op = Opcode::VREDARGMIN, x = lo;
    else return std::nullopt;
    // The value store keeps the extreme by the same comparison; Halide simplifies it to max() or
    // min() for integers, where that is the same.
    const bool max = op == Opcode::VREDARGMAX;
    auto pair_is = [&](const Expr &a, const Expr &b) {
        return (equal(a, x) && is_own(b, vs)) || (is_own(a, vs) && equal(b, x));
    };
    bool value_ok = false;
    if (const Select *vsel = vs->value.as<Select>()) {
        Expr a, b;
        value_ok = is_own(vsel->false_value, vs) && equal(vsel->true_value, x) && strict_less(vsel->condition, a, b) &&
                   equal(a, lo) && equal(b, hi);
    } else if (const Max *m = vs->value.as<Max>(); m && max && !x.type().is_float()) {
        value_ok = pair_is(m->a, m->b);
    } else if (const Min *m = vs->value.as<Min>(); m && !max && !x.type().is_float()) {
        value_ok = pair_is(m->a, m->b);
    }
    if (!value_ok) return std::nullopt;
    return ArgReduction{op, is, vs, x, isel->true_value};
}

void Selector::emit_arg_reduction(const std::vector<Loop> &loops, const ArgReduction &red) {
    const BufferInfo &vb = plan_.buffer(red.value->name), &ib = plan_.buffer(red.index->name);
    st_.func = ib.func;
    const char *name = red.op == Opcode::VREDARGMAX ? "argmax" : "argmin";
    if (vb.place != Place::LX || ib.place != Place::LX)
        internal("internal: an " + std::string(name) + " accumulator was not staged into LX");
    const DType vt = dtype_of(red.x.type());
    if (vb.type != vt || ib.type != DType::I32)
        unsupported(std::string(name) + " keeps a " + dtype_name(vb.type) + " value of " + dtype_name(vt) +
                    " elements and a " + dtype_name(ib.type) + " index; the device keeps the elements' type and int32");
    size_t k = 0;
    Domain d = reduction_domain(loops, red.value->index, red.x, vt, k);
    // The device counts the index from the row's first element: one reduction loop, whose variable
    // (from 0) is the index.
    const Variable *rv = red.r.as<Variable>();
    if (d.lane.size() != 1 || !rv || rv->name != d.lane[0].first) {
        std::ostringstream r;
        r << red.r;
        unsupported(std::string(name) + " over " + std::to_string(d.lane.size()) + " reduction loops with the index " +
                    r.str() + "; the vector unit gives the position in one row, so take the " +
                    name + " of a one-dimensional RDom that starts at 0");
    }
    auto ia = affine_in(red.index->index, var_set(loops)), va = affine_in(red.value->index, var_set(loops));
    if (!ia || !va) internal("internal: an " + std::string(name) + " accumulator at a non-affine place");
    // One instruction's groups keep their values and indices one element apart; where one of them
    // lies a padded row apart (one int32 and one fp16 per row are a stick each), a group per row.
    if (!d.group_var.empty() && (ia->of(d.group_var) != 1 || va->of(d.group_var) != 1)) {
        if (loops[k].name != d.group_var) internal("internal: an " + std::string(name) + "'s rows are not its next loop");
        d.group_var.clear();
        d.groups = 1;
        k++;
    }
    // Both move with the same loops (by different strides where their types pad rows differently).
    bool same_rows = true;
    for (const Loop &l : loops) same_rows = same_rows && (ia->of(l.name) == 0) == (va->of(l.name) == 0);
    if (!same_rows) internal("internal: the index and the value of an " + std::string(name) + " are at different rows");
    emit_loops(loops, k, [&] {
        auto slot = [&](const Store *st, DType t) {
            return at_buffer(st->name, t, simplify(affine_in(st->index, d.vars())->rest), Operand::Scal);
        };
        const Operand values = slot(red.value, vt), indices = slot(red.index, DType::I32);
        Operand src = gen(red.x, d, nullptr);
        if (src.kind != Operand::Vec) unsupported("an " + std::string(name) + " of a value that does not vary along its row");
        vinstr(red.op, vt, values, &src, &indices, sticks_per_group(d, vt), d.groups, 0, int32_t(d.elems));
        free_temp(src);
        reset_temps();
    });
}

void Selector::emit_ring_reduce(const RingReduceCall &rr) {
    const BufferInfo &bi = plan_.buffer(rr.lx);
    st_.func = bi.func;
    drain();
    Operand o;
    o.type = bi.type;
    o.base = lx_base(rr.lx);
    o.index = rr.offset;
    std::vector<Reg> regs;
    Lx at = addr(o, regs);
    // Waited for at once, so it needs no tracking; a tag of its own (not the ring queue's
    // kTagRing) keeps the WAIT off any ring forwards in flight.
    constexpr int kTagRingReduce = 7;
    b_.ring_reduce(bi.type, kTagRingReduce, RedOp(rr.op), at, int32_t(rr.elems * dtype_bytes(bi.type) / sb_));
    b_.wait_tag(kTagRingReduce);
    for (Reg r : regs) b_.release(r);
}

}  // namespace selection
}  // namespace spyre
