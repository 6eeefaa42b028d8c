// Where the test binaries find the source tree and the build tree at run time. The generated
// test_paths.h of each test binary (tests/CMakeLists.txt, spyre_test_paths) names its files
// relative to these two roots instead of by absolute path, so that its text, and with it every
// test file's compile, is the same in every clone or worktree and ccache can reuse it.
//
// The build tree is the directory above the one holding the running binary (build/bin); the
// source tree is the one that build tree was configured from (its CMakeCache.txt). SPYRE_BUILD_DIR
// and SPYRE_SOURCE_ROOT in the environment override both, for a binary copied elsewhere.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace spyre::test_paths {

inline const std::string &build_root() {
    static const std::string root = [] {
        if (const char *env = std::getenv("SPYRE_BUILD_DIR")) return std::string(env);
        char buf[4096];
        const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        if (n <= 0) throw std::runtime_error("test paths: cannot read /proc/self/exe; set SPYRE_BUILD_DIR");
        std::string exe(buf, size_t(n));
        for (int up = 0; up < 2; up++) exe = exe.substr(0, exe.find_last_of('/'));  // build/bin/x -> build
        return exe;
    }();
    return root;
}

inline const std::string &source_root() {
    static const std::string root = [] {
        if (const char *env = std::getenv("SPYRE_SOURCE_ROOT")) return std::string(env);
        const std::string cache = build_root() + "/CMakeCache.txt", key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
        std::ifstream in(cache);
        for (std::string line; std::getline(in, line);)
            if (line.rfind(key, 0) == 0) return line.substr(key.size());
        throw std::runtime_error("test paths: no " + key + " in " + cache + "; set SPYRE_SOURCE_ROOT");
    }();
    return root;
}

// `rel` under the build tree or the source tree ("" is the root itself).
inline std::string in_build(const std::string &rel) { return rel.empty() ? build_root() : build_root() + "/" + rel; }
inline std::string in_source(const std::string &rel) { return rel.empty() ? source_root() : source_root() + "/" + rel; }

}  // namespace spyre::test_paths
