#include "conv1d.h"

#include "device/error.h"
#include "directives.h"
#include "known_names.h"
#include "tile_rows.h"

namespace spyre {

using namespace Halide;

namespace {
// LX per element of a tile row: the double-buffered fp16 input and output, and the shifted reads'
// and products' fp16 temporaries (from the compiler's LX plan at 8192 columns, rounded up).
constexpr int64_t kConv1dLxBytesPerElem = 20;
constexpr int kMaxTaps = 16;
}  // namespace

Conv1dKernel make_conv1d(int seq, int channels, int taps, bool causal) {
    if (taps < 1 || taps > kMaxTaps) throw_error("conv1d: taps=", taps, " is outside 1..", kMaxTaps);
    Conv1dKernel k;
    k.seq = seq, k.channels = channels, k.taps = taps, k.causal = causal;
    k.in = ImageParam(Float(16), 2, "in");
    k.w = ImageParam(Float(16), 2, "w");
    k.t = Var("t"), k.c = Var("c");
    // Zero outside the sequence only; the bounds are the kernel's shape (a generator rebinds in).
    Func e = BoundaryConditions::constant_exterior(k.in, cast<float16_t>(0), {{0, seq}, {Expr(), Expr()}});
    const int first = -(taps / 2);  // centred: tap 0 reads t - K/2
    Expr sum;
    for (int j = 0; j < taps; j++) {
        // Causal: tap j weighs in(t - j); centred: in(t + j - K/2).
        Expr term = k.w(k.c, j) * e(causal ? k.t - j : k.t + first + j, k.c);
        sum = j == 0 ? term : sum + term;
    }
    k.out = Func("conv1d");
    k.out(k.t, k.c) = sum;
    return k;
}

const std::vector<std::string> &conv1d_schedules() {
    static const std::vector<std::string> names = {"root", "tiles", "cores32"};
    return names;
}

void schedule_conv1d(Conv1dKernel &k, const std::string &name, const MachineDesc &m) {
    check_known("conv1d", "schedule", name, conv1d_schedules());
    Var t = k.t, c = k.c, co("co"), ci("ci");
    SpyreSchedule s = schedule(k.out, m);
    // The weights whole in each core's LX: the channels are their stick dimension, which a tile or
    // a core's share of channels would cut into part-sticks (and one channel's weight, a scalar,
    // into an element that is not on a stick boundary).
    Func wl = k.w.in(k.out);
    wl.compute_root().store_in(MemoryType::VTCM).vectorize(wl.args()[0], int(m.stick_bytes / 2), TailStrategy::RoundUp);
    if (name == "root") {
        s.stick_vectorize(t);
        return;
    }
    int cores = 1;
    if (name == "cores32") {
        cores = std::min<int>(32, int(m.cores));
        s.ring_split(c, cores);
    }
    // Whole sequences per tile: the zero padding is inside the tile, so it needs no halo DMA.
    const int tile = fit_tile_rows(k.channels, k.seq, cores, kMaxTileRows, kConv1dLxBytesPerElem, m);
    s.split(c, co, ci, tile).stick_vectorize(t);
    stage_all_in_lx(k.in, k.out, co, m);
}

}  // namespace spyre
