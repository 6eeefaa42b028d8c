// Row normalisations over the last (stick) dimension of an fp16 input of {cols, rows} (Halide
// order), fp16 out, statistics in fp32 (each fp16 value widened exactly, sums in fp32):
//   "layernorm": sum_x(y)  = sum(x(r, y));               mu(y) = sum_x(y) / cols
//                sum_d2(y) = sum((x(r, y) - mu(y))^2);     rstd(y) = 1 / sqrt(sum_d2(y) / cols + eps)
//                out       = fp16((x - mu(y)) * rstd(y) * gamma(x) + beta(x))
//   "rmsnorm":   sum_x2(y) = sum(x(r, y)^2);               rms(y) = sqrt(sum_x2(y) / cols + eps)
//                out       = fp16(x / rms(y) * gamma(x))
// gamma and beta are fp16 inputs of {cols}.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct NormKernel {
    std::vector<Halide::ImageParam> inputs;  // in, gamma (+ beta for layernorm)
    // The statistics, fp32, one per row, by name: layernorm sum_x, mu, sum_d2, rstd; rmsnorm
    // sum_x2, rms.
    std::vector<std::pair<std::string, Halide::Func>> stats;
    Halide::Func out;
    Halide::Var x, y;
    std::string op;
    int cols = 0, rows = 0;
    float eps = 1e-5f;
};

const std::vector<std::string> &norm_ops();
// A fresh instance of `op` ("layernorm" or "rmsnorm") over an fp16 input of {cols, rows}. Throws
// spyre::Error listing the ops on an unknown one.
NormKernel make_norm(const std::string &op, int cols, int rows, float eps = 1e-5f);

// Schedule names:
//   "tiles":   rows in tiles of 64 (all rows when there are fewer); per tile the input is copied
//              into LX once (stage_all_in_lx), the statistics are kept in LX at the tile loop
//              (scratchpad_store_at), x is stick vectorized; gamma and beta are staged by the
//              back end.
//   "cores32": rows ring-split over 32 cores, then as "tiles" within each core's rows.
//   "phased":  "cores32" with dma_phases at the tile loop: the cores load, compute and store each
//              tile in lockstep, so device memory never mixes reads and writes (where the rows
//              divide into whole tiles on every core; otherwise it is "cores32").
// Throws spyre::Error listing the names on an unknown one.
const std::vector<std::string> &norm_schedules();
void schedule_norm(NormKernel &k, const std::string &name, const MachineDesc &machine = {});

}  // namespace spyre
