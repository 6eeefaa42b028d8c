// A vector load whose lanes all read one address becomes a scalar load broadcast over the lanes.
// The two are the same value; the rewrite exists because Halide 14's flatten_nested_ramps divides
// by zero (the process dies of SIGFPE) on such a load when its index is not written as a broadcast:
// it reads the lanes' common offset as a stride. A mirror boundary condition over an input
// narrower than the vector makes one (every lane of a 2-wide mirrored row folds onto one element).
// Runs just before flatten_nested_ramps in lower_halide.
#pragma once

#include "Halide.h"

namespace spyre {

Halide::Internal::Stmt broadcast_uniform_loads(const Halide::Internal::Stmt &s);

}  // namespace spyre
