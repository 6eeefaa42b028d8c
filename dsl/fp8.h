// fp8 for kernel authors: OCP E4M3 and E5M2 conversions as Halide expressions. Halide 14 has no
// 8-bit float type, so an fp8 value is held as its uint8 code: to_fp8 encodes a value into a code,
// from_fp8 decodes a code. On the CPU, Halide's code calls the conversion routines of
// device/fp8.h (which also states the rounding, overflow and NaN rules); the Spyre back end turns
// each into one VCVTF8 instruction. Codes are bytes like int8 data: moved and converted, not
// computed on.
//
//   q(x, y) = spyre::to_fp8(in(x, y) / s(y), spyre::Fp8Format::E4M3);          // uint8 codes
//   d(x, y) = spyre::from_fp8(q(x, y), spyre::Fp8Format::E4M3) * s(y);          // float16
#pragma once

#include <map>
#include <string>

#include "Halide.h"
#include "device/fp8.h"

namespace spyre {

// The uint8 fp8 code of `value`. A float16 or float32 value is encoded exactly as it is (one
// rounding, to nearest even); any other numeric type is converted to float32 first. Finite values
// beyond the format's range give its largest finite code ("satfinite", device/fp8.h).
Halide::Expr to_fp8(const Halide::Expr &value, Fp8Format fmt);

// The value of the uint8 fp8 `code` as `result` (float16 or float32; exact in both). A code of
// another type is an error: fp8 codes are uint8.
Halide::Expr from_fp8(const Halide::Expr &code, Fp8Format fmt, Halide::Type result = Halide::Float(16));

// The C functions the CPU code calls, by name, for Pipeline::set_jit_externs. Programs linked with
// the spyre_dsl library export them already (its link options), so JIT realisations find them
// without this; a program that hides its symbols passes these to each Pipeline it realises.
std::map<std::string, Halide::JITExtern> fp8_jit_externs();

}  // namespace spyre
