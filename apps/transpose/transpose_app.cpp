// The catalogue's transpose (catalogue_app.h): rows x cols into cols x rows, rows whole sticks.
#include "catalogue_app.h"
#include "transpose.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_transpose() {
    AppInfo a = row_app("transpose", [] { return transpose_schedules(); }, [](const Shape &s) {
        TransposeKernel k = make_transpose(s.dims[1], s.dims[0]);
        return AppKernel{k.out, {k.in}, [k](const std::string &n, const MachineDesc &m) mutable { schedule_transpose(k, n, m); }};
    });
    a.order = 120;
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[0], s.dims[1]}; };  // the input's rows become sticks
    a.shapes.odd = {"64x100", "128x33", "64x1", "192x8192"};  // rows whole sticks
    a.shapes.odd_large = {"1152x8192", "4096x8192"};
    return {a};
}

}  // namespace spyre::report
