// Instruction selection: reductions on the vector unit (VRED*) and ring reductions across cores.
#include "selector.h"

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

void Selector::emit_reduction(const std::vector<Loop> &loops, const Store *st, const Reduction &red) {
    const BufferInfo &dst = plan_.buffer(st->name);
    std::set<std::string> all = var_set(loops);
    auto ai = affine_in(st->index, all);
    if (!ai) unsupported("reduction destination index is not affine");
    // Reduction loops: the innermost loops the destination does not depend on.
    size_t k = loops.size();
    Domain d;
    d.padded = true;
    while (k > 0 && ai->of(loops[k - 1].name) == 0) {
        const Loop &l = loops[k - 1];
        d.lane.push_back({l.name, d.elems});
        d.elems *= l.extent;
        k--;
    }
    if (d.lane.empty()) unsupported("a reduction without a reduction loop");
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
    // A group: the next loop out, when destinations are consecutive and source rows back to back.
    if (k > 0 && ai->of(loops[k - 1].name) == 1) {
        const Loop &l = loops[k - 1];
        AccessCoeffs acc;
        collect(v, false, acc);
        int64_t row = sticks_per_group(d, vt) * plan_.lanes(vt);
        bool ok = true;
        for (auto &s : acc.scal) {
            auto a = affine_in(s.first, all);
            if (!a) continue;
            bool lane = false;
            for (auto &lv : d.lane) lane |= a->of(lv.first) != 0;
            int64_t c = a->of(l.name);
            ok &= lane ? c == row : (c == 0 || c == 1);
        }
        if (ok) {
            d.group_var = l.name;
            d.groups = l.extent;
            k--;
        }
    }
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
