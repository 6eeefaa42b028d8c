#include "fused_add_rmsnorm.h"

#include "directives.h"
#include "known_names.h"
#include "tile_rows.h"

namespace spyre {

using namespace Halide;

namespace {
// LX per column of a tile row: the norm's fp16 input and output, double-buffered, and fp32
// temporaries, as the norms of norms.cpp.
constexpr int64_t kFusedAddLxBytesPerElem = 20;
}  // namespace

FusedAddRmsNormKernel make_fused_add_rmsnorm(int cols, int rows, float eps) {
    FusedAddRmsNormKernel k;
    k.cols = cols;
    k.rows = rows;
    k.eps = eps;
    k.in = ImageParam(Float(16), 2, "in");
    k.residual = ImageParam(Float(16), 2, "residual");
    k.gamma = ImageParam(Float(16), 1, "gamma");
    k.x = Var("x");
    k.y = Var("y");
    Var x = k.x, y = k.y;
    RDom r(0, cols, "r");
    k.added = Func("added");
    k.sum_x2 = Func("sum_x2");
    k.rms = Func("rms");
    k.norm = Func("norm");
    k.added(x, y) = k.in(x, y) + k.residual(x, y);
    Expr s = cast<float>(k.added(r, y));
    k.sum_x2(y) = Halide::sum(s * s);
    k.rms(y) = sqrt(k.sum_x2(y) / float(cols) + eps);
    k.norm(x, y) = cast<float16_t>(cast<float>(k.added(x, y)) / k.rms(y) * cast<float>(k.gamma(x)));
    return k;
}

const std::vector<std::string> &fused_add_rmsnorm_schedules() {
    static const std::vector<std::string> names = {"tiles", "cores32"};
    return names;
}

void schedule_fused_add_rmsnorm(FusedAddRmsNormKernel &k, const std::string &name, const MachineDesc &m) {
    check_known("fused_add_rmsnorm", "schedule", name, fused_add_rmsnorm_schedules());
    Var x = k.x, y = k.y, yo("yo"), yi("yi");
    const int cores = name == "cores32" ? 32 : 1;
    SpyreSchedule add = schedule(k.added, m), norm = schedule(k.norm, m);
    // Both outputs split their rows alike, so that each core reads back only the sums it wrote.
    if (cores > 1) {
        add.ring_split(y, cores);
        norm.ring_split(y, cores);
    }
    const int tile = fit_tile_rows(k.rows, k.cols, cores, kMaxTileRows, kFusedAddLxBytesPerElem, m);
    add.stick_vectorize(x);
    norm.split(y, yo, yi, tile).stick_vectorize(x);
    for (Func f : {k.sum_x2, k.rms}) schedule(f, m).scratchpad_store_at(k.norm, yo);
    // The sums read back once per row tile into LX, where the sum of squares and the norm both
    // read them (each would read device memory otherwise).
    Func added_lx = k.added.in();
    added_lx.compute_at(k.norm, yo).store_in(MemoryType::VTCM);
    schedule(added_lx, m).stick_vectorize(added_lx.args()[0]);
}

}  // namespace spyre
