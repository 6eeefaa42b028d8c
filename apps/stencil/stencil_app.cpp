// The catalogue's 3-tap stencil along the rows (catalogue_app.h), repeat_edge.
#include "catalogue_app.h"
#include "stencil.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_stencil() {
    AppInfo a = row_app("stencil", [] { return stencil_schedules(); }, [](const Shape &s) {
        StencilKernel k = make_stencil(s.dims[1], s.dims[0]);
        return AppKernel{k.out, {k.in}, [k](const std::string &n, const MachineDesc &m) mutable { schedule_stencil(k, n, m); }};
    });
    a.order = 140;
    return {a};
}

}  // namespace spyre::report
