// A 3-tap filter along the stick dimension of a 2-D fp16 tensor, with Halide's repeat_edge at the
// row ends: out(x, y) = (in(x-1, y) + 2 in(x, y) + in(x+1, y)) / 4, in and out {cols, rows}. The
// neighbours' reads start between sticks: the back end makes each one VSHIFT of the staged row
// (docs/directives.md, "Shifted reads"). Schedules:
//   "root":    one core; the back end stages the input rows (with their halo) by DMA.
//   "tiles":   one core; tiles of rows, each tile's input rows copied into LX once.
//   "cores32": the rows split over up to 32 cores, then the same tiles on each core.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct StencilKernel {
    Halide::ImageParam in;
    Halide::Func out;
    Halide::Var x, y;
    int cols = 0, rows = 0;
};

StencilKernel make_stencil(int cols, int rows);
const std::vector<std::string> &stencil_schedules();
// Throws spyre::Error listing the names on an unknown one.
void schedule_stencil(StencilKernel &k, const std::string &name, const MachineDesc &machine = {});

}  // namespace spyre
