#include "matmul_stage.h"

#include <algorithm>
#include <vector>

#include "device/error.h"
#include "directives.h"
#include "matmul_tiles.h"

namespace spyre {

using namespace Halide;

namespace {

// How a stage's outputs are divided: `cores` cores in all, each batch over n_split x m_split cores.
struct CoreGrid {
    int cores = 1, n_split = 1, m_split = 1;
};

// The grids of the most cores, at most `cores`, that divide the batches evenly (a group of cores
// per batch, or whole batches per core) and split each batch's N in whole sticks and its M evenly.
// One core always works, so any shape has a grid.
std::vector<CoreGrid> core_grids(const MatmulStage &s, int cores, int lanes) {
    for (int c = cores; c > 1; c--) {
        if (c < s.batch ? s.batch % c : c % s.batch) continue;
        const int per_batch = std::max(1, c / s.batch);
        std::vector<CoreGrid> grids;
        for (int n_split = per_batch; n_split >= 1; n_split--) {
            if (per_batch % n_split || s.cols % n_split || (n_split > 1 && (s.cols / n_split) % lanes)) continue;
            const int m_split = per_batch / n_split;
            if (s.rows % m_split == 0) grids.push_back({c, n_split, m_split});
        }
        if (!grids.empty()) return grids;
    }
    return {CoreGrid{}};
}

}  // namespace

std::string schedule_matmul_stage(const MatmulStage &s, const std::string &mode, int requested_cores,
                                  const MachineDesc &machine) {
    const std::string &what = s.what;
    const int lanes = int(machine.stick_bytes / 2);
    const int n_lanes = int(machine.stick_bytes / s.w_bytes);  // N splits in whole sticks of W
    if (requested_cores < 1 || requested_cores > machine.cores)
        throw_error(what, ": ", requested_cores, " cores requested, the machine has ", machine.cores);
    // pe_ring shares one operand's K panels: A between the n_split cores of a batch, or W between
    // the m_split x batch cores of an N range. Of the grids of the most cores (core_grids) and the
    // operand shared, the one whose tiles the estimate (matmul_tiles.h) finds fastest; ties go to
    // the first grid, in IBM's order of preference (batch > N > M).
    const bool wants_ring = mode == "pe_ring";
    const int accs = 1 + int(s.more_accs.size());
    CoreGrid grid;
    MatmulTiles t;
    bool shares_w = false, ring = false, found = false;
    int share = 0;
    std::string first_error;
    for (const CoreGrid &g : core_grids(s, requested_cores, n_lanes)) {
        const int mc = s.rows / g.m_split, nc = s.cols / g.n_split;
        const int share_a = wants_ring && g.n_split >= 2 ? g.n_split : 0;
        const int share_w = wants_ring && g.cores >= s.batch && g.m_split * s.batch >= 2 ? g.m_split * s.batch : 0;
        auto consider = [&](int a_share, int w_share) {
            MatmulTiles c;
            try {
                c = choose_matmul_tiles(what, mc, nc, s.inner, g.cores, machine, a_share, w_share, accs, s.w_bytes);
            } catch (const Error &e) {  // no tile of this grid fits LX; another grid's may
                if (e.kind() == ErrorKind::Internal) throw;
                if (first_error.empty()) first_error = e.what();
                return;
            }
            if (found && c.est_ns >= t.est_ns * (1 - 1e-9)) return;
            found = true, grid = g, t = c, shares_w = w_share > 1, ring = a_share > 1 || w_share > 1;
            share = std::max(a_share, w_share);
        };
        // A shape too small to spread over two cores runs as "pe": there is nothing to share.
        if (!share_a && !share_w) consider(1, 1);
        if (share_a) consider(share_a, 1);
        if (share_w) consider(1, share_w);
    }
    if (!found) throw Error(first_error);
    if (wants_ring && !ring && requested_cores < 2)
        throw_error(what, ": schedule pe_ring shares A or W tiles between cores, but with ", requested_cores,
                    " core(s) no two cores read the same tiles of either");
    const int cores = grid.cores, n_split = grid.n_split, m_split = grid.m_split;
    const int n_core = s.cols / n_split, m_core = s.rows / m_split;

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
            RVar pe = pe_loop(ki);
            order = {pe, n, m, ko};
            if (s.b) order.push_back(*s.b);
            acc.update().split(s.k.x, ko, ki, t.k);
            spyre::schedule(acc, machine).on_pe(ki);
            acc.update().reorder(order);
            if (ring) {
                spyre::schedule(acc, machine).ring_share(ko, share);
                k_panel = ring_share_loop(ko, share).name();
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
