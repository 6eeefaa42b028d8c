// A transpose of a 2-D fp16 tensor: out(x, y) = in(y, x), in {cols, rows} -> out {rows, cols}
// (Halide order). Each output stick gathers one element from 64 rows of the input, so the data
// changes stick dimension: a restickify, which the back end does on the vector unit (VTRANSPOSE of
// staged tiles, docs/directives.md). The input's rows must be whole sticks (64); its columns may
// be any number. Schedules:
//   "tiles":   one core; 64-column strips of the output in tiles of rows that fit LX.
//   "cores32": the output's rows (the input's stick dimension) split over up to 32 cores in whole
//              sticks, then the same tiles on each core.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct TransposeKernel {
    Halide::ImageParam in;
    Halide::Func out;
    Halide::Var x, y;  // x: the output's stick dimension (the input's rows), y: the output's rows
    int cols = 0, rows = 0;  // of the input
};

TransposeKernel make_transpose(int cols, int rows);
const std::vector<std::string> &transpose_schedules();
// Throws spyre::Error listing the names on an unknown one.
void schedule_transpose(TransposeKernel &k, const std::string &name, const MachineDesc &machine = {});

}  // namespace spyre
