// Spyre operations the passes insert into the Halide Stmt before instruction selection, as
// Evaluate(Call) nodes: a DMA between a device-memory buffer and an LX buffer (element units, up
// to three strided outer dimensions around a contiguous run), and the cross-core barrier. The
// helpers build and recognise them so that no pass parses Call arguments by hand.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "Halide.h"
#include "device/fp8.h"

namespace spyre {

struct DmaDim {
    int64_t count = 1;
    int64_t dram_stride = 0;  // elements
    int64_t lx_stride = 0;    // elements
};

struct DmaCall {
    bool store = false;          // LX -> device memory
    std::string dram, lx;        // buffer names (plan keys)
    Halide::Expr dram_offset;    // elements, int expression of enclosing loop variables
    Halide::Expr lx_offset;      // elements
    int64_t run = 1;             // contiguous elements (padded to sticks by the DMA)
    std::vector<DmaDim> dims;    // outer dimensions, innermost first (at most 3)
};

Halide::Internal::Stmt make_dma(const DmaCall &d);
std::optional<DmaCall> as_dma(const Halide::Internal::Stmt &s);

bool is_barrier(const Halide::Internal::Stmt &s);

// Loop-name suffix of the vector lanes stick_vectorize splits from x (x_lanes): a name the user's
// errors can show ("loop x of out (its vector lanes)"), where Halide's vectorize(x, n) makes v<n>.
constexpr const char *kLanesSuffix = "_lanes";

// An all-core ring reduction of one LX slice per core (op: 0 sum, 1 max, 2 min), in place: after
// it every core's slice holds the combination of all cores' slices.
struct RingReduceCall {
    std::string lx;             // LX buffer
    Halide::Expr offset;        // element offset of this core's slice
    int64_t elems = 0;          // elements per slice
    int op = 0;
};
Halide::Internal::Stmt make_ring_reduce(const RingReduceCall &r);
std::optional<RingReduceCall> as_ring_reduce(const Halide::Internal::Stmt &s);

// A shifted stick read (lower_shifted_loads makes them; instruction selection emits VSHIFT): lane j
// of the result is lane j + shift of the stick-aligned `home` load's row, with an edge mode
// outside [lo, hi] (positions relative to the home's lane 0; vector_shift.h has the semantics).
// A vector Expr of the home's type.
struct ShiftCall {
    Halide::Expr home;    // Load of a stick-aligned ramp
    int shift = 0;        // elements
    int edge = 0;         // 0 none, or one of kEdgeClamp, kEdgeZero, kEdgeMirrorImage, kEdgeMirrorInterior (isa.h)
    Halide::Expr lo, hi;  // int32, only with an edge
};
Halide::Expr make_shift(const ShiftCall &c);
std::optional<ShiftCall> as_shift(const Halide::Expr &e);

// A strided read along the stick (lower_shifted_loads makes them of reads at 2 * x + c and of
// Halide's interleave of a vector with itself, a read at x / 2; instruction selection emits
// VSTRIDE): lane j of the result is the `home` load's lane start + j * step (step >= 2), or
// (start + j) / -step (step <= -2). home is a dense Load (a ramp of stride 1) of the result's element
// type, of its own width.
struct StrideCall {
    Halide::Expr home;
    int start = 0;
    int step = 0;
    int lanes = 0;  // the result's
};
Halide::Expr make_stride(const StrideCall &c);
std::optional<StrideCall> as_stride(const Halide::Expr &e);

// An fp8 conversion (spyre::to_fp8 / spyre::from_fp8, dsl/fp8.h): a PureExtern call of a C function
// that Halide's CPU code calls (dsl/fp8.cpp, computing with device/fp8.h) and that instruction
// selection turns into VCVTF8. Encode: uint8 spyre_to_fp8_<fmt>(float); decode to float32: float
// spyre_from_fp8_<fmt>(uint8); decode to float16: reinterpret<float16_t> of uint16
// spyre_from_fp8_<fmt>_f16(uint8), the fp16 bits (Halide 14's CPU code turns a float32 NaN cast to
// float16 into an infinity, so a float32 decode cast to float16 would lose the NaN codes).
struct Fp8Call {
    bool encode = true;
    Fp8Format format = Fp8Format::E4M3;
    Halide::Expr value;  // float32 (encode) or uint8 codes (decode)
    bool half = false;   // a decode to float16
};
const char *fp8_call_name(bool encode, Fp8Format f, bool half = false);
Halide::Expr make_fp8(const Fp8Call &c);
// Recognises the Calls make_fp8 builds (a decode to float16 by its reinterpret).
std::optional<Fp8Call> as_fp8(const Halide::Expr &e);

// A select between two vectors by lane block (lower_shifted_loads makes them of Halide's interleaves
// of even and odd lanes; instruction selection emits VLSEL): lane j is even's where (j / block) is
// even, odd's where it is odd. Both operands have the result's type.
struct LaneSelectCall {
    Halide::Expr even, odd;
    int block = 1;
};
Halide::Expr make_lane_select(const LaneSelectCall &c);
std::optional<LaneSelectCall> as_lane_select(const Halide::Expr &e);

}  // namespace spyre
