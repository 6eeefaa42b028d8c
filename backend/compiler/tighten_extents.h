// Extents and conditions that the loops around them fix. Halide bounds a Func computed inside a
// loop whose trip count is a run-time value by expressions of that loop (a causal mask's key-tile
// loop rj < jo makes a tile's count min(jo - rj, 1)); its simplifier knows only constant loop
// bounds, so it keeps the min and guards the producers with ifs. Inside the loop such an extent is
// always its constant bound and such a condition always true: this pass rewrites them so, and the
// later passes see fixed-size tiles and straight-line bodies. Runs on normalized loops (from 0).
#pragma once

#include "Halide.h"

namespace spyre {

Halide::Internal::Stmt tighten_extents(const Halide::Internal::Stmt &s);

}  // namespace spyre
