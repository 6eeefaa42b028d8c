// Finds the vector reads that start between sticks and turns each into a shifted read
// (spyre_intrinsics.h: ShiftCall, VSHIFT on the device) of a stick-aligned "home" vector:
//   in[ramp(b, 1, w)]                          b not a multiple of the stick: in(x + c)
//   in[clamp(ramp(b, 1, w), lo, hi) + off]      Halide's repeat_edge (min/max of the index)
//   select(outside(ramp), 0, read)             constant_exterior with 0, or the same inverted
//   in[f(ramp)] with f Halide's reflection     mirror_image, mirror_interior (found by evaluating
//                                              the index over its loops and fitting the edge)
// and Halide's interleave of even and odd lanes (a select on x % 2) into a lane select
// (LaneSelectCall, VLSEL) of its two sides computed on whole sticks.
// Runs after normalize_stmt, so that infer_dma stages the home rows (with their halo) and
// instruction selection sees one form. Reads it does not recognise are left as they are; an
// interleave it cannot widen is an error naming the Func (nothing later reads stride-2 vectors).
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

Halide::Internal::Stmt lower_shifted_loads(const Halide::Internal::Stmt &s, const KernelPlan &plan);

}  // namespace spyre
