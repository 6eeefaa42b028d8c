#include "cpu_reference.h"

#include <cpuid.h>

#include <cstdlib>

namespace spyre {

namespace {
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

}  // namespace spyre
