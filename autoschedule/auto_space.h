// The autoscheduler's candidate space: the schedules a person would write for a pipeline, derived
// from its structure (auto_structure.h), each as a Directive list with an analytical estimate
// (auto_cost.h). The families:
//   rows:    the output's outermost dimension split over cores (ring_split) and into row tiles; every
//            other Func inlined, kept in LX at the tile (scratchpad_store_at), kept in LX whole
//            (scratchpad_root) or materialised in device memory (device_root, tiled the same way);
//            inputs copied into LX per tile or per core (stage_all_in_lx) or left to the back end;
//            matmul updates on the PE array (pe_matmul) or the vector unit.
//   columns: a column reduction (acc(x) += in(x, r)): the stick dimension split over cores.
//   column_strips: column reductions read by a 2-D output (softmax over dim 0): the columns in
//            strips of whole sticks over the cores, each strip's work in LX (auto_strips.h).
//   matmul:  each Func fed by matmul updates of the stage form (schedules/matmul_stage.h) is a stage
//            of its own over the cores, split by batch, N then M, in output-stationary tiles near
//            the ones matmul_tiles.h chooses, on the PE array (with or without ring sharing of A or W
//            panels) or the vector unit; Funcs between stages go through device memory.
// Candidates whose estimated LX use exceeds the machine's usable LX are dropped here (counted).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "auto_directives.h"
#include "auto_structure.h"
#include "device/layout.h"
#include "device/machine_desc.h"

namespace spyre::autosched {

// One decision of a candidate, as the search varies it (a typed trace of choices, as TVM's
// MetaSchedule keeps one): a name and its value, and how the summary prints it. The local search
// (auto_moves.h) compares and edits these, never the printed summary.
struct Choice {
    enum class Form {
        Setting,    // cores=4
        Placement,  // m:tile (where a Func is kept)
        Flag,       // pe (no value)
        Group,      // pre=(rows cores=4 ...) (a nested candidate's summary)
    };
    std::string name, value;
    Form form = Form::Setting;
    bool operator==(const Choice &o) const { return name == o.name && value == o.value && form == o.form; }
    bool operator!=(const Choice &o) const { return !(*this == o); }
};

// The one line the logs, the printed schedule's comment and auto_schedule's summary show:
// the family, then each choice ("rows cores=4 tile=2 m:tile pe").
std::string summary_of(const std::string &family, const std::vector<Choice> &choices);

struct Candidate {
    std::string family;   // "rows", "columns", "matmul", "split_k"
    std::vector<Choice> choices;
    std::string summary() const { return summary_of(family, choices); }
    void set(const std::string &name, const std::string &value) { choices.push_back({name, value, Choice::Form::Setting}); }
    void place(const std::string &name, const std::string &value) {
        choices.push_back({name, value, Choice::Form::Placement});
    }
    void flag(const std::string &name) { choices.push_back({name, "", Choice::Form::Flag}); }
    // The choice named `name`, or null.
    const Choice *choice(const std::string &name) const {
        for (const Choice &c : choices)
            if (c.name == name) return &c;
        return nullptr;
    }
    std::vector<Directive> directives;
    double estimate_ns = 0;
    // The summary of the candidate this one refines (empty: none): a key, printed from its choices. A refinement costs a Halide
    // lowering of its own and pays off only on a good base, so the search times it after its base,
    // when the base is among the best (auto_search.h).
    std::string refines;
    // The device layouts it compiles with, per input and then the output (auto_layouts.h); empty:
    // the caller's.
    std::vector<DeviceLayout> layouts;
    // The pre-filter's estimate of its LX use (0: not estimated). The estimate is coarse (whole
    // rows of every Func placed per tile, two fp32 rows of temporaries): the back end may fit what
    // it rejects.
    int64_t lx_estimate = 0;
};

struct SpaceShapes {
    std::vector<std::vector<int64_t>> inputs;  // one per PipelineInfo::inputs, Halide order
    std::vector<int64_t> output;
};

struct SpaceResult {
    std::vector<Candidate> candidates;  // distinct, in a fixed order
    int64_t pruned_lx = 0;              // dropped: estimated LX use over the usable LX
    // Of those, the rows family's, whole: searched when no candidate is within the estimate, the
    // back end's own LX plan deciding (a row wider than the estimate allows streams in parts).
    std::vector<Candidate> over_lx;
};

// Elements of a shape.
int64_t product(const std::vector<int64_t> &shape);
// Sticks per vector of a stage: one that reads narrower values than it computes (an fp32
// accumulator over fp16 input) takes as many of its sticks as cover one stick of what it reads.
// Matmul updates are left to pe_matmul or the update's own vectorize: one stick.
int sticks_of(const StageInfo &s);
// Vector-unit cycles per stick of a stage's result: its definition and every update (auto_cost.h).
double stage_cycles_per_stick(const StageInfo &s, const MachineDesc &m);

// `max_cores` bounds the core counts tried (<= machine.cores). With `reassociate`, reductions may
// also be split over the cores and combined on the ring (family "split_k": ring_split_reduction),
// which adds the partial sums in another order than the algorithm does.
SpaceResult candidate_space(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &machine,
                            int max_cores, bool reassociate = false);

}  // namespace spyre::autosched
