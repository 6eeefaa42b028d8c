// The Spyre schedule directives, written like Halide's own schedule calls and chainable:
//
//   spyre::schedule(out).ring_split(y, 32).stick_vectorize(x);
//   spyre::schedule(mx).scratchpad_store_at(out, yo);
//
// Each directive is a Halide schedule underneath (see the table in docs/directives.md), so the
// same Func can be inspected with Halide's tools; the Spyre back end reads the lowered loops,
// allocations and vectors these produce.
#pragma once

#include <string>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

class SpyreSchedule {
public:
    SpyreSchedule(Halide::Func f, const MachineDesc &machine = {});

    // Compute f in whole sticks along x: vectorize(x, sticks * lanes(type), RoundUp). A row that is
    // not a whole number of sticks is padded by its device layout, never peeled. The RVars of each
    // update it vectorizes that offset reads along x (taps, acc(x) += in(x + r - 1)) are unrolled
    // (unroll_stick_offsets below). sticks = 0 (the default): one, or, where f reduces narrower
    // values along x (an fp32 acc(x) += f32(in(x, r)) of fp16 in, or an inline sum() of them that
    // f reads at its own x), as many of f's sticks as cover one stick of those values (two).
    SpyreSchedule &stick_vectorize(const Halide::Var &x, int sticks = 0);

    // Keep f in the core's LX scratchpad, computed and allocated at g's loop v
    // (compute_at(g, v) + store_in(MemoryType::VTCM)).
    SpyreSchedule &scratchpad_store_at(const Halide::Func &g, const Halide::Var &v);
    // Keep f in LX for the whole kernel (compute_root + store_in(VTCM)).
    SpyreSchedule &scratchpad_root();
    // Materialise f in device memory (compute_root); the back end stages each use through LX.
    SpyreSchedule &device_root();
    // The device layout of f, once it is placed (device_root, scratchpad_store_at, scratchpad_root):
    // its dimensions in storage order, innermost first (Halide's reorder_storage). The first must be
    // f's first, the stick dimension; in device memory the order of the others decides which
    // accesses are long contiguous runs for the DMA (a consumer that reads f with two dimensions
    // swapped reads whole runs when f is stored in its order); in LX it orders the tile's rows.
    SpyreSchedule &device_layout(const std::vector<Halide::Var> &order);
    // The same with the stick count placed just outside `stick_count_outside` (one of `order`; the
    // stick dimension itself is the default, the stick count innermost). In torch-spyre's terms a
    // Func f(x, y) stored as device_layout({x, y}, y) has the device size (sticks, y, lanes): its
    // default layout. The rows must be whole sticks (stick_vectorize x). Device memory only: an LX
    // tile keeps its stick count innermost (any other place is refused, naming f).
    SpyreSchedule &device_layout(const std::vector<Halide::Var> &order, const Halide::Var &stick_count_outside);

    // Divide loop v (of extent `extent`) over `cores` cores of the ring: v is split into an outer
    // loop over cores, marked parallel, and an inner loop named v. The inner loop keeps v's name,
    // so later directives can still use v. Each core takes ceil(extent / cores) iterations, rounded
    // up to whole sticks when v is the Func's stick dimension (dim 0); when that does not divide,
    // the last cores take fewer, or none.
    SpyreSchedule &ring_split(const Halide::Var &v, int cores, int extent);
    // The same for a dimension of an output Func whose extent is given at compile time (the core
    // share is computed from the output buffer's extent). Only the pipeline's output has one: on
    // another Func the compile stops, naming it and asking for the form with the extent.
    SpyreSchedule &ring_split(const Halide::Var &v, int cores);
    // Either form with the core count an int32 Param (extent 0: the output's), for a schedule
    // lowered once and finished for several counts (capture_kernel in backend/compiler/
    // compile_kernel.h, as the autoscheduler does); the caller checks the counts it binds.
    SpyreSchedule &ring_split(const Halide::Var &v, const Halide::Param<int> &cores, int extent);

    // Split f's update reduction over r (extent `extent`) across `cores` cores: each core reduces
    // its share into a partial kept in its LX (rfactor, the new dimension parallel and outermost),
    // and the partials are combined by a ring reduction, not through device memory. f must be an
    // update definition (f(...) = init; f(...) += ...). Each core's share must be whole sticks.
    // With on_pe, each core's share of a matmul update runs on its PE array (split-K matmul).
    // With k_panel > 0 (on_pe only), each core's share is streamed in panels of k_panel along r
    // instead of staged whole, so that a share of W wider than LX still fits (the panel loop
    // inside the pure loops, the back end double-buffers it); with n_tile > 0 too, f's first
    // dimension is taken in tiles of n_tile (whole sticks), each tile's panels in turn.
    SpyreSchedule &ring_split_reduction(const Halide::RVar &r, int cores, int extent, bool on_pe = false,
                                        int k_panel = 0, int n_tile = 0);

