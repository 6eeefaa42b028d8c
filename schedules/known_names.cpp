#include "known_names.h"

#include <algorithm>

#include "device/error.h"

namespace spyre {

std::string join_names(const std::vector<std::string> &names) {
    std::string list;
    for (const std::string &n : names) list += (list.empty() ? "" : ", ") + n;
    return list;
}

void throw_unknown(const std::string &kernel, const std::string &what, const std::string &name,
                   const std::vector<std::string> &known) {
    throw_error(kernel, ": unknown ", what, " '", name, "' (known: ", join_names(known), ")");
}

void check_known(const std::string &kernel, const std::string &what, const std::string &name,
                 const std::vector<std::string> &known) {
    if (std::find(known.begin(), known.end(), name) == known.end()) throw_unknown(kernel, what, name, known);
}

}  // namespace spyre
