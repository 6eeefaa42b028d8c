// Running the command-line tools from tests: output (stdout and stderr together) and exit code.
#pragma once

#include <cstdio>
#include <string>
#include <sys/wait.h>

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

}  // namespace spyre::tools_testing
