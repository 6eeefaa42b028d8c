// Hand-built device programs for the four softmax stages IBM measured on Spyre (softmax over the
// last dimension of a (rows, cols) fp16 tensor, one core; SPYRE_FACTS.md, from torch-spyre's
// docs/source/compiler/scratchpad_planning.md), each a different placement:
//   1: every intermediate in device memory, one pass per op (max, sub, exp, sum, div)
//   2: as 1, with the max and sum results kept in LX
//   3: sub and exp done on each tile as it streams into an LX-resident tensor
//   4: each input tile copied into LX once, every op done on it there
// They mirror what the compiler generates for the Halide softmax's stage schedules, and with them
// form the calibration case of the machine description: only machine constants are fitted.
#pragma once

#include <array>
#include <string>

#include "device/program.h"

namespace spyre {

struct SoftmaxShape {
    int rows = 512;   // softmax rows (each normalised independently)
    int cols = 1024;  // elements per row (the reduced, sticked dimension)
};

constexpr int kNumSoftmaxStages = 4;

struct SoftmaxStageInfo {
    const char *name;
    const char *what;
    double measured_us;  // IBM's median on the device for (512, 1024), one core
};
const std::array<SoftmaxStageInfo, kNumSoftmaxStages> &softmax_stage_info();

// Builds stage 1..4 for `shape` on one core. Buffers: 0 = x (input), the last = y (output), both
// {cols, rows} fp16 in Halide order. rows must be a multiple of 128 (tiles of 64 rows, streamed in
// pairs); cols any positive size that fits the stage's LX plan. Throws spyre::Error otherwise.
DeviceProgram build_softmax_stage(int stage, const SoftmaxShape &shape = {});

}  // namespace spyre
