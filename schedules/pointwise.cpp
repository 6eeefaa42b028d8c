#include "pointwise.h"
#include "tile_rows.h"

#include <algorithm>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"

namespace spyre {

using namespace Halide;

namespace {



}  // namespace

const std::vector<std::string> &pointwise_ops() {
    static const std::vector<std::string> ops = {"add_mul", "fma", "relu", "gelu", "silu", "exp"};
    return ops;
}

PointwiseKernel make_pointwise(const std::string &op, Type type, int cols, int rows) {
    const auto &ops = pointwise_ops();
    check_known("pointwise", "op", op, ops);
    if (type != Float(16) && type != Float(32))
        throw_error("pointwise: type ", type, " is not supported (float16 and float32 are)");
    PointwiseKernel k;
    k.op = op;
    k.type = type;
    k.cols = cols;
    k.rows = rows;
    k.x = Var("x");
    k.y = Var("y");
    Var x = k.x, y = k.y;
    // Constants of the kernel's type: a bare float literal would widen an fp16 expression to fp32.
    auto c = [&](double v) { return cast(type, Expr(float(v))); };
    k.out = Func("pointwise_" + op);
    if (op == "fma") {
        ImageParam a(type, 2, "a"), b(type, 2, "b"), cc(type, 2, "c");
        k.inputs = {a, b, cc};
        k.out(x, y) = a(x, y) * b(x, y) + cc(x, y);
        return k;
    }
    ImageParam in(type, 2, "in");
    k.inputs = {in};
    Expr v = in(x, y);
    Expr e;
    if (op == "add_mul") {
        e = v * v + v * c(2);
    } else if (op == "relu") {
        e = max(v, c(0));
    } else if (op == "gelu") {
        const double sqrt_2_over_pi = 0.79788456080286535588;
        Expr inner = c(sqrt_2_over_pi) * (v + c(0.044715) * (v * v * v));
        e = c(0.5) * v * (c(1) + tanh(inner));
    } else if (op == "silu") {
        e = v / (c(1) + exp(-v));
    } else {  // "exp"
        e = exp(v);
    }
    k.out(x, y) = e;
    return k;
}

const std::vector<std::string> &pointwise_schedules() {
    static const std::vector<std::string> names = {"root", "tiles", "cores32", "phased"};
    return names;
}

void schedule_pointwise(PointwiseKernel &k, const std::string &name, const MachineDesc &m) {
    Var x = k.x, y = k.y, yo("yo"), yi("yi");
    if (name == "root") {
        schedule(k.out, m).stick_vectorize(x);
    } else if (name == "tiles" || name == "cores32" || name == "phased") {
        SpyreSchedule s = schedule(k.out, m);
        int rows = k.rows;
        if (name != "tiles") {
            s.ring_split(y, 32);
            rows = (k.rows + 31) / 32;  // each core's share
        }
        const int tile = std::max(1, std::min(kMaxTileRows, rows));
        s.split(y, yo, yi, tile).stick_vectorize(x);
        // phased: cores32 with the cores loading, computing and storing each tile in lockstep
        // (dma_phases), where every core runs the same number of whole tiles.
        if (name == "phased" && k.rows % 32 == 0 && rows % tile == 0) s.dma_phases(yo);
        for (ImageParam &in : k.inputs) stage_all_in_lx(in, k.out, yo, m);
    } else {
        throw_unknown("pointwise", "schedule", name, pointwise_schedules());
    }
}

}  // namespace spyre
