#include "gated_mlp.h"

#include "directives.h"
#include "known_names.h"
#include "matmul_stage.h"

namespace spyre {

using namespace Halide;

GatedMlpKernel make_gated_mlp(int dim, int hidden, int rows) {
    GatedMlpKernel k;
    k.dim = dim, k.hidden = hidden, k.rows = rows;
    k.x = ImageParam(Float(16), 2, "x");
    k.w1 = ImageParam(Float(16), 2, "w1");
    k.w3 = ImageParam(Float(16), 2, "w3");
    k.w2 = ImageParam(Float(16), 2, "w2");
    k.n = Var("n"), k.m = Var("m");
    k.r1 = RDom(0, dim, "r1");
    k.r2 = RDom(0, hidden, "r2");
    Var n = k.n, m = k.m;
    k.gate = Func("gmlp_gate");
    k.up = Func("gmlp_up");
    k.h = Func("gmlp_h");
    k.down = Func("gmlp_down");
    k.out = Func("gated_mlp");
    k.gate(n, m) = 0.0f;
    k.gate(n, m) += cast<float>(k.x(k.r1, m)) * cast<float>(k.w1(n, k.r1));
    k.up(n, m) = 0.0f;
    k.up(n, m) += cast<float>(k.x(k.r1, m)) * cast<float>(k.w3(n, k.r1));
    Expr g = k.gate(n, m);
    k.h(n, m) = cast<float16_t>(g / (1.0f + exp(-g)) * k.up(n, m));
    k.down(n, m) = 0.0f;
    k.down(n, m) += cast<float>(k.h(k.r2, m)) * cast<float>(k.w2(n, k.r2));
    k.out(n, m) = cast<float16_t>(k.down(n, m));
    return k;
}

const std::vector<std::string> &gated_mlp_schedules() {
    static const std::vector<std::string> names = {"tiled", "pe_ring", "cpu"};
    return names;
}

void schedule_gated_mlp(GatedMlpKernel &k, const std::string &name, int cores, const MachineDesc &machine) {
    if (name == "cpu") {
        for (Func f : {k.gate, k.up, k.h, k.down}) f.compute_root();
        return;
    }
    check_known("gated_mlp", "schedule", name, gated_mlp_schedules());
    const std::string mode = name == "tiled" ? "pe" : "pe_ring";
    schedule(k.h, machine).device_root();
    MatmulStage upper;
    upper.what = "gated_mlp gate and up projections";
    upper.out = k.h, upper.acc = k.gate, upper.more_accs = {k.up}, upper.k = k.r1, upper.n = k.n, upper.m = k.m;
    upper.rows = k.rows, upper.inner = k.dim, upper.cols = k.hidden;
    // silu(g) * u needs fp32 temporaries; instruction selection streams them through LX in
    // chunks when a whole tile's do not fit, so the tiles need not leave room for them.
    schedule_matmul_stage(upper, mode, cores, machine);
    MatmulStage lower;
    lower.what = "gated_mlp down projection";
    lower.out = k.out, lower.acc = k.down, lower.k = k.r2, lower.n = k.n, lower.m = k.m;
    lower.rows = k.rows, lower.inner = k.hidden, lower.cols = k.dim;
    schedule_matmul_stage(lower, mode, cores, machine);
}

}  // namespace spyre
