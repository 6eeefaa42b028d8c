// LX allocation: gives every LX buffer a static, stick-aligned offset (a stack that follows the
// allocation scopes, so buffers whose lifetimes do not overlap share space) and computes the
// per-core peak. Double-buffered tiles that do not fit fall back to one copy (their loop is then
// not pipelined); a kernel that still does not fit is an error naming the Func that reached the
// peak, the buffers live there, the peak and the usable capacity.
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

void allocate_lx(const Halide::Internal::Stmt &s, KernelPlan &plan);

}  // namespace spyre
