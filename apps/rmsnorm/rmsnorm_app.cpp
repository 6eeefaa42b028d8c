// The catalogue's rmsnorm (catalogue_app.h): rows x cols, gamma of {cols}.
#include "catalogue_app.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_rmsnorm() {
    AppInfo a = norm_app("rmsnorm");
    a.order = 30;
    a.inputs = [](const Shape &s) { return std::vector<std::vector<int>>{{s.dims[1], s.dims[0]}, {s.dims[1]}}; };
    return {a};
}

}  // namespace spyre::report
