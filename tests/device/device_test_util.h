// Helpers shared by the device-layer tests: the message of an expected spyre::Error.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "device/error.h"

namespace spyre::device_testing {

// Runs fn, expects a spyre::Error, and returns its message ("" if nothing was thrown).
template <typename Fn>
std::string error_of(Fn fn) {
    try {
        fn();
    } catch (const Error &e) {
        return e.what();
    }
    ADD_FAILURE() << "expected spyre::Error";
    return "";
}

inline bool contains(const std::string &haystack, const std::string &needle) {
    return haystack.find(needle) != std::string::npos;
}

}  // namespace spyre::device_testing
