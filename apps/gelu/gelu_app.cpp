// The catalogue's gelu (catalogue_app.h): rows x cols, tanh form.
#include "catalogue_app.h"
#include "pointwise.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_gelu() {
    AppInfo a = row_app("gelu", [] { return pointwise_schedules(); }, [](const Shape &s) {
        PointwiseKernel k = make_pointwise("gelu", Halide::Float(16), s.dims[1], s.dims[0]);
        return AppKernel{k.out, k.inputs,
                         [k](const std::string &n, const MachineDesc &m) mutable { schedule_pointwise(k, n, m); }};
    });
    a.order = 40;
    return {a};
}

}  // namespace spyre::report
