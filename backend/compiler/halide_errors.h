// Halide's exceptions in the user's terms. A schedule Halide refuses (a CompileError) is the
// user's to fix and is reported as what Halide says is wrong, in the user's terms (user_terms.h:
// "out$3" is out); a failure inside Halide (an InternalError) is a compiler bug and
// is reported as an internal compiler error. Every entry of the back end runs its Halide calls
// through with_halide_errors, so no Halide exception leaves compile_for_spyre.
#pragma once

#include <string>

#include "Halide.h"

namespace spyre {

// Throws the spyre::Error for Halide error `e`, raised while `during` (e.g. "lowering the
// schedule") in kernel `kernel`.
[[noreturn]] void throw_halide_error(const std::string &kernel, const std::string &during, const Halide::Error &e);

// Runs f(), turning a Halide error it throws into a spyre::Error (throw_halide_error).
template <typename F>
auto with_halide_errors(const std::string &kernel, const std::string &during, F &&f) -> decltype(f()) {
    try {
        return f();
    } catch (const Halide::Error &e) {
        throw_halide_error(kernel, during, e);
    }
}

}  // namespace spyre
