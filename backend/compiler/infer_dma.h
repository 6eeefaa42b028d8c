// DMA inference: every access to device memory becomes DMA between device memory and LX, since
// compute reads and writes LX only. For each loop nest that touches device memory the pass picks
// the outermost loop level whose per-iteration footprint fits the free LX and can be moved
// in whole sticks, stages the footprint through an LX buffer (DMA in before, DMA out after), and
// redirects the nest's accesses to it. A nest that only copies between device memory and an LX
// Func (a staged input or output tile) becomes the DMA itself, with no copy. A shifted read
// (lower_shifted_loads) stages its home rows with the halo sticks its elements reach; a halo or a
// copy past the ends of the device rows is read only by padding lanes and is not moved. A buffer
// the nest writes and also reaches through accesses of another shape (a scan reading element
// r - 1 where it writes element r, an init and an update staged together), or writes from inside
// a stick, is staged where those footprints fail as one box: the whole padded rows its accesses
// touch, laid out in LX as in device memory, copied in and out whole; only where each iteration
// and each core has rows of its own. Errors name the Func whose access cannot be moved in whole
// sticks.
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

// A staging level may use at most half of the LX its enclosing allocations leave free (the other
// half holds the next iteration's copy), and at most `budget_bytes` (0: no further limit).
Halide::Internal::Stmt infer_dma(const Halide::Internal::Stmt &s, KernelPlan &plan, int64_t budget_bytes = 0);

}  // namespace spyre
