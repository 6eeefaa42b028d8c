// The Spyre back end's driver: runs the passes in order, from a Halide pipeline to a verified
// device program. Each pass is in its own file pair; this one only sequences them.
//
//   capture_stmt (prove_bounds first; Halide's lowering, lower_halide, with broadcast_uniform_loads)
//   -> normalize_stmt -> legalise_types
//   -> tighten_extents -> lower_shifted_loads -> classify_memory -> fold_accumulators
//   -> lower_ring_reductions -> map_cores -> infer_dma -> [rotate_producers] -> plan_pipelines
//   -> allocate_lx -> plan_ring_shares -> select_instructions -> check_barriers
#pragma once

#include <map>
#include <string>
#include <vector>

#include "Halide.h"
#include "capture_stmt.h"
#include "device/program.h"
#include "kernel_plan.h"

namespace spyre {

struct BackendOptions {
    int64_t staging_budget_bytes = 0;  // most LX one DMA staging level may use; 0 = half of the free LX
    bool keep_stmt = false;            // keep the Stmt after each pass (for --dump-stmt and tests)
};

struct BackendResult {
    DeviceProgram program;
    KernelPlan plan;
    std::vector<std::pair<std::string, std::string>> stmts;  // (pass, Stmt text) when keep_stmt
};

BackendResult compile_kernel(Halide::Func output, const std::vector<Halide::ImageParam> &inputs,
                             const KernelSignature &sig, const MachineDesc &machine, const BackendOptions &opts = {});

// For a pipeline whose argument shapes are already fixed (fix_device_shape), e.g. a Generator's.
BackendResult compile_kernel(Halide::Pipeline pipeline, const std::vector<Halide::Argument> &args,
                             const KernelSignature &sig, const MachineDesc &machine, const BackendOptions &opts = {});

// A kernel lowered by Halide with some split factors left as int32 scalar Params, and finished for
// values of them: Halide's lowering is most of a compile, so the autoscheduler's candidates that
// differ only in tile sizes and core counts share one. finish_kernel substitutes the values,
// simplifies (the guards and clamps of splits that divide evenly fold away as they do when Halide
// sees constants), gives the tails of splits that do not divide code of their own
// (partition_tails.h, as Halide's loop partitioning does with constants) and runs the Spyre passes.
struct CapturedKernel {
    Halide::Internal::Stmt stmt;
    KernelPlan plan;  // as capture_stmt left it
    KernelSignature sig;
    std::vector<std::string> order;
    std::string output;
    MachineDesc machine;
    BackendOptions opts;
    std::map<std::string, std::string> made;  // made_func_phrases of the output, for its errors
};

CapturedKernel capture_kernel(Halide::Func output, const std::vector<Halide::ImageParam> &inputs,
                              const KernelSignature &sig, const MachineDesc &machine, const BackendOptions &opts,
                              const std::vector<Halide::Argument> &factors);

// Throws spyre::Error naming a factor of `k` that `values` leaves out.
BackendResult finish_kernel(const CapturedKernel &k, const std::map<std::string, int> &values);

}  // namespace spyre
