// Helpers the llama tests share: the message of a refusal, and how far apart two logit vectors are.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "device/error.h"

namespace spyre::llama::test {

// The message of the spyre::Error `f` throws, or "(no error)".
inline std::string refusal_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const spyre::Error &e) {
        return e.what();
    }
    return "(no error)";
}

// The largest |a[i] - b[i]|.
inline double max_abs_diff(const std::vector<float> &a, const std::vector<float> &b) {
    double worst = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); i++) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
    return worst;
}

}  // namespace spyre::llama::test
