// The catalogue's single-head attention (catalogue_app.h): dim x seq, one core, inputs in [-1, 1];
// exp moves a probability by one fp16 ULP, so the check is absolute.
#include "catalogue_app.h"
#include "attention.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_attention() {
    AppInfo a;
    a.name = a.generator = "attention";
    a.order = 90;
    a.dims = {"dim", "seq"};
    a.report_shape_option = "attention-shape";
    a.schedules = [] { return without_cpu(attention_schedules()); };
    a.generator_params = [](const Shape &s) { return std::vector<std::string>{kv("dim", s.dims[0]), kv("seq", s.dims[1])}; };
    a.inputs = [](const Shape &s) { return std::vector<std::vector<int>>(3, {s.dims[0], s.dims[1]}); };
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[0], s.dims[1]}; };
    a.input_range = 1;
    a.tolerance.abs = 1e-4;
    a.kernel = [](const Shape &s) {
        AttentionKernel k = make_attention(s.dims[0], s.dims[1]);
        return AppKernel{k.out, {k.q, k.k, k.v},
                         [k](const std::string &n, const MachineDesc &m) mutable { schedule_attention(k, n, m); },
                         [k]() mutable { schedule_attention(k, "cpu"); }};
    };
    a.shapes = {"128x512", 32, "64x128", 32, {"64x100", "100x33", "128x1"}, {"128x1151"}};
    return {a};
}

}  // namespace spyre::report
