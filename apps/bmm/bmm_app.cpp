// The catalogue's bmm (catalogue_app.h): B x M x K x N, split over Shape::cores, inputs in [-2, 2].
#include "catalogue_app.h"
#include "matmul.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_bmm() {
    AppInfo a = matmul_app_base("bmm");
    a.order = 50;
    a.dims = {"B", "M", "K", "N"};
    a.report_shape_option = "bmm-shape";
    a.report_cores_option = "bmm-cores";
    a.schedules = [] { return without_cpu(bmm_schedules()); };
    a.generator_params = [](const Shape &s) {
        return std::vector<std::string>{kv("batch", s.dims[0]), kv("rows", s.dims[1]), kv("inner", s.dims[2]),
                                        kv("cols", s.dims[3]), kv("cores", s.cores)};
    };
    a.inputs = [](const Shape &s) {
        return std::vector<std::vector<int>>{{s.dims[2], s.dims[1], s.dims[0]}, {s.dims[3], s.dims[2]}};
    };
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[3], s.dims[1], s.dims[0]}; };
    a.kernel = [](const Shape &s) {
        MatmulKernel k = make_bmm(s.dims[0], s.dims[1], s.dims[2], s.dims[3]);
        const int cores = s.cores;
        return AppKernel{k.out, {k.a, k.w},
                         [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_bmm(k, n, cores, m); },
                         [k]() mutable { schedule_bmm(k, "cpu"); }};
    };
    a.shapes = {"4x64x256x512", 32, "2x8x64x128", 32, {"1x1x100x100", "1x7x64x100", "3x33x130x70", "2x1x64x8192"},
                {"2x1151x100x8192"}};
    return {a};
}

}  // namespace spyre::report
