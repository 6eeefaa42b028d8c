// Ring reductions: a reduction split over cores (ring_split_reduction, i.e. rfactor with the new
// dimension parallel) leaves one partial per core in LX and a merge loop over the cores. This pass
// replaces the merge's trip over the partials by an all-core ring reduction of each core's slice,
// after which the merge reads the combined value from its own slice: the partials never travel
// through device memory. Runs before core mapping; errors name the Func whose partials are not
// whole sticks.
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

Halide::Internal::Stmt lower_ring_reductions(const Halide::Internal::Stmt &s, KernelPlan &plan);

}  // namespace spyre
