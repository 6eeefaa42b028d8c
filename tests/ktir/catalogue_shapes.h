// The small shape at which the KTIR tests compile each catalogue app (AppShapes::small), so that a
// round trip over the whole catalogue stays quick.
#pragma once

#include <string>

#include "kernel_catalog.h"

namespace spyre::ktir_testing {

inline report::Shape small_shape(const std::string &app) {
    const report::AppInfo &info = report::app_info(app);
    report::Shape s = report::parse_shape(app, info.shapes.small);
    s.cores = info.shapes.small_cores;
    return s;
}

}  // namespace spyre::ktir_testing
