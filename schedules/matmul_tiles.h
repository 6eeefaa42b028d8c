// Output-stationary tiles for a matmul on one core, sized to the LX budget. A tm x tn fp32
// accumulator stays in LX while K streams through in tk-deep panels of A (tm x tk, sticked on K)
// and W (tk x tn, sticked on N), two copies of each so that the DMA of the next panel overlaps the
// MATMUL on this one. Among the tiles that divide the core's share in whole sticks and fit, the
// choice minimises the estimated time of the core's share: the larger of its device-memory channel
// work (bytes plus a per-run overhead for each contiguous run, with every core drawing on the
// channel at once), its PE time (passes of pe_pass_rows plus a fill per MATMUL) and, when an
// operand is shared, its ring time. Every figure comes from the machine description.
#pragma once

#include <string>

#include "device/machine_desc.h"

namespace spyre {

struct MatmulTiles {
    int m = 1, n = 1, k = 1;
    double est_ns = 0;  // the estimate the choice minimised, for one core's share
};

// `m_core` x `n_core` outputs with `inner` deep K on each of `cores` cores. With `a_share` (or
// `w_share`) > 1, runs of that many cores share each A (W) panel over the ring (ring_share): a core
// reads 1/share of those panels from device memory and forwards them at the ring's per-link rate.
// With `accumulators` > 1, that many accumulators over the same A panels (each with its own W) are
// computed per tile. The epilogue's expression temporaries need no room: instruction selection
// streams them in chunks when a whole tile's do not fit. With `w_bytes` = 1 (int8 weights, as in
// qlinear.h), W panels are a byte per element, tiles of N are whole int8 sticks, and each panel
// is dequantized into an fp16 panel of its own in LX. Throws spyre::Error (naming `what`) when
// no tile of whole sticks fits the usable LX.
MatmulTiles choose_matmul_tiles(const std::string &what, int m_core, int n_core, int inner, int cores,
                                const MachineDesc &machine, int a_share = 1, int w_share = 1, int accumulators = 1,
                                int w_bytes = 2);

}  // namespace spyre
