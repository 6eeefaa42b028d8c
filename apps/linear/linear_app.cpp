// The catalogue's linear layer (catalogue_app.h): M x K x N with a bias, split over Shape::cores.
#include "catalogue_app.h"
#include "matmul.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_linear() {
    AppInfo a = matmul_app_base("linear");
    a.order = 60;
    a.schedules = [] { return without_cpu(bmm_schedules()); };
    a.inputs = [](const Shape &s) {
        return std::vector<std::vector<int>>{{s.dims[1], s.dims[0], 1}, {s.dims[2], s.dims[1]}, {s.dims[2]}};
    };
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[2], s.dims[0], 1}; };
    a.kernel = [](const Shape &s) {
        MatmulKernel k = make_linear(s.dims[0], s.dims[1], s.dims[2]);
        const int cores = s.cores;
        return AppKernel{k.out, {k.a, k.w, k.bias},
                         [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_bmm(k, n, cores, m); },
                         [k]() mutable { schedule_bmm(k, "cpu"); }};
    };
    a.shapes.report = "64x192x256", a.shapes.report_cores = 4;
    a.shapes.small = "8x64x256";
    return {a};
}

}  // namespace spyre::report
