// What the Spyre directives record on a Func for the back end, typed: the role a directive gave
// one of its loops (the PE array's loop: pe_matmul, on_pe, ring_split_reduction on the PE; a ring
// share and its run of cores: ring_share; DMA phases: dma_phases), and where device_layout put its
// stick count. The directive records it on the Func; capture_stmt collects the records of every
// Func it lowers (KernelPlan::loops by the loop's name in the lowered statement, and
// KernelPlan::stick_count_outside); the passes ask those, never what a loop is called.
//
// A Halide Function has no field of ours, so the records ride in its trace tags: Halide copies
// them with the Func (deep copies, clone_in) and reads them only when tracing, which Spyre
// kernels never do. This file alone writes and reads them.
#pragma once

#include <map>
#include <string>

namespace Halide::Internal {
class Function;
}

namespace spyre {

enum class LoopRole { Pe, RingShare, DmaPhases };

struct LoopDirective {
    LoopRole role = LoopRole::Pe;
    int group = 0;  // RingShare: the run of cores that share each load
};

// Records on f that its loop `var` of definition `stage` (0 the pure one, i + 1 update i), as the
// schedule names it ("ki_pe"), has directive d. Call it after the call that gives the loop its
// name: the record keeps the name Halide's dims hold then ("k$x.ki_pe"). Throws spyre::Error
// (internal) when the stage has no such loop.
void record_loop_directive(const Halide::Internal::Function &f, int stage, const std::string &var, LoopDirective d);

// Records on f that device_layout put its stick count just outside its dimension `var`.
void record_stick_count_outside(const Halide::Internal::Function &f, const std::string &var);
// That dimension's name, empty when f has no such record (the stick count innermost).
std::string stick_count_outside(const Halide::Internal::Function &f);

// The recorded loops of a lowered pipeline, by the name Halide gives each loop ("acc.s1.k$x.ki_pe").
class LoopDirectives {
public:
    // The records of every Function in env (the pipeline as lowered: wrappers and clones included).
    static LoopDirectives of(const std::map<std::string, Halide::Internal::Function> &env);

    void add(const std::string &loop, LoopDirective d) { loops_[loop] = d; }
    bool pe(const std::string &loop) const { return is(loop, LoopRole::Pe); }
    bool dma_phases(const std::string &loop) const { return is(loop, LoopRole::DmaPhases); }
    // ring_share's run of cores, 0 when the loop has none.
    int ring_share_group(const std::string &loop) const;
    const std::map<std::string, LoopDirective> &all() const { return loops_; }

private:
    bool is(const std::string &loop, LoopRole r) const;
    std::map<std::string, LoopDirective> loops_;
};

}  // namespace spyre
