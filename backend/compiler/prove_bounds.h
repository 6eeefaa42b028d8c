// The compile-time proof that a kernel touches only what it owns: every read of an input and every
// write of the output lies within that buffer's extent. Halide's CPU realization checks this at run
// time against the buffers it is given; the device has no such check (a read past an input's end
// returns its padding or its neighbour's data), and its shapes are fixed at compile time, so the
// back end proves it before lowering.
//
// The regions come from the algorithm, as Halide's bounds inference derives them: the output's
// extent, pushed through every definition to the regions each Func and input must supply. The
// schedule plays no part: splits and stick vectorization may compute more than is required (a row
// rounded up to whole sticks reads its layout's padding), which is the back end's business; what
// the algorithm itself requires must exist.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "Halide.h"

namespace spyre {

// Throws spyre::Error when `output`'s algorithm reads an input outside `input_shapes[name]` (mins
// 0, Halide order) or writes outside `output_shape`, or reads an input at an index it cannot bound
// (a gather through values it does not clamp). The message names the Func, the buffer, the
// dimension, the range touched and the extent, and how to fix it.
void prove_bounds(const Halide::Internal::Function &output,
                  const std::map<std::string, std::vector<int64_t>> &input_shapes,
                  const std::vector<int64_t> &output_shape);

}  // namespace spyre
