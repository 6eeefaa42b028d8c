#include "fp8.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "half.h"

namespace spyre {

namespace {

// Layout of a format: mantissa bits, bias, the largest finite magnitude code and its NaN code.
struct Fp8Info {
    int man_bits;
    int bias;
    uint8_t max_code;  // 0x7E (448) or 0x7B (57344)
    uint8_t nan_code;  // canonical quiet NaN, sign clear
    bool has_inf;      // 0x7C is inf (E5M2)
};

Fp8Info info(Fp8Format f) {
    return f == Fp8Format::E4M3 ? Fp8Info{3, 7, 0x7E, 0x7F, false} : Fp8Info{2, 15, 0x7B, 0x7E, true};
}

}  // namespace

float fp8_max(Fp8Format f) { return f == Fp8Format::E4M3 ? 448.0f : 57344.0f; }

uint8_t fp8_encode(float v, Fp8Format f) {
    const Fp8Info fi = info(f);
    const uint32_t bits = float_to_bits(v);
    const uint8_t sign = uint8_t((bits >> 24) & 0x80);
    const uint32_t mag = bits & 0x7fffffffu;
    if (mag > 0x7f800000u) return sign | fi.nan_code;
    if (mag == 0x7f800000u) return sign | (fi.has_inf ? uint8_t(0x7C) : fi.max_code);
    const int fexp = int(mag >> 23);
    // Zeros and float subnormals (below 2^-126, far under half the smallest fp8 subnormal).
    if (fexp == 0) return sign;
    const int e = fexp - 127;            // value = sig * 2^(e - 23)
    const uint32_t sig = (mag & 0x7fffffu) | 0x800000u;
    const int emin = 1 - fi.bias;        // exponent of the smallest normal
    const int emax_field = (fi.max_code >> fi.man_bits);  // biased exponent of the largest finite
    if (e > emax_field - fi.bias) return sign | fi.max_code;  // beyond the top binade: saturate
    // Keep man_bits fraction bits in the normal range; below it the quantum stays 2^(emin - man_bits).
    const int shift = 23 - fi.man_bits + (e < emin ? emin - e : 0);
    uint32_t code;
    if (shift > 25) {
        code = 0;  // under a quarter of the smallest subnormal
    } else {
        uint32_t q = sig >> shift;
        const uint32_t rem = sig & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1))) q++;
        // q counts quanta including the implicit bit: a normal code is ((e - emin) << man_bits) + q
        // (a carry out of the mantissa moves to the next exponent); a subnormal code is q itself
        // (q == 2^man_bits is the smallest normal).
        code = e < emin ? q : (uint32_t(e - emin) << fi.man_bits) + q;
    }
    if (code > fi.max_code) code = fi.max_code;
    return sign | uint8_t(code);
}

float fp8_decode(uint8_t code, Fp8Format f) {
    const Fp8Info fi = info(f);
    const bool neg = code & 0x80;
    const int mag = code & 0x7f;
    const int field = mag >> fi.man_bits, man = mag & ((1 << fi.man_bits) - 1);
    const int top = (1 << (7 - fi.man_bits)) - 1;  // all-ones exponent field
    float v;
    if (!fi.has_inf && mag == 0x7f) {
        v = bits_to_float(0x7fc00000u);
    } else if (fi.has_inf && field == top) {
        v = man == 0 ? bits_to_float(0x7f800000u) : bits_to_float(0x7fc00000u);
    } else if (field == 0) {
        v = std::ldexp(float(man), 1 - fi.bias - fi.man_bits);
    } else {
        v = std::ldexp(float((1 << fi.man_bits) | man), field - fi.bias - fi.man_bits);
    }
    return neg ? -v : v;
}

uint8_t fp8_encode_half(uint16_t h, Fp8Format f) {
    static const std::vector<uint8_t> tables = [] {
        std::vector<uint8_t> t(2 * 65536);
        for (int k = 0; k < 2; k++)
            for (uint32_t x = 0; x < 65536; x++) t[k * 65536 + x] = fp8_encode(half_to_float(uint16_t(x)), Fp8Format(k));
        return t;
    }();
    return tables[size_t(f) * 65536 + h];
}

uint16_t fp8_decode_half(uint8_t code, Fp8Format f) {
    static const std::vector<uint16_t> tables = [] {
        std::vector<uint16_t> t(2 * 256);
        for (int k = 0; k < 2; k++)
            for (int c = 0; c < 256; c++) t[k * 256 + c] = float_to_half(fp8_decode(uint8_t(c), Fp8Format(k)));
        return t;
    }();
    return tables[size_t(f) * 256 + code];
}

}  // namespace spyre
