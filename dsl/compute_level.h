// A Func's compute level, read before lowering. Halide lets a LoopLevel be inspected only once
// lowering has locked it; the passes that schedule Funcs before compiling (inline_reductions.h,
// broadcast_inputs.h) read a locked copy instead, leaving the Func's own level as it is.
#pragma once

#include "Halide.h"

namespace spyre {

inline Halide::LoopLevel compute_level_of(const Halide::Internal::Function &f) {
    Halide::LoopLevel level;
    level.set(f.schedule().compute_level());
    return level.lock();
}

}  // namespace spyre
