#include "tile_rows.h"

#include <algorithm>

namespace spyre {

int fit_tile_rows(int rows, int cols, int cores, int max_rows, int64_t lx_bytes_per_elem, const MachineDesc &m) {
    cores = std::max(1, cores);
    const int share = (rows + cores - 1) / cores;
    const int64_t fit = m.lx_usable_bytes / (std::max<int64_t>(cols, 1) * lx_bytes_per_elem);
    int tile = int(std::max<int64_t>(1, std::min<int64_t>({max_rows, share, fit})));
    const int last = rows - (cores - 1) * share;
    if (cores > 1 && tile < share)
        while (share % tile || (last > 0 && last % tile)) tile--;
    return tile;
}

bool phases_agree(int rows, int cores, int tile) {
    cores = std::max(1, cores);
    tile = std::max(1, tile);
    const int share = (rows + cores - 1) / cores, last = rows - (cores - 1) * share;
    if (last <= 0) return false;
    auto pairs = [&](int r) { return ((r + tile - 1) / tile + 1) / 2; };
    return pairs(share) == pairs(last);
}

int transpose_row_sticks(int64_t row_sticks, int64_t tile_rows, const MachineDesc &m) {
    // A stick of the output row is a stick of input rows: both tiles take tile_rows x one stick
    // of LX per stick of the row (the input's rows padded to whole sticks of columns).
    const int64_t lanes16 = int64_t(m.stick_bytes / 2);
    const int64_t per_stick = int64_t(m.stick_bytes) * ((tile_rows + lanes16 - 1) / lanes16 * lanes16);
    int best = 1;
    for (int64_t n = 1; n <= row_sticks; n++)
        if (row_sticks % n == 0 && 4 * n * per_stick <= m.lx_usable_bytes) best = int(n);
    return best;
}

}  // namespace spyre