    // Run f's update (a matmul: f(n, m, ...) += A(k, m, ...) * B(n, k, ...), fp16 operands widened to
    // fp32) on the PE array: the reduction loop over k goes innermost and is marked for the back
    // end, which turns the (m, n, k) nest into MATMUL instructions (fp32 accumulation, K padded to
    // whole sticks by the layouts). Without it the vector unit computes the same update, slower.
    SpyreSchedule &pe_matmul(const Halide::RVar &k);
    // The same mark without the reordering, for a matmul nest arranged by hand: update `update`'s loop
    // k is renamed pe_loop(k) and given to the PE array; the schedule then orders the nest itself
    // (reorder(pe_loop(k), n, m)). A loop only named pe_loop(k), by Halide's rename, is not marked.
    SpyreSchedule &on_pe(const Halide::RVar &k, int update = 0);

    // Ring share: the tiles staged (double-buffered) at f's update loop r, e.g. the K-panel loop of a
    // matmul, are shared by each run of `cores` consecutive cores. Every staged operand whose tile is
    // the same on all cores of a run is read from device memory by the run's first core only and
    // forwarded core to core over the ring; the others read device memory as before. Marks r's loop
    // name (the back end's plan_ring_shares checks the sharing and names the loop if it cannot).
    SpyreSchedule &ring_share(const Halide::RVar &r, int cores);

    // DMA phases at f's tile loop v (a loop of f's pure definition, e.g. the yo of split(y, yo, yi,
    // t)): every iteration of v loads its tiles, computes, stores, waits for its stores and meets
    // the other cores at a barrier, instead of double-buffering. All cores then read device memory
    // together and write it together, so the channel never mixes directions and pays no read/write
    // turnaround (docs/device_model.md); what is lost is the overlap of DMA with compute, which a
    // DMA-bound kernel barely has. v's loop is renamed v + "_phased": Funcs already computed at v
    // follow, and later scratchpad_store_at and stage_in_lx calls at v find it, so call it right
    // after the split that makes v (before staging inputs at v). Every core must meet as many
    // barriers as the others: run v's loop the same number of times or, double-buffered (in pairs
    // of iterations), the same number of pairs, so that the last core of an uneven split may run
    // one iteration fewer (schedules/tile_rows.h, phases_agree). The compile checks it on the
    // program and names the condition where the cores' paths disagree.
    SpyreSchedule &dma_phases(const Halide::Var &v);

    // Halide's split, for tiling before staging: v -> (outer, inner) with `factor` iterations inside.
    SpyreSchedule &split(const Halide::Var &v, const Halide::Var &outer, const Halide::Var &inner, int factor);
    // The same with the factor an int32 Param, bound as ring_split's above.
    SpyreSchedule &split(const Halide::Var &v, const Halide::Var &outer, const Halide::Var &inner,
                         const Halide::Param<int> &factor);

    Halide::Func func() const { return f_; }

private:
    int lanes() const;
    Halide::Expr core_share(const Halide::Var &v, const Halide::Expr &extent, int cores) const;
    Halide::Func f_;
    MachineDesc machine_;
};

inline SpyreSchedule schedule(Halide::Func f, const MachineDesc &machine = {}) { return SpyreSchedule(f, machine); }

// The names the directives give loops, for a schedule that places work at them (reorder,
// compute_at) or orders a matmul nest by hand: pe_matmul(k) and on_pe(k) rename k to pe_loop(k), the
// loop the PE array runs; ring_share(r, cores) renames r to ring_share_loop(r, cores). The names
// mark nothing: the directives record each loop's role (backend/compiler/schedule_record.h).
// Unrolls the RVars of update `update` of f that offset a read along x's stick dimension
// (acc(x) += in(x + r - 1), a stencil's taps), and with them the stencil's other RVars (its rows)
// while all its taps are at most 64: each tap then reads at a constant shift (one VSHIFT) from a
// fixed row, where a loop would shift by a run-time amount, which no Spyre instruction does.
// Throws spyre::Error naming the Func and the RVar when such an RVar has more than 64 taps or a
// run-time extent. Returns whether the update had such taps. stick_vectorize applies it; so does
// compiling, to Halide's inline reductions (inline_reductions.h).
bool unroll_stick_offsets(Halide::Func f, int update, const std::string &x);

Halide::RVar pe_loop(const Halide::RVar &k);
Halide::RVar ring_share_loop(const Halide::RVar &r, int cores);

// Stages `producer` (an input or a Func) through LX for `consumer`: a copy of the tile that
// consumer's loop v needs, computed at (consumer, v), stick vectorized, in LX. The back end turns
// the copy into DMA. Returns the wrapper Func.
// The Var of g's loop v: v, or the name dma_phases gave that loop (for compute_at by hand).
Halide::Var phased_loop_var(const Halide::Func &g, const Halide::Var &v);

Halide::Func stage_in_lx(Halide::ImageParam producer, const Halide::Func &consumer, const Halide::Var &v,
                         const MachineDesc &machine = {});
Halide::Func stage_in_lx(Halide::Func producer, const Halide::Func &consumer, const Halide::Var &v,
                         const MachineDesc &machine = {});
// Like stage_in_lx, but every consumer of `producer` reads the LX copy made at (at, v): the input
// crosses device memory once per tile.
Halide::Func stage_all_in_lx(Halide::ImageParam producer, const Halide::Func &at, const Halide::Var &v,
                             const MachineDesc &machine = {});

}  // namespace spyre
