#include "half_bulk.h"

#include <cstring>

#include "half.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define SPYRE_HAVE_F16C_PATH 1
#endif

namespace spyre {

namespace {

void halves_to_floats_scalar(const uint8_t *src, uint8_t *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        float f = half_to_float(h);
        std::memcpy(dst + 4 * i, &f, 4);
    }
}
void floats_to_halves_scalar(const uint8_t *src, uint8_t *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float f;
        std::memcpy(&f, src + 4 * i, 4);
        uint16_t h = float_to_half(f);
        std::memcpy(dst + 2 * i, &h, 2);
    }
}

#ifdef SPYRE_HAVE_F16C_PATH
// VCVTPH2PS is exact; VCVTPS2PH with imm 0 rounds to nearest even and quiets NaNs by keeping the
// top mantissa bits and setting the quiet bit, as float_to_half does. Neither depends on MXCSR
// rounding; DAZ would flush float subnormals, but nothing here sets it.
__attribute__((target("avx,f16c"))) void halves_to_floats_f16c(const uint8_t *src, uint8_t *dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(reinterpret_cast<float *>(dst + 4 * i),
                         _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 2 * i))));
    halves_to_floats_scalar(src + 2 * i, dst + 4 * i, n - i);
}
__attribute__((target("avx,f16c"))) void floats_to_halves_f16c(const uint8_t *src, uint8_t *dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 2 * i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(reinterpret_cast<const float *>(src + 4 * i)), 0));
    floats_to_halves_scalar(src + 4 * i, dst + 2 * i, n - i);
}
__attribute__((target("avx,f16c"))) void round_floats_to_half_f16c(float *v, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(v + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(v + i), 0)));
    for (; i < n; i++) v[i] = round_to_half(v[i]);
}

// CPUID leaf 1 (F16C, AVX, OSXSAVE) and XCR0 (the OS saves the YMM state). Read directly because
// clang 14's __builtin_cpu_supports does not know "f16c".
bool detect_f16c() {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    if (!(c & bit_F16C) || !(c & bit_AVX) || !(c & bit_OSXSAVE)) return false;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 0x6) == 0x6;
}

bool cpu_has_f16c() {
    static const bool has = detect_f16c();
    return has;
}
#endif

}  // namespace

void halves_to_floats(const void *src, void *dst, int64_t n) {
    auto *s = static_cast<const uint8_t *>(src);
    auto *d = static_cast<uint8_t *>(dst);
#ifdef SPYRE_HAVE_F16C_PATH
    if (cpu_has_f16c()) return halves_to_floats_f16c(s, d, n);
#endif
    halves_to_floats_scalar(s, d, n);
}

void floats_to_halves(const void *src, void *dst, int64_t n) {
    auto *s = static_cast<const uint8_t *>(src);
    auto *d = static_cast<uint8_t *>(dst);
#ifdef SPYRE_HAVE_F16C_PATH
    if (cpu_has_f16c()) return floats_to_halves_f16c(s, d, n);
#endif
    floats_to_halves_scalar(s, d, n);
}

void round_floats_to_half(float *v, int64_t n) {
#ifdef SPYRE_HAVE_F16C_PATH
    if (cpu_has_f16c()) return round_floats_to_half_f16c(v, n);
#endif
    for (int64_t i = 0; i < n; i++) v[i] = round_to_half(v[i]);
}

}  // namespace spyre
