#include "mlp_block.h"

#include "directives.h"
#include "known_names.h"
#include "matmul_stage.h"

namespace spyre {

using namespace Halide;

std::vector<std::vector<int64_t>> MlpBlockKernel::input_shapes() const {
    return {{dim, rows}, {dim}, {hidden, dim}, {hidden, dim}, {dim, hidden}};
}

MlpBlockKernel make_mlp_block(int dim, int hidden, int rows, float eps) {
    MlpBlockKernel k;
    k.dim = dim, k.hidden = hidden, k.rows = rows;
    k.x = ImageParam(Float(16), 2, "x");
    k.g = ImageParam(Float(16), 1, "g");
    k.w_gate = ImageParam(Float(16), 2, "w_gate");
    k.w_up = ImageParam(Float(16), 2, "w_up");
    k.w_down = ImageParam(Float(16), 2, "w_down");
    k.c = Var("c"), k.r = Var("r"), k.n = Var("n"), k.m = Var("m");
    k.kd = RDom(0, dim, "kd");
    k.kh = RDom(0, hidden, "kh");
    k.ss = Func("ss"), k.normed = Func("normed"), k.gate = Func("gate"), k.up = Func("up"), k.h = Func("h");
    k.down = Func("down"), k.out = Func("mlp_block");
    Var c = k.c, r = k.r, n = k.n, m = k.m;
    Expr xv = cast<float>(k.x(k.kd, r));
    k.ss(r) = sum(xv * xv);
    k.normed(c, r) = cast<float16_t>(cast<float>(k.x(c, r)) / sqrt(k.ss(r) / float(dim) + eps) * cast<float>(k.g(c)));
    k.gate(n, m) = 0.0f;
    k.gate(n, m) += cast<float>(k.normed(k.kd, m)) * cast<float>(k.w_gate(n, k.kd));
    k.up(n, m) = 0.0f;
    k.up(n, m) += cast<float>(k.normed(k.kd, m)) * cast<float>(k.w_up(n, k.kd));
    k.h(n, m) = cast<float16_t>(k.gate(n, m) / (1.0f + exp(-k.gate(n, m))) * k.up(n, m));
    k.down(n, m) = 0.0f;
    k.down(n, m) += cast<float>(k.h(k.kh, m)) * cast<float>(k.w_down(n, k.kh));
    k.out(n, m) = cast<float16_t>(k.down(n, m) + cast<float>(k.x(n, m)));
    return k;
}

const std::vector<std::string> &mlp_block_schedules() {
    static const std::vector<std::string> names = {"stages"};
    return names;
}

void schedule_mlp_block(MlpBlockKernel &k, const std::string &name, int cores, const MachineDesc &machine) {
    if (name == "cpu") {
        for (Func f : {k.ss, k.normed, k.gate, k.up, k.h, k.down}) f.compute_root();
        return;
    }
    check_known("mlp_block", "schedule", name, mlp_block_schedules());
    // The norm: its rows over the cores, each core's rows whole in LX with their sums of squares.
    const int norm_cores = std::min(cores, k.rows);
    schedule(k.normed, machine).device_root().ring_split(k.r, norm_cores, k.rows).stick_vectorize(k.c);
    schedule(k.ss, machine).scratchpad_store_at(k.normed, Var(k.r.name() + "_core"));
    schedule(k.h, machine).device_root();
    MatmulStage upper;
    upper.what = "mlp_block gate and up projections";
    upper.out = k.h, upper.acc = k.gate, upper.more_accs = {k.up}, upper.k = k.kd, upper.n = k.n, upper.m = k.m;
    upper.rows = k.rows, upper.inner = k.dim, upper.cols = k.hidden;
    schedule_matmul_stage(upper, "pe_ring", cores, machine);
    MatmulStage lower;
    lower.what = "mlp_block down projection";
    lower.out = k.out, lower.acc = k.down, lower.k = k.kh, lower.n = k.n, lower.m = k.m;
    lower.rows = k.rows, lower.inner = k.hidden, lower.cols = k.dim;
    schedule_matmul_stage(lower, "pe_ring", cores, machine);
}

}  // namespace spyre
