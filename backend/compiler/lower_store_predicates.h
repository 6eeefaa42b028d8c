// Predicated stores become guarded whole-stick stores. Halide vectorizes the last,
// partial tile of a dimension (a split of 200 columns into tiles of 64) with a predicate per lane,
// x <= 199; the DMA moves whole sticks and ignores it. A stick whose lanes are all past the end
// (x = 224..255 of a row padded to 224) would then land in the next row, or past the buffer: a
// race with the core that writes that row. A store of at most one stick, predicated on its first
// coordinate against the Func's last index, is rewritten to run when its first lane is in range,
// unpredicated: the lanes it then writes past the end are the row's padding. A plain shifted read
// in its value (lower_shifted_loads) gets a clamp edge at the last lane in range, so that lanes past
// the end need no halo stick (which could lie past the input). Any other predicated store of one
// stick on a stick boundary (to LX: a column sum kept per tile of a split wider than the row) runs
// when its first lane is in range as a select of the predicate between its value and what the
// stick held; a loop around nothing but that condition runs under it, so that its nest stages no
// tile past its input. Runs after classify_memory (it needs the buffers' places and shapes).
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

Halide::Internal::Stmt lower_store_predicates(const Halide::Internal::Stmt &s, const KernelPlan &plan);

}  // namespace spyre
