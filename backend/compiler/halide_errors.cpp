#include "halide_errors.h"

#include <cctype>

#include "device/error.h"

namespace spyre {

std::string without_unique_suffixes(const std::string &text) {
    std::string out;
    for (size_t i = 0; i < text.size(); i++) {
        if (text[i] == '$' && i + 1 < text.size() && std::isdigit((unsigned char)text[i + 1])) {
            while (i + 1 < text.size() && std::isdigit((unsigned char)text[i + 1])) i++;
            continue;
        }
        out += text[i];
    }
    return out;
}

void throw_halide_error(const std::string &kernel, const std::string &during, const Halide::Error &e) {
    std::string what = e.what();
    while (!what.empty() && std::isspace((unsigned char)what.back())) what.pop_back();
    if (dynamic_cast<const Halide::InternalError *>(&e))
        throw_error("kernel ", kernel, ": internal compiler error while ", during,
                    " (Halide failed on this schedule; please report it with the pipeline and its schedule): ", what);
    const std::string prefix = "Error: ";
    if (what.compare(0, prefix.size(), prefix) == 0) what = what.substr(prefix.size());
    throw_error("kernel ", kernel, ": Halide refused the pipeline or its schedule while ", during, ": ",
                without_unique_suffixes(what));
}

}  // namespace spyre
