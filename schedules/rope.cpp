#include "rope.h"

#include "device/error.h"
#include "directives.h"
#include "known_names.h"
#include "tile_rows.h"

namespace spyre {

using namespace Halide;

namespace {
// LX per element of a tile row: the double-buffered input and output, the tables' rows and the
// rotation's temporaries (fp16; from the compiler's LX plan, rounded up).
constexpr int64_t kRopeLxBytesPerElem = 20;
}  // namespace

RopeKernel make_rope(int cols, int seq, int head_dim, RopeStyle style, int in_cols, int in_offset) {
    if (head_dim < 64 || head_dim % 64)
        throw_error("rope: head_dim=", head_dim, " is not a positive multiple of 64 (whole sticks)");
    if (cols % head_dim) throw_error("rope: ", cols, " columns are not whole heads of head_dim=", head_dim);
    if (in_cols && (in_offset < 0 || in_offset % head_dim || in_offset + cols > in_cols))
        throw_error("rope: columns ", in_offset, " to ", in_offset + cols, " are not whole heads of an input of ",
                    in_cols, " columns");
    RopeKernel k;
    k.heads = cols / head_dim, k.head_dim = head_dim, k.seq = seq;
    k.in = ImageParam(Float(16), 2, "in");
    k.cos = ImageParam(Float(16), 2, "cos");
    k.sin = ImageParam(Float(16), 2, "sin");
    k.x = Var("x"), k.p = Var("p");
    Var x = k.x, p = k.p;
    const int half = head_dim / 2;
    Expr i = x % head_dim;
    k.out = Func("rope");
    // Column c of the rotated tensor (of the input's window).
    auto in = [&](Expr c) { return k.in(in_offset + c, p); };
    if (style == RopeStyle::Interleaved) {
        // The partners clamped to the tensor, as below (cols is even, so they never bind).
        Expr c = in(x) * k.cos(i, p);
        k.out(x, p) = select(x % 2 == 0, c - in(min(x + 1, cols - 1)) * k.sin(i, p), c + in(max(x - 1, 0)) * k.sin(i, p));
        return k;
    }
    // The partners clamped to the tensor: Halide's bounds inference takes both sides of the select
    // (the clamps never bind where the select takes them).
    Expr rot = select(i < half, -in(min(x + half, cols - 1)), in(max(x - half, 0)));
    k.out(x, p) = in(x) * k.cos(i, p) + rot * k.sin(i, p);
    return k;
}

const std::vector<std::string> &rope_schedules() {
    static const std::vector<std::string> names = {"root", "tiles", "cores32"};
    return names;
}

void schedule_rope(RopeKernel &k, const std::string &name, const MachineDesc &m) {
    check_known("rope", "schedule", name, rope_schedules());
    Var x = k.x, p = k.p, h("h"), i("i"), po("po"), pi("pi");
    SpyreSchedule s = schedule(k.out, m);
    // x by heads: x % head_dim is the inner variable, and the rotation's condition a window of it.
    s.split(x, h, i, k.head_dim);
    if (name == "root") {
        s.stick_vectorize(i);
        return;
    }
    int cores = 1;
    if (name == "cores32") {
        cores = std::min<int>(32, int(m.cores));
        s.ring_split(p, cores);
    }
    const int tile = fit_tile_rows(k.seq, k.heads * k.head_dim, cores, kMaxTileRows, kRopeLxBytesPerElem, m);
    s.split(p, po, pi, tile).stick_vectorize(i);
    for (ImageParam in : {k.in, k.cos, k.sin}) stage_all_in_lx(in, k.out, po, m);
}

}  // namespace spyre
