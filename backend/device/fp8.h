// FP8 (OCP 8-bit floating point) encode and decode: the one implementation of the conversions,
// used by the simulator's VCVTF8 and by the C functions that Halide's CPU code calls for
// spyre::to_fp8 / spyre::from_fp8 (dsl/fp8.h). A device program holds fp8 values as uint8 codes.
//
// Formats (sign, exponent, mantissa bits):
//   E4M3 ("E4M3FN"): 1.4.3, bias 7, no infinities, NaN = S.1111.111, max finite 448, smallest
//                    subnormal 2^-9.
//   E5M2:            1.5.2, bias 15, IEEE-like: inf = S.11111.00, NaN = S.11111.{01,10,11}, max finite
//                    57344, smallest subnormal 2^-16.
// Encoding rounds to nearest, ties to even, once, from the float value (subnormals exactly).
// Overflow rule ("satfinite", what quantized inference uses): a finite value whose magnitude rounds
// above the largest finite code gives that code, with its sign. An infinity gives inf in E5M2 and
// the largest finite value in E4M3 (which has no infinity; OCP's saturating conversion does the
// same). A NaN gives the format's canonical quiet NaN with the input's sign (E4M3 S.1111.111, E5M2
// S.11111.10). Zeros keep their sign. Decoding is exact into fp32 and fp16 (every fp8 value is an
// fp16 value); a NaN code decodes to a quiet NaN with the code's sign.
#pragma once

#include <cstdint>

namespace spyre {

// The value of the format operand of VCVTF8 (isa.h) in a device program.
enum class Fp8Format : uint8_t { E4M3 = 0, E5M2 = 1 };
constexpr int kNumFp8Formats = 2;

inline bool fp8_format_valid(int v) { return v >= 0 && v < kNumFp8Formats; }
inline const char *fp8_format_name(Fp8Format f) { return f == Fp8Format::E4M3 ? "e4m3" : "e5m2"; }

// The largest finite magnitude of a format (448 or 57344).
float fp8_max(Fp8Format f);

uint8_t fp8_encode(float v, Fp8Format f);
float fp8_decode(uint8_t code, Fp8Format f);

// The same through fp16 bits: encode an fp16 value (exact in float, so the result equals
// fp8_encode of its float value), decode into fp16 bits (exact). Table lookups, for the simulator.
uint8_t fp8_encode_half(uint16_t h, Fp8Format f);
uint16_t fp8_decode_half(uint8_t code, Fp8Format f);

}  // namespace spyre
