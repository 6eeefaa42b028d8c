// The small shape at which the KTIR tests compile each catalogue app (the shapes spyre-report's
// own test uses), so that a round trip over the whole catalogue stays quick.
#pragma once

#include <map>
#include <string>

#include "kernel_catalog.h"

namespace spyre::ktir_testing {

inline report::Shape small_shape(const std::string &app) {
    static const std::map<std::string, std::string> shapes = {
        {"bmm", "2x8x64x128"}, {"linear", "8x64x256"}, {"qlinear", "8x128x256"}, {"mlp", "64x256x64"},
        {"gated_mlp", "64x256x64"}, {"attention", "64x128"},
        {"flash_attention", "64x128x2"}, {"causal_attention", "64x128x2"}};
    auto it = shapes.find(app);
    report::Shape s = report::parse_shape(app, it == shapes.end() ? "64x128" : it->second);
    if (app == "mlp" || app == "gated_mlp") s.cores = 2;
    return s;
}

}  // namespace spyre::ktir_testing
