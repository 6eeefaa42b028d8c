// VSHIFT, the vector unit's shifted stick access: what each destination element reads and which
// source elements an instruction touches. One place for the semantics the simulator, the verifier,
// the LX access checks and KTIR share.
//
//   VSHIFT.t [dst], [src], shift, lo, n, groups, hi        (mode: none, kEdgeClamp or kEdgeZero)
//
// Group g of n sticks (n * lanes elements) writes dst row g from src row g (rows back to back on
// both sides, n sticks each). Element j of the row reads source position k = j + shift:
//   no edge mode:  src_row[k]              (k may leave the row: it reads the neighbouring row)
//   kEdgeClamp:    src_row[clamp(k, lo, hi)]          (Halide's repeat_edge)
//   kEdgeZero:     lo <= k <= hi ? src_row[k] : 0     (constant_exterior with 0)
// dst and src are stick-aligned; the read itself starts at any element, so a read of in(x + c)
// with c not a multiple of the lanes costs one instruction (see op_cost.h for its time).
#pragma once

#include <algorithm>
#include <cstdint>

#include "checked_math.h"
#include "isa.h"

namespace spyre {

enum class ShiftEdge : uint8_t { None, Clamp, Zero };

inline ShiftEdge shift_edge(uint8_t mode) {
    if (mode & kEdgeClamp) return ShiftEdge::Clamp;
    if (mode & kEdgeZero) return ShiftEdge::Zero;
    return ShiftEdge::None;
}

// Source elements [first, last] (relative to the source base) that an instruction reads; empty
// (last < first) when every element is outside a kEdgeZero window. Saturating: operands from a file.
struct ShiftSpan {
    int64_t first = 0, last = -1;
    bool empty() const { return last < first; }
};

inline ShiftSpan vshift_read_span(const Instr &in, int64_t lanes) {
    const int64_t row = sat_mul(int64_t(in.a[7]), lanes), groups = in.a[8];
    const int64_t shift = in.a[5], lo = in.a[6], hi = in.a[9];
    int64_t a = shift, b = sat_add(shift, row - 1);  // positions of a row's first and last element
    switch (shift_edge(in.mode)) {
    case ShiftEdge::None: break;
    case ShiftEdge::Clamp: a = std::clamp(a, lo, hi), b = std::clamp(b, lo, hi); break;
    case ShiftEdge::Zero:
        a = std::max(a, lo), b = std::min(b, hi);
        if (b < a) return ShiftSpan{};
        break;
    }
    return ShiftSpan{a, sat_add(b, sat_mul(groups - 1, row))};
}

}  // namespace spyre
