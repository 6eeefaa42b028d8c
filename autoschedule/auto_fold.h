// The autoscheduler's fold family: pipelines whose output reads a running state (a Tuple Func)
// that its update definitions fold over a reduction domain, one iteration at a time, as
// FlashAttention's online softmax folds in key tiles (schedules/flash_attention.h). What each
// iteration needs is computed at the update's reduction loop in LX; the state lives in LX for one
// tile of the output; the output's outermost dimension goes over the cores. The choices searched:
// the core count, the output tile, how many of the state's dimensions run inside the reduction
// loop, for each Func whether it is computed per iteration, once per outer iteration (a head) or
// inlined, and for each input whether it is copied into LX per outer iteration, per tile or left
// to the back end. A Func with updates that two update definitions each need per iteration (a
// causal mask's diagonal tile reads the scores too) is cloned for the second (Func::clone_in).
// The pre-filter ranks candidates by their device-memory traffic (an input that differs per
// iteration and is not copied once per head is read again for every tile) and per-tile overheads,
// and drops those whose state and copies cannot fit LX; the simulator decides the rest (tiles,
// where the reduction loop goes, what is inlined).
#pragma once

#include <string>

#include "auto_space.h"

namespace spyre::autosched {

// Appends the family's candidates for `info` (which has a Tuple stage) to `out`. Returns "" when
// the pipeline has the family's form, or why not (for the error naming the Func).
std::string fold_family(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &machine, int max_cores,
                        SpaceResult &out);

}  // namespace spyre::autosched
