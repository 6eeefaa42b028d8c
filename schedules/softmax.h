// Softmax over the last dimension (rows of `cols` elements), fp16 in and out, written once as a
// Halide algorithm, with the Spyre schedules that reproduce the four placements IBM measured
// (SPYRE_FACTS.md) and a 32-core one. The algorithm follows IBM's op-by-op form:
//   mx = max over the row; t = x - mx; e = exp(t); s = sum of e in fp32; y = e / fp16(s).
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct SoftmaxKernel {
    Halide::ImageParam in;
    Halide::Func mx, t, e, s, out;
    Halide::Var x, y;
    int cols = 0, rows = 0;
};

// Builds a fresh instance of the algorithm for an input of {cols, rows} (Halide order).
SoftmaxKernel make_softmax(int cols, int rows);

// Schedule names: "stage1".."stage4" (IBM's four placements), "cores32" (stage 4 with the rows
// split over 32 cores), "phased" (cores32 with dma_phases at the tile loop, see norms.h). `cores` > 1 splits the rows of every stage over that many cores first (each
// core then needs at least a 64-row tile). Throws spyre::Error listing the names on an unknown one.
const std::vector<std::string> &softmax_schedules();
void schedule_softmax(SoftmaxKernel &k, const std::string &name, const MachineDesc &machine = {}, int cores = 1);

// The CPU reference schedule (stages at root, serial).
void schedule_softmax_cpu(SoftmaxKernel &k);

}  // namespace spyre
