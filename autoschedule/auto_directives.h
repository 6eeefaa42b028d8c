// A schedule as data: the directive calls the autoscheduler chose, one record per call, so that the
// same list can be applied to any copy of a pipeline (each candidate is tried on a fresh copy) and
// printed as C++ a person can paste into schedules/ (auto_print.h). Records name Funcs and loop
// variables by their Halide names.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "Halide.h"
#include "directive.h"
#include "device/machine_desc.h"

namespace spyre::autosched {

// A schedule's numeric factors (split factors and core counts) as int32 Params, in the order the
// directives give them: candidates whose directives differ only in those factors have the same
// structure_key and share one Halide lowering (auto_search.cpp), finished for each one's values.
struct FactorParams {
    std::vector<Halide::Param<int>> params;  // filled by apply_directives
    std::map<std::string, int> values;       // param name -> this schedule's value
};

// The directives as text with their factors blanked ("?").
std::string structure_key(const std::vector<Directive> &ds);
// The directives as text, factors included: equal for schedules that are the same calls.
std::string directives_key(const std::vector<Directive> &ds);
// The factors' values by the names apply_directives gives their Params.
std::map<std::string, int> factor_values(const std::vector<Directive> &ds);

// Applies `ds` to the pipeline whose Funcs are `funcs` (by name) and whose ImageParams are `inputs`
// (by name; `input_funcs` maps an ImageParam's name to its Func, whose wrapper stage_all_in_lx makes).
// Throws spyre::Error (or Halide's errors, re-raised by the directives) on a record that does not fit.
// With `factors`, the numeric factors become Params (recorded there with their values).
void apply_directives(const std::vector<Directive> &ds, const std::map<std::string, Halide::Func> &funcs,
                      const std::map<std::string, Halide::Func> &input_funcs, const MachineDesc &machine,
                      FactorParams *factors = nullptr);

}  // namespace spyre::autosched
