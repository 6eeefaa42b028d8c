// The tails of splits that do not divide, made code of their own, as Halide's loop partitioning
// makes them when the split factors are constants. A kernel lowered with its factors symbolic
// (CapturedKernel) and finished for values that do not divide keeps Halide's guarded bounds: a
// core's rows are min(36, 1151 - core * 36), every row guarded by row < 1151. With the values
// substituted, this pass finds the loops (of three or more iterations) where only the last
// iteration has such bounds: a parallel loop's body becomes
// `if (core < last) <the other cores' body> else <the last core's>`, a serial loop's last
// iteration is peeled off; each part is simplified with what it knows of the loop variable, so
// the later passes see the fixed-size tiles a constant lowering gives them.
#pragma once

#include "Halide.h"

namespace spyre {

Halide::Internal::Stmt partition_tails(const Halide::Internal::Stmt &s);

}  // namespace spyre
