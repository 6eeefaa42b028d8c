#include "spyre_intrinsics.h"

#include "affine.h"
#include "map_cores.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {
const char *const kDmaCall = "spyre.dma";
const char *const kRingReduceCall = "spyre.ring_reduce";
}

Stmt make_ring_reduce(const RingReduceCall &r) {
    return Evaluate::make(Call::make(Int(32), kRingReduceCall,
                                     {StringImm::make(r.lx), r.offset, Expr(r.elems), Expr(r.op)}, Call::Extern));
}

std::optional<RingReduceCall> as_ring_reduce(const Stmt &s) {
    const Evaluate *e = s.as<Evaluate>();
    const Call *c = e ? e->value.as<Call>() : nullptr;
    if (!c || c->name != kRingReduceCall) return std::nullopt;
    RingReduceCall r;
    r.lx = c->args[0].as<StringImm>()->value;
    r.offset = c->args[1];
    r.elems = *const_int(c->args[2]);
    r.op = int(*const_int(c->args[3]));
    return r;
}

Stmt make_dma(const DmaCall &d) {
    std::vector<Expr> args = {StringImm::make(d.dram), d.dram_offset, StringImm::make(d.lx), d.lx_offset,
                              Expr(int(d.store)), Expr(d.run)};
    for (const DmaDim &dim : d.dims) {
        args.push_back(Expr(dim.count));
        args.push_back(Expr(dim.dram_stride));
        args.push_back(Expr(dim.lx_stride));
    }
    return Evaluate::make(Call::make(Int(32), kDmaCall, args, Call::Extern));
}

std::optional<DmaCall> as_dma(const Stmt &s) {
    const Evaluate *e = s.as<Evaluate>();
    const Call *c = e ? e->value.as<Call>() : nullptr;
    if (!c || c->name != kDmaCall) return std::nullopt;
    DmaCall d;
    d.dram = c->args[0].as<StringImm>()->value;
    d.dram_offset = c->args[1];
    d.lx = c->args[2].as<StringImm>()->value;
    d.lx_offset = c->args[3];
    d.store = *const_int(c->args[4]) != 0;
    d.run = *const_int(c->args[5]);
    for (size_t i = 6; i + 2 < c->args.size() + 0 && i + 2 <= c->args.size() - 1; i += 3)
        d.dims.push_back(DmaDim{*const_int(c->args[i]), *const_int(c->args[i + 1]), *const_int(c->args[i + 2])});
    return d;
}

bool is_barrier(const Stmt &s) {
    const Evaluate *e = s.as<Evaluate>();
    const Call *c = e ? e->value.as<Call>() : nullptr;
    return c && c->name == kBarrierCall;
}

}  // namespace spyre

namespace spyre {

Halide::Expr make_shift(const ShiftCall &c) {
    using namespace Halide::Internal;
    Halide::Expr lo = c.lo.defined() ? c.lo : Halide::Expr(0), hi = c.hi.defined() ? c.hi : Halide::Expr(0);
    return Call::make(c.home.type(), "spyre.shift", {c.home, Halide::Expr(c.shift), Halide::Expr(c.edge), lo, hi},
                      Call::PureExtern);
}

std::optional<ShiftCall> as_shift(const Halide::Expr &e) {
    using namespace Halide::Internal;
    const Call *c = e.as<Call>();
    if (!c || c->name != "spyre.shift" || c->args.size() != 5) return std::nullopt;
    ShiftCall s;
    s.home = c->args[0];
    s.shift = int(*as_const_int(c->args[1]));
    s.edge = int(*as_const_int(c->args[2]));
    if (s.edge) s.lo = c->args[3], s.hi = c->args[4];
    return s;
}

Halide::Expr make_stride(const StrideCall &c) {
    using namespace Halide::Internal;
    return Call::make(c.home.type().with_lanes(c.lanes), "spyre.stride",
                      {c.home, Halide::Expr(c.start), Halide::Expr(c.step)}, Call::PureExtern);
}

std::optional<StrideCall> as_stride(const Halide::Expr &e) {
    using namespace Halide::Internal;
    const Call *c = e.as<Call>();
    if (!c || c->name != "spyre.stride" || c->args.size() != 3 || !as_const_int(c->args[1]) || !as_const_int(c->args[2]))
        return std::nullopt;
    return StrideCall{c->args[0], int(*as_const_int(c->args[1])), int(*as_const_int(c->args[2])), c->type.lanes()};
}

const char *fp8_call_name(bool encode, Fp8Format f, bool half) {
    const bool e4 = f == Fp8Format::E4M3;
    if (encode) return e4 ? "spyre_to_fp8_e4m3" : "spyre_to_fp8_e5m2";
    if (half) return e4 ? "spyre_from_fp8_e4m3_f16" : "spyre_from_fp8_e5m2_f16";
    return e4 ? "spyre_from_fp8_e4m3" : "spyre_from_fp8_e5m2";
}

Expr make_fp8(const Fp8Call &c) {
    const int lanes = c.value.type().lanes();
    const char *name = fp8_call_name(c.encode, c.format, c.half);
    if (c.encode) return Call::make(UInt(8, lanes), name, {c.value}, Call::PureExtern);
    if (!c.half) return Call::make(Float(32, lanes), name, {c.value}, Call::PureExtern);
    return reinterpret(Float(16, lanes), Call::make(UInt(16, lanes), name, {c.value}, Call::PureExtern));
}

std::optional<Fp8Call> as_fp8(const Expr &e) {
    const Call *c = e.as<Call>();
    bool half = false;
    if (c && c->is_intrinsic(Call::reinterpret) && c->type.element_of() == Float(16)) {
        c = c->args[0].as<Call>();
        half = true;
    }
    if (!c || c->call_type != Call::PureExtern || c->args.size() != 1) return std::nullopt;
    for (bool encode : {true, false})
        for (Fp8Format f : {Fp8Format::E4M3, Fp8Format::E5M2})
            if (c->name == fp8_call_name(encode, f, half) && (encode || c->type.bits() == (half ? 16 : 32)))
                return Fp8Call{encode, f, c->args[0], half};
    return std::nullopt;
}

Halide::Expr make_lane_select(const LaneSelectCall &c) {
    using namespace Halide::Internal;
    return Call::make(c.even.type(), "spyre.lane_select", {c.even, c.odd, Halide::Expr(c.block)}, Call::PureExtern);
}

std::optional<LaneSelectCall> as_lane_select(const Halide::Expr &e) {
    using namespace Halide::Internal;
    const Call *c = e.as<Call>();
    if (!c || c->name != "spyre.lane_select" || c->args.size() != 3 || !as_const_int(c->args[2])) return std::nullopt;
    return LaneSelectCall{c->args[0], c->args[1], int(*as_const_int(c->args[2]))};
}

}  // namespace spyre
