#include "matmul.h"

#include <algorithm>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"
#include "matmul_tiles.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;

MatmulKernel make_bmm(int batch, int rows, int inner, int cols) {
    MatmulKernel k;
    k.batch = batch, k.rows = rows, k.inner = inner, k.cols = cols;
    k.a = ImageParam(Float(16), 3, "a");
    k.w = ImageParam(Float(16), 2, "w");
    k.n = Var("n"), k.m = Var("m"), k.b = Var("b");
    k.k = RDom(0, inner, "k");
    k.acc = Func("acc");
    k.out = Func("bmm");
    Var n = k.n, m = k.m, b = k.b;
    k.acc(n, m, b) = 0.0f;
    k.acc(n, m, b) += cast<float>(k.a(k.k, m, b)) * cast<float>(k.w(n, k.k));
    k.out(n, m, b) = cast<float16_t>(k.acc(n, m, b));
    return k;
}

MatmulKernel make_linear(int rows, int inner, int cols) {
    MatmulKernel k = make_bmm(1, rows, inner, cols);
    k.bias = ImageParam(Float(16), 1, "bias");
    k.out = Func("linear");
    k.out(k.n, k.m, k.b) = cast<float16_t>(k.acc(k.n, k.m, k.b) + cast<float>(k.bias(k.n)));
    return k;
}

const std::vector<std::string> &bmm_schedules() {
    static const std::vector<std::string> names = {"pe", "pe_ring", "vector", "cpu"};
    return names;
}


void schedule_bmm(MatmulKernel &k, const std::string &name, int cores, const MachineDesc &machine) {
    if (name == "cpu") {
        k.acc.compute_root();
        return;
    }
    check_known("bmm", "schedule", name, bmm_schedules());
    const int lanes = int(machine.stick_bytes / 2);
    // Cores: one batch per group of cores; the group splits N, then M when N alone does not give
    // every core whole sticks (IBM's batch > N > M priority).
    if (cores < k.batch ? k.batch % cores : cores % k.batch)
        throw_error("bmm: ", cores, " cores do not split evenly over ", k.batch, " batches");
    int per_batch = std::max(1, cores / k.batch);
    int n_split = per_batch;
    while (n_split > 1 && (k.cols % n_split || (k.cols / n_split) % lanes)) n_split /= 2;
    int m_split = per_batch / n_split;
    if (n_split * m_split != per_batch || k.rows % m_split)
        throw_error("bmm: cannot split N = ", k.cols, " and M = ", k.rows, " over ", per_batch,
                    " cores per batch in whole sticks");
    const int n_core = k.cols / n_split, m_core = k.rows / m_split;
    // pe_ring shares one operand's K panels over the ring between the cores that read the same
    // ones, made consecutive in the core index: A between the n_split cores of a batch, or W between
    // the m_split x batch cores of an N range; the operand whose sharing the tile estimate prefers.
    const bool ring = name == "pe_ring";
    const int share_a = ring && n_split >= 2 ? n_split : 0;
    const int share_w = ring && cores >= k.batch && m_split * k.batch >= 2 ? m_split * k.batch : 0;
    if (ring && !share_a && !share_w)
        throw_error("bmm: schedule pe_ring shares A or W tiles between cores, but with ", cores,
                    " core(s) no two cores read the same tiles of either");
    MatmulTiles t;
    bool shares_w = false;
    if (!ring) {
        t = choose_matmul_tiles("bmm", m_core, n_core, k.inner, cores, machine);
    } else {
        if (share_a) t = choose_matmul_tiles("bmm", m_core, n_core, k.inner, cores, machine, share_a, 1);
        if (share_w) {
            MatmulTiles tw = choose_matmul_tiles("bmm", m_core, n_core, k.inner, cores, machine, 1, share_w);
            if (!share_a || tw.est_ns < t.est_ns) t = tw, shares_w = true;
        }
    }
    const int tm = t.m, tn = t.n, tk = t.k;

    Var n = k.n, m = k.m, b = k.b, nc("nc"), mc("mc"), nm("nm"), core("core"), mo("mo"), mi("mi"), no("no"), ni("ni");
    Func out = k.out;
    out.split(n, nc, n, n_core).split(m, mc, m, m_core);
    if (shares_w) out.fuse(mc, b, nm).fuse(nm, nc, core);  // core = (mc + m_split b) + share_w nc
    else out.fuse(nc, mc, nm).fuse(nm, b, core);          // core = nc + n_split (mc + m_split b)
    if (cores > 1) out.parallel(core);
    out.split(m, mo, mi, tm).split(n, no, ni, tn).reorder(ni, mi, no, mo, core).vectorize(ni, lanes, TailStrategy::RoundUp);
    // The fp32 accumulator of one output tile stays in LX; K is streamed through in tiles.
    k.acc.compute_at(out, no).store_in(MemoryType::VTCM).vectorize(n, lanes / 2, TailStrategy::RoundUp);
    RVar ko("ko"), ki("ki");
    if (name == "pe" || ring) {
        RVar pe(std::string("ki") + kPeLoopSuffix);
        k.acc.update().split(k.k.x, ko, ki, tk).rename(ki, pe).reorder(pe, n, m, ko, b);
        if (ring) spyre::schedule(k.acc, machine).ring_share(ko, shares_w ? share_w : share_a);
    } else {
        k.acc.update().split(k.k.x, ko, ki, tk).reorder(ki, n, m, ko, b).vectorize(n, lanes, TailStrategy::RoundUp);
    }
}

}  // namespace spyre
