// The catalogue's rmsnorm (catalogue_app.h): rows x cols, gamma of {cols}.
#include "catalogue_app.h"
#include "norms.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_rmsnorm() {
    const std::string op = "rmsnorm";
    AppInfo a = row_app(op, [] { return norm_schedules(); }, [op](const Shape &s) {
        NormKernel k = make_norm(op, s.dims[1], s.dims[0]);
        return AppKernel{k.out, k.inputs, [k](const std::string &n, const MachineDesc &m) mutable { schedule_norm(k, n, m); },
                         [k]() mutable {
                             for (auto &stat : k.stats) stat.second.compute_root();
                         }};
    });
    a.order = 30;
    a.inputs = [](const Shape &s) { return std::vector<std::vector<int>>{{s.dims[1], s.dims[0]}, {s.dims[1]}}; };
    return {a};
}

}  // namespace spyre::report
