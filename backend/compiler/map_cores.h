// Core mapping: every parallel loop (a ring split) becomes the core index, so that one SPMD
// program runs on every core and each core does its share. Work outside ring-split loops that
// writes device memory runs on core 0 only; work that only fills LX runs on every core (each needs
// its own copy). A barrier follows each multi-core stage whose results other cores may read.
// Errors name the Func: a split over more cores than the machine has, a split of a stick dimension
// that is not whole sticks, a ring split nested inside another loop, and an LX buffer filled under
// a ring split that some core reads beyond what it computed itself (each core's LX holds only its
// own share: checked core by core).
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

// The variable that holds the core index after this pass, and the barrier marker it inserts.
extern const char *const kCoreIdVar;
extern const char *const kBarrierCall;

Halide::Internal::Stmt map_cores(const Halide::Internal::Stmt &s, KernelPlan &plan);

}  // namespace spyre
