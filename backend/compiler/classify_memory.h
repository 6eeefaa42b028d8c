// Memory classification: decides for every allocation in the kernel whether it lives in device
// memory or in the core's LX scratchpad, and records it in the plan. A Func stored in
// MemoryType::VTCM (the scratchpad directives) is LX; an allocation inside a loop (a tile) or of one
// element (an inline reduction's accumulator) is LX; one at the root without the directive is
// device memory.
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

void classify_memory(const Halide::Internal::Stmt &s, KernelPlan &plan);

}  // namespace spyre
