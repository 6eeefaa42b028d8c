// Named choices of a kernel (its ops, its schedules): the one place that checks a name and reports
// the known ones, so every kernel's "unknown schedule" error reads the same.
#pragma once

#include <string>
#include <vector>

namespace spyre {

// "a, b, c"
std::string join_names(const std::vector<std::string> &names);

// Throws spyre::Error "<kernel>: unknown <what> '<name>' (known: ...)".
[[noreturn]] void throw_unknown(const std::string &kernel, const std::string &what, const std::string &name,
                                const std::vector<std::string> &known);

// The same unless `name` is in `known`.
void check_known(const std::string &kernel, const std::string &what, const std::string &name,
                 const std::vector<std::string> &known);

}  // namespace spyre
