// The autoscheduler's column-strips family: a 2-D output whose ops read column reductions (a Func
// of the columns reduced over the rows of what it reads, acc(x) = max(acc(x), in(x, r)), or inline,
// maximum(in(x, r))), as torch.softmax(x, dim=0) does with its column maxima and sums. A row split
// or row tiles cannot divide such a pipeline: every row of the output needs the reductions over all
// rows. Its columns can: the output's columns go in strips of whole sticks, the strip loop
// outermost (all rows of a strip, then the next strip: split(x, xo, xi), reorder(xi, y, xo)), the
// strips over the cores (ring_split(xo): each core whole sticks of columns, the same number on
// every core), each strip's reductions and 2-D intermediates kept in LX at the strip
// (scratchpad_store_at(out, xo)) and its inputs copied into LX once per strip (stage_all_in_lx),
// as schedules/softmax.cpp's dim-0 stage4 does by hand. The choices searched: the core count, the
// strip's width in sticks, each 2-D intermediate kept at the strip or inlined, each input copied
// per strip or left to the back end, and an inline reduction folded into its consumer or kept at
// the strip. The pre-filter drops strips whose rows cannot fit LX.
#pragma once

#include <set>
#include <string>

#include "auto_space.h"

namespace spyre::autosched {

// Appends the family's candidates to `out` (none when the pipeline does not have its form).
void column_strips_family(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &machine,
                          int max_cores, SpaceResult &out, std::set<std::string> &seen);

}  // namespace spyre::autosched
