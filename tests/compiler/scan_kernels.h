// The running sum down the columns of docs/directives.md's "Scans" and the schedule written there
// (column tiles over the cores, each tile's scan in LX), shared by test_scans and the unseen
// pipelines.
#pragma once

#include "compiler_test_util.h"

namespace spyre::testing {

// acc(x, y) = in(x, y); acc(x, r) = acc(x, r - 1) + in(x, r) over `rows` rows; out = acc.
Algorithm column_scan(int rows);
// The output's columns in stick-wide tiles, the tile loop outermost and split over `cores`, the
// accumulator kept per column tile in LX with its update's column tiles outside its row loop.
Schedule column_tiles(int cols, int cores);

}  // namespace spyre::testing
