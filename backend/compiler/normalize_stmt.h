// First Spyre pass over the captured Stmt: drops the host prologue (argument asserts and buffer
// metadata lets, which our fixed shapes make dead), substitutes lets so that every index is an
// expression of loop variables and every value a tree, moves every loop to start at 0, and simplifies.
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

Halide::Internal::Stmt normalize_stmt(const Halide::Internal::Stmt &s, const KernelPlan &plan);

}  // namespace spyre
