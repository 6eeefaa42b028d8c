// The autoscheduler's result as C++: the directive calls of a Directive list, written the way a
// person writes them in schedules/ (spyre::schedule(f).ring_split(y, 32).split(y, yo, yi, 16)...),
// with declarations of the loop variables the schedule introduces. Funcs, ImageParams, Vars and
// RDoms are referred to by their Halide names (an RDom "k" of one dimension is k.x), so the text
// compiles where the algorithm's C++ variables carry those names.
#pragma once

#include <string>
#include <vector>

#include "auto_directives.h"
#include "auto_structure.h"

namespace spyre::autosched {

// `machine` is the name of the MachineDesc variable the printed calls pass ("" for none); when a
// Var, RVar, Func or input of the pipeline has that name, the code uses "machine" instead and a
// comment says so.
std::string print_cpp(const std::vector<Directive> &ds, const PipelineInfo &info, const std::string &machine = "m");

// A C++ identifier for a Halide name: "k$x" -> "k.x", other characters that cannot appear in an
// identifier -> '_'.
std::string cpp_name(const std::string &halide_name);

}  // namespace spyre::autosched
