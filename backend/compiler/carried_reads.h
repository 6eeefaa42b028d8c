// Reads of a Func's own earlier values: an update such as a running sum,
// acc(x, r) = acc(x, r - 1) + in(x, r), reads what an earlier iteration of its loop wrote. Code that
// runs several iterations at once (one vector instruction over a loop's rows, which reads all its
// sources before it writes; loop fission, which runs one statement's iterations before the next
// statement's) must not take iterations whose reads meet their writes, or the running value is
// lost. The passes that merge iterations ask here; the errors they raise name the loop as the user
// wrote it.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "Halide.h"

namespace spyre {

// Whether one step that runs the iterations of loops `merged` of the nest around `st` together
// (its store writing `span` consecutive elements from the store's index, every access moving with
// those loops as the store does) reads no element of st's buffer that the step writes, other than
// each element's own old value (acc(x) = acc(x) + ..., read and written in place). Reads it
// cannot place (shifted, strided or moving otherwise than the store) count as meeting the writes.
bool step_reads_only_own_elements(const Halide::Internal::Store *st, const std::set<std::string> &merged,
                                  int64_t span);

// Whether `e` loads from buffer `name`.
bool reads_buffer(const Halide::Expr &e, const std::string &name);

// A loop's name as the schedule wrote it: Halide's "acc.s1.r$x.rebased" is the update's loop over r.x.
std::string user_loop_name(const std::string &loop);

}  // namespace spyre
