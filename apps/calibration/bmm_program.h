// A hand-built batched matmul on the PE arrays, C[b] = A[b] x W, fp16 in, fp32 accumulation,
// fp16 out, split over cores by batch then by N (IBM's priority batch > N > M > K). It exercises
// the whole device model at full model-layer size and is the timing-only benchmark of the
// simulator until the compiler generates matmuls itself.
#pragma once

#include "device/program.h"

namespace spyre {

struct BmmShape {
    int batch = 8, m = 512, k = 4096, n = 12800;
    int cores = 32;                        // a multiple of batch: cores / batch split N
    int tile_m = 128, tile_n = 320, tile_k = 512;  // per-core tiles held in LX
};

// Buffers: 0 = A {k, m, batch}, 1 = W {n, k}, 2 = C {n, m, batch}, all fp16, row-major sticked on
// the innermost dim. Throws spyre::Error naming the field when a tile does not divide its extent,
// K tiles are odd, or tiles are not whole sticks.
DeviceProgram build_bmm(const BmmShape &shape);

}  // namespace spyre
