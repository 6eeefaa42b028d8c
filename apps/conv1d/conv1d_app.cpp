// The catalogue's causal depthwise conv1d (catalogue_app.h): channels x sequence, kConv1dTaps taps.
#include "catalogue_app.h"
#include "conv1d.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_conv1d() {
    AppInfo a = row_app("conv1d", [] { return conv1d_schedules(); }, [](const Shape &s) {
        Conv1dKernel k = make_conv1d(s.dims[1], s.dims[0], kConv1dTaps, true);
        return AppKernel{k.out, {k.in, k.w}, [k](const std::string &n, const MachineDesc &m) mutable { schedule_conv1d(k, n, m); }};
    });
    a.order = 150;
    a.generator_params = [](const Shape &s) {
        return std::vector<std::string>{kv("cols", s.dims[1]), kv("rows", s.dims[0]), kv("taps", kConv1dTaps), "padding=causal"};
    };
    a.inputs = [](const Shape &s) { return std::vector<std::vector<int>>{{s.dims[1], s.dims[0]}, {s.dims[0], kConv1dTaps}}; };
    return {a};
}

}  // namespace spyre::report
