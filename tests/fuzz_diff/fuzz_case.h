// One case of spyre-fuzz-diff: the pipeline (random_pipeline.h) and schedule (random_schedule.h)
// that a seed and a case index make, compiled for Spyre, run on the simulator and compared with
// Halide's CPU realisation (fuzz_case_check.h). Everything a case draws comes from (seed, index),
// so `spyre-fuzz-diff --seed S --case K` rebuilds case K of a run alone.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace spyre::fuzzdiff {

enum class Verdict {
    Match,      // the device computes what the CPU does
    Refused,    // the compiler (or Halide, for the schedule) refused with an error naming the problem
    InvalidSchedule,  // refused, and Halide's CPU refuses the same schedule on the same buffers too
                      // (bounds past an input or output, a compute_at Halide does not allow): the
                      // case is not a valid program, so refusing it is right (the stencils that read
                      // outside their input land here)
    LeakedName, // refused, or matched, but a refusal or the auto_schedule summary names something the
                // user never wrote (leaked_names.h)
    Mismatch,   // accepted, but wrong: another value, a simulator error, or an out-of-bounds read compiled
    Internal,   // an error whose message says "internal", or a Halide internal error
    Crash,      // the case died on a signal (fuzz_diff_main.cpp runs each case in a child process)
    Timeout,    // the case ran past the time limit
    FuzzerBug,  // the CPU reference itself failed: the generator built something invalid
};
const char *verdict_name(Verdict v);
inline bool is_failure(Verdict v) {
    return v != Verdict::Match && v != Verdict::Refused && v != Verdict::InvalidSchedule;
}

struct CaseResult {
    std::string family;        // the pipeline's family: the category it is counted in
    bool autoscheduled = false;
    Verdict verdict = Verdict::Match;
    std::string message;       // the refusal, the mismatch or the error
    std::string halide_error;  // InvalidSchedule: what Halide's CPU said of the same schedule
    std::string cpp;           // the pipeline and its schedule as C++
};

// Runs case `index` of the run seeded with `seed`. `progress` is called with what is known so far
// (the pipeline, then the schedule) before each step that might crash.
CaseResult run_case(uint32_t seed, int index, const std::function<void(const CaseResult &)> &progress = {});
// The family of case `index` of `seed`'s pipeline (random_pipeline.h), without running it.
std::string case_family(uint32_t seed, int index);

}  // namespace spyre::fuzzdiff
