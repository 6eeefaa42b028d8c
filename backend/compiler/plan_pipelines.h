// Pipeline planning: a loop whose iterations load tiles into LX by DMA before computing on them
// (and/or store tiles after) is double-buffered, so that the DMA of one iteration overlaps the
// compute of the next. This pass picks those loops (the outermost in each nest, except that a loop
// that only stores gives way to a loop inside it that loads) and gives their
// tile buffers two copies; allocate_lx undoes it where the copies do not fit.
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

void plan_pipelines(const Halide::Internal::Stmt &s, KernelPlan &plan);

// The statements of a loop body with LX allocations and markers peeled off, in order.
std::vector<Halide::Internal::Stmt> body_sequence(const Halide::Internal::Stmt &body,
                                                  std::vector<std::string> *allocated = nullptr);

}  // namespace spyre
