// Arithmetic on the integer types the vector unit lacks, computed in int32, as Halide legalises
// types for a target. The vector unit computes on fp16, fp32 and int32 only; int8 and uint8 are
// storage types (VCVT sign- or zero-extends them to int32 and keeps the low 8 bits of an int32
// going back), and there is no 16-bit integer type at all. This pass rewrites every operation on
// an 8- or 16-bit integer into the same operation on int32 operands:
//
//   - add, sub, mul (and negation, shift_left by a constant) on values widened to int32 are
//     congruent to Halide's wrapping result modulo 2^bits, so a chain of them stays in int32 and is
//     narrowed once, where the value is stored or converted (keeping the low bits: the wrap);
//   - min, max, comparisons, select on values, abs, absd, and the conversions to wider or float
//     types need the value itself: a bytes value that may have wrapped is narrowed and widened
//     again first (two VCVTs). A 16-bit value cannot be (there is no 16-bit type to narrow to), so
//     it must provably stay in its range (each value's interval is tracked: a blend
//     u16(a) * 3 + u16(b) of bytes does), or the operation is refused;
//   - division and modulo by a constant (and shift_right by a constant, bitwise_and with a mask
//     of low bits) are computed exactly through fp32: a value of at most 17 bits is exact in fp32,
//     a correctly rounded quotient of such values truncates to the integer quotient, and a bias of
//     a multiple of the divisor makes a negative numerator positive (Halide's floor division).
//
// What stays narrow: loads, stores, constants, broadcasts and selects on the loop coordinates
// (data movement the device does in any type). What is refused, with a message saying what to
// write instead: division by a value that is not a constant, bitwise operations other than a mask
// of low bits, shifts by a non-constant amount, and 16-bit values that may wrap.
//
// Runs after normalize_stmt (lets substituted, intrinsics such as saturating_add lowered into
// arithmetic, simplified), before any pass that reads values: nothing simplifies the values after
// it (a simplification could turn the fp32 division into a multiplication by an inexact reciprocal).
#pragma once

#include "Halide.h"

namespace spyre {

Halide::Internal::Stmt legalise_types(const Halide::Internal::Stmt &s);

}  // namespace spyre
