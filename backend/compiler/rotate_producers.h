// Producer rotation (software pipelining of a loop's leading matmul): a loop whose body starts by
// producing an LX buffer on the PE array (a key tile's scores) and then consumes it on the vector
// unit (the softmax) makes the PE array wait for the vector unit once per iteration, because the
// control unit issues in order. This pass unrolls such a loop by two and gives the buffer a copy
// per iteration parity; each iteration produces the next iteration's buffer right after its own
// last read of the current one, so that the next MATMUL runs while this iteration's vector work
// does. The first iteration's buffer is produced before the loop; a loop whose trip count is only
// known at run time runs its pairs, then a last odd iteration.
#pragma once

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

Halide::Internal::Stmt rotate_producers(const Halide::Internal::Stmt &s, KernelPlan &plan);

}  // namespace spyre
