// The catalogue's MLP block (catalogue_app.h): dim x hidden x rows, gelu(x W1 + b1) W2 + b2.
#include "catalogue_app.h"
#include "mlp.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_mlp() {
    AppInfo a = mlp_app_base(false);
    a.order = 70;
    a.schedules = [] { return without_cpu(mlp_schedules()); };
    a.inputs = [](const Shape &s) {
        const int d = s.dims[0], h = s.dims[1], m = s.dims[2];
        return std::vector<std::vector<int>>{{d, m}, {h, d}, {h}, {d, h}, {d}};
    };
    a.kernel = [](const Shape &s) {
        MlpKernel k = make_mlp(s.dims[0], s.dims[1], s.dims[2]);
        const int cores = s.cores;
        return AppKernel{k.out, {k.x, k.w1, k.b1, k.w2, k.b2},
                         [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_mlp(k, n, cores, m); },
                         [k]() mutable { schedule_mlp(k, "cpu"); }};
    };
    return {a};
}

}  // namespace spyre::report
