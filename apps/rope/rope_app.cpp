// The catalogue's rotary position embeddings (catalogue_app.h): rope (rotate half) and
// rope_interleaved (pairs 2k, 2k + 1), positions x heads * kRopeHeadDim.
#include "catalogue_app.h"
#include "rope.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_rope() {
    std::vector<AppInfo> apps;
    for (RopeStyle style : {RopeStyle::RotateHalf, RopeStyle::Interleaved}) {
        const bool interleaved = style == RopeStyle::Interleaved;
        AppInfo a = row_app(interleaved ? "rope_interleaved" : "rope", [] { return rope_schedules(); }, [style](const Shape &s) {
            RopeKernel k = make_rope(s.dims[1], s.dims[0], kRopeHeadDim, style);
            return AppKernel{k.out, {k.in, k.cos, k.sin},
                             [k](const std::string &n, const MachineDesc &m) mutable { schedule_rope(k, n, m); }};
        });
        a.order = interleaved ? 170 : 160;
        a.generator_params = [](const Shape &s) {
            return std::vector<std::string>{kv("cols", s.dims[1]), kv("rows", s.dims[0]), kv("head_dim", kRopeHeadDim)};
        };
        a.inputs = [](const Shape &s) {
            return std::vector<std::vector<int>>{{s.dims[1], s.dims[0]}, {kRopeHeadDim, s.dims[0]}, {kRopeHeadDim, s.dims[0]}};
        };
        a.shapes.odd = {"1x64", "7x128", "33x192", "100x640"};  // whole heads
        a.shapes.odd_large = {"1151x4096", "4096x4096"};
        apps.push_back(a);
    }
    return apps;
}

}  // namespace spyre::report
