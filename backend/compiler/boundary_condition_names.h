// The Funcs Halide makes for a boundary condition, in the words of the user who asked for one.
// BoundaryConditions::repeat_edge(in) makes two Funcs the user never named: "lambda_0", in's
// values as a Func, and "repeat_edge" around it (constant_exterior also makes a repeat_edge
// inside). A message or an autoscheduler summary names them by the input they wrap and the
// condition: "the repeat_edge boundary condition of input 'in'", repeat_edge(in) in a summary.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "Halide.h"

namespace spyre {

struct MadeFuncName {
    std::string token;   // one word, for a summary: repeat_edge(in), Func(in)
    std::string phrase;  // for a sentence, in place of "Func <name>": the repeat_edge boundary condition of input 'in'
};

// How the user refers to `f` when Halide made it for a boundary condition (or lambda()); nullopt
// for a Func the user named.
std::optional<MadeFuncName> made_func_name(const Halide::Internal::Function &f);

// The phrase of every such Func that `outputs` read, by its Halide name (for in_user_terms).
std::map<std::string, std::string> made_func_phrases(const std::vector<Halide::Func> &outputs);

// "Func <name>" for a Func the user named (without Halide's "$<n>"), else the phrase.
std::string func_subject(const Halide::Func &f);

}  // namespace spyre
