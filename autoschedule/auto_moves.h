// The autoscheduler's local search neighbourhood (auto_search.h): which candidates are one move from
// the best so far. Candidates are compared by their typed choices (Candidate::choices, auto_space.h:
// cores=4, tile=256, segmented, fa_exps:inline): a move changes, adds or drops one.
// A move to a structure not lowered yet costs a Halide lowering (a few hundred ms at attention's
// size), so along a numeric choice (a tile, a core count) such moves go one value at a time:
// hill-climbing, where jumping to every value would pay a lowering for each. Moves within lowered
// structures cost a simulation each and go to every value.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "auto_space.h"

namespace spyre::autosched {

// The one choice in which two summaries differ, with its values ("" where absent or valueless).
struct ChoiceDiff {
    std::string name, from, to;
};

// None when the two candidates' choices differ in no choice or in more than one (a choice is
// identified by its name; a changed value or form is a change).
std::optional<ChoiceDiff> one_choice_apart(const std::vector<Choice> &a, const std::vector<Choice> &b);

// The moves from candidate `best` among `candidates` (indices into `choices`): those one choice
// apart that are not `timed` yet; of those that are not `lowered` and differ in a numeric choice,
// only the nearest value above and below best's among all candidates one choice apart (timed or
// not, so that the search does not jump past a value already found worse). In `candidates`' order.
std::vector<size_t> local_moves(const std::vector<std::vector<Choice>> &choices, size_t best,
                                const std::vector<size_t> &candidates, const std::function<bool(size_t)> &timed,
                                const std::function<bool(size_t)> &lowered);

}  // namespace spyre::autosched
