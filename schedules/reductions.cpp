#include "reductions.h"

#include <algorithm>

#include "device/error.h"
#include "directives.h"
#include "known_names.h"

namespace spyre {

using namespace Halide;

namespace {
}  // namespace

const std::vector<std::string> &reduction_ops() {
    static const std::vector<std::string> ops = {"max", "sum", "mean"};
    return ops;
}

Type reduction_output_type(const std::string &op, Type type) { return op == "sum" ? Float(32) : type; }

ReductionKernel make_reduction(const std::string &op, Type type, int cols, int rows) {
    const auto &ops = reduction_ops();
    check_known("reduction", "op", op, ops);
    if (type != Float(16) && type != Float(32))
        throw_error("reduction: type ", type, " is not supported (float16 and float32 are)");
    ReductionKernel k;
    k.op = op;
    k.type = type;
    k.cols = cols;
    k.rows = rows;
    k.in = ImageParam(type, 2, "in");
    k.y = Var("y");
    Var y = k.y;
    RDom r(0, cols, "r");
    k.out = Func("row_" + op);
    if (op == "max") {
        k.out(y) = maximum(k.in(r, y));
    } else if (op == "sum") {
        k.out(y) = sum(cast<float>(k.in(r, y)));
    } else {  // "mean"
        k.s = Func("s");
        k.s(y) = sum(cast<float>(k.in(r, y)));
        k.out(y) = cast(type, k.s(y) / float(cols));
    }
    return k;
}

const std::vector<std::string> &reduction_schedules() {
    static const std::vector<std::string> names = {"root", "cores32"};
    return names;
}

void schedule_reduction(ReductionKernel &k, const std::string &name, const MachineDesc &m) {
    Var y = k.y;
    if (name == "root") {
        if (k.s.defined()) schedule(k.s, m).scratchpad_root();
    } else if (name == "cores32") {
        Var core(y.name() + "_core");  // ring_split's outer loop
        schedule(k.out, m).ring_split(y, 32);
        stage_all_in_lx(k.in, k.out, core, m);
        if (k.s.defined()) schedule(k.s, m).scratchpad_store_at(k.out, core);
    } else {
        throw_unknown("reduction", "schedule", name, reduction_schedules());
    }
}

}  // namespace spyre
