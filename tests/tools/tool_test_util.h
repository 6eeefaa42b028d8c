// Running the command-line tools from tests: output (stdout and stderr together) and exit code.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "test_paths.h"  // this test binary's paths (tests/CMakeLists.txt)

namespace spyre::tools_testing {

struct CommandResult {
    int exit_code = -1;
    std::string output;
};

inline CommandResult run_command(const std::string &command) {
    CommandResult r;
    FILE *p = popen((command + " 2>&1").c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
    int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

inline std::string quote(const std::string &s) { return "'" + s + "'"; }

// An empty directory for one test: <tmp>/spyre_<suite>_<pid>/<name>, removed first if it exists.
inline std::filesystem::path scratch_dir(const std::string &suite, const std::string &name) {
    namespace fs = std::filesystem;
    fs::path d = fs::temp_directory_path() / ("spyre_" + suite + "_" + std::to_string(::getpid())) / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

#ifdef SPYRE_GEN
inline const std::string kGen = SPYRE_GEN;
#endif

}  // namespace spyre::tools_testing
