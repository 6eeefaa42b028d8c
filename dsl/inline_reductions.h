// Default schedules for Halide's inline reductions. sum(), maximum() and the others inside a Func's
// definition make a Func of their own that the user holds no handle to and so cannot schedule.
// Halide computes it inside its consumer's innermost loop, which for a stick-vectorized consumer
// means vectorized with that loop. A convolution written that way, sum(in(x + r.x - 1, y + r.y -
// 1)), then reads each tap at a shift along the stick that its RVar's loop varies at run time,
// which no Spyre instruction does, and stages each stick's halo on its own, past the row's ends.
// Before compiling, such a Func gets what a user would write for a named one: its taps unrolled
// (unroll_stick_offsets, directives.h) and, where it has such taps and reads only inputs, computed
// in LX once per row of its consumer, in as many sticks as the consumer's vector.
#pragma once

#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

// Schedules the inline reductions of `outputs`' pipeline that are still at Halide's default and read
// by one consumer at its stick-vectorized loop; leaves every other Func (and any inline reduction a
// schedule placed) alone.
void schedule_inline_reductions(const std::vector<Halide::Func> &outputs, const MachineDesc &machine);

}  // namespace spyre
