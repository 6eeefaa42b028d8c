// One matmul stage on the cores: an output Func out(n, m[, b]) computed from an fp32 accumulator
// acc(n, m[, b]) += A(k, m[, b]) * W(n, k), with any epilogue (bias, activation, the cast) inside
// out. Used by bmm and linear (schedules/matmul.h) and by each of the MLP's matmuls (mlp.h).
//
// The cores take one batch per group of cores (or whole batches per core); a group splits N (in
// whole sticks) and M. Of the splits over the most cores, the one whose tiles the estimate of
// matmul_tiles.h finds fastest wins (ties in IBM's batch > N > M order): at model size, splitting M
// further so that more cores share each W panel over the ring halves device-memory traffic. `cores`
// is an upper bound: a shape that does not divide over that many uses the most cores that it does
// (at worst one), so every shape compiles. Each core computes its share in
// output-stationary tiles sized to the LX budget (matmul_tiles.h). Modes: "pe" (MATMUL on the PE
// array), "pe_ring" (the same, with A's or W's K panels shared over the ring between the cores that
// read the same ones, whichever the tile estimate prefers, made consecutive in the core index) and
// "vector" (the vector unit computes the update).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

struct MatmulStage {
    std::string what;  // names the stage in errors ("bmm", "mlp up-projection", ...)
    Halide::Func out, acc;
    Halide::RDom k;
    Halide::Var n, m;
    std::optional<Halide::Var> b;  // the batch dimension, if any
    int batch = 1, rows = 1, inner = 1, cols = 1;  // B, M, K, N
    // Further accumulators over the same A, reduction and shape, each with its own W (a gated MLP's
    // gate and up projections): computed at the same output tile, scheduled like `acc`.
    std::vector<Halide::Func> more_accs;
    // Bytes per element of W: 2 (fp16), or 1 for int8 weights that the caller dequantizes per K
    // panel (qlinear.h): N is then split and tiled in whole int8 sticks.
    int w_bytes = 2;
};

// Throws spyre::Error naming `stage.what` when `cores` is not between 1 and the machine's cores, no
// tile fits the LX, or pe_ring is asked of one core. When the shape leaves pe_ring no two cores
// that read the same tiles, it runs as "pe". Returns the name of the update's K-panel loop (where
// the panels are staged: "ko", renamed by ring_share under pe_ring).
std::string schedule_matmul_stage(const MatmulStage &stage, const std::string &mode, int cores,
                                  const MachineDesc &machine);

}  // namespace spyre
