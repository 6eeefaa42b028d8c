// The entry of the Spyre back end: fixes the kernel's argument shapes and strides to their device
// layouts and lowers the Halide pipeline to the Stmt the back end starts from (lower_halide.h:
// storage flattened, vectors as Ramp/Broadcast, parallel loops intact). Also fills the plan with
// the argument buffers.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "kernel_plan.h"

namespace spyre {

struct ArgSpec {
    std::string name;             // ImageParam name; for the output, the Func name
    std::vector<int64_t> shape;   // Halide order, dim 0 innermost
    DeviceLayout layout;          // empty order = default row-major, sticked on dim 0
};

struct KernelSignature {
    std::string kernel_name;
    std::vector<ArgSpec> inputs;  // in the order of the ImageParams
    ArgSpec output;
    std::vector<ArgSpec> more_outputs;  // a pipeline's outputs after the first, in its order
};

// Fixes an argument's bounds and strides to its device layout (dim 0 sticked, its stick count the
// innermost outer dimension). `what` names the argument in errors.
void fix_device_shape(Halide::OutputImageParam p, const ArgSpec &a, const MachineDesc &m, const std::string &what);

// Throws spyre::Error naming `output` when it computes several values (a Tuple): each output of a
// kernel is one device buffer.
void check_single_valued_output(const Halide::Func &output);

// Lowers `output` for Spyre, fixing the inputs' and the output's shapes first. Throws spyre::Error
// naming the argument on a shape or layout the back end cannot take, and wraps Halide's own
// compile errors.
// `factors` are int32 scalar Params the schedule uses as split factors (the autoscheduler lowers a
// schedule once for many tile sizes, compile_kernel.h): they stay symbolic in the Stmt returned.
Halide::Internal::Stmt capture_stmt(Halide::Func output, const std::vector<Halide::ImageParam> &inputs,
                                    const KernelSignature &sig, KernelPlan &plan,
                                    const std::vector<Halide::Argument> &factors = {});

// The same for a pipeline whose argument shapes were already fixed with fix_device_shape (a
// Generator does that itself): `args` are its input buffers in order; sig.inputs follow them.
Halide::Internal::Stmt capture_stmt(Halide::Pipeline pipeline, const std::vector<Halide::Argument> &args,
                                    const KernelSignature &sig, KernelPlan &plan,
                                    const std::vector<Halide::Argument> &factors = {});

}  // namespace spyre
