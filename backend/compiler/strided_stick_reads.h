// The refusal of a read that takes every n-th element along a buffer's stick dimension (in(2 * x),
// a downsample) that lower_shifted_loads could not make a VSTRIDE of: where its first element sits
// in its stick changes from one vector to the next (in(2 * x + y)). Said once here for the two
// places that meet such a load: staging from device memory (infer_dma) and instruction selection
// from an LX tile (select_vector). And the refusal of predicated vectors, which such a read may be.
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

// The refusal of vectors Halide predicates (a split's tail guarded lane by lane): said once here for
// the store that instruction selection meets and the strided read lower_shifted_loads meets first.
inline std::string predicated_vector_refusal(int lanes) {
    return "its vectors of " + std::to_string(lanes) +
           " lanes are predicated: Halide guards the lanes past the end of a split that does not divide "
           "what it splits (a vectorize wider than the elements a core or a tile has), and the vector "
           "unit writes whole sticks; vectorize by a divisor of that extent, or stick_vectorize a "
           "dimension whose whole rows each core holds";
}

}  // namespace spyre
