#include "halide_errors.h"

#include <cctype>

#include "device/error.h"
#include "user_terms.h"

namespace spyre {

void throw_halide_error(const std::string &kernel, const std::string &during, const Halide::Error &e) {
    std::string what = e.what();
    while (!what.empty() && std::isspace((unsigned char)what.back())) what.pop_back();
    if (dynamic_cast<const Halide::InternalError *>(&e))
        throw_internal("kernel ", kernel, ": internal compiler error while ", during,
                    " (Halide failed on this schedule; please report it with the pipeline and its schedule): ", what);
    const std::string prefix = "Error: ";
    if (what.compare(0, prefix.size(), prefix) == 0) what = what.substr(prefix.size());
    // Its site names the step Halide refused in, so refusals of different steps stay apart.
    throw Error("kernel " + kernel + ": Halide refused the pipeline or its schedule while " + during + ": " +
                    in_user_terms(what),
                ErrorKind::Refused, "Halide refused while " + during);
}

}  // namespace spyre
