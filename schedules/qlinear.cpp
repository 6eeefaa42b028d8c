#include "qlinear.h"

#include "directives.h"
#include "fp8.h"
#include "known_names.h"
#include "matmul_stage.h"

namespace spyre {

using namespace Halide;

QLinearKernel make_qlinear(int rows, int inner, int cols, QuantFormat format) {
    QLinearKernel k;
    k.rows = rows, k.inner = inner, k.cols = cols;
    const bool fp8 = format == QuantFormat::Fp8E4M3;
    k.a = ImageParam(Float(16), 2, "a");
    k.w = ImageParam(fp8 ? UInt(8) : Int(8), 2, "w");
    k.scale = ImageParam(Float(16), 1, "scale");
    k.n = Var("n"), k.m = Var("m");
    k.k = RDom(0, inner, "k");
    k.wd = Func("wd");
    k.acc = Func("acc");
    k.out = Func("qlinear");
    Var n = k.n, m = k.m, kk("kk");
    k.wd(n, kk) = fp8 ? from_fp8(k.w(n, kk), Fp8Format::E4M3) : cast<float16_t>(k.w(n, kk));
    k.acc(n, m) = 0.0f;
    k.acc(n, m) += cast<float>(k.wd(n, k.k)) * cast<float>(k.a(k.k, m));
    k.out(n, m) = cast<float16_t>(k.acc(n, m) * cast<float>(k.scale(n)));
    return k;
}

const std::vector<std::string> &qlinear_schedules() {
    static const std::vector<std::string> names = {"pe", "pe_ring", "vector", "cpu"};
    return names;
}

void schedule_qlinear(QLinearKernel &k, const std::string &name, int cores, const MachineDesc &machine) {
    if (name == "cpu") {
        k.acc.compute_root();
        return;
    }
    check_known("qlinear", "schedule", name, qlinear_schedules());
    MatmulStage st;
    st.what = "qlinear";
    st.out = k.out, st.acc = k.acc, st.k = k.k, st.n = k.n, st.m = k.m;
    st.rows = k.rows, st.inner = k.inner, st.cols = k.cols;
    st.w_bytes = 1;
    const std::string k_panel = schedule_matmul_stage(st, name, cores, machine);
    // Each K panel of W is dequantized where the stage streams K (its loop "ko"): int8 sticks of
    // 128 elements become two fp16 sticks, so its vectors are two sticks wide.
    k.wd.compute_at(k.acc, RVar(k_panel)).store_in(MemoryType::VTCM);
    spyre::schedule(k.wd, machine).stick_vectorize(k.n, 2);
    // a's panel is copied into LX at the same loop, ahead of the dequantization, so that both
    // panels lead the loop's body: the pipeline prefetches them together and pe_ring can share
    // a's panel (staged by the back end after wd's nest, it would be neither). Halide orders the
    // Funcs computed at one loop by a depth-first walk of the call graph that visits callees in
    // name order (src/RealizationOrder.cpp), so a's copy ("a_...") comes before wd; the pe_ring
    // test (tests/compiler/test_qlinear.cpp) checks that the ring carries panels.
    Func ap = k.a.in(k.acc);
    ap.compute_at(k.acc, RVar(k_panel)).store_in(MemoryType::VTCM);
    spyre::schedule(ap, machine).stick_vectorize(ap.args()[0]);
}

}  // namespace spyre
