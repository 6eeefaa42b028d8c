// Everything instruction selection (selector.h) has decided so far for one kernel, in one value: a
// carried loop's body is selected twice (Selector::emit_carried_loop), and the selector copies this
// before the first selection and assigns the copy back before the second. A field added here is
// saved and restored with the rest; mutable selection state kept anywhere else is not, which is
// why the Selector's other members are constant per kernel or scoped around an emission (their
// comments there say which).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "Halide.h"
#include "device/hazard_tracker.h"
#include "device/isa.h"
#include "device/program_builder.h"

namespace spyre {
namespace selection {

// The program emitted so far and the tracker that adds its WAITs, which writes to this builder.
// A copy gets a tracker of its own, bound to its own builder, with the same work in flight (the
// tracker's pending set, as its save/restore interface gives it).
struct Output {
    ProgramBuilder b;
    HazardTracker hz{b};

    explicit Output(ProgramBuilder builder) : b(std::move(builder)) {}
    Output(const Output &o) : b(o.b) { hz.set_pending(o.hz.pending()); }
    Output &operator=(const Output &o) {
        b = o.b;
        hz.set_pending(o.hz.pending());
        return *this;
    }
};

// An expression temporary's slot, at a byte offset from the selector's temp_base_.
struct TempSlot {
    int64_t offset, bytes;
    bool used;
};

struct SelectionState {
    explicit SelectionState(ProgramBuilder b) : out(std::move(b)) {}

    Output out;
    std::map<std::string, Reg> vars;  // the register of each loop variable in scope
    std::map<std::string, int> parity;  // the copy a double-buffered tile's address takes (iteration parity)
    std::set<const void *> skip;        // a pipelined loop's tile DMAs, issued by emit_pipeline
    // The enclosing pipeline's prefetch of its next iteration, issued by the pipelined loop inside
    // it, a piece per iteration of that loop (select_pipelines.cpp).
    std::function<void(const std::string &piece_var, int64_t pieces)> deferred_prefetch;
    std::vector<TempSlot> temps;
    int64_t temp_peak = 0;  // the temporaries' LX bytes at most, above temp_base_
    std::string func;  // the Func being selected, for messages
    std::map<std::string, int64_t> extents;  // each loop's extent (its largest, for a dynamic one)
    // A dynamic loop's extent, an expression of the loops around it (Halide's boundary-condition
    // partitions: a row loop whose count depends on the row of its consumer).
    std::map<std::string, Halide::Expr> dynamic_extents;
    // The device-memory bytes each core reaches in each buffer, by (core, buffer) (check_spans).
    std::map<std::pair<int, std::string>, std::pair<int64_t, int64_t>> spans;
    // Of those buffers, the ones a gather reads (a DMA offset read from LX): any row, on every core.
    std::set<std::string> gathered;
    // A matmul accumulator's zero fill right before the matmul nest that writes all of it: held
    // back so that the MATMUL overwrites instead of accumulating (one vector pass over the tile
    // saved). Emitted as it is if anything else comes first.
    Halide::Internal::Stmt deferred_fill_stmt;
    std::string deferred_buf;
    const Halide::Internal::For *deferred_for = nullptr;
};

}  // namespace selection
}  // namespace spyre
