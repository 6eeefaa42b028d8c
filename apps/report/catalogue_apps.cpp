// The catalogue's apps: every entry the apps' folders define (apps/<folder>/<folder>_app.cpp, collected
// by CMake into catalogue_registry.cpp), in their `order`.
#include <algorithm>

#include "device/error.h"
#include "kernel_catalog.h"

namespace spyre::report {

std::vector<AppInfo> registered_apps();  // catalogue_registry.cpp (generated)

const std::vector<AppInfo> &app_infos() {
    static const std::vector<AppInfo> apps = [] {
        std::vector<AppInfo> all = registered_apps();
        std::stable_sort(all.begin(), all.end(), [](const AppInfo &a, const AppInfo &b) { return a.order < b.order; });
        for (size_t i = 1; i < all.size(); i++)
            if (all[i].name == all[i - 1].name || all[i].order == all[i - 1].order)
                throw_internal("internal: catalogue apps '", all[i - 1].name, "' and '", all[i].name,
                               "' share a name or an order");
        return all;
    }();
    return apps;
}

}  // namespace spyre::report
