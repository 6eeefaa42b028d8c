// Device layouts chosen by the autoscheduler: of the arguments whose caller allows it
// (AutoOptions::free_layouts), and of the intermediates a schedule keeps in device memory. Layouts
// are sticked on dim 0; what is left to choose is the order of the other dimensions and where the
// stick count goes among them (torch-spyre's default puts it outermost), which decide how long
// the contiguous runs of each core's DMA are (a core's rows of every head are one run when the
// heads are inside the rows; a stick count outside the rows makes each stick column a run).
// Each candidate of the space gets variants with other orders; a variant refines its base
// (Candidate::refines), so the search times it only when the base is among the best.
#pragma once

#include <string>
#include <vector>

#include "auto_space.h"
#include "compile.h"

namespace spyre::autosched {

struct LayoutArg {
    std::string name;     // the ImageParam's name, or the output Func's
    DeviceLayout layout;  // the caller's (CompileOptions)
    int rank = 0;
    bool free = false;    // the search may choose its order
};

// The orders a free argument may take besides the caller's: its dims but 0 in every order, with the
// stick count at every place among them (ranks 2 and 3: 1 and 5 more orders) or innermost and
// outermost (rank 4: 11 more); higher ranks keep theirs.
std::vector<DeviceLayout> layout_choices(const LayoutArg &arg);

// `cs` followed by their layout variants: every combination of the free arguments' choices when
// that is at most 8 variants a candidate, else one argument changed at a time. A variant's summary
// adds "<arg>.layout=<order>" for each argument it changes. `args`: the inputs in order, then the
// output. Nothing is added when no argument is free.
std::vector<Candidate> with_layout_variants(const std::vector<Candidate> &cs, const std::vector<LayoutArg> &args);

// `cs` followed by variants that store their device-memory intermediates (DeviceRoot) of rank 2 to 4
// in another layout (device_layout: the stick dimension innermost, the others in every order, the
// stick count innermost or just outside any of them; at rank 4 innermost or outermost), one
// intermediate changed at a time, of the candidates that refine none. A variant refines its base,
// and its summary adds "<func>.layout=<dims, innermost first>[;sticks><dim>]". Which layout pays
// depends on the loops of the producer and of its consumers (and the cores' shares of them), so the
// simulator decides; a stick count outside needs rows of whole sticks, or the compile refuses it.
std::vector<Candidate> with_intermediate_layout_variants(const std::vector<Candidate> &cs, const PipelineInfo &info);

// `opt` with `c`'s layouts (those of the caller when `c` chooses none).
CompileOptions with_layouts(const CompileOptions &opt, const Candidate &c);

// The layouts as text for keys and messages: "" when `c` chooses none.
std::string layouts_key(const Candidate &c);

// The layouts of `opt` that differ from the default row-major one, as C++ assignments to the
// CompileOptions named `var` ("var.inputs[0].layout = {0, {0, 1}};"), one per line, each after
// `prefix` ("// " for a comment).
std::string layouts_cpp(const CompileOptions &opt, const std::string &var, const std::string &prefix = "");

}  // namespace spyre::autosched
