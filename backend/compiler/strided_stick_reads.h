// The refusal of a read that takes every n-th element along a buffer's stick dimension (in(2 * x),
// a downsample) that lower_shifted_loads could not make a VSTRIDE of: where its first element sits
// in its stick changes from one vector to the next (in(2 * x + y)). Said once here for the two
// places that meet such a load: staging from device memory (infer_dma) and instruction selection
// from an LX tile (select_vector).
#pragma once

#include <cstdint>
#include <string>

namespace spyre {

inline std::string strided_stick_read_refusal(const std::string &func, int64_t stride) {
    const std::string n = std::to_string(stride);
    return "reads " + func + " at every " + n + " elements along its stick dimension (an index such as " + n +
           " * x) from a place within its sticks that changes from one vector to the next; VSTRIDE takes a "
           "strided read whose first element sits at the same place in its stick for every vector (" + n +
           " * x + c with c a constant)";
}

}  // namespace spyre
