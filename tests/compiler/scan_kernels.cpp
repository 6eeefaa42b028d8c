#include "scan_kernels.h"

namespace spyre::testing {

using namespace Halide;

Algorithm column_scan(int rows) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        RDom r(1, rows - 1, "r");
        Func acc("acc"), out("out");
        acc(x, y) = in(x, y);
        acc(x, r) = acc(x, r - 1) + in(x, r);
        out(x, y) = acc(x, y);
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"acc", acc}};
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

Schedule column_tiles(int cols, int cores) {
    return [=](Kernel &k) {
        Var x = k.vars.at("x"), y = k.vars.at("y"), xo("xo"), xi("xi");
        Func acc = k.funcs.at("acc");
        const int tiles = (cols + 63) / 64;
        k.output.split(x, xo, x, 64, TailStrategy::GuardWithIf).reorder(x, y, xo);
        spyre::schedule(k.output).ring_split(xo, cores, tiles).stick_vectorize(x);
        spyre::stage_all_in_lx(k.inputs[0], k.output, xo);
        spyre::schedule(acc).scratchpad_store_at(k.output, xo);
        acc.vectorize(x, 64, TailStrategy::RoundUp);
        acc.update().split(x, xo, xi, 64, TailStrategy::RoundUp).reorder(xi, acc.rvars(0)[0], xo).vectorize(xi);
    };
}

}  // namespace spyre::testing
