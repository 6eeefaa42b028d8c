// The catalogue's softmax (catalogue_app.h): rows x cols, over each row, 2 ULP (exp).
#include "catalogue_app.h"
#include "softmax.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_softmax() {
    AppInfo a = row_app("softmax", [] { return softmax_schedules(); }, [](const Shape &s) {
        SoftmaxKernel k = make_softmax(s.dims[1], s.dims[0]);
        return AppKernel{k.out, {k.in}, [k](const std::string &n, const MachineDesc &m) mutable { schedule_softmax(k, n, m); },
                         [k]() mutable { schedule_softmax_cpu(k); }};
    });
    a.order = 10;
    a.tolerance.ulp = 2;  // exp
    return {a};
}

}  // namespace spyre::report
