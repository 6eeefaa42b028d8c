#include "matmul.h"

#include <algorithm>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"
#include "matmul_stage.h"

namespace spyre {

using namespace Halide;

MatmulKernel make_bmm(int batch, int rows, int inner, int cols) {
    MatmulKernel k;
    k.batch = batch, k.rows = rows, k.inner = inner, k.cols = cols;
    k.a = ImageParam(Float(16), 3, "a");
    k.w = ImageParam(Float(16), 2, "w");
    k.n = Var("n"), k.m = Var("m"), k.b = Var("b");
    k.k = RDom(0, inner, "k");
    k.acc = Func("acc");
    k.out = Func("bmm");
    Var n = k.n, m = k.m, b = k.b;
    k.acc(n, m, b) = 0.0f;
    k.acc(n, m, b) += cast<float>(k.a(k.k, m, b)) * cast<float>(k.w(n, k.k));
    k.out(n, m, b) = cast<float16_t>(k.acc(n, m, b));
    return k;
}

MatmulKernel make_linear(int rows, int inner, int cols) {
    MatmulKernel k = make_bmm(1, rows, inner, cols);
    k.bias = ImageParam(Float(16), 1, "bias");
    k.out = Func("linear");
    k.out(k.n, k.m, k.b) = cast<float16_t>(k.acc(k.n, k.m, k.b) + cast<float>(k.bias(k.n)));
    return k;
}

const std::vector<std::string> &bmm_schedules() {
    static const std::vector<std::string> names = {"pe", "pe_ring", "vector", "cpu"};
    return names;
}


void schedule_bmm(MatmulKernel &k, const std::string &name, int cores, const MachineDesc &machine) {
    if (name == "cpu") {
        k.acc.compute_root();
        return;
    }
    check_known("bmm", "schedule", name, bmm_schedules());
    MatmulStage st;
    st.what = "bmm";
    st.out = k.out, st.acc = k.acc, st.k = k.k, st.n = k.n, st.m = k.m, st.b = k.b;
    st.batch = k.batch, st.rows = k.rows, st.inner = k.inner, st.cols = k.cols;
    schedule_matmul_stage(st, name, cores, machine);
}

}  // namespace spyre
