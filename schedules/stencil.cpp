#include "stencil.h"

#include "directives.h"
#include "known_names.h"
#include "tile_rows.h"

namespace spyre {

using namespace Halide;

namespace {
// LX per column of a tile row: the double-buffered fp16 input and output and the three shifted
// reads' fp16 temporaries (measured from the compiler's LX plan at 8192 columns, rounded up).
constexpr int64_t kStencilLxBytesPerElem = 16;
}  // namespace

StencilKernel make_stencil(int cols, int rows) {
    StencilKernel k;
    k.cols = cols, k.rows = rows;
    k.in = ImageParam(Float(16), 2, "in");
    k.x = Var("x"), k.y = Var("y");
    // Constant bounds (the kernel's shape), not the ImageParam's: a generator rebinds the input.
    Func e = BoundaryConditions::repeat_edge(k.in, {{0, cols}, {0, rows}});
    auto h = [](float v) { return cast<float16_t>(v); };
    k.out = Func("stencil");
    k.out(k.x, k.y) = (e(k.x - 1, k.y) + h(2) * e(k.x, k.y) + e(k.x + 1, k.y)) * h(0.25f);
    return k;
}

const std::vector<std::string> &stencil_schedules() {
    static const std::vector<std::string> names = {"root", "tiles", "cores32"};
    return names;
}

void schedule_stencil(StencilKernel &k, const std::string &name, const MachineDesc &m) {
    check_known("stencil", "schedule", name, stencil_schedules());
    Var x = k.x, y = k.y, yo("yo"), yi("yi");
    SpyreSchedule s = schedule(k.out, m);
    if (name == "root") {
        s.stick_vectorize(x);
        return;
    }
    int cores = 1;
    if (name == "cores32") {
        cores = std::min<int>(32, int(m.cores));
        s.ring_split(y, cores);
    }
    // Whole rows per tile: a row's edges are inside the tile, so the boundary needs no halo DMA.
    const int tile = fit_tile_rows(k.rows, k.cols, cores, kMaxTileRows, kStencilLxBytesPerElem, m);
    s.split(y, yo, yi, tile).stick_vectorize(x);
    stage_all_in_lx(k.in, k.out, yo, m);
}

}  // namespace spyre
