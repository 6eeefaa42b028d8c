// Instruction selection: vector expressions, expression temporaries in LX and the loop nests of
// vector stores (stick runs, per-group scalars, element stores).
#include "carried_reads.h"
#include "selector.h"
#include "strided_stick_reads.h"

namespace spyre {
namespace selection {

int64_t Selector::sticks_per_group(const Domain &d, DType t) const {
    int64_t bytes = d.elems * dtype_bytes(t);
    return (bytes + sb_ - 1) / sb_;
}

Operand Selector::new_temp(DType t, int64_t bytes) {
    bytes = (bytes + sb_ - 1) / sb_ * sb_;
    // First fit among free slots, else a new slot on top.
    for (size_t i = 0; i < st_.temps.size(); i++) {
        if (!st_.temps[i].used && st_.temps[i].bytes >= bytes) {
            st_.temps[i].used = true;
            return temp_operand(int(i), t);
        }
    }
    int64_t top = st_.temps.empty() ? 0 : st_.temps.back().offset + st_.temps.back().bytes;
    st_.temps.push_back(TempSlot{top, bytes, true});
    st_.temp_peak = std::max(st_.temp_peak, top + bytes);
    return temp_operand(int(st_.temps.size()) - 1, t);
}

Operand Selector::at_buffer(const std::string &name, DType t, const Expr &index, Operand::Kind kind) {
    Operand o;
    o.kind = kind;
    o.type = t;
    o.buf = name;
    o.base = lx_base(name);
    o.index = index;
    return o;
}

Operand Selector::temp_operand(int slot, DType t) {
    Operand o;
    o.kind = Operand::Vec;
    o.type = t;
    o.buf = "$temp";  // tracked like a buffer: the PE array reads restickified operands from it
    o.base = int32_t(temp_base_ + st_.temps[slot].offset);
    o.index = Expr(0);
    o.temp = slot;
    return o;
}

void Selector::free_temp(const Operand &o) {
    if (o.temp >= 0) st_.temps[o.temp].used = false;
}

void Selector::vinstr(Opcode op, DType t, const Operand &dst, const Operand *a, const Operand *b2, int64_t sticks,
            int64_t groups, uint8_t mode, int32_t aux, int32_t a5) {
    if (!dtype_supported(op, t))
        unsupported(std::string(dtype_name(t)) + " values have no " + op_info(op).name +
                    (dtype_is_byte(t) ? "; int8 and uint8 are storage types: widen them first (cast<int32_t> or "
                                        "cast<float16_t>) and narrow the result"
                                      : ""));
    std::set<std::string> reads, writes;
    for (const Operand *o : {a, b2})
        if (o && !o->buf.empty()) reads.insert(o->buf);
    if (!dst.buf.empty()) writes.insert(dst.buf);
    if (mode & kAccumulate) reads.insert(dst.buf);
    if (op_info(op).form == VecForm::Scan) reads.insert(dst.buf);  // each element reads the one before
    if (op_info(op).form == VecForm::ArgReduce) {  // the running values and indices, read and written
        reads.insert(dst.buf);
        reads.insert(b2->buf);
        writes.insert(b2->buf);
    }
    // An instruction reads its sources before it writes: a source that overlaps its destination
    // other than element for element would miss the values the instruction itself writes (an
    // update reading what an earlier iteration of its loop wrote, carried_reads.h). The loop
    // merging that makes steps never does this, and Halide vectorizes no update that reads its
    // own Func shifted along the vector; refused rather than compute something else.
    for (const Operand *o : {a, b2}) {
        if (!o || o->buf.empty() || o->buf != dst.buf || o->temp >= 0 || o->kind != Operand::Vec ||
            dst.kind != Operand::Vec || o->type != dst.type)
            continue;
        auto d = const_int(simplify(o->index - dst.index));
        const int64_t span = sticks * groups * plan_.lanes(dst.type);
        if (d && *d != 0 && std::llabs(*d) < span)
            internal("internal: a vector step reads " + st_.func.substr(0, st_.func.find('$')) +
                        " where it also writes it (an update reading values that an earlier iteration of its loop "
                        "wrote, merged into one instruction)");
    }
    before(QVec, reads, writes);
    if (sticks > INT32_MAX || groups > INT32_MAX)
        throw_error("kernel ", plan_.kernel_name, ": a vector step of ", sticks, " x ", groups, " sticks is too large");
    std::vector<Reg> regs;
    Lx ld = addr(dst, regs);
    Lx la = a ? addr(*a, regs) : Lx();
    Lx lb = b2 ? addr(*b2, regs) : Lx();
    Instr in;
    in.op = op;
    in.dtype = uint8_t(t);
    in.mode = mode;
    in.a = {kTagVec, ld.reg.id, ld.off, la.reg.id, la.off, lb.reg.id, lb.off, int32_t(sticks), int32_t(groups), aux};
    if (op == Opcode::VCVTF8) in.a[5] = a5;  // the fp8 format (no src1)
    b_.emit(in);
    for (Reg r : regs) b_.release(r);
    after(kTagVec, QVec, reads, writes);
}

Operand Selector::shifted_load(const ShiftCall &s, const Domain &d, const Operand *into) {
    const Load *home = s.home.as<Load>();
    Operand src = home ? load(home, d) : Operand();
    if (!home || src.kind != Operand::Vec || src.row)
        internal("internal: a shifted read of a scalar or of one row for all groups");
    const DType t = src.type;
    int32_t lo = 0, hi = 0;
    if (s.edge) {
        // The window is fixed in each row: it moves with the lanes and not with the rows.
        auto rel = [&](const Expr &e, const char *what) {
            auto a = affine_in(e, d.vars());
            bool ok = bool(a);
            for (auto &l : d.lane) ok = ok && a->of(l.first) == -l.second;
            if (ok && !d.group_var.empty()) ok = a->of(d.group_var) == 0;
            std::optional<int64_t> c = ok ? const_int(a->rest) : std::nullopt;
            if (!c)
                unsupported(std::string("reads ") + plan_.buffer(home->name).func +
                            " through a clamp of its position (a boundary condition, or a min/max of the position) "
                            "whose " + what + " edge moves with the rows or tiles around the vector, where one "
                            "instruction takes one window per row: vectorize whole rows of it, or stage whole rows "
                            "of it in LX, tiling the rows");
            return int32_t(std::clamp<int64_t>(*c, INT32_MIN / 2, INT32_MAX / 2));
        };
        lo = rel(s.lo, "lower"), hi = rel(s.hi, "upper");
        if (lo > hi) internal("internal: an empty boundary window reading " + plan_.buffer(home->name).func);
    }
    // A home row that starts before its buffer (a tile cut to the part of the row a select reads:
    // the lanes before it are all outside the window) moves forward by whole sticks onto the
    // buffer, its shift and window with it: the same elements are read, from an address inside
    // the buffer.
    int32_t shift = s.shift;
    {
        Scope<Interval> scope;
        for (auto &kv : st_.extents) scope.push(kv.first, Interval(Expr(0), Expr(int32_t(kv.second - 1))));
        Interval b = bounds_of_expr_in_scope(src.index, scope);
        std::optional<int64_t> first = b.has_lower_bound() ? const_int(simplify(b.min)) : std::nullopt;
        // (An LX index is far inside int32; past a quarter of it the read is left as it is, and
        // the simulator's LX checks stop it.)
        if (first && *first < 0 && -*first <= INT32_MAX / 4) {
            const int64_t lanes_t = plan_.lanes(t), move = (-*first + lanes_t - 1) / lanes_t * lanes_t;
            src.index = simplify(src.index + Expr(int32_t(move)));
            shift -= int32_t(move);
            if (s.edge) lo -= int32_t(move), hi -= int32_t(move);
        }
    }
    const int64_t sticks = sticks_per_group(d, t);
    return read_op(src, d, into, [&](Lx ld, Lx ls) {
        b_.vshift(t, kTagVec, ld, ls, shift, int32_t(sticks), int32_t(d.groups), uint8_t(s.edge), lo, hi);
    });
}

Operand Selector::read_op(const Operand &src, const Domain &d, const Operand *into, const std::function<void(Lx, Lx)> &emit) {
    Operand r = result_for(d, src.type, into, {});
    std::set<std::string> reads{src.buf}, writes;
    if (!r.buf.empty()) writes.insert(r.buf);
    before(QVec, reads, writes);
    std::vector<Reg> regs;
    Lx ld = addr(r, regs), ls = addr(src, regs);
    emit(ld, ls);
    for (Reg g : regs) b_.release(g);
    after(kTagVec, QVec, reads, writes);
    return r;
}

Operand Selector::strided_load(const StrideCall &s, const Domain &d, const Operand *into) {
    const Load *home = s.home.as<Load>();
    const Ramp *r = home ? home->index.as<Ramp>() : nullptr;
    if (!r || !is_const_one(r->stride)) internal("internal: a strided read whose home is not a dense row");
    if (!plan_.has(home->name)) unsupported("reads " + home->name + ", which is not a buffer of the kernel");
    const BufferInfo &bi = plan_.buffer(home->name);
    if (bi.place != Place::LX) internal("internal: " + home->name + " was not staged into LX");
    const DType t = bi.type;
    const int64_t lanes_t = plan_.lanes(t);
    const std::string what = s.step > 0 ? "at every " + std::to_string(s.step) + " elements along its stick dimension"
                                        : "each element " + std::to_string(-s.step) + " times along its stick dimension";
    auto a = affine_in(r->base, d.vars());
    if (!a) unsupported("index of " + bi.func + " is not affine in its loops");
    // An output stick further along the row reads step times (an upsample: 1/-step times) as far along.
    for (auto &l : d.lane) {
        const int64_t want = s.step > 0 ? l.second * s.step : l.second / -s.step;
        if ((s.step < 0 && l.second % -s.step) || a->of(l.first) != want)
            unsupported("reads " + bi.func + " " + what + " but out of stick order along " + user_loop_name(l.first));
    }
    int64_t row = 0;
    if (!d.group_var.empty()) {
        row = a->of(d.group_var);
        if (row < 0 || row % lanes_t)
            unsupported("reads " + bi.func + " " + what + " from rows that are not whole sticks apart (" +
                        std::to_string(row) + " elements)");
    } else if (d.groups != 1) {
        internal("internal: groups without a group variable");
    }
    // The read may start at any element (an upsample's output stick reads half a stick).
    Operand src;
    src.kind = Operand::Vec;
    src.type = t;
    src.buf = home->name;
    src.base = lx_base(home->name);
    src.index = simplify(a->rest);
    const int64_t sticks = sticks_per_group(d, t);
    return read_op(src, d, into, [&](Lx ld, Lx ls) {
        b_.vstride(t, kTagVec, ld, ls, int32_t(s.start), int32_t(s.step), int32_t(sticks), int32_t(d.groups),
                   int32_t(row / lanes_t));
    });
}

void Selector::unsupported(const std::string &what) const {
    throw_error("Func ", st_.func, ": ", what);
}

void Selector::internal(const std::string &what) const {
    throw_internal("Func ", st_.func, ": ", what);
}

Operand Selector::load(const Load *op, const Domain &d) {
    if (!plan_.has(op->name)) unsupported("reads " + op->name + ", which is not a buffer of the kernel");
    const BufferInfo &bi = plan_.buffer(op->name);
    if (bi.place != Place::LX) internal("internal: " + op->name + " was not staged into LX");
    Operand o;
    o.type = bi.type;
    o.buf = op->name;
    o.base = lx_base(op->name);
    Expr base = op->index;
    bool ramp = false;
    if (const Ramp *r = op->index.as<Ramp>()) {
        if (!is_const_one(r->stride)) return transposed_load(op, r, bi, d);
        base = r->base;
        ramp = true;
        if (r->lanes != d.ramp_lanes) unsupported("mixes vectors of different widths");
    }
    std::set<std::string> vars = d.vars();
    auto a = affine_in(base, vars);
    if (!a) unsupported("index of " + bi.func + " is not affine in its loops");
    int64_t lanes_t = plan_.lanes(bi.type);
    // The usual cause of a misfit: vectors that cover part of a stick of a narrower type (an fp32
    // accumulator of fp16 data, fp16 of int8 data) because the Func is vectorized by its own stick.
    const std::string hint =
        d.ramp_lanes > 0 && d.ramp_lanes % lanes_t != 0
            ? ": its vectors are " + std::to_string(d.ramp_lanes) + " elements and a stick of " + bi.func + " holds " +
                  std::to_string(lanes_t) + "; stick_vectorize(x, " +
                  std::to_string(lanes_t / std::max<int64_t>(d.ramp_lanes, 1)) + ") on this Func makes each vector a " +
                  "whole stick of " + bi.func
            : "";
    bool lane_dep = false;
    for (auto &l : d.lane) lane_dep |= a->of(l.first) != 0;
    if (ramp || lane_dep) {
        for (auto &l : d.lane)
            if (a->of(l.first) != l.second)
                unsupported("reads " + bi.func + " out of stick order along " + l.first +
                            " (stick_vectorize the dimension of stride 1 and keep rows contiguous)");
        if (d.ramp_lanes == 0 && d.lane.empty()) internal("internal: vector load without lanes");
        if (!d.group_var.empty() && d.shared_rows && a->of(d.group_var) == 0) {
            o.row = true;
        } else if (!d.group_var.empty()) {
            int64_t want = d.padded ? sticks_per_group(d, bi.type) * lanes_t : d.elems;
            if (a->of(d.group_var) != want)
                unsupported("rows of " + bi.func + " are not back to back in whole sticks (row stride " +
                            std::to_string(a->of(d.group_var)) + ", expected " + std::to_string(want) + ")" + hint);
        }
        o.kind = Operand::Vec;
        o.index = simplify(a->rest);
        if (!provably_multiple(o.index, lanes_t))
            unsupported("reads " + bi.func + " from an address that is not on a stick boundary" + hint);
        return o;
    }
    o.kind = Operand::Scal;
    o.index = simplify(a->rest);
    int64_t cg = d.group_var.empty() ? 0 : a->of(d.group_var);
    if (cg != 0 && cg != 1) unsupported("reads one value of " + bi.func + " per row, but not consecutive values");
    o.per_group = cg == 1;
    return o;
}

// out(x, y) = in(y, x): each row y of the domain reads in's column y, lanes walking in's rows; a
// group may take several sticks of the output row (lanes merged with a loop over the next rows of
// in). The domain's rows are the columns of an LX tile of in, so one VTRANSPOSE of that tile (its
// rows x groups columns, rows padded to whole sticks as staging leaves them) gives every group's
// sticks back to back (the restickify, on the vector unit at its measured rate), into a temporary
// or straight into the destination.
Operand Selector::transposed_load(const Load *op, const Ramp *r, const BufferInfo &bi, const Domain &d,
                                  const Operand *into) {
    const int64_t lanes_t = plan_.lanes(bi.type);
    auto stride = as_const_int(r->stride);
    // Lanes that walk the input's rows while a reduction loop walks its sticks: one dot product per
    // element (scores(t, h) = sum(q(d, h) * k(d, t, h)) vectorized along t), which needs no
    // transpose at all when the Func is left unvectorized.
    auto dot_products = [&]() -> std::string {
        std::set<std::string> loops;
        for (const auto &kv : st_.vars) loops.insert(kv.first);
        auto in_loops = affine_in(r->base, loops);
        if (!in_loops) return "";
        for (const std::string &l : loops)
            if (l.find('$') != std::string::npos && in_loops->of(l) == 1)
                return "; each element reads " + bi.func + " along its sticks over " + user_loop_name(l) +
                       " (a dot product per element): leave the dimension it vectorizes unvectorized (no "
                       "stick_vectorize of it), and each element is one reduction along the sticks";
        return "";
    };
    auto fail = [&](const std::string &why) {
        unsupported("reads " + bi.func + " across its sticks (a transpose) but " + why +
                    "; transposes take whole sticks of each output row, over whole rows of the input tile" +
                    dot_products());
    };
    if (!stride || *stride <= 1) fail("with a stride that is not a positive constant");
    // A stride below a stick is not a transpose (rows are whole sticks): it picks lanes of each stick.
    if (*stride < lanes_t) unsupported(strided_stick_read_refusal(bi.func, *stride));
    if (r->lanes % lanes_t || d.ramp_lanes != r->lanes) fail("with vectors that are not whole sticks");
    if (d.group_var.empty() && d.groups != 1) fail("outside a loop over the output's rows");
    auto a = affine_in(r->base, d.vars());
    if (!a || (!d.group_var.empty() && a->of(d.group_var) != 1)) fail("with rows that do not walk the input's row");
    for (auto &l : d.lane)
        if (a->of(l.first) != l.second * *stride) fail("with sticks of an output row that are not consecutive input rows");
    const int64_t row = (d.groups + lanes_t - 1) / lanes_t * lanes_t;
    if (*stride != row)
        fail("from rows of " + std::to_string(*stride) + " elements, not the " + std::to_string(row) +
             " that a tile of " + std::to_string(d.groups) + " columns has");
    Operand src;
    src.type = bi.type;
    src.buf = op->name;
    src.base = lx_base(op->name);
    src.index = simplify(a->rest);
    if (!provably_multiple(src.index, lanes_t)) fail("from a tile that does not start on a stick boundary");
    const int64_t rows = d.elems;  // input rows = output elements per group, whole sticks
    if (into) {  // the loaded value is stored as it is (gen passes only a destination of its type)
        vinstr(Opcode::VTRANSPOSE, bi.type, *into, &src, nullptr, rows, d.groups);
        return *into;
    }
    Operand t = new_temp(bi.type, d.groups * rows / lanes_t * plan_.machine.stick_bytes);
    vinstr(Opcode::VTRANSPOSE, bi.type, t, &src, nullptr, rows, d.groups);
    t.kind = Operand::Vec;
    return t;
}

bool Selector::is_scalar_like(const Expr &e, const Domain &d) {
    if (e.type().is_vector()) {
        if (e.as<Broadcast>()) return true;
        if (e.as<Load>()) return false;
    }
    if (const Load *l = e.as<Load>()) {
        if (l->index.type().is_vector()) return false;
        auto a = affine_in(l->index, d.vars());
        if (!a) return false;
        for (auto &lv : d.lane)
            if (a->of(lv.first)) return false;
        return true;
    }
    if (e.as<FloatImm>() || e.as<IntImm>() || e.as<UIntImm>()) return true;
    bool all = true;
    int children = 0;
    auto check = [&](const Expr &c) {
        children++;
        all = all && is_scalar_like(c, d);
    };
    if (const Cast *op = e.as<Cast>()) check(op->value);
    else if (const Call *op = e.as<Call>()) {
        // A lane select's value depends on the lane even when both sources are the same on every
        // lane (interleave_vectors(x16(a), x16(b)): a 2-wide mirror_interior row).
        if (as_lane_select(e)) return false;
        for (const Expr &a : op->args) check(a);
    } else if (const Add *op = e.as<Add>()) check(op->a), check(op->b);
    else if (const Sub *op = e.as<Sub>()) check(op->a), check(op->b);
    else if (const Mul *op = e.as<Mul>()) check(op->a), check(op->b);
    else if (const Div *op = e.as<Div>()) check(op->a), check(op->b);
    else if (const Min *op = e.as<Min>()) check(op->a), check(op->b);
    else if (const Max *op = e.as<Max>()) check(op->a), check(op->b);
    else return false;
    return all && children > 0;
}

Operand Selector::scalar_value(const Expr &e0, const Domain &d) {
    Expr e = e0;
    if (const Broadcast *bc = e.as<Broadcast>()) e = bc->value;
    if (const Load *l = e.as<Load>()) return load(l, d);
    Domain g;
    // Whole fp16 sticks, so that conversions between fp16 and fp32 give whole sticks too; the
    // elements past the last group are computed but never used.
    g.elems = (d.groups + sb_ / 2 - 1) / (sb_ / 2) * (sb_ / 2);
    g.padded = true;
    if (!d.group_var.empty()) g.lane.push_back({d.group_var, 1});
    for (auto &l : d.lane) g.zero[l.first] = Expr(0);
    Expr body = substitute(g.zero, e);
    Operand v = gen(body, g, nullptr);
    if (v.kind == Operand::Scal) {  // no dependence on the groups: spread it
        Operand t = new_temp(v.type, std::max<int64_t>(1, sticks_per_group(g, v.type)) * sb_);
        vinstr(Opcode::VBCAST, v.type, t, &v, nullptr, sticks_per_group(g, v.type), 1);
        free_temp(v);
        v = t;
    }
    v.kind = Operand::Scal;
    v.per_group = !d.group_var.empty();
    return v;
}

Operand Selector::as_src1(Operand s, const Domain &d) {
    if (s.kind != Operand::Scal || s.per_group || d.groups == 1) return s;
    Domain g;
    g.elems = d.groups;
    Operand t = new_temp(s.type, sticks_per_group(g, s.type) * sb_);
    vinstr(Opcode::VBCAST, s.type, t, &s, nullptr, sticks_per_group(g, s.type), 1);
    t.kind = Operand::Scal;
    t.per_group = true;
    return t;
}

Operand Selector::constant(double v, DType t, const Domain &d) {
    // VFILL carries an fp32 value: an int32 constant must be exact in it (|v| <= 2^24, or a
    // power-of-two multiple such as INT32_MIN), or be INT32_MAX, which the fill's saturating
    // conversion makes of 2^31 (the start of an int32 argmin or minimum).
    if (t == DType::I32 && double(float(v)) != v && v != double(INT32_MAX))
        unsupported("the integer constant " + std::to_string(int64_t(v)) +
                    " is not exact in fp32, which a vector fill carries");
    Domain g;
    g.elems = d.groups;
    int64_t sticks = std::max<int64_t>(1, sticks_per_group(g, t));
    Operand o = new_temp(t, sticks * sb_);
    float f = float(v);
    int32_t bits;
    std::memcpy(&bits, &f, 4);
    vinstr(Opcode::VFILL, t, o, nullptr, nullptr, sticks, 1, 0, bits);
    o.kind = Operand::Scal;
    o.per_group = d.groups > 1;
    o.uniform = true;
    return o;
}

Operand Selector::result_for(const Domain &d, DType t, const Operand *into, std::initializer_list<const Operand *> reuse) {
    if (into) return *into;
    for (const Operand *r : reuse)
        if (r && r->temp >= 0 && r->type == t && r->kind == Operand::Vec && !r->row &&
            st_.temps[r->temp].bytes >= sticks_per_group(d, t) * d.groups * sb_)
            return *r;
    return new_temp(t, sticks_per_group(d, t) * d.groups * sb_);
}

namespace {

bool is_byte(const Expr &e) { return e.type().is_int_or_uint() && e.type().bits() == 8; }

// Halide turns an int32 product or sum of widened bytes into a 16-bit one (widening_mul, undone
// by lower_intrinsics into 16-bit casts). Such a value is exact in 16 bits, so computing it in
// int32 gives the same number: a cast of a byte, or the sum, difference or product of two.
bool exact_from_bytes(const Expr &e) {
    auto widened = [](const Expr &x) {
        const Cast *c = x.as<Cast>();
        return c && is_byte(c->value);
    };
    if (widened(e)) return true;
    if (const Mul *m = e.as<Mul>()) return widened(m->a) && widened(m->b);
    if (const Add *a = e.as<Add>()) return widened(a->a) && widened(a->b);
    if (const Sub *s = e.as<Sub>()) return widened(s->a) && widened(s->b);
    return false;
}

}  // namespace

// The device type an expression is computed in: its own, or int32 for the 16-bit integers that
// Halide makes of widened bytes.
DType Selector::vector_type(const Expr &e) {
    const Type t = e.type();
    if (t.is_int_or_uint() && t.bits() == 16) {
        if (!exact_from_bytes(e))
            unsupported("the " + std::string(t.is_int() ? "int16" : "uint16") + " expression " + describe(e) +
                        " has no Spyre vector form (16-bit integers are computed only as exact products or sums "
                        "of widened bytes; cast to int32 first)");
        return DType::I32;
    }
    return dtype_of(t);
}

Operand Selector::gen(const Expr &e, const Domain &d, const Operand *into) {
    DType t = vector_type(e);
    int64_t sticks = sticks_per_group(d, t);
    // In a one-element domain (no lanes, no groups) every value is scalar-like: compute it
    // directly on one stick instead of re-entering scalar evaluation.
    bool single = d.lane.empty() && d.group_var.empty() && d.ramp_lanes == 0;
    // A numeric literal, possibly broadcast.
    auto literal = [](const Expr &x) -> std::optional<double> {
        Expr v = x;
        if (const Broadcast *bc = v.as<Broadcast>()) v = bc->value;
        if (const FloatImm *f = v.as<FloatImm>()) return f->value;
        if (const IntImm *i = v.as<IntImm>()) return double(i->value);
        if (const UIntImm *u = v.as<UIntImm>()) return double(u->value);  // a uint8 constant
        return std::nullopt;
    };
    if (!single && is_scalar_like(e, d)) {
        Operand s;
        if (auto v = literal(e)) s = constant(*v, t, d);
        else s = scalar_value(e, d);
        if (!into) return s;
        s = as_src1(s, d);
        vinstr(Opcode::VBCAST, t, *into, &s, nullptr, sticks, d.groups);
        free_temp(s);
        return *into;
    }
    if (single) {
        if (auto v = literal(e)) {
            Operand c = constant(*v, t, d);
            if (!into) return c;
            vinstr(Opcode::VBCAST, t, *into, &c, nullptr, sticks, d.groups);
            free_temp(c);
            return *into;
        }
        // One element: a value spread over a vector is that value.
        if (const Broadcast *bc = e.as<Broadcast>()) return gen(bc->value, d, into);
    }
    if (const Load *l = e.as<Load>()) {
        const Ramp *r = l->index.as<Ramp>();
        if (into && r && !is_const_one(r->stride) && plan_.has(l->name))
            return transposed_load(l, r, plan_.buffer(l->name), d, into);
        Operand o = load(l, d);
        if (!into) return o;
        if (o.row) return spread_row(o, d, into);
        vinstr(o.kind == Operand::Scal ? Opcode::VBCAST : Opcode::VCOPY, t, *into, &o, nullptr, sticks, d.groups);
        return *into;
    }
    if (const Cast *c = e.as<Cast>()) {
        // An fp8 decode straight into the cast's float type: one VCVTF8 (exact either way).
        if (auto f = as_fp8(c->value); f && !f->encode && (t == DType::F16 || t == DType::F32))
            return convert(to_vec(gen(f->value, d, nullptr), d), t, d, into, Opcode::VCVTF8, int32_t(f->format));
        // Halide's abs of an int32 is a uint32, which has no device type; made an int32 again, its
        // bits are VABS's (abs(INT32_MIN) wraps to INT32_MIN; legalise_types.h makes this of abs).
        if (const Call *a = c->value.as<Call>();
            a && a->is_intrinsic(Call::abs) && t == DType::I32 && a->args[0].type().element_of() == Int(32)) {
            Operand x = to_vec(gen(a->args[0], d, nullptr), d);
            Operand r = result_for(d, t, into, {&x});
            vinstr(Opcode::VABS, t, r, &x, nullptr, sticks, d.groups);
            if (r.temp != x.temp) free_temp(x);
            return r;
        }
        // A cast the device computes already (int16 of widened bytes is computed as int32): the
        // value goes straight where the cast's would.
        if (vector_type(c->value) == t) return gen(c->value, d, into);
        Operand v = gen(c->value, d, nullptr);
        if (v.kind == Operand::Vec && v.row) {  // of a row: a row, converted once
            Domain one = d;
            one.groups = 1;
            one.group_var.clear();
            one.shared_rows = false;
            v.row = false;
            Operand r = convert(v, t, one, nullptr);
            r.row = true;
            return into ? spread_row(r, d, into) : r;
        }
        return convert(to_vec(v, d), t, d, into);
    }
    if (auto f = as_fp8(e)) {
        // An encode of an fp16 value widened to fp32 encodes the fp16 value (the widening is exact).
        Expr v = f->value;
        if (const Cast *w = v.as<Cast>(); f->encode && w && w->value.type().is_float() && w->value.type().bits() == 16)
            v = w->value;
        Operand a = to_vec(gen(v, d, nullptr), d);
        const DType want = f->encode ? DType::U8 : f->half ? DType::F16 : DType::F32;
        if (t != want || (f->encode ? a.type != DType::F16 && a.type != DType::F32 : a.type != DType::U8))
            unsupported(std::string("an fp8 ") + (f->encode ? "encode" : "decode") + " of " + dtype_name(a.type) +
                        " values into " + dtype_name(t) + " (spyre::to_fp8 takes float values and gives uint8 codes; "
                        "spyre::from_fp8 takes uint8 codes)");
        return convert(a, t, d, into, Opcode::VCVTF8, int32_t(f->format));
    }
    auto unary = [&](Opcode op, const Expr &x) {
        Operand a = gen(x, d, nullptr);
        if (a.kind == Operand::Vec && a.row) {  // of a row: a row
            a.row = false;
            Operand r = new_temp(t, sticks * sb_);
            vinstr(op, t, r, &a, nullptr, sticks, 1);
            free_temp(a);
            r.row = true;
            return into ? spread_row(r, d, into) : r;
        }
        a = to_vec(a, d);
        Operand r = result_for(d, t, into, {&a});
        vinstr(op, t, r, &a, nullptr, sticks, d.groups);
        if (r.temp != a.temp) free_temp(a);
        return r;
    };
    if (auto sh = as_shift(e)) return shifted_load(*sh, d, into);
    if (auto sc = as_stride(e)) return strided_load(*sc, d, into);
    if (const Select *sel = e.as<Select>())
        return lane_mask(sel->condition, d) ? index_select(sel, d, into) : data_select(sel, d, into);
    if (auto ls = as_lane_select(e)) {
        // Both sides whole, then one VLSEL picks each lane block from its side.
        Operand a = to_vec(gen(ls->even, d, nullptr), d);
        Operand b2 = to_vec(gen(ls->odd, d, nullptr), d);
        Operand r = result_for(d, t, into, {&a, &b2});
        vinstr(Opcode::VLSEL, t, r, &a, &b2, sticks, d.groups, 0, ls->block);
        if (r.temp != a.temp) free_temp(a);
        if (r.temp != b2.temp) free_temp(b2);
        return r;
    }
    if (const Call *c = e.as<Call>()) {
        std::string n = c->name;
        auto is = [&](const char *base) { return n == std::string(base) + "_f16" || n == std::string(base) + "_f32"; };
        if (is("exp")) return unary(Opcode::VEXP, c->args[0]);
        if (is("log")) return unary(Opcode::VLOG, c->args[0]);
        if (is("tanh")) return unary(Opcode::VTANH, c->args[0]);
        if (is("sqrt")) return unary(Opcode::VSQRT, c->args[0]);
        if (is("round")) return unary(Opcode::VROUND, c->args[0]);
        if (c->is_intrinsic(Call::abs)) return unary(Opcode::VABS, c->args[0]);
        unsupported("the operation " + n + " has no Spyre vector instruction");
    }
    auto binary = [&](Opcode op, const Expr &x, const Expr &y, bool commutative) {
        bool xs = is_scalar_like(x, d), ys = is_scalar_like(y, d);
        if (xs && commutative) return binary_ops(op, y, x, d, into, t, sticks);
        if (xs) {
            // scalar op vector: spread the scalar over the vector first.
            Operand s = gen(x, d, nullptr);
            s = as_src1(s, d);
            Operand v = new_temp(t, sticks * d.groups * sb_);
            vinstr(Opcode::VBCAST, t, v, &s, nullptr, sticks, d.groups);
            free_temp(s);
            Operand b2 = gen(y, d, nullptr);
            Operand r = result_for(d, t, into, {&v, &b2});
            uint8_t mode = b2.kind == Operand::Scal ? kSrc1Scalar : b2.row ? kSrc1Row : 0;
            if (b2.kind == Operand::Scal) b2 = as_src1(b2, d);
            vinstr(op, t, r, &v, &b2, sticks, d.groups, mode);
            if (r.temp != v.temp) free_temp(v);
            if (r.temp != b2.temp) free_temp(b2);
            return r;
        }
        (void)ys;
        return binary_ops(op, x, y, d, into, t, sticks);
    };
    if (const Add *op = e.as<Add>()) return binary(Opcode::VADD, op->a, op->b, true);
    if (const Mul *op = e.as<Mul>()) return binary(Opcode::VMUL, op->a, op->b, true);
    if (const Min *op = e.as<Min>()) return binary(Opcode::VMIN, op->a, op->b, true);
    if (const Max *op = e.as<Max>()) return binary(Opcode::VMAX, op->a, op->b, true);
    if (const Div *op = e.as<Div>()) {
        if (t == DType::I32)
            unsupported("integer division has no Spyre vector form (divide in float and cast)");
        return binary(Opcode::VDIV, op->a, op->b, false);
    }
    if (const Sub *op = e.as<Sub>()) {
        Expr z = op->a;
        if (const Broadcast *bc = z.as<Broadcast>()) z = bc->value;
        if (is_const_zero(z)) return unary(Opcode::VNEG, op->b);
        return binary(Opcode::VSUB, op->a, op->b, false);
    }
    unsupported("stick_vectorize: " + describe(e) + " has no Spyre vector form");
}

// A conversion of the vector `a` to type t (VCVT, or VCVTF8 in fp8 format `fmt`), by whole sticks
// of both types.
Operand Selector::convert(Operand a, DType t, const Domain &d, const Operand *into, Opcode op, int32_t fmt) {
    DType from = a.type;
    if (from == t && op == Opcode::VCVT) {
        if (!into) return a;
        // The caller reads its result at `into`, not in the returned operand.
        vinstr(Opcode::VCOPY, t, *into, &a, nullptr, sticks_per_group(d, t), d.groups);
        free_temp(a);
        return *into;
    }
    const int64_t sticks = sticks_per_group(d, t);
    int64_t src_sticks = sticks_per_group(d, from);
    int64_t ratio_num = dtype_bytes(t), ratio_den = dtype_bytes(from);
    if (d.groups == 1 && (src_sticks * ratio_num) % ratio_den) {
        // A narrowing of a part stick: convert a padded copy so that both sides are whole sticks.
        int64_t padded = (src_sticks + ratio_den / ratio_num - 1) / (ratio_den / ratio_num) * (ratio_den / ratio_num);
        Operand p = new_temp(from, padded * sb_);
        vinstr(Opcode::VCOPY, from, p, &a, nullptr, src_sticks, 1);
        free_temp(a);
        a = p;
        src_sticks = padded;
    }
    // Groups side by side must be whole sticks of both types (an fp16 row of 64 is half an int8
    // stick).
    const int64_t cvt_bytes = src_sticks * (sb_ / dtype_bytes(from)) * dtype_bytes(t);
    if (d.groups != 1 && cvt_bytes != sticks * sb_) {
        const int64_t whole = std::max(plan_.lanes(from), plan_.lanes(t));
        unsupported("converts rows of " + std::to_string(d.elems) + " elements from " + dtype_name(from) + " to " +
                    dtype_name(t) + ", which are not whole sticks of both (" + std::to_string(whole) +
                    " elements); vectorize the Func by a multiple of " + std::to_string(whole) +
                    " elements (stick_vectorize(x, sticks))");
    }
    // A widening of a part stick (an int8 stick holds more elements than the result's row):
    // the one group converts into a temporary of the whole stick's width, of which the result
    // takes its sticks.
    if (cvt_bytes > sticks * sb_) {
        Operand w = new_temp(t, cvt_bytes);
        vinstr(op, from, w, &a, nullptr, src_sticks, 1, 0, int32_t(t), fmt);
        free_temp(a);
        if (!into) return w;
        vinstr(Opcode::VCOPY, t, *into, &w, nullptr, sticks, 1);
        free_temp(w);
        return *into;
    }
    Operand r = result_for(d, t, into, {});
    vinstr(op, from, r, &a, nullptr, src_sticks, d.groups, 0, int32_t(t), fmt);
    free_temp(a);
    return r;
}

Operand Selector::to_vec(Operand s, const Domain &d) {
    if (s.kind == Operand::Vec && s.row) return spread_row(s, d, nullptr);
    if (s.kind == Operand::Vec) return s;
    s = as_src1(s, d);
    Operand v = new_temp(s.type, sticks_per_group(d, s.type) * d.groups * sb_);
    vinstr(Opcode::VBCAST, s.type, v, &s, nullptr, sticks_per_group(d, s.type), d.groups);
    free_temp(s);
    return v;
}

Operand Selector::binary_ops(Opcode op, const Expr &x, const Expr &y, const Domain &d, const Operand *into, DType t,
                   int64_t sticks) {
    Operand a = gen(x, d, nullptr);
    Operand b2 = gen(y, d, nullptr);
    // A row read by every group goes in src1 (kSrc1Row): the sources of a commutative op swap.
    const bool commutative = op == Opcode::VADD || op == Opcode::VMUL || op == Opcode::VMIN || op == Opcode::VMAX;
    if (commutative && a.kind == Operand::Vec && a.row && b2.kind == Operand::Vec && !b2.row) std::swap(a, b2);
    // A row with a row or a value for all groups is a row: computed once, not once per group.
    if (a.kind == Operand::Vec && a.row &&
        ((b2.kind == Operand::Vec && b2.row) || (b2.kind == Operand::Scal && (!b2.per_group || b2.uniform)))) {
        a.row = b2.row = false;
        Operand r = new_temp(t, sticks * sb_);
        vinstr(op, t, r, &a, &b2, sticks, 1, b2.kind == Operand::Scal ? kSrc1Scalar : 0);
        free_temp(a);
        free_temp(b2);
        r.row = true;
        return into ? spread_row(r, d, into) : r;
    }
    a = to_vec(a, d);
    uint8_t mode = 0;
    if (b2.kind == Operand::Scal) {
        b2 = as_src1(b2, d);
        mode = kSrc1Scalar;
    } else if (b2.row) {
        mode = kSrc1Row;
    }
    Operand r = result_for(d, t, into, {&a, &b2});
    vinstr(op, t, r, &a, &b2, sticks, d.groups, mode);
    if (r.temp != a.temp) free_temp(a);
    if (r.temp != b2.temp) free_temp(b2);
    return r;
}

Operand Selector::spread_row(const Operand &row, const Domain &d, const Operand *into) {
    const DType t = row.type;
    const int64_t sticks = sticks_per_group(d, t), elems = sticks * plan_.lanes(t);
    Operand r = into ? *into : new_temp(t, sticks * d.groups * sb_);
    Operand src = row;
    src.row = false;
    vinstr(Opcode::VCOPY, t, r, &src, nullptr, sticks, 1);
    for (int64_t done = 1; done < d.groups;) {
        const int64_t n = std::min(done, d.groups - done);
        Operand to = r;
        to.index = simplify(r.index + Expr(int32_t(done * elems)));
        vinstr(Opcode::VCOPY, t, to, &r, nullptr, sticks, n);
        done += n;
    }
    free_temp(row);  // a computed row is used up
    return r;
}

std::string Selector::describe(const Expr &e) const {
    if (const Shuffle *sh = e.as<Shuffle>()) {
        if (sh->is_interleave())
            return "an interleaving of even and odd lanes (what Halide makes of a select() on x % 2; Spyre takes "
                   "it when each side is element-wise arithmetic of reads at offsets along the stick dimension)";
        return "a shuffle of vector lanes (what Halide makes of a read at a constant offset along the stick "
               "dimension near a boundary; VSHIFT takes repeat_edge, mirror_image, mirror_interior, "
               "constant_exterior with 0 and plain offsets)";
    }
    if (e.as<Select>())
        return "a select() between vectors (a select on comparisons of values or of the stick index, && and || of "
               "them, or a boundary condition, has a vector form)";
    if (const Load *l = e.as<Load>())
        return "a gather from " + (plan_.has(l->name) ? plan_.buffer(l->name).func : l->name) +
               " (a data-dependent or non-affine index)";
    if (e.as<Mod>()) return "a modulo (%) of vectors";
    if (e.as<Div>()) return "an integer division";
    if (e.as<LT>() || e.as<LE>() || e.as<GT>() || e.as<GE>() || e.as<EQ>() || e.as<NE>())
        return "a comparison of vectors";
    if (e.as<And>() || e.as<Or>() || e.as<Not>()) return "a boolean of vectors";
    if (const Call *c = e.as<Call>()) return "the operation " + c->name;
    if (e.as<Ramp>()) return "a vector of consecutive integers (an index used as a value)";
    if (const Broadcast *bc = e.as<Broadcast>(); bc && bc->value.type().is_bool())
        return "that tests the rows alone but differs between the rows one instruction covers (rows merged "
               "into one vector's groups)";
    return "an operation of type " + type_to_c_type(e.type(), false);
}

void Selector::emit_loops(const std::vector<Loop> &loops, size_t n, const std::function<void()> &inner) {
    if (n == 0) return inner();
    std::vector<Reg> regs;
    for (size_t i = 0; i < n; i++) {
        Reg r = b_.alloc();
        regs.push_back(r);
        b_.loop(r, int32_t(loops[i].extent));
        st_.vars[loops[i].name] = r;
        st_.extents[loops[i].name] = loops[i].extent;
    }
    inner();
    for (size_t i = n; i-- > 0;) {
        // Every iteration leaves nothing in flight: the next one may reuse any buffer, and the
        // device keeps no unbounded list of unwaited operations.
        drain();
        b_.end_loop();
        st_.vars.erase(loops[i].name);
        b_.release(regs[i]);
    }
}

void Selector::emit_nest(const std::vector<Loop> &loops, const Store *st) {
    st_.func = plan_.has(st->name) ? plan_.buffer(st->name).func : st->name;
    if (!plan_.has(st->name) || plan_.buffer(st->name).place != Place::LX)
        internal("internal: store to " + st->name + " was not staged into LX");
    if (!is_const_one(st->predicate))
        unsupported(predicated_vector_refusal(st->value.type().lanes()));
    if (!loops.empty() && plan_.loops.pe(loops.back().name)) return emit_matmul(loops, st);
    if (st->index.type().is_vector()) return emit_vector_store(loops, st);
    // A reduction needs a reduction loop: an innermost loop the destination does not move with.
    bool has_reduction_loop = false;
    if (!loops.empty()) {
        auto a = affine_in(st->index, var_set(loops));
        has_reduction_loop = a && a->of(loops.back().name) == 0;
    }
    if (auto x = scan_of(loops, st); x && emit_scan(loops, st, *x)) return;
    if (is_lane_scan(loops, st)) return emit_lane_scan(loops, st);
    if (auto red = reduction_of(st); red && has_reduction_loop && column_reduction(loops, st)) {
        // A reduction down columns (out(x) = sum(in(x, r)), unvectorized): the reduction loop walks
        // across sticks, the loop around it along them. Each element's sum keeps its order when the
        // two loops trade places, and the elements of a row then accumulate together, a vector per
        // step of the reduction.
        std::vector<Loop> swapped = loops;
        std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
        return emit_element_store(swapped, st);
    }
    if (auto red = reduction_of(st); red && has_reduction_loop) {
        // The reduction loop's values are computed together, before any is accumulated: a value
        // that reads the accumulator's buffer would miss what the loop accumulates (carried_reads.h).
        if (reads_buffer(red->value, st->name))
            unsupported("its update reads " + st_.func + " inside its reduction over loop " +
                        user_loop_name(loops.back().name) + ", besides the element it accumulates into; the "
                        "vector unit reduces the loop's values together and cannot feed a partial result back "
                        "into them");
        return emit_reduction(loops, st, *red);
    }
    emit_element_store(loops, st);
}

// A reduction (the store's index constant along the innermost loop) whose values are read across
// sticks along that loop, and along them, a stride of 1, along the loop around it, where the store
// moves by 1 too: a column reduction of unvectorized loops.
bool Selector::column_reduction(const std::vector<Loop> &loops, const Store *st) {
    if (loops.size() < 2) return false;
    const std::string &r = loops.back().name, &x = loops[loops.size() - 2].name;
    const std::set<std::string> all = var_set(loops);
    auto ai = affine_in(st->index, all);
    if (!ai || ai->of(r) != 0 || ai->of(x) != 1) return false;
    AccessCoeffs acc;
    collect(st->value, false, acc);
    if (!acc.vec.empty() || !acc.trans.empty() || !acc.strided.empty() || !acc.masks.empty() || acc.scal.empty())
        return false;
    bool across = false;
    for (const auto &sc : acc.scal) {
        auto a = affine_in(sc.first, all);
        if (!a || (a->of(x) != 0 && a->of(x) != 1)) return false;
        across |= a->of(r) != 0 && a->of(r) != 1;
    }
    return across;
}

std::set<std::string> Selector::var_set(const std::vector<Loop> &loops) {
    std::set<std::string> s;
    for (const Loop &l : loops) s.insert(l.name);
    return s;
}

bool has_select(const Expr &e) {
    class Find : public IRVisitor {
    public:
        bool found = false;
        using IRVisitor::visit;
        void visit(const Select *op) override {
            // A condition of the loops alone: a scalar one, or one broadcast over the vector.
            found |= !op->condition.type().is_vector() || op->condition.as<Broadcast>();
            IRVisitor::visit(op);
        }
        void visit(const Call *op) override {
            found |= op->is_intrinsic(Call::if_then_else);
            IRVisitor::visit(op);
        }
    } f;
    e.accept(&f);
    return f.found;
}

void Selector::collect(const Expr &e, bool under_broadcast, AccessCoeffs &out) {
    class V : public IRVisitor {
    public:
        AccessCoeffs *out;
        int bc = 0;
        using IRVisitor::visit;
        void visit(const Broadcast *op) override {
            bc++;
            IRVisitor::visit(op);
            bc--;
        }
        void visit(const Select *op) override {
            if (op->condition.type().is_vector()) {
                if (auto m = mask_form(op->condition)) out->masks.push_back(*m);
                IRVisitor::visit(op);
                return;
            }
            out->scalar_conds.push_back(op->condition);
            IRVisitor::visit(op);
        }
        void visit(const Call *op) override {
            // A strided read's home moves step times as far as its lanes (1 / -step times).
            if (auto sc = as_stride(Expr(op))) {
                if (const Load *h = sc->home.as<Load>(); h && h->index.as<Ramp>()) {
                    out->strided.push_back({h->index.as<Ramp>()->base, sc->step, lanes_of(h->type)});
                    return;
                }
            }
            auto s = as_shift(Expr(op));
            if (s && s->edge) {
                out->windows.push_back(s->lo);
                out->windows.push_back(s->hi);
            }
            shifts += bool(s);
            IRVisitor::visit(op);
            shifts -= bool(s);
        }
        void visit(const Load *op) override {
            if (const Ramp *r = op->index.as<Ramp>()) {
                if (is_const_one(r->stride)) out->vec.push_back({r->base, shifts == 0});
                else out->trans.push_back({r->base, as_const_int(r->stride) ? *as_const_int(r->stride) : 0});
            } else {
                out->scal.push_back({op->index, bc > 0});
            }
            loads++;
            IRVisitor::visit(op);
            loads--;
        }
        void visit(const Variable *op) override {
            if (bc > 0 && loads == 0) out->scalar_vars.insert(op->name);
        }
        int loads = 0, shifts = 0;
        std::function<int64_t(Type)> lanes_of;
    } v;
    v.out = &out;
    v.lanes_of = [&](Type t) { return plan_.machine.stick_bytes / t.bytes(); };
    v.bc = under_broadcast;
    e.accept(&v);
}

void Selector::emit_vector_store(const std::vector<Loop> &loops, const Store *st) {
    const Ramp *r = st->index.as<Ramp>();
    if (!r || !is_const_one(r->stride)) unsupported("stores a strided vector");
    const BufferInfo &dst = plan_.buffer(st->name);
    AccessCoeffs acc;
    acc.vec.push_back({r->base, false});  // the store: it moves with every loop merged
    collect(st->value, false, acc);
    std::set<std::string> all = var_set(loops);
    auto coeff = [&](const Expr &idx, const std::string &v) {
        auto a = affine_in(idx, all);
        return a ? a->of(v) : INT64_MIN;
    };
    // The domain of one step: up to `max_lanes` loops, innermost first, merged into each group
    // while every vector access continues contiguously and no per-element scalar depends on them;
    // then, with `grouped`, the next loop as the groups. `k` gets the loops left outside.
    // A step reads all its sources before it writes: a loop whose iterations read what earlier
    // ones wrote (a scan, acc(x, r) = acc(x, r - 1) + in(x, r)) stays a loop (carried_reads.h).
    auto own_ok = [&](const Domain &d, const Loop &l) {
        std::set<std::string> merged = d.vars();
        merged.insert(l.name);
        return step_reads_only_own_elements(st, merged, d.elems * l.extent);
    };
    // A select's scalar condition (select(y >= 1, a, b)) whose lane mask a merge would lose (the
    // rows it tells apart merged into one step's lanes or groups): that loop stays a loop.
    auto keeps_masks = [&](const Domain &before, const Domain &after) {
        for (const Expr &c : acc.scalar_conds)
            if (lane_mask(c, before) && !lane_mask(c, after)) return false;
        return true;
    };
    auto domain = [&](size_t max_lanes, bool grouped, size_t &k) {
        Domain d;
        d.ramp_lanes = r->lanes;
        d.elems = r->lanes;
        k = loops.size();
        while (k > 0 && d.lane.size() < max_lanes) {
            const Loop &l = loops[k - 1];
            bool ok = own_ok(d, l);
            for (auto &a : acc.vec) ok &= coeff(a.first, l.name) == d.elems;
            for (auto &s : acc.scal) ok &= coeff(s.first, l.name) == 0;
            ok &= !acc.scalar_vars.count(l.name);
            // A transposed read's lanes walk the input's rows; a loop merges into them when it
            // continues down those rows (the output row's next stick is the next rows of input).
            for (auto &a : acc.trans) ok &= a.second > 1 && coeff(a.first, l.name) == d.elems * a.second;
            // A strided read's next stick of output reads step (1 / -step) times as far along its row.
            for (auto &a : acc.strided)
                ok &= a.step > 0 ? coeff(a.base, l.name) == d.elems * a.step
                                 : d.elems % -a.step == 0 && coeff(a.base, l.name) == d.elems / -a.step;
            for (auto &w : acc.windows) ok &= coeff(w, l.name) == -d.elems;  // a row's edges stay per row
            // A mask's stick index continues into the loop (its limit moves with a row instead).
            for (auto &m : acc.masks) ok &= coeff(m.base, l.name) == m.stride * d.elems;
            Domain merged = d;
            merged.lane.push_back({l.name, d.elems});
            merged.elems *= l.extent;
            if (!ok || !keeps_masks(d, merged)) break;
            d = merged;
            k--;
        }
        if (k > 0 && grouped) {
            const Loop &l = loops[k - 1];
            bool ok = own_ok(d, l), shared = false;
            // A read that stays on one row for every group is that row, read by each (kSrc1Row).
            for (auto &a : acc.vec) {
                const int64_t c = coeff(a.first, l.name);
                shared |= c == 0 && a.second;
                ok &= c == d.elems || (c == 0 && a.second);
            }
            // With a row for every group, a row's own scalars (a condition on the row, a clamped row
            // index) keep the loop: a step evaluates them once for all its rows.
            if (shared) ok &= acc.scalar_vars.empty() && acc.masks.empty() && !has_select(st->value);
            for (auto &a : acc.trans) ok &= coeff(a.first, l.name) == 1;  // rows walk the input's row
            for (auto &a : acc.strided) {  // rows of the source whole sticks apart (VSTRIDE's row stride)
                const int64_t c = coeff(a.base, l.name);
                ok &= c >= 0 && c % a.lanes == 0;
            }
            for (auto &w : acc.windows) ok &= coeff(w, l.name) == 0;
            for (auto &m : acc.masks) ok &= coeff(m.base, l.name) == 0 || coeff(m.base, l.name) == -m.stride;
            for (auto &s : acc.scal) {
                int64_t c = coeff(s.first, l.name);
                ok &= c == 0 || c == 1;
            }
            Domain merged = d;
            merged.group_var = l.name;
            merged.groups = l.extent;
            merged.shared_rows = shared;
            if (ok && keeps_masks(d, merged)) {
                d = merged;
                k--;
            }
        }
        return d;
    };
    DType t = dst.type;
    auto emit_step = [&](const Domain &dom, size_t outer) {
        if ((dom.elems * dtype_bytes(t)) % sb_)
            unsupported("vectors of " + std::to_string(dom.elems) + " elements are not whole sticks; stick_vectorize it");
        emit_loops(loops, outer, [&] {
            Operand o = at_buffer(st->name, t, simplify(affine_in(r->base, dom.vars())->rest));
            if (!provably_multiple(o.index, plan_.lanes(t)))
                unsupported("stores to an address that is not on a stick boundary");
            gen(st->value, dom, &o);
            reset_temps();
        });
    };
    // Expression temporaries hold a whole step. When they would not fit beside the buffers, the
    // step is retried smaller (streamed in chunks): first without the group loop, then with fewer
    // loops merged into each group, down to one vector; the loops taken out stay loops.
    size_t k = 0;
    Domain d = domain(loops.size(), true, k);
    if (d.groups == 1 && k > 0 && coeff(r->base, loops[k - 1].name) == 0 && emit_fold(loops, st, d, k)) return;
    const size_t mark = b_.size();
    const PendingSet pending = hz_.pending();
    const int64_t peak = st_.temp_peak;
    emit_step(d, k);
    size_t lanes = d.lane.size();
    bool grouped = d.groups > 1;
    while (temp_base_ + st_.temp_peak > plan_.machine.lx_usable_bytes && (grouped || lanes > 0)) {
        if (grouped) grouped = false;
        else lanes--;
        b_.truncate(mark);
        hz_.set_pending(pending);
        st_.temp_peak = peak;
        d = domain(lanes, grouped, k);
        emit_step(d, k);
    }
}

void Selector::emit_element_store(const std::vector<Loop> &loops, const Store *st) {
    const BufferInfo &dst = plan_.buffer(st->name);
    std::set<std::string> all = var_set(loops);
    // A scatter (lower_gathers: a position read from LX): one element per iteration, in order.
    if (reads_memory(st->index)) return emit_single_elements(loops, st);
    auto ai = affine_in(st->index, all);
    if (!ai) unsupported("store index is not affine");
    Domain d;
    d.padded = true;
    size_t k = loops.size();
    AccessCoeffs acc;
    collect(st->value, false, acc);
    auto coeff = [&](const Expr &idx, const std::string &v) {
        auto a = affine_in(idx, all);
        return a ? a->of(v) : INT64_MIN;
    };
    bool carried = false;  // the innermost loop left out reads what its earlier iterations wrote
    while (k > 0) {
        const Loop &l = loops[k - 1];
        if (ai->of(l.name) != d.elems) break;
        std::set<std::string> merged = d.vars();
        merged.insert(l.name);
        if (!step_reads_only_own_elements(st, merged, d.elems * l.extent)) {
            carried = true;
            break;
        }
        bool ok = true;
        for (auto &s : acc.scal) {
            int64_t c = coeff(s.first, l.name);
            ok &= c == 0 || c == d.elems;
        }
        if (!ok) break;
        d.lane.push_back({l.name, d.elems});
        d.elems *= l.extent;
        k--;
    }
    int64_t lanes_t = plan_.lanes(dst.type);
    // No loop over consecutive elements: one element per iteration, in the loops' order (an update
    // may read what the earlier ones wrote, anywhere); so too a store alone in a loop body (after
    // a gathered element's fetch) at an index of the loops around it.
    if (d.lane.empty() && (carried || k != 0 || !provably_multiple(simplify(st->index), lanes_t)))
        return emit_single_elements(loops, st);
    emit_loops(loops, k, [&] {
        Operand o = at_buffer(st->name, dst.type, simplify(affine_in(st->index, d.vars())->rest));
        if (!provably_multiple(o.index, lanes_t))
            unsupported("stores a run that does not start on a stick boundary");
        // A partial last stick overwrites the elements after the run: only allowed at the end.
        if (d.elems % lanes_t && !dst.staging) {
            auto c = const_int(o.index);
            if (!c || *c + d.elems != dst.elems)
                unsupported("stores runs of " + std::to_string(d.elems) + " elements inside a larger buffer, not "
                            "whole sticks of " + std::to_string(lanes_t));
        }
        gen(st->value, d, &o);
        reset_temps();
    });
}

void Selector::reset_temps() {
    for (TempSlot &t : st_.temps) t.used = false;
}

}  // namespace selection
}  // namespace spyre
