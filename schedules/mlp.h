// A two-layer MLP block: h = gelu(x W1 + b1), y = h W2 + b2, with x {D, M}, W1 {H, D}, W2 {D, H},
// biases {H} and {D}, all fp16, matmuls accumulated in fp32 on the PE array. Schedules differ in
// how the pointwise stage relates to the matmuls' core split (rows): "matched" computes each core's
// rows of h in its LX, the split the second matmul needs; "dram" keeps the same split but puts h
// through device memory; "single_split" forces h onto a split of its own over the hidden
// dimension, so it must cross device memory and wait for every core. Those three keep all of W2
// in each core's LX, so they stop at small sizes. At model sizes, "tiled" makes each matmul its
// own stage over all cores (matmul_stage.h: LX-sized tiles on the PE array, the gelu in the first
// stage's epilogue, h through device memory), and "pe_ring" also shares K panels over the ring.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct MlpKernel {
    Halide::ImageParam x, w1, b1, w2, b2;
    Halide::Func acc1, h, acc2, out;
    Halide::Var n, m;
    Halide::RDom r1, r2;
    int dim = 64, hidden = 256, rows = 64;
};

MlpKernel make_mlp(int dim, int hidden, int rows);
const std::vector<std::string> &mlp_schedules();
void schedule_mlp(MlpKernel &k, const std::string &name, int cores = 32, const MachineDesc &machine = {});

}  // namespace spyre
