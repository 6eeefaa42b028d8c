// Gathers: a read of a device buffer at rows given by the elements of another (an embedding lookup,
// `table(x, clamp(ids(t), 0, V - 1))`). The ids are copied whole into LX at the kernel's start, on
// every core, and read from there: instruction selection loads each id into a register (LDLX) and
// the table's row comes by a DMA at the offset it gives (infer_dma stages it like any row, its
// offset an expression of the id); ids a schedule put in LX are checked the same and read in place.
// A gather along the stick dimension (single elements: `logits(clamp(target(t), 0, V - 1), t)`)
// fetches each element's stick into a one-stick LX buffer by a DMA before the store that reads it,
// and reads the element from its lane; a vector of such elements is gathered lane by lane (a loop
// over the lanes) into an LX vector the store then reads.
// A scatter (a histogram: `hist(clamp(in(r), 0, n - 1)) += 1`) runs on one core: the Func it writes
// is kept whole in LX (copied out at the end when it is the output) and each write is an element
// read, updated and written back in Halide's order (instruction selection's single elements).
// Refused by name: ids that are not int32, vectors of row positions, a scatter of rows, over several
// cores or into a Func over its LX budget, ids read through other ids, a table in LX, a vector
// starting at an id, an element table in a layout of its own, ids in a layout of their own, and ids
// too large for their LX budget. (Rows without a bound, no clamp, were refused by prove_bounds
// before lowering.)
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

// LX bytes the whole ids of one gathered buffer may take on each core.
constexpr int64_t kGatherIdsLxBudget = 64 * 1024;
// LX bytes the buffer a scatter writes may take, kept whole on its one core.
constexpr int64_t kScatterLxBudget = 64 * 1024;

Halide::Internal::Stmt lower_gathers(const Halide::Internal::Stmt &s, KernelPlan &plan);

}  // namespace spyre
