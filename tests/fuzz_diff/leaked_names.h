// The fuzzer's check that what the compiler and the autoscheduler say names only what the user
// wrote (docs/directives.md, "Compile-time errors"): a refusal or an auto_schedule summary that
// names a Func, Var or buffer Halide or the compiler made (lambda_0, v37, __outermost, in.lx2,
// acc$5, top.0) is a failure of its own kind (Verdict::LeakedName).
#pragma once

#include <set>
#include <string>

namespace spyre::fuzzdiff {

// Every name a case's C++ gives a Halide object: the string literals of Func, Var, RDom and
// ImageParam constructors ("p", "xo", "in0"), the names a message may use whatever they look like.
std::set<std::string> declared_names(const std::string &cpp);

// The first name in `message` that the user never wrote ("" when none), given the names they did.
std::string leaked_name(const std::string &message, const std::set<std::string> &declared);

}  // namespace spyre::fuzzdiff
