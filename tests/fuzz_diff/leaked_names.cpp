#include "leaked_names.h"

#include <regex>

#include "user_terms.h"

namespace spyre::fuzzdiff {

std::set<std::string> declared_names(const std::string &cpp) {
    static const std::regex literal(R"re("([A-Za-z_]\w*)")re");
    std::set<std::string> names;
    for (auto it = std::sregex_iterator(cpp.begin(), cpp.end(), literal); it != std::sregex_iterator(); ++it)
        // A schedule the autoscheduler prints may reach a Func by its Halide name (an inline
        // reduction's "sum"); a made-up name there is still not the user's.
        if (generated_name_in((*it)[1].str()).empty()) names.insert((*it)[1].str());
    return names;
}

std::string leaked_name(const std::string &message, const std::set<std::string> &declared) {
    return generated_name_in(message, &declared);
}

}  // namespace spyre::fuzzdiff
