// Double-buffered tile streaming for hand-built device programs: the loop that loads tile i+1
// while tile i is computed and tile i-1 is stored, with the WAITs that make it race-free. The
// calibration programs are written with it; it is the pattern an unscheduled compiler emits.
#pragma once

#include <functional>
#include <vector>

#include "device/program_builder.h"

namespace spyre {

// One tensor moved tile by tile between device memory and LX.
struct TileStream {
    int buffer = 0;              // program buffer
    int desc = 0;                // DMA descriptor that moves one tile
    int64_t tile_bytes = 0;      // device-memory distance between consecutive tiles
    int32_t lx[2] = {0, 0};      // LX tile for even / odd tiles (equal when not double-buffered)
    int32_t lx_tile_stride = 0;  // added per tile index: non-zero for tensors resident in LX
    Reg dram_base;               // device-memory offset of tile 0 (default: 0)
    // A 2-D walk (blocks of a matrix): when grid_cols > 0, tile i is at dram_base +
    // (i / grid_cols) * grid_row_bytes + (i % grid_cols) * tile_bytes.
    int grid_cols = 0;
    int64_t grid_row_bytes = 0;
    // The tile moves as this many DMAs of `desc`, piece j at device offset j * piece_bytes and LX
    // offset j * piece_lx_bytes: a scattered write, one transfer per row (linear walks only).
    int pieces = 1;
    int32_t piece_bytes = 0, piece_lx_bytes = 0;
};

// Tags used by stream_tiles: loads 0/1 (by parity), compute 2, stores 3/4 (by parity).
constexpr int kTagCompute = 2;

// Emits a loop over `tiles` tiles (an even number). `compute(p, tile)` emits the vector work of one
// tile on tag kTagCompute: it reads the loads' LX tile of parity p and writes the stores' LX tile of
// parity p; `tile` holds the tile index. Ends with every store complete.
// An empty `compute` makes a pure DMA stream: the stores read the loads' LX tiles directly (give
// them the same lx[]), so each load first waits for the store that last read its tile.
void stream_tiles(ProgramBuilder &b, int tiles, const std::vector<TileStream> &loads,
                  const std::vector<TileStream> &stores, const std::function<void(int p, Reg tile)> &compute);

// A loop over tiles resident in LX: no DMA, compute(tile) only; ends with the compute complete.
void lx_tiles(ProgramBuilder &b, int tiles, const std::function<void(Reg tile)> &compute);

// LX address of a per-tile slice: base + tile * stride, through a scratch register the caller releases.
Lx tile_addr(ProgramBuilder &b, Reg tile, int32_t base, int32_t stride, Reg scratch);

}  // namespace spyre
