// The catalogue's gated MLP (SwiGLU) (catalogue_app.h): dim x hidden x rows.
#include "catalogue_app.h"
#include "gated_mlp.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_gated_mlp() {
    AppInfo a = mlp_app_base(true);
    a.order = 80;
    a.schedules = [] { return without_cpu(gated_mlp_schedules()); };
    a.inputs = [](const Shape &s) {
        const int d = s.dims[0], h = s.dims[1], m = s.dims[2];
        return std::vector<std::vector<int>>{{d, m}, {h, d}, {h, d}, {d, h}};
    };
    a.kernel = [](const Shape &s) {
        GatedMlpKernel k = make_gated_mlp(s.dims[0], s.dims[1], s.dims[2]);
        const int cores = s.cores;
        return AppKernel{k.out, {k.x, k.w1, k.w3, k.w2},
                         [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_gated_mlp(k, n, cores, m); },
                         [k]() mutable { schedule_gated_mlp(k, "cpu"); }};
    };
    return {a};
}

}  // namespace spyre::report
