#include "norms.h"

#include <algorithm>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"
#include "tile_rows.h"

namespace spyre {

using namespace Halide;

namespace {


constexpr int64_t kNormsLxBytesPerElem = 20;

}  // namespace

const std::vector<std::string> &norm_ops() {
    static const std::vector<std::string> ops = {"layernorm", "rmsnorm"};
    return ops;
}

NormKernel make_norm(const std::string &op, int cols, int rows, float eps) {
    const auto &ops = norm_ops();
    check_known("norm", "op", op, ops);
    NormKernel k;
    k.op = op;
    k.cols = cols;
    k.rows = rows;
    k.eps = eps;
    k.x = Var("x");
    k.y = Var("y");
    Var x = k.x, y = k.y;
    RDom r(0, cols, "r");
    ImageParam in(Float(16), 2, "in"), gamma(Float(16), 1, "gamma");
    auto xf = [&](Expr i, Expr j) { return cast<float>(in(i, j)); };
    Expr n = Expr(float(cols));
    k.out = Func(op);
    // Each row sum is a Func of its own whose definition is just the reduction (so that its
    // accumulator folds into it); the division by cols and the rest are separate Funcs.
    if (op == "layernorm") {
        ImageParam beta(Float(16), 1, "beta");
        k.inputs = {in, gamma, beta};
        Func sum_x("sum_x"), mu("mu"), sum_d2("sum_d2"), rstd("rstd");
        sum_x(y) = sum(xf(r, y));
        mu(y) = sum_x(y) / n;
        Expr d = xf(r, y) - mu(y);
        sum_d2(y) = sum(d * d);
        rstd(y) = 1.0f / sqrt(sum_d2(y) / n + eps);
        k.out(x, y) = cast<float16_t>((xf(x, y) - mu(y)) * rstd(y) * cast<float>(gamma(x)) + cast<float>(beta(x)));
        k.stats = {{"sum_x", sum_x}, {"mu", mu}, {"sum_d2", sum_d2}, {"rstd", rstd}};
    } else {  // "rmsnorm"
        k.inputs = {in, gamma};
        Func sum_x2("sum_x2"), rms("rms");
        sum_x2(y) = sum(xf(r, y) * xf(r, y));
        rms(y) = sqrt(sum_x2(y) / n + eps);
        k.out(x, y) = cast<float16_t>(xf(x, y) / rms(y) * cast<float>(gamma(x)));
        k.stats = {{"sum_x2", sum_x2}, {"rms", rms}};
    }
    return k;
}

const std::vector<std::string> &norm_schedules() {
    static const std::vector<std::string> names = {"tiles", "cores32", "phased"};
    return names;
}

void schedule_norm(NormKernel &k, const std::string &name, const MachineDesc &m) {
    Var x = k.x, y = k.y, yo("yo"), yi("yi");
    if (name != "tiles" && name != "cores32" && name != "phased")
        throw_unknown("norm", "schedule", name, norm_schedules());
    SpyreSchedule s = schedule(k.out, m);
    int cores = 1;
    if (name == "cores32" || name == "phased") {
        s.ring_split(y, 32);
        cores = 32;
    }
    // A tile row costs about kNormsLxBytesPerElem bytes of LX per column (the double-buffered fp16 input
    // and output, fp32 expression temporaries; measured from the compiler's LX plan at 8192 columns).
    const int tile = fit_tile_rows(k.rows, k.cols, cores, kMaxTileRows, kNormsLxBytesPerElem, m);
    s.split(y, yo, yi, tile).stick_vectorize(x);
    // phased: cores32 with the cores loading, computing and storing each tile in lockstep
    // (dma_phases), where every core meets as many barriers as the others (tile_rows.h).
    if (name == "phased" && phases_agree(k.rows, cores, tile)) s.dma_phases(yo);
    stage_all_in_lx(k.inputs[0], k.out, yo, m);
    // gamma (and beta) are the same for every row: on 32 cores, each core stages them once, not
    // once per row tile (with an uneven split the tiles can be single rows).
    if (cores > 1)
        for (size_t i = 1; i < k.inputs.size(); i++) stage_all_in_lx(k.inputs[i], k.out, Var(y.name() + "_core"), m);
    for (auto &st : k.stats) schedule(st.second, m).scratchpad_store_at(k.out, yo);
}

}  // namespace spyre
