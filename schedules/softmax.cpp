#include "softmax.h"

#include "device/error.h"
#include "directives.h"
#include "known_names.h"
#include "tile_rows.h"

namespace spyre {

using namespace Halide;

SoftmaxKernel make_softmax(int cols, int rows) {
    SoftmaxKernel k;
    k.cols = cols;
    k.rows = rows;
    k.in = ImageParam(Float(16), 2, "in");
    k.x = Var("x");
    k.y = Var("y");
    Var x = k.x, y = k.y;
    RDom r(0, cols, "r");
    k.mx = Func("mx");
    k.t = Func("t");
    k.e = Func("e");
    k.s = Func("s");
    k.out = Func("softmax");
    k.mx(y) = maximum(k.in(r, y));
    k.t(x, y) = k.in(x, y) - k.mx(y);
    k.e(x, y) = exp(k.t(x, y));
    k.s(y) = sum(cast<float>(k.e(r, y)));
    k.out(x, y) = k.e(x, y) / cast<float16_t>(k.s(y));
    return k;
}

const std::vector<std::string> &softmax_schedules() {
    static const std::vector<std::string> names = {"stage1", "stage2", "stage3", "stage4", "cores32"};
    return names;
}

void schedule_softmax_cpu(SoftmaxKernel &k) {
    for (Func f : {k.mx, k.t, k.e, k.s}) f.compute_root();
}

namespace {
constexpr int kTileRows = 64;  // 64 rows: one stick of fp16 row maxima per tile
// LX per element of a stage-4 tile: the double-buffered fp16 input and output and e.
constexpr int64_t kLxBytesPerElem = 16;
}

void schedule_softmax(SoftmaxKernel &k, const std::string &name, const MachineDesc &m, int cores) {
    Var x = k.x, y = k.y, yo("yo"), yi("yi");
    if (name == "cores32") cores = 32;
    // IBM's placements (stage1-3) keep their 64-row tiles; the LX-tiled schedules fit the width.
    const bool lx_tiled = name == "stage4" || name == "cores32";
    const int tile = lx_tiled ? fit_tile_rows(k.rows, k.cols, cores, kTileRows, kLxBytesPerElem, m)
                              : std::max(1, std::min(kTileRows, k.rows / std::max(1, cores)));
    auto tiled = [&](Func f, bool row_func) {
        SpyreSchedule s = schedule(f, m);
        // Fewer rows than cores is an error (ring_split says so); more that do not divide evenly
        // split unevenly, the last core taking fewer rows.
        if (cores > 1 && (k.rows % cores == 0 || k.rows < cores)) s.ring_split(y, cores, k.rows);
        else if (cores > 1) s.ring_split(y, cores);
        s.split(y, yo, yi, tile);
        if (!row_func) s.stick_vectorize(x);
        return s;
    };
    if (name == "stage1") {
        // Every intermediate in device memory, each op a pass of its own over row tiles.
        for (Func f : {k.mx, k.s}) tiled(f, true).device_root();
        for (Func f : {k.t, k.e}) tiled(f, false).device_root();
        tiled(k.out, false);
    } else if (name == "stage2") {
        // The row maxima and sums stay in LX.
        for (Func f : {k.mx, k.s}) tiled(f, true).scratchpad_root();
        for (Func f : {k.t, k.e}) tiled(f, false).device_root();
        tiled(k.out, false);
    } else if (name == "stage3") {
        // x - max and exp are computed in LX (t fused into e, the tensor kept in LX).
        for (Func f : {k.mx, k.s}) tiled(f, true).scratchpad_root();
        tiled(k.e, false).scratchpad_root();
        tiled(k.out, false);
    } else if (name == "stage4" || name == "cores32") {
        // The input is copied into LX once, a tile at a time, and every op works on the tile there.
        tiled(k.out, false);
        stage_all_in_lx(k.in, k.out, yo, m);
        for (Func f : {k.mx, k.s}) schedule(f, m).scratchpad_store_at(k.out, yo);
        schedule(k.e, m).scratchpad_store_at(k.out, yo).stick_vectorize(x);
    } else {
        throw_unknown("softmax", "schedule", name, softmax_schedules());
    }
}

}  // namespace spyre
