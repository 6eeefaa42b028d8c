// VSHIFT, the vector unit's shifted stick access, VSTRIDE, its strided one, and VLSEL, its select
// by lane block: what each destination element reads and which source elements an instruction
// touches. One place for the semantics the simulator, the verifier, the LX access checks and KTIR
// share.
//
//   VSHIFT.t [dst], [src], shift, lo, n, groups, hi        (mode: none or one kEdge* bit)
//
// Group g of n sticks (n * lanes elements) writes dst row g from src row g (rows back to back on
// both sides, n sticks each). Element j of the row reads source position k = j + shift:
//   no edge mode:  src_row[k]              (k may leave the row: it reads the neighbouring row)
//   kEdgeClamp:    src_row[clamp(k, lo, hi)]          (Halide's repeat_edge)
//   kEdgeZero:     lo <= k <= hi ? src_row[k] : 0     (constant_exterior with 0)
//   kEdgeMirrorImage:    src_row[reflect(k)], the window's ends repeated: lo-1 reads lo, hi+1 hi
//   kEdgeMirrorInterior: src_row[reflect(k)], about the end elements: lo-1 reads lo+1, hi+1 hi-1
//                        (Halide's mirror_image and mirror_interior; reflect is periodic, so a
//                        position any distance outside lands in the window as Halide's does)
// dst and src are stick-aligned; the read itself starts at any element, so a read of in(x + c)
// with c not a multiple of the lanes costs one instruction (see op_cost.h for its time).
#pragma once

#include <algorithm>
#include <cstdint>

#include "checked_math.h"
#include "isa.h"

namespace spyre {

//
//   VLSEL.t [dst], [src0], [src1], n, groups, w
//
// Element e of each group's row of n sticks is src0's where (e / w) is even and src1's where it is
// odd: w = 1 picks even lanes from src0 and odd lanes from src1 (what Halide makes of a select on
// x % 2 with x vectorized), w = 32 alternates half sticks of fp16.
//
//   VSELIDX.t[.scalar][.diag] [dst], [src0], [src1], n, groups, rL
//
// Element e of group g's row of n sticks is src0's where e <= L, src1's elsewhere; L is register
// rL's value at issue, plus g with .diag (kLimitPerGroup). With .scalar, src1 is one element per
// group. It is the select Halide makes of a comparison between a stick index and a row index
// (a causal mask: key t of query row q kept where t <= q).

//
//   VSTRIDE.t [dst], [src], start, step, n, groups, row
//
// Group g of n sticks of dst reads source row g, which starts row sticks after row g - 1 (row 0:
// every group reads the same row). Element j of the group reads the row's element
//   start + j * step        step >= 2: a downsample (Halide's in(2 * x): every step-th element)
//   (start + j) / -step     step <= -2: an upsample (in(x / 2): each element -step times; start
//                           counts in the finer grid, so start 1 reads in((x + 1) / 2))
// src may be any element (an upsample's output stick reads half a stick of its row); start counts
// from it. Steps are at most kMaxLaneStep either way.
constexpr int64_t kMaxLaneStep = 64;

// The source position (from src) that element j of group g reads; 64-bit, saturating.
inline int64_t vstride_source(const Instr &in, int64_t lanes, int64_t g, int64_t j) {
    const int64_t step = in.a[6], start = in.a[5];
    const int64_t along = step > 0 ? sat_add(start, sat_mul(j, step)) : sat_add(start, j) / std::max<int64_t>(2, -step);
    return sat_add(sat_mul(sat_mul(g, int64_t(in.a[9])), lanes), along);
}

// Whether VSTRIDE's step is one it takes (the verifier and lx_access say why not).
inline bool vstride_step_valid(int64_t step) {
    return (step >= 2 && step <= kMaxLaneStep) || (step <= -2 && step >= -kMaxLaneStep);
}

enum class ShiftEdge : uint8_t { None, Clamp, Zero, MirrorImage, MirrorInterior };

inline ShiftEdge shift_edge(uint8_t mode) {
    if (mode & kEdgeClamp) return ShiftEdge::Clamp;
    if (mode & kEdgeZero) return ShiftEdge::Zero;
    if (mode & kEdgeMirrorImage) return ShiftEdge::MirrorImage;
    if (mode & kEdgeMirrorInterior) return ShiftEdge::MirrorInterior;
    return ShiftEdge::None;
}

inline bool is_mirror(ShiftEdge e) { return e == ShiftEdge::MirrorImage || e == ShiftEdge::MirrorInterior; }

// The position a mirror edge reads for k, in [lo, hi] (lo <= hi). Periodic in k: mirror_image with
// period 2w (w the window's width), mirror_interior with period 2(w - 1); a one-element window reads
// its element. 64-bit throughout: operands come from a file.
inline int64_t mirror_position(ShiftEdge e, int64_t k, int64_t lo, int64_t hi) {
    const int64_t w = hi - lo + 1;
    if (w <= 1) return lo;
    auto emod = [](int64_t a, int64_t m) {
        int64_t r = a % m;
        return r < 0 ? r + m : r;
    };
    if (e == ShiftEdge::MirrorImage) {
        const int64_t c = emod(k - lo, 2 * w);
        return lo + (c < w ? c : 2 * w - 1 - c);
    }
    const int64_t l = w - 1, c = emod(k - lo, 2 * l);
    return lo + (c <= l ? c : 2 * l - c);
}

// The source position (relative to the row) that position k = j + shift reads; *zero is set instead
// for a kEdgeZero position outside the window.
inline int64_t shift_source(ShiftEdge e, int64_t k, int64_t lo, int64_t hi, bool *zero) {
    *zero = false;
    switch (e) {
    case ShiftEdge::None: return k;
    case ShiftEdge::Clamp: return std::clamp(k, lo, hi);
    case ShiftEdge::Zero:
        *zero = k < lo || k > hi;
        return k;
    case ShiftEdge::MirrorImage:
    case ShiftEdge::MirrorInterior: return k >= lo && k <= hi ? k : mirror_position(e, k, lo, hi);
    }
    return k;
}

// Source elements [first, last] (relative to the source base) that an instruction reads; empty
// (last < first) when every element is outside a kEdgeZero window. Saturating: operands from a file.
struct ShiftSpan {
    int64_t first = 0, last = -1;
    bool empty() const { return last < first; }
};

// Source elements [first, last] (from src) a VSTRIDE reads: from its first group's first element to
// its last group's last (rows ascend with g, elements with j).
inline ShiftSpan vstride_read_span(const Instr &in, int64_t lanes) {
    const int64_t row = sat_mul(int64_t(in.a[7]), lanes), groups = in.a[8];
    return ShiftSpan{vstride_source(in, lanes, 0, 0), vstride_source(in, lanes, groups - 1, row - 1)};
}

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
    case ShiftEdge::MirrorImage:
    case ShiftEdge::MirrorInterior: {
        // Inside the window the positions are a..b themselves; a reflection from below reaches at most
        // lo + (lo - a) and one from above at least hi - (b - hi); both stay in [lo, hi].
        const int64_t ca = std::clamp(a, lo, hi), cb = std::clamp(b, lo, hi);
        const int64_t top = a < lo ? std::min(hi, sat_add(lo, sat_add(lo, -a))) : cb;
        const int64_t bottom = b > hi ? std::max(lo, sat_add(hi, -sat_add(b, -hi))) : ca;
        a = std::min(ca, bottom), b = std::max(cb, top);
        break;
    }
    }
    return ShiftSpan{a, sat_add(b, sat_mul(groups - 1, row))};
}

}  // namespace spyre
