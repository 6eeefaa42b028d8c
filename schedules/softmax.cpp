#include "softmax.h"

#include <algorithm>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"
#include "tile_rows.h"

namespace spyre {

using namespace Halide;

namespace {
SoftmaxKernel make_softmax_dim0(int cols, int rows);

// The kernel's input, Vars and (undefined) Funcs, named as the schedules and reports know them.
SoftmaxKernel softmax_funcs(int cols, int rows, int dim) {
    SoftmaxKernel k;
    k.cols = cols, k.rows = rows, k.dim = dim;
    k.in = ImageParam(Float(16), 2, "in");
    k.x = Var("x"), k.y = Var("y");
    k.mx = Func("mx"), k.t = Func("t"), k.e = Func("e"), k.s = Func("s");
    k.out = Func("softmax");
    return k;
}
void schedule_softmax_dim0(SoftmaxKernel &k, const std::string &name, const MachineDesc &m, int cores);
}  // namespace

SoftmaxKernel make_softmax(int cols, int rows, int dim) {
    if (dim != 0 && dim != 1) throw_error("softmax: dim ", dim, " is not a dim of a 2-D (rows, cols) tensor (0 or 1)");
    if (dim == 0) return make_softmax_dim0(cols, rows);
    SoftmaxKernel k = softmax_funcs(cols, rows, 1);
    Var x = k.x, y = k.y;
    RDom r(0, cols, "r");
    k.mx(y) = maximum(k.in(r, y));
    k.t(x, y) = k.in(x, y) - k.mx(y);
    k.e(x, y) = exp(k.t(x, y));
    k.s(y) = sum(cast<float>(k.e(r, y)));
    k.out(x, y) = k.e(x, y) / cast<float16_t>(k.s(y));
    return k;
}

namespace {
// torch.softmax(x, dim=0) of a (rows, cols) tensor: reductions down the columns, in IBM's op order
// (max, sub, exp, sum in fp32, div). The reductions are written as updates over the rows, so that a
// schedule can stream a whole strip of columns per row.
SoftmaxKernel make_softmax_dim0(int cols, int rows) {
    SoftmaxKernel k = softmax_funcs(cols, rows, 0);
    Var x = k.x, y = k.y;
    RDom r(0, rows, "r");
    k.mx(x) = Float(16).min();
    k.mx(x) = max(k.mx(x), k.in(x, r));
    k.t(x, y) = k.in(x, y) - k.mx(x);
    k.e(x, y) = exp(k.t(x, y));
    k.s(x) = 0.0f;
    k.s(x) += cast<float>(k.e(x, r));
    k.out(x, y) = k.e(x, y) / cast<float16_t>(k.s(x));
    return k;
}

// IBM's placements for the dim-0 softmax.
// Stages 1-3 run IBM's lowering as it is: each op a pass of its own over the whole (rows, cols)
// tensor on one core, in row tiles of full width (a row is all `cols` columns), so a tile's rows
// are back to back wherever the tensor is, and every op of a tile is one instruction over its
// rows. The column maxima and sums fold the rows of each tile into the column vector.
// Stage 4 copies the input into LX once and works on strips of whole columns (`w` sticks of
// columns, all rows), the strip loop outermost, so that a strip's column maxima and sums complete
// before the ops that read them; it splits the column sticks over `cores` (cores32: 32), or the
// most cores below that divide them evenly.
void schedule_softmax_dim0(SoftmaxKernel &k, const std::string &name, const MachineDesc &m, int cores) {
    Var x = k.x, y = k.y, xo("xo"), xi("xi"), yo("yo"), yi("yi");
    const bool stage4 = name == "stage4" || name == "cores32" || name == "phased";
    if (name == "cores32" || name == "phased") cores = 32;
    if (!stage4) cores = 1;
    const int lanes = int(m.stick_bytes / 2);
    const int sticks = (k.cols + lanes - 1) / lanes;
    if (!stage4) {
        // Row tiles: each op's input and output tiles double-buffered (fp16, four tiles), beside
        // stage 3's e (the whole tensor in LX), within the free LX.
        const int64_t row_bytes = int64_t(sticks) * m.stick_bytes;
        const int64_t resident = name == "stage3" ? row_bytes * k.rows : 0;
        int tile = std::min(kMaxTileRows, k.rows);
        while (tile > 1 && resident + 4 * row_bytes * tile > m.lx_usable_bytes) tile /= 2;
        // A tensor Func: row tiles, the whole row vectorized.
        auto tensor = [&](Func f) {
            SpyreSchedule sc = schedule(f, m);
            sc.split(y, yo, yi, tile);
            sc.stick_vectorize(x, sticks);
            return sc;
        };
        // A column vector: its update folds the rows of each tile of the input.
        auto columns = [&](Func f) {
            SpyreSchedule sc = schedule(f, m);
            sc.stick_vectorize(x, f.output_types()[0] == Float(32) ? 2 * sticks : sticks);
            RVar r(f.update().get_schedule().rvars()[0].var);
            RVar ro("ro"), ri("ri");
            f.update().split(r, ro, ri, tile);
            return sc;
        };
        if (name == "stage1") {
            for (Func f : {k.mx, k.s}) columns(f).device_root();
            for (Func f : {k.t, k.e}) tensor(f).device_root();
            tensor(k.out);
        } else if (name == "stage2") {
            for (Func f : {k.mx, k.s}) columns(f).scratchpad_root();
            for (Func f : {k.t, k.e}) tensor(f).device_root();
            tensor(k.out);
        } else if (name == "stage3") {
            for (Func f : {k.mx, k.s}) columns(f).scratchpad_root();
            tensor(k.e).scratchpad_root();
            tensor(k.out);
        } else {
            throw_unknown("softmax", "schedule", name, softmax_schedules());
        }
        return;
    }
    // Whole sticks of columns per core, the same number on every core (as torch-spyre divides work):
    // the most cores up to the request that divide the sticks.
    cores = std::max(1, std::min(cores, sticks));
    while (sticks % cores) cores--;
    const int core_sticks = sticks / cores;
    // LX per column of a strip: stage 4 keeps the staged input, e and the output tile, each fp16
    // and double-buffered. The strip is the most sticks that divide a core's share and fit.
    const int64_t bytes_per_col = int64_t(k.rows) * 2 * 3 * 2;
    int w = 1;
    for (int d = core_sticks; d >= 1; d--)
        if (core_sticks % d == 0 && int64_t(d) * lanes * bytes_per_col <= m.lx_usable_bytes) {
            w = d;
            break;
        }
    const int strips = (sticks + w - 1) / w;
    // The output: strips of w sticks (the last one rounded up into the stick padding), then the
    // rows, then the strip's sticks.
    k.out.split(x, xo, xi, w * lanes, TailStrategy::RoundUp);
    SpyreSchedule o = schedule(k.out, m);
    o.stick_vectorize(xi, w);
    k.out.reorder(xi, y, xo);
    if (cores > 1) o.ring_split(xo, cores, strips);
    stage_all_in_lx(k.in, k.out, xo, m);
    // The column vectors (the maxima, the fp32 sums) stream w sticks of the input's columns per row.
    for (Func f : {k.mx, k.s})
        schedule(f, m).scratchpad_store_at(k.out, xo).stick_vectorize(x, f.output_types()[0] == Float(32) ? 2 * w : w);
    schedule(k.e, m).scratchpad_store_at(k.out, xo).stick_vectorize(x, w);
}
}  // namespace

const std::vector<std::string> &softmax_schedules() {
    static const std::vector<std::string> names = {"stage1", "stage2", "stage3", "stage4", "cores32", "phased"};
    return names;
}

void schedule_softmax_cpu(SoftmaxKernel &k) {
    for (Func f : {k.mx, k.t, k.e, k.s}) f.compute_root();
}

namespace {
// LX per element of a stage-4 tile: the double-buffered fp16 input and output and e.
constexpr int64_t kSoftmaxLxBytesPerElem = 16;
}

void schedule_softmax(SoftmaxKernel &k, const std::string &name, const MachineDesc &m, int cores) {
    if (k.dim == 0) return schedule_softmax_dim0(k, name, m, cores);
    Var x = k.x, y = k.y, yo("yo"), yi("yi"), xo("xo"), xi("xi");
    if (name == "cores32" || name == "phased") cores = 32;
    // Fewer rows than cores take a core each; more that do not divide evenly split unevenly, the
    // last core taking fewer rows.
    cores = std::max(1, std::min(cores, k.rows));
    const int lanes = int(m.stick_bytes / 2);
    // stage3 keeps all of e in LX, for a whole core's rows; when that cannot fit, e (and the row
    // maxima and sums) live per row tile instead, as stage 4 does without staging the input once.
    const bool e_fits = int64_t(k.cols + lanes) * ((k.rows + cores - 1) / cores) * 2 <= m.lx_usable_bytes / 2;
    const bool stage3_tiled = name == "stage3" && !e_fits;
    // IBM's placements (stage1-3) keep their 64-row tiles; the LX-tiled schedules fit the width.
    const bool lx_tiled = name == "stage4" || name == "cores32" || name == "phased" || stage3_tiled;
    const int tile = lx_tiled ? fit_tile_rows(k.rows, k.cols, cores, kMaxTileRows, kSoftmaxLxBytesPerElem, m)
                              : std::max(1, std::min(kMaxTileRows, k.rows / cores));
    // A 64-row tile of a wide row is more than LX holds for one op's input and output tiles, double
    // buffered: the passes of stage1-3 then take column chunks of whole sticks (the row maxima and
    // sums stay whole rows, which is what keeps their tiles whole sticks of rows in device memory).
    int col_chunk = k.cols;
    if (!lx_tiled && k.cols % lanes == 0) {
        const int64_t bytes_per_col = int64_t(tile) * 2 * 2 * 2;  // fp16, input and output, two copies
        const int sticks = k.cols / lanes;
        for (int d = sticks; d >= 1; d--)
            if (sticks % d == 0 && int64_t(d) * lanes * bytes_per_col <= m.lx_usable_bytes) {
                col_chunk = d * lanes;
                break;
            }
    }
    auto tiled = [&](Func f, bool row_func) {
        SpyreSchedule s = schedule(f, m);
        if (cores > 1) s.ring_split(y, cores, k.rows);
        s.split(y, yo, yi, tile);
        if (row_func) return s;
        if (col_chunk < k.cols) {
            s.split(x, xo, xi, col_chunk).stick_vectorize(xi);
            f.reorder(xi, yi, xo, yo);
        } else {
            s.stick_vectorize(x);
        }
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
    } else if (name == "stage3" && !stage3_tiled) {
        // x - max and exp are computed in LX (t fused into e, the tensor kept in LX).
        for (Func f : {k.mx, k.s}) tiled(f, true).scratchpad_root();
        tiled(k.e, false).scratchpad_root();
        tiled(k.out, false);
    } else if (name == "stage4" || name == "cores32" || name == "phased" || stage3_tiled) {
        // The input is copied into LX once, a tile at a time, and every op works on the tile there.
        // phased: the cores load, compute and store each tile in lockstep (dma_phases), so device
        // memory never mixes reads and writes.
        SpyreSchedule o = tiled(k.out, false);
        // (Only where every core meets as many barriers as the others: a barrier waits for all.)
        if (name == "phased" && phases_agree(k.rows, cores, tile)) o.dma_phases(yo);
        if (!stage3_tiled) stage_all_in_lx(k.in, k.out, yo, m);
        for (Func f : {k.mx, k.s}) schedule(f, m).scratchpad_store_at(k.out, yo);
        schedule(k.e, m).scratchpad_store_at(k.out, yo).stick_vectorize(x);
    } else {
        throw_unknown("softmax", "schedule", name, softmax_schedules());
    }
}

}  // namespace spyre
