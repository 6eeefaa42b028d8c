// Instruction selection: scans along the stick dimension, an update that reads the element its
// loop's previous iteration wrote, acc[i] = f(acc[i - 1], ...), with i the innermost loop, and
// stores of one element at a time. A running sum is one VSCANSUM per step of rows (emit_scan); any
// other update, or a sum VSCANSUM does not take, runs one element per iteration on the sticks
// around it (emit_lane_scan); a store whose innermost loop does not run along the stick computes
// each element on a stick of its own (emit_single_elements). The last two keep one element of the
// sticks they compute (keep_element).
#include "selector.h"
#include "carried_reads.h"

namespace spyre {
namespace selection {

namespace {

// Whether every read of buffer `name` in e is of the element just before `at`, and there is one.
bool reads_only_previous(const Expr &e, const std::string &name, const Expr &at) {
    class Find : public IRVisitor {
    public:
        const std::string &name;
        const Expr &at;
        int previous = 0, other = 0;
        Find(const std::string &n, const Expr &a) : name(n), at(a) {}
        using IRVisitor::visit;
        void visit(const Load *op) override {
            IRVisitor::visit(op);
            if (op->name != name) return;
            auto d = const_int(simplify(op->index - at));
            (d && *d == -1 ? previous : other)++;
        }
    } f(name, at);
    e.accept(&f);
    return f.previous > 0 && f.other == 0;
}

// The reads of buffer `name` just before `at` as shifted reads of the elements at `at`: element j
// of each row reads element j - 1, clamped into the row [0, row_elems) (`lane` is j).
Expr previous_as_shift(const Expr &e, const std::string &name, const Expr &at, const std::string &lane,
                       int64_t row_elems) {
    class Replace : public IRMutator {
    public:
        const std::string &name, &lane;
        const Expr &at;
        int64_t row_elems;
        Replace(const std::string &n, const Expr &a, const std::string &l, int64_t r)
            : name(n), lane(l), at(a), row_elems(r) {}
        using IRMutator::visit;
        Expr visit(const Load *op) override {
            if (op->name != name) return IRMutator::visit(op);
            ShiftCall s;
            s.home = Load::make(op->type, op->name, at, op->image, op->param, op->predicate, op->alignment);
            s.shift = -1;
            s.edge = kEdgeClamp;
            const Expr j = Variable::make(Int(32), lane);
            s.lo = Expr(0) - j;
            s.hi = Expr(int32_t(row_elems - 1)) - j;
            return make_shift(s);
        }
    } r(name, at, lane, row_elems);
    return r.mutate(e);
}

}  // namespace

auto Selector::scan_of(const std::vector<Loop> &loops, const Store *st) -> std::optional<Expr> {
    if (loops.empty() || st->value.type().is_vector()) return std::nullopt;
    const Add *add = st->value.as<Add>();
    if (!add) return std::nullopt;
    auto ai = affine_in(st->index, var_set(loops));
    if (!ai || ai->of(loops.back().name) != 1) return std::nullopt;
    auto previous = [&](const Expr &e) {
        const Load *l = e.as<Load>();
        if (!l || l->name != st->name) return false;
        auto d = const_int(simplify(l->index - st->index));
        return d && *d == -1;
    };
    Expr x = previous(add->a) ? add->b : previous(add->b) ? add->a : Expr();
    if (!x.defined() || reads_buffer(x, st->name)) return std::nullopt;
    return x;
}

bool Selector::is_lane_scan(const std::vector<Loop> &loops, const Store *st) {
    if (loops.empty() || st->value.type().is_vector()) return false;
    auto ai = affine_in(st->index, var_set(loops));
    return ai && ai->of(loops.back().name) == 1 && reads_only_previous(st->value, st->name, st->index);
}

// One VSCANSUM per step of rows. The loop over the row starts at the scan's second element (Halide's
// RDom from 1); shifted back by one, the step covers the whole row from its first element, which
// the instruction keeps, so both operands start on a stick. False (nothing emitted) when the scan's
// first element does not start a stick or x is the same along the row: VSCANSUM takes neither.
bool Selector::emit_scan(const std::vector<Loop> &loops, const Store *st, const Expr &x) {
    const BufferInfo &dst = plan_.buffer(st->name);
    const DType t = dtype_of(x.type());
    if (dst.type != t) internal("internal: a running sum of " + std::string(dtype_name(dst.type)) + " adds " + dtype_name(t));
    const Loop &l = loops.back();
    const Expr back = Variable::make(Int(32), l.name) - 1;
    const Expr index = simplify(substitute(l.name, back, st->index)), value = simplify(substitute(l.name, back, x));
    Domain d;
    d.padded = true;
    d.lane.push_back({l.name, 1});
    d.elems = l.extent + 1;
    if (!provably_multiple(affine_in(index, d.vars())->rest, plan_.lanes(t)) || is_scalar_like(value, d))
        return false;
    size_t k = loops.size() - 1;
    // A group: the next loop out, when the rows of the sum and of every value lie a padded row apart.
    if (k > 0) {
        auto ai = affine_in(index, var_set(loops));
        if (ai && ai->of(loops[k - 1].name) == sticks_per_group(d, t) * plan_.lanes(t)) group_rows(loops, value, t, d, k);
    }
    emit_loops(loops, k, [&] {
        Operand o = at_buffer(st->name, t, simplify(affine_in(index, d.vars())->rest));
        if (!provably_multiple(o.index, plan_.lanes(t))) internal("internal: a running sum's row moved off its stick");
        Operand src = gen(value, d, nullptr);
        if (src.kind != Operand::Vec) internal("internal: a running sum of a value that does not vary along its row");
        vinstr(Opcode::VSCANSUM, t, o, &src, nullptr, sticks_per_group(d, t), d.groups, 0, int32_t(d.elems));
        free_temp(src);
        reset_temps();
    });
    return true;
}

// Iteration i of the scan's loop computes the update on the sticks around element i (its read of
// element i - 1 a VSHIFT of the row by one) and keeps element i alone, by two VSELIDX: every element
// is computed, and rounded, as Halide's sequential loop computes it, whatever the update.
//
// The sticks: the whole row from the stick holding the scan's first element, when that is at most
// two sticks (then the rows a padded row apart are one instruction's groups); else the two sticks
// from the one holding element i - 1, moved back from the row's end (one row per instruction). The
// elements after i hold what the update made of unscanned values until the select puts back the
// row's own; none is left written.
void Selector::emit_lane_scan(const std::vector<Loop> &loops, const Store *st) {
    const BufferInfo &dst = plan_.buffer(st->name);
    const DType t = dtype_of(st->value.type());
    // (A store's value has its buffer's type: legalise_types made both the device's.)
    if (dst.type != t) internal("internal: a scan stores " + std::string(dtype_name(t)) + " into " + dtype_name(dst.type));
    const Loop &l = loops.back();
    const int64_t lanes_t = plan_.lanes(t), n = l.extent;
    const Expr step = Variable::make(Int(32), l.name);
    // The scan's first element (the one before its RDom's first) is element `first` of a stick.
    const Expr first_index = simplify(substitute(l.name, Expr(-1), st->index));
    std::optional<int64_t> first;
    for (int64_t c = 0; c < lanes_t && !first; c++)
        if (provably_multiple(first_index - Expr(int32_t(c)), lanes_t)) first = c;
    // Rows that start at different places in their sticks (rows of 7 back to back) fit no window
    // of whole sticks: one element per iteration on a stick of its own.
    if (!first) return emit_single_elements(loops, st);
    const int64_t span = *first + n + 1, row = (span + lanes_t - 1) / lanes_t * lanes_t;
    const bool whole = row <= 2 * lanes_t;
    // The window's first element, from the row's stick boundary.
    const Expr ws = whole ? Expr(0)
                          : simplify(min((step + int32_t(*first)) / int32_t(lanes_t) * int32_t(lanes_t),
                                         Expr(int32_t(row - 2 * lanes_t))));
    const std::string lane = l.name + ".lane";
    // Element j of the window is written by iteration ws + j - first - 1.
    const Expr at_j = ws + Variable::make(Int(32), lane) - int32_t(*first + 1);
    const Expr index = simplify(substitute(l.name, at_j, st->index));
    Domain d;
    d.padded = true;
    d.lane.push_back({lane, 1});
    d.elems = whole ? span : 2 * lanes_t;
    const Expr value = previous_as_shift(simplify(substitute(l.name, at_j, st->value)), st->name, index, lane,
                                         sticks_per_group(d, t) * lanes_t);
    size_t k = loops.size() - 1;
    if (whole && k > 0) {
        auto ai = affine_in(index, var_set(loops));
        if (ai && ai->of(loops[k - 1].name) == sticks_per_group(d, t) * lanes_t) group_rows(loops, value, t, d, k);
    }
    const int64_t sticks = sticks_per_group(d, t);
    emit_loops(loops, k, [&] {
        Reg r = b_.alloc();
        b_.loop(r, int32_t(n));
        st_.vars[l.name] = r;
        st_.extents[l.name] = n;
        Operand s = at_buffer(st->name, t, simplify(affine_in(index, d.vars())->rest));
        if (!provably_multiple(s.index, lanes_t)) internal("internal: a scan's sticks moved off their boundary");
        Operand v = to_vec(gen(value, d, nullptr), d);
        if (v.temp < 0) internal("internal: a scan's update is not in a temporary");
        keep_element(s, v, step + int32_t(*first + 1) - ws, t, sticks, d.groups);
        free_temp(v);
        reset_temps();
        drain();
        b_.end_loop();
        st_.vars.erase(l.name);
        b_.release(r);
    });
}

void Selector::keep_element(const Operand &s, const Operand &v, const Expr &at, DType t, int64_t sticks,
                            int64_t groups) {
    // v = e <= at - 1 ? s : v, then s = e <= at ? v : s.
    auto select = [&](const Operand &into, const Operand &a, const Operand &b, const Expr &limit) {
        std::set<std::string> reads{a.buf, b.buf}, writes{into.buf};
        before(QVec, reads, writes);
        std::vector<Reg> regs;
        Lx ld = addr(into, regs), la = addr(a, regs), lb = addr(b, regs);
        Reg lim = eval(simplify(limit));
        regs.push_back(lim);
        b_.vselidx(t, kTagVec, ld, la, lb, lim, false, false, int32_t(sticks), int32_t(groups));
        for (Reg g : regs) b_.release(g);
        after(kTagVec, QVec, reads, writes);
    };
    select(v, s, v, at - 1);
    select(s, v, s, at);
}

// Every iteration computes its element's value on one stick (spread over its lanes) and keeps it
// in the destination's stick that holds the element: slow (a few instructions per element), but
// each element is computed in Halide's loop order, so an update may read what earlier iterations
// wrote anywhere in the buffer.
void Selector::emit_single_elements(const std::vector<Loop> &loops, const Store *st) {
    const BufferInfo &dst = plan_.buffer(st->name);
    const DType t = dtype_of(st->value.type());
    if (dst.type != t) internal("internal: a store of " + std::string(dtype_name(t)) + " into " + dtype_name(dst.type));
    const int32_t lanes_t = int32_t(plan_.lanes(t));
    emit_loops(loops, loops.size(), [&] {
        Domain d;
        d.padded = true;
        Operand v = gen(st->value, d, nullptr);
        // A value on a stick has it in its element 0: read as one element, it spreads over a stick.
        if (v.kind == Operand::Vec) v.kind = Operand::Scal, v.per_group = false, v.row = false;
        Operand w = to_vec(v, d);
        if (w.temp < 0) internal("internal: a stored element is not in a temporary");
        const Expr ws = simplify(st->index / lanes_t * lanes_t);
        keep_element(at_buffer(st->name, t, ws), w, st->index - ws, t, 1, 1);
        free_temp(w);
        reset_temps();
    });
}

}  // namespace selection
}  // namespace spyre
