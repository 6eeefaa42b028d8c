// One directive call of a schedule as a record (the autoscheduler's unit of a schedule; the list
// is applied and printed by auto_directives.h and auto_print.h, and stored by tuned_schedule.h).
// No Halide.h here: the tuning database's reader and its fuzz harness use the record alone.
#pragma once

#include <string>
#include <vector>

namespace spyre::autosched {

// "__outermost" as a loop name stands for Var::outermost().
constexpr const char *kOutermost = "__outermost";

struct Directive {
    enum Kind {
        // spyre directives (dsl/directives.h)
        RingSplit,       // func, vars {v}, ints {cores, extent or 0}
        Split,           // func, vars {v, outer, inner}, ints {factor}
        StickVectorize,  // func, vars {x}, ints {sticks}
        StoreAt,         // func, at_func, vars {at_var}: scratchpad_store_at
        LxRoot,          // func: scratchpad_root
        DeviceRoot,      // func: device_root
        DeviceLayout,    // func, vars {dims in storage order, innermost first}, ints {} or {k}: the stick
                         // count just outside vars[k] (none: innermost): device_layout, after DeviceRoot
        StageAllInLx,    // func = the input's ImageParam name, at_func, vars {at_var} or {at_var, store_var}:
                         // stored at an outer loop of at_func (a sliding window over at_var)
        StageInLxAt,     // func = an input's ImageParam name, at_func, vars {loop}: in.in(at_func)
                         // computed in LX at that loop (a Var or an update's RVar), stick-vectorized
        PeMatmul,        // func, vars {rvar}
        RingShare,       // func, vars {rvar}, ints {cores}
        DmaPhases,       // func, vars {v}
        RingSplitReduction,  // func, vars {rvar}, ints {cores, extent, on_pe}
        // plain Halide calls (the tiled matmul stage, as schedules/matmul_stage.cpp writes them)
        HSplit,           // func, vars {v, outer, inner}, ints {factor}   (TailStrategy::Auto), or
                          // ints {factor, 1}: TailStrategy::RoundUp (the last piece runs on into
                          // the stick padding of the layouts, as a split of whole sticks needs)
        HFuse,            // func, vars {inner, outer, fused}
        HParallel,        // func, vars {v}
        HReorder,         // func, vars {innermost ... outermost}
        HVectorize,       // func, vars {v}, ints {lanes}                  (TailStrategy::RoundUp)
        HComputeAtLx,     // func, at_func, vars {at_var}: compute_at(at_func, at_var).store_in(VTCM);
                          // at_var is an RVar when it is none of at_func's pure args
        HStoreAt,         // func, at_func, vars {at_var}: store_at(at_func, at_var), after its compute_at
        HUpdateSplit,     // func, vars {r, outer, inner}, ints {factor}   on update(0)
        HUpdateRename,    // func, vars {old, new}                          on update(0)
        HUpdateReorder,   // func, vars {innermost ... outermost}           on update(0)
        HUpdateVectorize, // func, vars {v}, ints {lanes}                   on update(0), RoundUp
        // (the HUpdate* records act on update(`update`), 0 unless set)
        CloneIn,          // func, at_func, vars {alias}: func.clone_in(at_func), named `alias` by the
                          // records after it (a producer that two loops of a stage each compute)
        OnPe,             // func, vars {rvar}: on_pe(rvar, update), a nest the records after it order
    };
    Kind kind;
    std::string func;
    std::vector<std::string> vars;
    std::vector<int> ints;
    std::string at_func;
    int update = 0;  // which update definition the HUpdate* records schedule
    // A factor that stays a constant in a shared lowering (part of the structure): where a Param
    // would hide what Halide must see, e.g. a sliding window's region per iteration.
    bool fixed = false;
};

}  // namespace spyre::autosched
