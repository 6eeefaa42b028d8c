// Shape-adaptive tiling for the row-tiled schedules of schedules/: how many rows a tile takes so
// that it fits the LX budget at any width, instead of a fixed tile that overflows on wide rows.
#pragma once

#include <cstdint>

#include "device/machine_desc.h"

namespace spyre {

// Rows per tile: at most `max_rows` and each core's share of `rows` (split over `cores`), and small
// enough that `cols` columns at `lx_bytes_per_elem` bytes of LX per element fit the usable LX.
// When the split is uneven and a tile is shorter than a core's share, it divides every core's
// share, since a partial tile would make the staged slices' sizes differ between cores.
int fit_tile_rows(int rows, int cols, int cores, int max_rows, int64_t lx_bytes_per_elem, const MachineDesc &m);

}  // namespace spyre
