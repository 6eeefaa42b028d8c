// The catalogue's layernorm (catalogue_app.h): rows x cols, gamma and beta of {cols}.
#include "catalogue_app.h"

namespace spyre::report {

std::vector<AppInfo> catalogue_layernorm() {
    AppInfo a = norm_app("layernorm");
    a.order = 20;
    a.inputs = [](const Shape &s) { return std::vector<std::vector<int>>{{s.dims[1], s.dims[0]}, {s.dims[1]}, {s.dims[1]}}; };
    return {a};
}

}  // namespace spyre::report
