#include "cpu_reference.h"

#include <cpuid.h>

namespace spyre {

namespace {
bool cpu_has_avx512_fp16() {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return (d >> 23) & 1u;
}
}  // namespace

Halide::Target cpu_reference_target() {
    Halide::Target t = Halide::get_jit_target_from_environment();
    if (t.has_feature(Halide::Target::AVX512_SapphireRapids) && !cpu_has_avx512_fp16())
        t = t.without_feature(Halide::Target::AVX512_SapphireRapids);
    return t.with_feature(Halide::Target::StrictFloat);
}

}  // namespace spyre
