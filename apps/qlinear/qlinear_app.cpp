// The catalogue's quantized linear layer (catalogue_app.h): M x K x N, int8 weights with per-channel scales.
#include "catalogue_app.h"
#include "qlinear.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_qlinear() {
    AppInfo a = matmul_app_base("qlinear");
    a.order = 130;
    a.schedules = [] { return without_cpu(qlinear_schedules()); };
    a.inputs = [](const Shape &s) {
        return std::vector<std::vector<int>>{{s.dims[1], s.dims[0]}, {s.dims[2], s.dims[1]}, {s.dims[2]}};
    };
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[2], s.dims[0]}; };
    a.int8_inputs = {1};  // the weights
    a.kernel = [](const Shape &s) {
        QLinearKernel k = make_qlinear(s.dims[0], s.dims[1], s.dims[2]);
        const int cores = s.cores;
        return AppKernel{k.out, {k.a, k.w, k.scale},
                         [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_qlinear(k, n, cores, m); },
                         [k]() mutable { schedule_qlinear(k, "cpu"); }};
    };
    a.shapes.report = "32x1024x512", a.shapes.report_cores = 8;
    a.shapes.small = "8x128x256";
    a.shapes.odd.push_back("5x200x300");
    return {a};
}

}  // namespace spyre::report
