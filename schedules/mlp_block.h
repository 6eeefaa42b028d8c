// A decoder's whole MLP block as one pipeline (Llama's post-attention half): RMSNorm of the
// residual stream, the SwiGLU MLP, and the residual add, over x {D, M} (fp16):
//   ss(r)      = sum(fp32(x(k, r))^2)                      normed = fp16(x / sqrt(ss / D + eps) * g)
//   gate, up   = normed W_gate, normed W_up  (fp32 sums)   h = fp16(silu(gate) * up)
//   out(n, m)  = fp16(sum_k fp32(h(k, m)) W_down(n, k) + x(n, m))
// with g {D}, W_gate and W_up {H, D}, W_down {D, H}. Schedules: "stages" (by hand: the norm in
// device memory with its rows over the cores, then gated_mlp.h's two matmul stages, pe_ring) and
// "cpu" (the CPU reference); spyre::auto_schedule finds its own.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct MlpBlockKernel {
    Halide::ImageParam x, g, w_gate, w_up, w_down;
    Halide::Func ss, normed, gate, up, h, down, out;
    Halide::Var c, r, n, m;
    Halide::RDom kd, kh;
    int dim = 0, hidden = 0, rows = 0;

    std::vector<Halide::ImageParam> inputs() const { return {x, g, w_gate, w_up, w_down}; }
    // The inputs' shapes, Halide order, and the output's.
    std::vector<std::vector<int64_t>> input_shapes() const;
    std::vector<int64_t> output_shape() const { return {dim, rows}; }
};

MlpBlockKernel make_mlp_block(int dim, int hidden, int rows, float eps = 1e-5f);
const std::vector<std::string> &mlp_block_schedules();
void schedule_mlp_block(MlpBlockKernel &k, const std::string &name, int cores = 32, const MachineDesc &machine = {});

}  // namespace spyre
