// Random Spyre schedules for the fuzzer's pipelines (random_pipeline.h): the output's loops
// vectorised in sticks, split with tails (factors that do not divide), reordered and divided over
// cores (ring_split, extents that do not divide), or fused into one loop whose vectors cross rows
// (fuse); every other Func inlined, in device memory, in LX
// for the whole kernel or at any of the output's loops; inputs staged in LX at a loop. Or the
// autoscheduler (autoschedule/auto_schedule.h) chooses. The schedule is applied to the Pipe's Funcs
// and returned as C++ text; Halide or the directives may refuse it on the spot (they throw).
#pragma once

#include <random>
#include <string>

#include "random_pipeline.h"
#include "spyre.h"

namespace spyre::fuzzdiff {

// The compile options of a pipeline: its argument shapes, default (row-major, sticked) layouts.
CompileOptions compile_options(const Pipe &p);

// Applies a random schedule of directives to p, appending it to `cpp` as C++ as it goes (so that
// a schedule Halide refuses on the spot is still printed, with the Vars it declares).
void random_schedule(Pipe &p, std::mt19937 &rng, std::string &cpp);

// Applies the autoscheduler's schedule to p (a few candidates, one worker: a case stays cheap);
// returns it as C++. `summary`: the autoscheduler's one-line summary of its choice.
std::string auto_schedule_case(Pipe &p, uint32_t seed, std::string &summary);

}  // namespace spyre::fuzzdiff
