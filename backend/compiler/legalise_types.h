// Arithmetic on the integer types the vector unit lacks, computed in int32, as Halide legalises
// types for a target. The vector unit computes on fp16, fp32 and int32 only; int8 and uint8 are
// storage types (VCVT sign- or zero-extends them to int32 and keeps the low 8 bits of an int32
// going back), and there is no 16-bit integer type, nor a uint32 one (Halide's abs of an int32
// gives one). This pass rewrites every operation on an 8- or 16-bit integer or a uint32 into the
// same operation on int32 operands:
//
//   - add, sub, mul (and negation, shift_left by a constant) on values widened to int32 are
//     congruent to Halide's wrapping result modulo 2^bits, so a chain of them stays in int32 and is
//     narrowed once, where the value is stored or converted (keeping the low bits: the wrap);
//   - min, max, comparisons, select on values, abs, absd, and the conversions to wider or float
//     types need the value itself: a bytes value that may have wrapped is narrowed and widened
//     again first (two VCVTs). A 16-bit value cannot be (there is no 16-bit type to narrow to), so
//     it must provably stay in its range (each value's interval is tracked: a blend
//     u16(a) * 3 + u16(b) of bytes does), or the operation is refused; a uint32 likewise below 2^31
//     (its int32 bits are its value there). A conversion of a uint32 to int32 takes its bits, so
//     cast<int32_t>(abs(x)) of an int32 x is one VABS (abs(INT32_MIN) wraps as on the CPU);
//   - division and modulo by a constant (and shift_right by a constant, bitwise_and with a mask
//     of low bits) are computed exactly through fp32: a numerator n and divisor c with n + c < 2^22
//     are exact in fp32, their correctly rounded quotient truncates to the integer quotient (one
//     that is not an integer is more than 2^-22 of it from the next integer, fp32 rounds by at most
//     2^-24), and a bias of a multiple of the divisor makes a negative numerator positive (Halide's
//     floor division). Bytes and 16-bit values always fit.
//
// What stays narrow: loads, stores, constants, broadcasts, and selects on the loop coordinates or
// on one comparison (data movement the device does in any type). What is refused, with a message
// saying what to write instead: division by a value that is not a constant, bitwise operations
// other than a mask of low bits, shifts by a non-constant amount or by the width or more, 16-bit
// values that may wrap, uint32 values that may pass 2^31 where their value is needed, and byte
// accumulators (a reduction into a uint8 Func: the accumulator would have to be int32).
//
// Runs after normalize_stmt (lets substituted, intrinsics such as saturating_add lowered into
// arithmetic, simplified), before any pass that reads values: nothing simplifies the values after
// it (a simplification could turn the fp32 division into a multiplication by an inexact reciprocal).
#pragma once

#include "Halide.h"

namespace spyre {

Halide::Internal::Stmt legalise_types(const Halide::Internal::Stmt &s);

}  // namespace spyre
