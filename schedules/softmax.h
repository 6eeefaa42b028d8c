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
    int dim = 1;  // PyTorch's dim of a (rows, cols) tensor: 1 reduces each row, 0 each column
};

// Builds a fresh instance of the algorithm for an input of {cols, rows} (Halide order). dim = 1 is
// softmax over each row (the stick dim, a lane reduction); dim = 0 is torch.softmax(x, dim=0), over
// the rows of each column: mx(x) = maximum(in(x, r)), s(x) = sum(float(e(x, r))), so every op is a
// stick-wise op over rows with no lane reduction. IBM's single-core softmax table (SPYRE_FACTS.md)
// measures dim = 0 at (512, 1024). Throws spyre::Error on another dim.
SoftmaxKernel make_softmax(int cols, int rows, int dim = 1);

// Schedule names, for both dims: "stage1".."stage4" (IBM's four placements), "cores32" (stage 4 with the rows
// split over 32 cores), "phased" (cores32 with dma_phases at the tile loop, see norms.h). `cores` > 1 splits the rows of every stage over that many cores first (each
// core then needs at least a 64-row tile). Throws spyre::Error listing the names on an unknown one.
const std::vector<std::string> &softmax_schedules();
// For dim = 0, stages 1-3 run IBM's lowering on one core (IBM's table): each op a pass of its own
// over the whole tensor in row tiles of full width, the column maxima and sums folding each tile's
// rows. Stage 4 (cores32, phased) copies the input into LX once and works on strips of whole columns
// (all rows of a few sticks), so that a strip's reductions complete before the ops that read them;
// it splits the column sticks over `cores` (32), or over the most cores below that which divide
// the sticks evenly.
void schedule_softmax(SoftmaxKernel &k, const std::string &name, const MachineDesc &machine = {}, int cores = 1);

// The CPU reference schedule (stages at root, serial).
void schedule_softmax_cpu(SoftmaxKernel &k);

}  // namespace spyre
