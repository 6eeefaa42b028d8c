// Hand-built device programs for the configurations IBM measured in torch-spyre's cost-model sweeps
// (SPYRE_FACTS.md, "torch-spyre's cost-model sweeps"). Each builder writes the kernel the way IBM's
// compiler lays it out (rows split over cores in whole rows, tiles streamed through LX with double
// buffering), so that the simulator's mechanisms, not per-kernel rates, decide how fast it runs.
// All tensors are fp16, row-major and sticked on the innermost dimension; every builder throws
// spyre::Error naming the field when a shape does not divide the way it needs.
#pragma once

#include "device/program.h"

namespace spyre {

// A streaming pointwise kernel over a (rows, cols) tensor: `inputs` full-size inputs (0: write-only
// fill, 1: copy, 2: add) and, optionally, one small broadcast operand added to every row.
enum class Broadcast { None, Row, Scalar };
struct PointwiseShape {
    int rows = 4096, cols = 4096;
    int cores = 32;          // rows split over cores; rows % (cores * tile_rows * 2) == 0
    int inputs = 1;          // full-size inputs: 0, 1 or 2
    Broadcast broadcast = Broadcast::None;  // Row: a (1, cols) operand; Scalar: a (1, 1) operand
    int tile_rows = 16;      // rows per tile; cols % 64 == 0
};
DeviceProgram build_pointwise(const PointwiseShape &s);

// Standalone row reduction (sum over cols), rows split over cores. The (rows,) fp16 result is stored
// stick-inflated as IBM's layout stores a reduced dimension, one 128-byte stick per row, and
// scattered: each row's stick is its own write (cost_model.py names this write as the reason
// reductions slow down at many rows).
struct RowReductionShape {
    int rows = 4096, cols = 4096, cores = 32;
    int tile_rows = 16;
};
DeviceProgram build_row_reduction(const RowReductionShape &s);

// Column reduction (sum over rows, one (1, cols) result). Reduction dimensions are not split, so
// cols are split over cores: each core reads a strip of cols / cores columns, one run per row.
struct ColReductionShape {
    int rows = 4096, cols = 8192, cores = 32;
    int tile_rows = 64;
};
DeviceProgram build_col_reduction(const ColReductionShape &s);

// Restickify: out(c, r) = in(r, c) with the stick dimension swapped, on the vector unit
// (VTRANSPOSE). As IBM parallelises transports, the stick planes (cols) are split over cores: each
// core streams tiles of tile_rows rows of its cols / cores columns and writes them as cols / cores
// output rows of tile_rows elements.
struct RestickifyShape {
    int rows = 4096, cols = 4096, cores = 32;
    int tile_rows = 1024;  // a multiple of 64; rows % (2 * tile_rows) == 0
};
DeviceProgram build_restickify(const RestickifyShape &s);

// A stick-plane transport: in[R][sp][64] -> out[sp][R][64] (the stick stays innermost; the two
// outer dimensions swap), DMA only, staged through LX. Rows split over cores. Each tile loads
// `run_sticks` consecutive rows (contiguous) and stores them as sp runs of `run_sticks` sticks, one
// per plane, so `run_sticks` is the contiguous run length of the written sticks (IBM's M).
struct PlaneTransportShape {
    int rows = 4096;       // R
    int planes = 64;       // sp = cols / 64
    int cores = 32;
    int run_sticks = 8;    // M: 1 = a stick-by-stick gather, 8 = a 1 KiB block transpose
};
DeviceProgram build_plane_transport(const PlaneTransportShape &s);

// Compute-isolated matmul: each core loads an (m, k) A and a (k, n) B into LX once, then issues
// `reps` accumulating MATMULs C(m, n) += A x B, and stores C once. `cores` cores run it (SPMD, each
// on its own copy of the operands, so that no read is a replicated one).
struct LxMatmulShape {
    int m = 64, n = 256, k = 256;  // per core; n and k multiples of 64
    int cores = 8;
    int reps = 64;
};
DeviceProgram build_lx_matmul(const LxMatmulShape &s);

// Every core loads the same `bytes` of one input into its LX (one DMA each): the replicated operand
// load of a matmul whose cores each fetch the operand they share.
struct ReplicatedLoadShape {
    int bytes = 1 << 20;  // a multiple of 128
    int cores = 32;
};
DeviceProgram build_replicated_load(const ReplicatedLoadShape &s);

// Fused, row-tiled softmax over cols (IBM's softmax_row_tiling): rows split over cores, each core
// streams its rows in `tiles` tiles of h = rows / (cores * tiles) rows; per tile max, sub, exp,
// sum, div in LX; the input is read once and the output written once.
struct FusedSoftmaxShape {
    int rows = 4096, cols = 2048, cores = 32;
    int tiles = 4;  // tiles per core, even
};
DeviceProgram build_fused_softmax(const FusedSoftmaxShape &s);

}  // namespace spyre
