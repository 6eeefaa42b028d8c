// A gated MLP block (SwiGLU, as in Llama): h = silu(x W1) * (x W3), y = h W2, with x {D, M},
// W1 and W3 {H, D} (gate and up projections), W2 {D, H}, all fp16, matmuls accumulated in fp32,
// silu(g) = g / (1 + exp(-g)) in fp32. Schedules, for model sizes: "tiled" computes each stage
// over all cores (matmul_stage.h: the gate and up accumulators of one h tile side by side in LX,
// the silu product in the stage's epilogue, h through device memory, then the down projection),
// "pe_ring" also shares K panels over the ring; "cpu" is the CPU reference.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct GatedMlpKernel {
    Halide::ImageParam x, w1, w3, w2;
    Halide::Func gate, up, h, down, out;
    Halide::Var n, m;
    Halide::RDom r1, r2;
    int dim = 64, hidden = 256, rows = 64;
};

GatedMlpKernel make_gated_mlp(int dim, int hidden, int rows);
const std::vector<std::string> &gated_mlp_schedules();
void schedule_gated_mlp(GatedMlpKernel &k, const std::string &name, int cores = 32, const MachineDesc &machine = {});

}  // namespace spyre
