// IEEE binary16 <-> binary32 conversion with round-to-nearest-even, the rounding Halide's CPU
// back end applies when it narrows a float computation to float16. Bit-exact, no hardware needed.
#pragma once

#include <cstdint>
#include <cstring>

namespace spyre {

inline float bits_to_float(uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}
inline uint32_t float_to_bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

inline float half_to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    // inf / nan; a NaN comes out quiet, as IEEE conversion and the F16C instruction make it.
    if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0));
    if (exp == 0) {
        if (man == 0) return bits_to_float(sign);
        // Subnormal: value = man * 2^-24, exact in float.
        float v = float(man) * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t float_to_half(float f) {
    uint32_t x = float_to_bits(f);
    uint16_t sign = uint16_t((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) {  // inf or nan: keep nan quiet and non-zero
        return sign | 0x7c00 | (ax > 0x7f800000u ? uint16_t(0x200 | ((ax >> 13) & 0x3ff)) : 0);
    }
    if (ax >= 0x477ff000u) return sign | 0x7c00;  // rounds to inf (>= 65520)
    if (ax < 0x38800000u) {                        // below the smallest normal half: subnormal or zero
        if (ax < 0x33000000u) return sign;         // < 2^-25 rounds to zero
        uint32_t e = ax >> 23;
        uint32_t m = (ax & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e;  // bring to units of 2^-24
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1))) q++;
        return sign | uint16_t(q);
    }
    uint32_t q = (ax - 0x38000000u) >> 13;  // rebias exponent, drop 13 mantissa bits
    uint32_t rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) q++;
    return sign | uint16_t(q);
}

// Rounds a float to the nearest representable half and back: the value an fp16 op produces.
inline float round_to_half(float f) { return half_to_float(float_to_half(f)); }

}  // namespace spyre
