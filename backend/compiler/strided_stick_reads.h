// The refusal of a read that takes every n-th element along a buffer's stick dimension (in(2 * x),
// a downsample). Halide lowers it to a vector load of stride n; the vector unit reads whole sticks
// and no Spyre instruction picks every n-th lane of them. Said once here for the two places that
// meet such a load: staging from device memory (infer_dma) and instruction selection from an LX
// tile (select_vector).
#pragma once

#include <cstdint>
#include <string>

namespace spyre {

inline std::string strided_stick_read_refusal(const std::string &func, int64_t stride) {
    const std::string n = std::to_string(stride);
    return "reads " + func + " at every " + n + " elements along its stick dimension (an index such as " + n +
           " * x): the vector unit reads whole sticks and no Spyre instruction picks one lane in " + n +
           " of them; index the stick dimension at stride 1 (a stride along another dimension, such as " + n +
           " * y, compiles)";
}

}  // namespace spyre
