// The autoscheduler: schedules a pipeline for Spyre without directives from the user.
//
//   spyre::CompileOptions opt;                          // shapes (and the machine), as for compiling
//   opt.inputs = {{{1024, 512}}};
//   opt.output = {{1024, 512}};
//   spyre::AutoResult r = spyre::auto_schedule(out, {in}, opt);   // out now carries the schedule
//   spyre::DeviceProgram p = spyre::compile_for_spyre(out, {in}, opt);
//   std::cout << r.cpp;                                 // the directive calls, as C++
//
// It derives candidate schedules from the pipeline's structure (auto_space.h: core splits, row
// tiles, where each Func lives, input staging, PE or vector matmuls, ring sharing, LX-sized matmul
// tiles), ranks them with an analytical pre-filter (auto_cost.h), times the best and a seeded sample
// of the rest with the simulator's timing-only mode on every core (auto_search.h), and applies the
// fastest to the Funcs given. Every figure comes from options.machine. The pipeline must be
// unscheduled.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "Halide.h"
#include "compile.h"

namespace spyre {

struct AutoOptions {
    uint32_t seed = 1;          // the same seed, pipeline and machine give the same schedule
    int max_evaluations = 128;  // candidates the simulator times
    // A bound on the timing's wall time (candidates past it are skipped). 0, the default: none, so
    // that the result depends only on the pipeline, shapes, options, seed and machine description;
    // max_evaluations bounds the work. With a bound the result depends on the machine's speed and
    // load, and AutoResult::stopped_by_time_limit says when it cut the search.
    double time_budget_s = 0;
    // Stops the search, as the time limit does, after the first `stop_after_timing` candidates of its
    // timing order, which depends only on what the time limit's absence leaves it (the pipeline,
    // shapes, these options, the seed, the machine description) and on `workers`. A stopped search
    // ranks those candidates by their search times (loops summarised where they were) and checks
    // its winner's own lowering. A run the time limit stopped reports its count in
    // AutoResult::stopped_at: the same call with stop_after_timing = stopped_at (and the same
    // workers) chooses its schedule again, without a time limit. 0, the default: no such stop.
    int64_t stop_after_timing = 0;
    int workers = 0;            // processes timing candidates; 0: one per core
    int max_cores = 0;          // most cores a schedule may use; 0: the machine's
    bool progress = true;       // a progress bar on stderr, when it is a terminal
    // Also split reductions over the cores and combine the partials on the ring (ring_split_reduction,
    // for few outputs and a long reduction). The partial sums are then added in another order than
    // the algorithm's, so results differ from the CPU's by rounding: off unless asked for, as
    // compilers leave reassociation of floating-point sums to a flag.
    bool allow_reassociation = false;
    // Arguments (ImageParam names, or the output Func's) whose device layout the search may choose:
    // the order of their dimensions but the stick dim 0, whose stick count stays innermost (the
    // layouts the compiler takes), for ranks 3 and 4.
    // The caller then gives and takes those buffers in AutoResult::options' layouts. "*": every
    // argument. Empty: the layouts of CompileOptions, as given.
    std::vector<std::string> free_layouts;
    // A tuning database (an SQLite file; created if missing): a search's result is stored under a
    // fingerprint of the pipeline's definitions, argument shapes, types and layouts, the machine
    // description and these options (but `workers` and `progress`, which do not change the result),
    // and a later call with the same fingerprint applies it without searching. Empty: none.
    std::string tuning_db;
};

struct AutoResult {
    double us = 0;              // the chosen schedule's modelled time
    bool exact = false;         // us from a run without loop summaries
    // The timing model's validity notes for the chosen schedule's run (sim/model_validity.h): empty
    // when it stays inside the calibrated range; validity_known is false for a tuning-database entry
    // stored before the notes were.
    std::vector<std::string> validity;
    bool validity_known = false;
    std::string family;         // "rows", "columns", "column_strips", "column_tiles", "matmul", "split_k"
                                // (auto_space.h) or "fold" (auto_fold.h)
    std::string summary;        // the choices in one line
    std::string cpp;            // the directive calls as C++, with a comment saying where they came from
                                // (and the chosen layouts, as assignments to the CompileOptions)
    CompileOptions options;     // the caller's, with the layouts chosen (AutoOptions::free_layouts):
                                // compile the scheduled pipeline with these
    int64_t candidates = 0;     // schedules in the space (after the LX pre-filter)
    int64_t pruned_lx = 0;      // dropped by the pre-filter's LX estimate
    int64_t timed = 0;          // timed by the simulator
    int64_t failed = 0;         // of those, refused by the back end or the simulator
    double search_seconds = 0;  // wall time of the timing
    bool stopped_by_time_limit = false;  // AutoOptions::time_budget_s cut the search short
    // A search stopped early (by the time limit or AutoOptions::stop_after_timing): the candidates of
    // its order it ranked, which replay it (AutoOptions::stop_after_timing); 0: not stopped.
    int64_t stopped_at = 0;
    int workers = 0;                 // the processes that timed candidates
    double timed_per_second = 0;     // candidates compiled and simulated per second
    double estimated_per_second = 0; // candidates built and ranked by the pre-filter per second
    bool from_tuning_db = false;     // applied from AutoOptions::tuning_db without a search (the
                                     // figures above are the stored search's)
    std::string fingerprint;         // the search's key in a tuning database (32 hex digits)
};

// Schedules `output` (and every Func it reads) for the shapes and machine of `options`; `inputs`
// are the pipeline's ImageParams in order (one TensorSpec each in options.inputs). Throws
// spyre::Error naming the problem: a shape that does not match, a Func the autoscheduler cannot
// handle, a free layout naming no argument, or no candidate that compiles.
AutoResult auto_schedule(Halide::Func output, const std::vector<Halide::ImageParam> &inputs,
                         const CompileOptions &options, const AutoOptions &auto_options = {});

// The same for a Pipeline. One with several outputs (Pipeline({sum, norm})) takes a shape each in
// options.outputs; one of them must read all the others: it is scheduled, and the others are kept
// in device memory at root in every candidate (where the program stores them anyway), each split
// over the cores by its own rows as the search decides. AutoResult::options gives every output.
AutoResult auto_schedule(Halide::Pipeline pipeline, const std::vector<Halide::ImageParam> &inputs,
                         const CompileOptions &options, const AutoOptions &auto_options = {});

}  // namespace spyre
