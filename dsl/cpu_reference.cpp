#include "cpu_reference.h"

#include <cpuid.h>

#include <cstdlib>

namespace spyre {

namespace {

using namespace Halide;
using namespace Halide::Internal;

// Every fp16 operation rewritten as its fp32 operation narrowed by `narrow`, which keeps NaNs;
// fp16 transcendentals (exp_f16, ...) as their fp32 equivalent narrowed so.
class KeepFp16Nans : public IRMutator {
    using IRMutator::visit;
    static bool is_f16(Type t) { return t.is_float() && t.bits() == 16; }
    static Expr widen(const Expr &e) { return Cast::make(Float(32, e.type().lanes()), e); }
    static Expr narrow(const Expr &wide) {
        const int lanes = wide.type().lanes();
        Expr nan = reinterpret(Float(16, lanes), make_const(UInt(16, lanes), 0x7e00));
        return select(is_nan(wide), nan, Cast::make(Float(16, lanes), wide));
    }
    template <typename Op>
    Expr binary(const Op *op) {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (!is_f16(op->type)) return Op::make(a, b);
        return narrow(Op::make(widen(a), widen(b)));
    }
    Expr visit(const Add *op) override { return binary(op); }
    Expr visit(const Sub *op) override { return binary(op); }
    Expr visit(const Mul *op) override { return binary(op); }
    Expr visit(const Div *op) override { return binary(op); }
    Expr visit(const Min *op) override { return binary(op); }
    Expr visit(const Max *op) override { return binary(op); }
    Expr visit(const Cast *op) override {
        Expr v = mutate(op->value);
        if (is_f16(op->type) && v.type().is_float() && v.type().bits() > 16) return narrow(v);
        return Cast::make(op->type, v);
    }
    // Halide lowers an fp16 transcendental (exp_f16) before this pass runs, narrowing its fp32
    // result by bits: select(m >= 65536.0f's bits, inf, select(m > inf's bits, NaN, ...)) of the
    // magnitude's bits m, which never reaches the NaN arm (a NaN's bits are above both). The two
    // tests are put in the order that does.
    Expr visit(const Select *op) override {
        Expr e = IRMutator::visit(op);
        const Select *outer = e.as<Select>();
        const Select *inner = outer ? outer->false_value.as<Select>() : nullptr;
        const GE *big = outer ? outer->condition.as<GE>() : nullptr;
        const GT *nan = inner ? inner->condition.as<GT>() : nullptr;
        auto is_u = [](const Expr &x, uint64_t v) {
            const uint64_t *c = as_const_uint(x);
            return c && *c == v;
        };
        if (big && nan && equal(big->a, nan->a) && is_u(big->b, 0x47800000) && is_u(outer->true_value, 0x7c00) &&
            is_u(nan->b, 0x7f800000) && is_u(inner->true_value, 0x7fff))
            return Select::make(inner->condition, inner->true_value,
                                Select::make(outer->condition, outer->true_value, inner->false_value));
        return e;
    }
    Expr visit(const Call *op) override {
        if (!is_f16(op->type) || !is_float16_transcendental(op)) return IRMutator::visit(op);
        return mutate(lower_float16_transcendental_to_float32_equivalent(op));
    }
};

bool cpu_has_avx512_fp16() {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return (d >> 23) & 1u;
}
}  // namespace

Halide::Target cpu_reference_target(bool all_host_features) {
    Halide::Target t = Halide::get_jit_target_from_environment();
    if (t.arch == Halide::Target::X86 && !all_host_features && !std::getenv("HL_JIT_TARGET")) {
        // A reference is an oracle, not a speed measurement: with no schedule its code is scalar,
        // and LLVM compiles it about a third faster without the AVX family (measured on the
        // compiler tests' mirror-boundary suite: 31 s with the host's AVX2 and FMA, 20 s with
        // SSE4.1 and F16C), which most of a differential test's time is. Strict floats make the
        // results the same under either (IEEE operations one by one, no fused multiply-add).
        Halide::Target base(t.os, t.arch, t.bits);
        for (auto f : {Halide::Target::SSE41, Halide::Target::F16C, Halide::Target::JIT})
            if (t.has_feature(f)) base = base.with_feature(f);
        t = base;
    }
    if (t.has_feature(Halide::Target::AVX512_SapphireRapids) && !cpu_has_avx512_fp16())
        t = t.without_feature(Halide::Target::AVX512_SapphireRapids);
    return t.with_feature(Halide::Target::StrictFloat);
}

void keep_fp16_nans(Halide::Func &f) { f.add_custom_lowering_pass(new KeepFp16Nans); }

void keep_fp16_nans(Halide::Pipeline &p) { p.add_custom_lowering_pass(new KeepFp16Nans); }

}  // namespace spyre
