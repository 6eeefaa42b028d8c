// Bulk fp16 <-> fp32 conversion for the simulator's inner loops. The results are bit-identical to
// half.h's scalar functions (round to nearest even, subnormals kept, NaNs quieted the same way);
// on a CPU with F16C the work is done eight lanes at a time, chosen once at run time, so the
// binaries still run on any x86-64 (and on other architectures, through the scalar path).
#pragma once

#include <cstdint>

namespace spyre {

// Pointers need no alignment (LX addresses are byte addresses).
void halves_to_floats(const void *src, void *dst, int64_t n);
void floats_to_halves(const void *src, void *dst, int64_t n);
// Rounds each float to the nearest half and back, in place: what an fp16 op's result holds.
void round_floats_to_half(float *v, int64_t n);

}  // namespace spyre
