// Shape-adaptive tiling for the row-tiled schedules of schedules/: how many rows a tile takes so
// that it fits the LX budget at any width, instead of a fixed tile that overflows on wide rows.
#pragma once

#include <cstdint>

#include "device/machine_desc.h"

namespace spyre {

// The most rows a tile of the row-tiled schedules takes: 64 rows make one stick of fp16 per-row
// values (a row maximum, a mean) per tile.
constexpr int kMaxTileRows = 64;

// Rows per tile: at most `max_rows` and each core's share of `rows` (split over `cores`), and small
// enough that `cols` columns at `lx_bytes_per_elem` bytes of LX per element fit the usable LX.
// When the split is uneven and a tile is shorter than a core's share, it divides every core's
// share, since a partial tile would make the staged slices' sizes differ between cores.
int fit_tile_rows(int rows, int cols, int cores, int max_rows, int64_t lx_bytes_per_elem, const MachineDesc &m);

// Whether dma_phases can go on the tile loop of `rows` split over `cores` in tiles of `tile` rows:
// a barrier waits for every core, so every core must meet as many as the others. The tile loop is
// double-buffered in pairs of tiles, so every core must run the same number of pairs: an even
// split does, and so does an uneven one whose last core is one tile short of the others (1151
// rows on 32 cores: 36 and 35 single-row tiles, 18 pairs each). Every core must have rows.
bool phases_agree(int rows, int cores, int tile);

// Sticks of each output row that a transpose's tile of `tile_rows` output rows takes (one
// VTRANSPOSE writes them back to back): the most that divide the row's `row_sticks` and let the
// staged input tile, the output tile and their second copies fit the usable LX, since each store
// run (one row's sticks) pays the DMA's per-run overhead once. At least 1.
int transpose_row_sticks(int64_t row_sticks, int64_t tile_rows, const MachineDesc &m);

}  // namespace spyre
