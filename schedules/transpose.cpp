#include "transpose.h"

#include <algorithm>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"

namespace spyre {

using namespace Halide;

TransposeKernel make_transpose(int cols, int rows) {
    TransposeKernel k;
    k.cols = cols, k.rows = rows;
    k.in = ImageParam(Float(16), 2, "in");
    k.x = Var("x"), k.y = Var("y");
    k.out = Func("transpose");
    k.out(k.x, k.y) = k.in(k.y, k.x);
    return k;
}

const std::vector<std::string> &transpose_schedules() {
    static const std::vector<std::string> names = {"tiles", "cores32"};
    return names;
}

void schedule_transpose(TransposeKernel &k, const std::string &name, const MachineDesc &m) {
    if (name != "tiles" && name != "cores32") throw_unknown("transpose", "schedule", name, transpose_schedules());
    const int lanes = int(m.stick_bytes / 2);
    // The input's rows become the output's sticks; a last stick of fewer rows would read rows past
    // the input's end (its layout pads the columns, not the rows).
    if (k.rows % lanes)
        throw_error("transpose: the input's ", k.rows, " rows are not whole sticks of ", lanes,
                    " (they become the output's stick dimension; a partial stick of rows is not supported yet)");
    // The output's rows are the input's stick dimension: a core takes whole sticks of them, so the
    // split uses the most cores (up to 32) that divide the rows into equal whole sticks.
    int cores = 1;
    if (name == "cores32")
        for (int c = std::min<int>(32, int(m.cores)); c > 1; c--)
            if (k.cols % c == 0 && (k.cols / c) % lanes == 0) {
                cores = c;
                break;
            }
    const int share = k.cols / cores;
    // Rows per tile: the staged input strip (lanes x rows) and the output tile (rows x lanes), two
    // copies each, in the usable LX; a multiple of a stick that divides the core's share, or all of it.
    const int64_t fit = m.lx_usable_bytes / (4 * int64_t(lanes) * 2);
    int tile = share;
    if (share > fit && share % lanes == 0) {
        tile = lanes;
        for (int t = lanes; t <= std::min<int64_t>(share, fit); t += lanes)
            if (share % t == 0) tile = t;
    }
    Var x = k.x, y = k.y, xo("xo"), xi("xi"), yo("yo"), yi("yi");
    SpyreSchedule s = schedule(k.out, m);
    if (cores > 1) s.ring_split(y, cores, k.cols);
    // One output stick per row, the rows of a tile innermost: each tile is one VTRANSPOSE.
    s.split(x, xo, xi, lanes).split(y, yo, yi, tile);  // both divide: no tails
    k.out.reorder(xi, yi, xo, yo);
    s.stick_vectorize(xi);
}

}  // namespace spyre
