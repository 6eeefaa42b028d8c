// Reductions in the form the instruction selector recognises. Halide lowers an inline reduction
// (maximum(), sum()) into a one-element accumulator allocation per output element, copied out at
// the end; this pass folds the accumulator into its destination (D[i] = init; for r: D[i] =
// op(D[i], v); no copy), expands an accumulator whose result is computed rather than copied
// (mean[y] = sum[0] / n), or the other accumulator of a Tuple reduction whose partner was folded
// (argmax's value beside its index), to one LX slot per iteration of its loop, and then splits
// loops whose body holds several statements into one loop per
// statement (loop fission) when every iteration touches its own elements, so that each
// reduction and each fill is a loop nest of its own.
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

Halide::Internal::Stmt fold_accumulators(const Halide::Internal::Stmt &s, KernelPlan &plan);

}  // namespace spyre
