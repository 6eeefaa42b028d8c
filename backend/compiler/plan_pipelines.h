// Pipeline planning: a loop whose iterations load tiles into LX by DMA before computing on them
// (and/or store tiles after) is double-buffered, so that the DMA of one iteration overlaps the
// compute of the next. This pass picks those loops (the outermost in each nest, except that a loop
// that only stores gives way to a loop inside it that loads) and gives their
// tile buffers two copies; allocate_lx undoes it where the copies do not fit.
#pragma once

#include <functional>

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

// With `extended` (the first try of a compile), also: loads after other statements of the body,
// loads in place into a buffer of an outer loop (a sliding window), a second pipelined loop inside
// a loop that only loads (whose loads then go out a piece per inner iteration), and one copy for
// tiles read only before that inner loop. Without it (the fallback when the LX left for a kernel's
// expression temporaries is too small): a loop's leading loads and trailing stores, outermost
// loops only.
void plan_pipelines(const Halide::Internal::Stmt &s, KernelPlan &plan, bool extended = true);

// The statements of a loop body with LX allocations and markers peeled off, in order.
std::vector<Halide::Internal::Stmt> body_sequence(const Halide::Internal::Stmt &body,
                                                  std::vector<std::string> *allocated = nullptr);

// Whether `s` holds a loop that `plan` pipelines, other than `except`.
bool holds_pipeline(const Halide::Internal::Stmt &s, const KernelPlan &plan, const void *except = nullptr);

// The positions in `seq` of the loads a pipeline issues one iteration ahead: DMA loads into LX
// buffers that `is_tile` accepts and that no statement before them in the body reads or writes
// (the leading loads, and later ones such as a second operand's copy after the first one's
// transpose); with `leading_only`, the leading ones.
std::vector<size_t> prefetched_loads(const std::vector<Halide::Internal::Stmt> &seq,
                                     const std::function<bool(const std::string &)> &is_tile,
                                     bool leading_only = false);

}  // namespace spyre
