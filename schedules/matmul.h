// Batched matmul C[b] = A[b] x W (the bmm of a linear layer without bias): A {K, M, B} fp16
// (sticked on K), W {N, K} fp16 (sticked on N), out {N, M, B} fp16, accumulated in fp32. Written
// once as a Halide algorithm, with Spyre schedules that put the update on the PE array or on the
// vector unit, split over cores by batch then by N (IBM's batch > N > M > K priority).
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct MatmulKernel {
    Halide::ImageParam a, w;
    Halide::ImageParam bias;  // linear only: {N}
    Halide::Func acc, out;
    Halide::Var n, m, b;
    Halide::RDom k;
    int batch = 1, rows = 1, inner = 1, cols = 1;  // B, M, K, N
};

MatmulKernel make_bmm(int batch, int rows, int inner, int cols);
// A linear layer, out = x W + b: the bmm with one batch and a bias of {N} added in fp32.
MatmulKernel make_linear(int rows, int inner, int cols);

// "pe": PE array, split over `cores` cores by batch, then N, then M, each core's share computed in
// output-stationary tiles sized to the LX budget (matmul_tiles.h: the fp32 accumulator tile stays
// in LX, K streams through in double-buffered panels); "vector": the same tiling on the vector
// unit; "cpu": the CPU reference. spyre::Error when the split or the tiles cannot be whole sticks.
const std::vector<std::string> &bmm_schedules();
void schedule_bmm(MatmulKernel &k, const std::string &name, int cores = 32, const MachineDesc &machine = {});

}  // namespace spyre
