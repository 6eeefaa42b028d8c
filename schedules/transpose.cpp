#include "transpose.h"

#include <algorithm>
#include <vector>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"
#include "tile_rows.h"

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
    // A tile is `tile` output rows (input columns, whole sticks of the core's share) of `sticks`
    // sticks each (input rows, as many as LX holds: tile_rows.h): its load runs are `tile`
    // elements long and its store runs `sticks` sticks. The tile is the one with the least
    // device-memory work per byte moved under the machine's run overheads.
    std::vector<int> tiles;
    for (int t = lanes; t <= share; t += lanes)
        if (share % t == 0) tiles.push_back(t);
    if (tiles.empty()) tiles.push_back(share);  // a share of part sticks: all of it
    int tile = tiles[0], sticks = 1;
    double best = 0;
    for (int t : tiles) {
        const int n = transpose_row_sticks(k.rows / lanes, t, m);
        const double work = (1 + m.dram_read_run_overhead_bytes / (2.0 * t)) +
                            (1 + m.dram_write_run_overhead_bytes / double(n * m.stick_bytes));
        if (best == 0 || work < best) best = work, tile = t, sticks = n;
    }
    Var x = k.x, y = k.y, xo("xo"), xi("xi"), yo("yo"), yi("yi");
    SpyreSchedule s = schedule(k.out, m);
    if (cores > 1) s.ring_split(y, cores, k.cols);
    // The output row's sticks inside the tile's rows: each tile is one VTRANSPOSE.
    s.split(x, xo, xi, sticks * lanes).split(y, yo, yi, tile);  // both divide: no tails
    k.out.reorder(xi, yi, xo, yo);
    s.stick_vectorize(xi);
}

}  // namespace spyre
