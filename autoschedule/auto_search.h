// The autoscheduler's search: times candidates (auto_space.h) with the simulator's timing-only mode
// (exact where the program is small, loops summarised otherwise) on fresh deep copies of the
// pipeline: first the pre-filter's favourite for each worker, then each family's best estimates, the
// pre-filter's best overall, each family's plainest candidate (everything inline, the most cores,
// one row at a time) and a seeded sample of the rest, more rounds while most candidates fail
// to compile, then a local search over the best one's neighbours (one choice changed; a move that
// costs a lowering goes one value at a time along a numeric choice: auto_moves.h); the
// finalists (the plainest among them) are lowered on their own and re-timed exactly where that is
// cheap, and the winner is lowered on its own, as the caller will compile it, and timed again where that
// is another program (a winner that lowering refuses gives way to the next). A candidate is not
// simulated when its static time bound is 1.25 times the best its worker knows, and its simulation
// stops there otherwise (it cannot win; it is recorded at that bound), so hopeless ones cost little.
// The workers (auto_workers.h) are processes, one per core, that live for the whole search and keep
// their lowerings: a structure's candidates, in every round, go to the worker that lowered it.
// Bounded by a candidate budget and a wall time (past which untimed candidates are skipped, so only
// the wall-time bound can make two runs differ). A progress bar with the best time so far goes to
// stderr when it is a terminal.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "Halide.h"
#include "auto_space.h"
#include "compile.h"

namespace spyre::autosched {

struct SearchOptions {
    uint32_t seed = 1;
    int max_evaluations = 128;  // candidates timed by the simulator
    double time_budget_s = 0;   // wall time of the timing; past it, untimed candidates are skipped. 0: no bound
    // Stops the search as a time limit does once it would time candidate number stop_after_timing
    // + 1 of its order (AutoOptions::stop_after_timing). 0: no such stop.
    int64_t stop_after_timing = 0;
    int workers = 0;            // processes; 0: one per core
    bool progress = true;       // on stderr, when it is a terminal
    int finalists = 4;          // the best few re-timed without loop summaries, when that is cheap
    int siblings = 16;          // per candidate chosen, more timed that share its lowering (LoweringCache)
    int max_cores = 0;          // a program on more cores is refused; 0: the machine's
};

struct Timed {
    size_t index = 0;  // into the candidate list
    bool ok = false;   // compiled and simulated
    double us = 0;     // modelled time
};

struct SearchResult {
    std::vector<Timed> timed;  // every candidate timed, in the order chosen for timing
    size_t best = 0;           // candidate index of the winner
    double best_us = 0;
    bool exact = false;        // best_us from a run without loop summaries
    uint32_t validity = 0;     // the winner's validity notes, a bit per row of validity_bounds()
    int failed = 0;            // candidates the back end or the simulator refused
    double seconds = 0;        // wall time of the timing
    bool stopped_by_time = false;  // time_budget_s cut the search short: the result depends on load
    // A search stopped early (by the time limit or stop_after_timing) ranks the first `stopped_at`
    // candidates of its order, all timed, on their search times; 0: it was not stopped.
    int64_t stopped_at = 0;
    int workers = 1;               // the processes that timed (the order depends on their number)
    std::string first_error;   // why the pre-filter's favourite failed, when every candidate did
};

// The modelled time of one candidate on a deep copy of the pipeline (the original is untouched):
// exact (no loop summaries) when the program's static instruction count is at most `exact_limit`,
// else with loops summarised, which is faster but can rank schedules differently; with
// `require_exact`, a program over the limit throws instead. Throws what the directives, the back
// end or the simulator throw.
double time_candidate(const Halide::Func &output, const std::vector<Halide::ImageParam> &inputs,
                      const Candidate &c, const CompileOptions &opt, int64_t exact_limit = int64_t(1) << 20,
                      bool require_exact = false);

// Halide lowerings shared by the candidates of one search whose directives differ only in their
// factors (auto_directives.h, structure_key): lowered once with the factors as Params, finished for
// each candidate's values (and layouts). A candidate whose shared finish the back end refuses is
// lowered on its own, unless the refusal is an LX overflow or a sibling's plain lowering was
// refused the same way (the same message but for its numbers). A structure that Halide cannot
// lower with symbolic factors is lowered per candidate, and so is one that no other candidate
// shares (lower_alone). The programs of candidates lowered on their own are kept: the same
// candidate asked for again (the finalists' exact runs) is not lowered again.
class LoweringCache {
public:
    LoweringCache();
    ~LoweringCache();
    LoweringCache(const LoweringCache &) = delete;
    LoweringCache &operator=(const LoweringCache &) = delete;
    int64_t lowerings() const { return lowerings_; }  // Halide lowerings run (shared or not)
    int64_t shared_hits() const { return hits_; }     // candidates finished from a shared lowering
    // The structure of `c` has no other candidate: lower it as the caller would (its factors
    // constant), since a shared lowering would serve no one else.
    void lower_alone(const Candidate &c);
    // `c`'s program here is its own lowering (lowered alone, or on its own after a refused finish):
    // the program the caller gets from compile_for_spyre.
    bool holds_own_program(const Candidate &c) const;

private:
    struct Entry;
    std::map<std::string, std::shared_ptr<Entry>> entries_;  // by structure_key
    std::set<std::string> alone_;                           // structure keys lowered per candidate
    std::map<std::string, DeviceProgram> own_;              // by directives and layouts
    int64_t lowerings_ = 0, hits_ = 0;
    friend DeviceProgram lower_candidate(const Halide::Func &, const std::vector<Halide::ImageParam> &,
                                         const Candidate &, const CompileOptions &, LoweringCache *);
};

// The device program of candidate `c`, through `cache` (null: lowered on its own). The two are the
// same program but where Halide partitions loops otherwise with constant factors than with symbolic
// ones: causal attention's masked loops and conv1d's boundary tiles (a few percent in time; the
// search times its winner's own lowering at the end). Throws what the directives or the back end
// throw.
DeviceProgram lower_candidate(const Halide::Func &output, const std::vector<Halide::ImageParam> &inputs,
                              const Candidate &c, const CompileOptions &opt, LoweringCache *cache);

// time_candidate through `cache` (null: lowered on its own; see lower_candidate). With
// `stop_after_us`, a candidate that takes at least that long returns a time at or past it without
// being timed to the end: either its static lower bound (sim/program_work.h) reaches it, or
// its simulation stops there. The search stops candidates far slower than its best so far.
double time_candidate(const Halide::Func &output, const std::vector<Halide::ImageParam> &inputs,
                      const Candidate &c, const CompileOptions &opt, int64_t exact_limit, bool require_exact,
                      LoweringCache *cache, double stop_after_us = 0);

// Throws spyre::Error when no candidate compiles (naming the pre-filter favourite's error).
SearchResult search(const Halide::Func &output, const std::vector<Halide::ImageParam> &inputs,
                    const std::vector<Candidate> &candidates, const CompileOptions &opt, const SearchOptions &so);

}  // namespace spyre::autosched
