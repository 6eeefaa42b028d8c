#include "mlp.h"

#include <algorithm>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"
#include "matmul_stage.h"
#include "tile_rows.h"

namespace spyre {

using namespace Halide;

namespace {
// LX per element of a row tile in the row-split schedules: h's fp16 and its fp32 accumulator per
// hidden column, roughly as much again per model column.
constexpr int64_t kRowLxBytesPerElem = 6;
}  // namespace

MlpKernel make_mlp(int dim, int hidden, int rows) {
    MlpKernel k;
    k.dim = dim, k.hidden = hidden, k.rows = rows;
    k.x = ImageParam(Float(16), 2, "x");
    k.w1 = ImageParam(Float(16), 2, "w1");
    k.b1 = ImageParam(Float(16), 1, "b1");
    k.w2 = ImageParam(Float(16), 2, "w2");
    k.b2 = ImageParam(Float(16), 1, "b2");
    k.n = Var("n"), k.m = Var("m");
    k.r1 = RDom(0, dim, "r1");
    k.r2 = RDom(0, hidden, "r2");
    Var n = k.n, m = k.m;
    k.acc1 = Func("mlp_acc1");
    k.h = Func("mlp_h");
    k.acc2 = Func("mlp_acc2");
    k.out = Func("mlp");
    k.acc1(n, m) = 0.0f;
    k.acc1(n, m) += cast<float>(k.x(k.r1, m)) * cast<float>(k.w1(n, k.r1));
    Expr v = k.acc1(n, m) + cast<float>(k.b1(n));
    const float c = 0.7978845608f;  // sqrt(2 / pi)
    k.h(n, m) = cast<float16_t>(0.5f * v * (1.0f + tanh(c * (v + 0.044715f * v * v * v))));
    k.acc2(n, m) = 0.0f;
    k.acc2(n, m) += cast<float>(k.h(k.r2, m)) * cast<float>(k.w2(n, k.r2));
    k.out(n, m) = cast<float16_t>(k.acc2(n, m) + cast<float>(k.b2(n)));
    return k;
}

const std::vector<std::string> &mlp_schedules() {
    static const std::vector<std::string> names = {"matched", "dram", "single_split", "tiled", "pe_ring", "cpu"};
    return names;
}

void schedule_mlp(MlpKernel &k, const std::string &name, int cores, const MachineDesc &machine) {
    Var n = k.n, m = k.m, mo("mo"), mi("mi");
    if (name == "cpu") {
        for (Func f : {k.acc1, k.h, k.acc2}) f.compute_root();
        return;
    }
    if (name == "tiled" || name == "pe_ring") {
        // Model sizes: h = gelu(x W1 + b1) goes through device memory, and each matmul is its own
        // stage over all cores in LX-sized tiles on the PE array (matmul_stage.h); pe_ring also
        // shares K panels over the ring.
        const std::string mode = name == "tiled" ? "pe" : "pe_ring";
        schedule(k.h, machine).device_root();
        MatmulStage up;
        up.what = "mlp up-projection";
        up.out = k.h, up.acc = k.acc1, up.k = k.r1, up.n = n, up.m = m;
        up.rows = k.rows, up.inner = k.dim, up.cols = k.hidden;
        schedule_matmul_stage(up, mode, cores, machine);
        MatmulStage down;
        down.what = "mlp down-projection";
        down.out = k.out, down.acc = k.acc2, down.k = k.r2, down.n = n, down.m = m;
        down.rows = k.rows, down.inner = k.hidden, down.cols = k.dim;
        schedule_matmul_stage(down, mode, cores, machine);
        return;
    }
    const int lanes = int(machine.stick_bytes / 2);
    auto pe = [&](Func f, const RDom &r) {
        schedule(f, machine).on_pe(r.x);
        f.update().reorder(pe_loop(r.x), n, m);
    };
    // Rows split over at most `cores` cores (unevenly when they do not divide); the row tile divides
    // every core's share and fits the hidden and model widths of a row in LX.
    const int row_cores = std::min(cores, k.rows);
    const int row_tile = fit_tile_rows(k.rows, k.hidden + k.dim, row_cores, kMaxTileRows, kRowLxBytesPerElem, machine);
    if (name == "matched") {
        // The output's rows are split over cores; each core computes h for those rows into its LX,
        // which is exactly what its second matmul reads.
        SpyreSchedule o = schedule(k.out, machine);
        if (row_cores > 1) o.ring_split(m, row_cores, k.rows);
        o.split(m, mo, mi, row_tile).stick_vectorize(n);
        for (Func f : {k.acc1, k.acc2}) {
            schedule(f, machine).scratchpad_store_at(k.out, mo);
            f.vectorize(n, lanes / 2, TailStrategy::RoundUp);
        }
        schedule(k.h, machine).scratchpad_store_at(k.out, mo).stick_vectorize(n);
    } else if (name == "dram") {
        // The rows split of the output, but h goes through device memory between the matmuls.
        SpyreSchedule hs = schedule(k.h, machine).device_root();
        if (row_cores > 1) hs.ring_split(m, row_cores, k.rows);
        hs.split(m, mo, mi, row_tile).stick_vectorize(n);
        schedule(k.acc1, machine).scratchpad_store_at(k.h, mo);
        k.acc1.vectorize(n, lanes / 2, TailStrategy::RoundUp);
        SpyreSchedule o = schedule(k.out, machine);
        if (row_cores > 1) o.ring_split(m, row_cores, k.rows);
        o.split(m, mo, mi, row_tile).stick_vectorize(n);
        schedule(k.acc2, machine).scratchpad_store_at(k.out, mo);
        k.acc2.vectorize(n, lanes / 2, TailStrategy::RoundUp);
    } else if (name == "single_split") {
        // h is computed with its own split over the hidden dimension and goes through device memory.
        // The hidden dimension is the stick dimension: it splits over the most cores that give each
        // the same whole sticks.
        int n_cores = std::min(cores, k.hidden / lanes);
        while (n_cores > 1 && (k.hidden % n_cores || (k.hidden / n_cores) % lanes)) n_cores--;
        SpyreSchedule hs = schedule(k.h, machine).device_root();
        if (n_cores > 1) {
            hs.ring_split(n, n_cores, k.hidden);
            k.h.reorder(n, m, Var("n_core"));  // the split over cores is the outermost loop
        }
        hs.stick_vectorize(n);
        schedule(k.acc1, machine).scratchpad_store_at(k.h, n_cores > 1 ? Var("n_core") : Var::outermost());
        k.acc1.vectorize(n, lanes / 2, TailStrategy::RoundUp);
        SpyreSchedule o = schedule(k.out, machine);
        if (row_cores > 1) o.ring_split(m, row_cores, k.rows);
        o.split(m, mo, mi, row_tile).stick_vectorize(n);
        schedule(k.acc2, machine).scratchpad_store_at(k.out, mo);
        k.acc2.vectorize(n, lanes / 2, TailStrategy::RoundUp);
    } else {
        throw_unknown("mlp", "schedule", name, mlp_schedules());
    }
    pe(k.acc1, k.r1);
    pe(k.acc2, k.r2);
}

}  // namespace spyre
