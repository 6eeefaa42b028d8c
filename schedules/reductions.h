// Row reductions over the last (stick) dimension of a 2-D input of {cols, rows} (Halide order),
// one value per row ({rows}):
//   "max":  maximum(x(r, y)), in the input type
//   "sum":  sum(float(x(r, y))), fp32 whatever the input type (fp16 inputs accumulate in fp32)
//   "mean": type(s(y) / cols), with s the fp32 row sum above, in the input type
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct ReductionKernel {
    Halide::ImageParam in;
    Halide::Func s;    // "mean": the fp32 row sums; undefined for the other ops
    Halide::Func out;  // {rows}
    Halide::Var y;
    std::string op;
    Halide::Type type;  // the input's
    int cols = 0, rows = 0;
};

const std::vector<std::string> &reduction_ops();
// A fresh instance of `op` over an input of `type` (Float(16) or Float(32)) and {cols, rows}.
// Throws spyre::Error listing the ops on an unknown one.
ReductionKernel make_reduction(const std::string &op, Halide::Type type, int cols, int rows);
// The output's element type for `op` over inputs of `type`.
Halide::Type reduction_output_type(const std::string &op, Halide::Type type);

// Schedule names:
//   "root":    one core; the row sums of "mean" in LX for the whole kernel (scratchpad_root), the
//              input staged by the back end.
//   "cores32": rows ring-split over 32 cores, each core's rows of the input copied into its LX
//              once (stage_all_in_lx), the row sums of "mean" there too. Each core's share of the
//              output must be whole sticks: with more than one core, rows / 32 must be a multiple
//              of 64 (fp16 output) or 32 (fp32 output).
// Throws spyre::Error listing the names on an unknown one.
const std::vector<std::string> &reduction_schedules();
void schedule_reduction(ReductionKernel &k, const std::string &name, const MachineDesc &machine = {});

}  // namespace spyre
