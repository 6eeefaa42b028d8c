// Elementwise kernels over a 2-D input of {cols, rows} (Halide order), fp16 or fp32 throughout:
// every constant has the kernel's type, so an fp16 kernel computes in fp16 (op by op, IEEE
// rounding after each op), like the device does. Ops:
//   "add_mul": x*x + x*2
//   "fma":     a*b + c, three inputs of the same shape
//   "relu":    max(x, 0)
//   "gelu":    0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3)))   (the tanh form)
//   "silu":    x / (1 + exp(-x))
//   "exp":     exp(x)
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct PointwiseKernel {
    std::vector<Halide::ImageParam> inputs;  // "fma": a, b, c; every other op: one input
    Halide::Func out;
    Halide::Var x, y;
    std::string op;
    Halide::Type type;
    int cols = 0, rows = 0;
};

// The op names, in a fixed order.
const std::vector<std::string> &pointwise_ops();
// Builds a fresh instance of op `op` of element type `type` (Float(16) or Float(32)) over inputs of
// {cols, rows}. Throws spyre::Error listing the ops on an unknown one.
PointwiseKernel make_pointwise(const std::string &op, Halide::Type type, int cols, int rows);

// Schedule names:
//   "root":    stick_vectorize(x) only; the back end stages the tensor through LX as it sees fit.
//   "tiles":   rows in tiles of 64 (all rows when there are fewer), each input copied into LX
//              once per tile (stage_all_in_lx), x stick vectorized.
//   "cores32": rows ring-split over 32 cores, then tiles of up to 64 of each core's rows.
//   "phased":  "cores32" with dma_phases at the tile loop (see norms.h).
// Throws spyre::Error listing the names on an unknown one.
const std::vector<std::string> &pointwise_schedules();
void schedule_pointwise(PointwiseKernel &k, const std::string &name, const MachineDesc &machine = {});

}  // namespace spyre
