#include "matmul_stage.h"

#include <algorithm>

#include "device/error.h"
#include "directives.h"
#include "matmul_tiles.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;

namespace {

// How a stage's outputs are divided: `cores` cores in all, each batch over n_split x m_split cores.
struct CoreGrid {
    int cores = 1, n_split = 1, m_split = 1;
};

// The most cores, at most `cores`, that divide the batches evenly (a group of cores per batch, or
// whole batches per core) and split each batch's N in whole sticks, then its M, in that order of
// preference (IBM's batch > N > M). One core always works, so any shape has a grid.
CoreGrid choose_core_grid(const MatmulStage &s, int cores, int lanes) {
    for (int c = cores; c > 1; c--) {
        if (c < s.batch ? s.batch % c : c % s.batch) continue;
        const int per_batch = std::max(1, c / s.batch);
        for (int n_split = per_batch; n_split >= 1; n_split--) {
            if (per_batch % n_split || s.cols % n_split || (n_split > 1 && (s.cols / n_split) % lanes)) continue;
            const int m_split = per_batch / n_split;
            if (s.rows % m_split == 0) return {c, n_split, m_split};
        }
    }
    return {};
}

}  // namespace

std::string schedule_matmul_stage(const MatmulStage &s, const std::string &mode, int requested_cores,
                                  const MachineDesc &machine) {
    const std::string &what = s.what;
    const int lanes = int(machine.stick_bytes / 2);
    const int n_lanes = int(machine.stick_bytes / s.w_bytes);  // N splits in whole sticks of W
    if (requested_cores < 1 || requested_cores > machine.cores)
        throw_error(what, ": ", requested_cores, " cores requested, the machine has ", machine.cores);
    const CoreGrid grid = choose_core_grid(s, requested_cores, n_lanes);
    const int cores = grid.cores, n_split = grid.n_split, m_split = grid.m_split;
    const int n_core = s.cols / n_split, m_core = s.rows / m_split;
    // pe_ring shares one operand's K panels: A between the n_split cores of a batch, or W between
    // the m_split x batch cores of an N range.
    const bool wants_ring = mode == "pe_ring";
    const int share_a = wants_ring && n_split >= 2 ? n_split : 0;
    const int share_w = wants_ring && cores >= s.batch && m_split * s.batch >= 2 ? m_split * s.batch : 0;
    if (wants_ring && !share_a && !share_w && requested_cores < 2)
        throw_error(what, ": schedule pe_ring shares A or W tiles between cores, but with ", requested_cores,
                    " core(s) no two cores read the same tiles of either");
    // A shape too small to spread over two cores runs as "pe": there is nothing to share.
    const bool ring = share_a || share_w;
    const int accs = 1 + int(s.more_accs.size());
    MatmulTiles t;
    bool shares_w = false;
    if (!ring) {
        t = choose_matmul_tiles(what, m_core, n_core, s.inner, cores, machine, 1, 1, accs, s.w_bytes);
    } else {
        if (share_a)
            t = choose_matmul_tiles(what, m_core, n_core, s.inner, cores, machine, share_a, 1, accs, s.w_bytes);
        if (share_w) {
            MatmulTiles tw =
                choose_matmul_tiles(what, m_core, n_core, s.inner, cores, machine, 1, share_w, accs, s.w_bytes);
            if (!share_a || tw.est_ns < t.est_ns) t = tw, shares_w = true;
        }
    }

    Var n = s.n, m = s.m, nc("nc"), mc("mc"), nm("nm"), core("core"), mo("mo"), mi("mi"), no("no"), ni("ni");
    Func out = s.out;
    out.split(n, nc, n, n_core).split(m, mc, m, m_core);
    if (s.b) {
        if (shares_w) out.fuse(mc, *s.b, nm).fuse(nm, nc, core);  // core = (mc + m_split b) + share_w nc
        else out.fuse(nc, mc, nm).fuse(nm, *s.b, core);          // core = nc + n_split (mc + m_split b)
    } else {
        if (shares_w) out.fuse(mc, nc, core);  // core = mc + m_split nc
        else out.fuse(nc, mc, core);           // core = nc + n_split mc
    }
    if (cores > 1) out.parallel(core);
    out.split(m, mo, mi, t.m).split(n, no, ni, t.n).reorder(ni, mi, no, mo, core).vectorize(ni, lanes, TailStrategy::RoundUp);
    // The fp32 accumulators of one output tile stay in LX; K is streamed through in panels.
    std::string k_panel = "ko";
    std::vector<Func> all{s.acc};
    all.insert(all.end(), s.more_accs.begin(), s.more_accs.end());
    for (Func acc : all) {
        acc.compute_at(out, no).store_in(MemoryType::VTCM).vectorize(n, lanes / 2, TailStrategy::RoundUp);
        RVar ko("ko"), ki("ki");
        std::vector<VarOrRVar> order;
        if (mode == "pe" || wants_ring) {
            RVar pe(std::string("ki") + kPeLoopSuffix);
            order = {pe, n, m, ko};
            if (s.b) order.push_back(*s.b);
            acc.update().split(s.k.x, ko, ki, t.k).rename(ki, pe).reorder(order);
            if (ring) {
                const int g = shares_w ? share_w : share_a;
                spyre::schedule(acc, machine).ring_share(ko, g);
                k_panel = ko.name() + kRingShareSuffix + std::to_string(g);
            }
        } else {
            order = {ki, n, m, ko};
            if (s.b) order.push_back(*s.b);
            acc.update().split(s.k.x, ko, ki, t.k).reorder(order).vectorize(n, lanes, TailStrategy::RoundUp);
        }
    }
    return k_panel;
}

}  // namespace spyre
