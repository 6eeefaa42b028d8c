#include "matmul_tiles.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "device/error.h"

namespace spyre {

namespace {

// Divisors of `extent` that are whole multiples of `step`, or else the whole extent (a partial
// stick is padded by the layout, so one tile of 100 columns is as good as one of 128).
std::vector<int> whole_step_divisors(int extent, int step) {
    std::vector<int> v;
    for (int t = step; t <= extent; t += step)
        if (extent % t == 0) v.push_back(t);
    if (v.empty()) v.push_back(extent);
    return v;
}

}  // namespace

MatmulTiles choose_matmul_tiles(const std::string &what, int m_core, int n_core, int inner, int cores,
                                const MachineDesc &machine, int a_share, int w_share, int accumulators,
                                int w_bytes) {
    const int accs = std::max(accumulators, 1);
    a_share = std::max(a_share, 1);
    w_share = std::max(w_share, 1);
    const int lanes = int(machine.stick_bytes / 2);  // fp16 elements per stick
    const int64_t sb = machine.stick_bytes;
    auto sticks = [&](int64_t bytes) { return (bytes + sb - 1) / sb * sb; };
    // Rows of A: divisors of the share in whole PE passes; any divisor when none is (a prime share of
    // 1151 rows takes tiles of 1 or 1151).
    std::vector<int> ms, any;
    for (int t = 1; t <= m_core; t++) {
        if (m_core % t) continue;
        any.push_back(t);
        if (t % machine.pe_pass_rows == 0 || m_core < machine.pe_pass_rows) ms.push_back(t);
    }
    if (ms.empty()) ms = any;
    const std::vector<int> ns = whole_step_divisors(n_core, int(sb / w_bytes)), ks = whole_step_divisors(inner, lanes);
    const bool dequant = w_bytes != 2;

    // The channel is shared: each core gets 1/cores of the one-way peak.
    const double ns_per_channel_byte = double(std::max(cores, 1)) / machine.dram_bytes_per_ns;
    const double run_ovh = machine.dram_read_run_overhead_bytes;
    MatmulTiles best;
    bool found = false;
    for (int tm : ms)
        for (int tn : ns)
            for (int tk : ks) {
                const int64_t acc = accs * int64_t(tm) * sticks(int64_t(tn) * 4);
                // Each accumulator streams its own K loop (A and its W), one after the other, so the
                // panels' LX is one loop's; the accumulators all stay for the tile.
                const int64_t panels = int64_t(tm) * sticks(int64_t(tk) * 2) + int64_t(tk) * sticks(int64_t(tn) * w_bytes);
                // Quantized weights: one fp16 panel that each W panel is dequantized into.
                const int64_t dequant_panel = dequant ? int64_t(tk) * sticks(int64_t(tn) * 2) : 0;
                // Beside the accumulator and two copies of the panels: the output row being
                // converted and stored, and a stick of fill scratch.
                const int64_t reserve = 2 * sticks(int64_t(tn) * 2) + sb;
                if (acc + 2 * panels + dequant_panel + reserve > machine.lx_usable_bytes) continue;
                const double tiles = double(m_core / tm) * double(n_core / tn);
                const double steps = tiles * double(inner / tk);
                const double a_bytes = accs * double(tm) * (double(sticks(int64_t(tk) * 2)) + run_ovh);
                const double w_panel = accs * double(tk) * (double(sticks(int64_t(tn) * w_bytes)) + run_ovh);
                const double dram_ns = steps * (a_bytes / a_share + w_panel / w_share) * ns_per_channel_byte;
                // A shared panel crosses one ring link per core of the run.
                double ring_bytes = 0;
                if (a_share > 1) ring_bytes += accs * double(tm) * double(sticks(int64_t(tk) * 2));
                if (w_share > 1) ring_bytes += accs * double(tk) * double(sticks(int64_t(tn) * w_bytes));
                const double ring_ns = steps * ring_bytes / (machine.ring_bytes_per_cycle * machine.clock_ghz);
                const double passes = std::ceil(double(tm) / double(machine.pe_pass_rows)) + machine.pe_fill_rows /
                                                                                           double(machine.pe_pass_rows);
                const double macs_per_step = passes * double(machine.pe_pass_rows) * double(tn) * double(tk);
                const double pe_ns = accs * steps * macs_per_step / machine.pe_macs_per_ns;
                // Each tile's K loop starts by passing its first panel down the whole run, one hop
                // per core, before the last core of the run can begin.
                const int run = std::max(a_share, w_share);
                const double first_panel = run > 1 ? ring_bytes / double(accs) : 0.0;
                const double fill_ns = tiles * double(run - 1) *
                                       (machine.ring_hop_latency_cycles + first_panel / machine.ring_bytes_per_cycle) /
                                       machine.clock_ghz;
                const double est = std::max({dram_ns, pe_ns, ring_ns}) + fill_ns;
                // Equal estimates (both PE-bound, say) go to the larger tile (less traffic), then
                // to the deeper panel (fewer instructions).
                const int64_t area = int64_t(tm) * tn, best_area = int64_t(best.m) * best.n;
                const bool same = found && std::fabs(est - best.est_ns) <= 1e-9 * best.est_ns;
                if (!found || (!same && est < best.est_ns) ||
                    (same && (area > best_area || (area == best_area && tk > best.k)))) {
                    best = MatmulTiles{tm, tn, tk, est};
                    found = true;
                }
            }
    if (!found)
        throw_error(what, ": no output tile of whole sticks fits the usable LX (", machine.lx_usable_bytes,
                    " bytes) for a core's share of ", m_core, " x ", n_core, " outputs over K = ", inner);
    return best;
}

}  // namespace spyre
