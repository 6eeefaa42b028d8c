// Ring sharing of operand tiles: a pipelined loop that the ring_share directive gave a run of G
// cores (KernelPlan::loops) has its staged loads shared by each run of
// G consecutive cores. A load whose device-memory tile is the same on every core of a run is read
// by the run's first core only; it forwards the tile to the next core over the ring, which forwards
// it on, so the run's G-1 other cores receive instead of reading device memory. Loads that differ
// between the cores of a run stay DMA. When the marked loop's tiles fit LX whole, the back end
// stages them around the nearest enclosing pipelined loop, and the sharing applies there; with no
// double buffering at all, each load inside the loop is shared on its own (load or receive, wait,
// forward). Runs after allocate_lx (only surviving pipelines qualify).
// Errors name the loop: a G that does not divide the cores, or no load that is the same across a
// run.
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

void plan_ring_shares(const Halide::Internal::Stmt &s, KernelPlan &plan);

}  // namespace spyre
