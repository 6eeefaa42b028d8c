// Transfers over a device layout whose stick count is not the innermost of its outer dimensions
// (torch-spyre's default puts it outermost). The compiler indexes every device buffer through its
// Halide view (device/layout.h: halide_view, the stick count moved innermost), where an element's
// index is affine in its coordinates; instruction selection calls place_dma to carry one DMA of
// that view over to the buffer's real layout. The offset is split into stick, lane and outer
// coordinates, each stride of the transfer becomes the stride of the dimension it steps, and a run
// that crosses sticks becomes a dimension of its own: so a layout that scatters a core's tile
// moves it in short runs, which the model prices per run. Errors name the Func and its layout.
#pragma once

#include <functional>
#include <vector>

#include "Halide.h"
#include "device/isa.h"
#include "kernel_plan.h"
#include "spyre_intrinsics.h"

namespace spyre {

struct PlacedDma {
    Halide::Expr dram_bytes;  // byte offset in the device image
    Halide::Expr lx_offset;   // elements, as DmaCall::lx_offset
    DmaDesc desc;
};

// True when `dev`'s accesses need place_dma (its layout is not its Halide view).
bool needs_placement(const BufferInfo &dev);

// The kernel's cores, and which of them may run the transfer (the conditions around it).
struct CoreRuns {
    int count = 1;
    std::function<bool(int)> runs = [](int) { return true; };
};

// One or more descriptors that move exactly the elements `d` moves in the view. `bounds` holds the
// enclosing loops' ranges and the core index's (for simplifying the offset arithmetic); what the
// offset cannot prove for all cores at once is proved core by core, for the cores that may run it.
std::vector<PlacedDma> place_dma(const DmaCall &d, const BufferInfo &dev, int64_t stick_bytes,
                                 const Halide::Internal::Scope<Halide::Internal::Interval> &bounds,
                                 const CoreRuns &cores);

// The byte range of `dev`'s device image that view elements [lo, hi] may touch (whole outer slabs:
// a bound, not the exact set).
std::pair<int64_t, int64_t> placed_span(const BufferInfo &dev, int64_t stick_bytes, int64_t lo, int64_t hi);

}  // namespace spyre
