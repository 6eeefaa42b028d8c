// vLLM's fused_add_rms_norm as one kernel with two outputs (a Pipeline({added, norm})): the residual
// stream's new value and its RMSNorm, over rows of fp16 {cols, rows} (Halide order):
//   added(x, y)  = fp16(in(x, y) + residual(x, y))                  the first output
//   sum_x2(y)    = sum(fp32(added(r, y))^2);   rms(y) = sqrt(sum_x2(y) / cols + eps)
//   norm(x, y)   = fp16(fp32(added(x, y)) / rms(y) * gamma(x))         the second output
// A decoder layer writes both: `added` is the next block's residual, the norm its input.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct FusedAddRmsNormKernel {
    Halide::ImageParam in, residual, gamma;  // {cols, rows}, {cols, rows}, {cols}
    Halide::Func added, sum_x2, rms, norm;     // outputs: added, norm (in that order)
    Halide::Var x, y;
    int cols = 0, rows = 0;
    float eps = 1e-5f;

    std::vector<Halide::ImageParam> inputs() const { return {in, residual, gamma}; }
    std::vector<Halide::Func> outputs() const { return {added, norm}; }
};

FusedAddRmsNormKernel make_fused_add_rmsnorm(int cols, int rows, float eps = 1e-5f);

// Schedule names:
//   "tiles":   one core; rows in tiles that fit LX, the sum written row tile by row tile, the norm
//              reading it back, its statistics in LX at the tile loop.
//   "cores32": the rows of both outputs ring-split over 32 cores (each core normalises the rows
//              it summed), then as "tiles" within each core's rows.
// Throws spyre::Error listing the names on an unknown one.
const std::vector<std::string> &fused_add_rmsnorm_schedules();
void schedule_fused_add_rmsnorm(FusedAddRmsNormKernel &k, const std::string &name, const MachineDesc &machine = {});

}  // namespace spyre
