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

}  // namespace spyre
