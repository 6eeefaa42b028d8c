// Compiling a Halide pipeline for Spyre and running the result on the simulator.
//
//   spyre::CompileOptions opt;
//   opt.kernel_name = "softmax";
//   opt.inputs = {{{1024, 512}}};            // one shape per ImageParam, Halide order
//   opt.output = {{1024, 512}};
//   spyre::DeviceProgram p = spyre::compile_for_spyre(out, {in}, opt);
//   spyre::SpyreRun r = spyre::run_on_spyre(p, {input_buffer});   // r.output, r.stats
//
// A pipeline with several outputs (Pipeline({sum, norm})) takes one shape per output in
// CompileOptions::outputs and returns each in SpyreRun::outputs.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/layout.h"
#include "device/machine_desc.h"
#include "device/program.h"
#include "sim/simulator.h"

namespace spyre {

struct TensorSpec {
    std::vector<int64_t> shape;  // Halide order: dim 0 innermost
    DeviceLayout layout;         // default: row-major, sticked on dim 0
};

struct CompileOptions {
    std::string kernel_name = "kernel";
    MachineDesc machine;
    std::vector<TensorSpec> inputs;  // one per ImageParam, in order
    TensorSpec output;
    // A pipeline with several outputs: one per output, in the pipeline's order (`output` unused).
    std::vector<TensorSpec> outputs;
    int64_t staging_budget_bytes = 0;  // LX one DMA staging level may use; 0 = half of the free LX
    // Where the schedule as written is refused, copy its broadcast parameters (1-D inputs read one
    // value per vector) whole into each core's LX and compile once more (broadcast_inputs.h).
    // auto_schedule turns it off: it searches the inputs' placements itself.
    bool stage_broadcast_inputs = true;
};

// Lowers `output` with its Spyre schedule and returns the verified device program. Throws
// spyre::Error naming the Func and directive for a schedule the back end cannot compile.
DeviceProgram compile_for_spyre(Halide::Func output, const std::vector<Halide::ImageParam> &inputs,
                                const CompileOptions &options);

// The same for a pipeline of several outputs (Pipeline({a, b})), one shape each in options.outputs;
// every output is a device buffer of the program, in the pipeline's order after the inputs.
DeviceProgram compile_for_spyre(Halide::Pipeline pipeline, const std::vector<Halide::ImageParam> &inputs,
                                const CompileOptions &options);

// The back end's view of a compile's arguments (backend/compiler/capture_stmt.h), for callers that
// drive the back end's stages themselves (the autoscheduler's shared lowerings).
struct KernelSignature;
KernelSignature kernel_signature(const Halide::Func &output, const std::vector<Halide::ImageParam> &inputs,
                                 const CompileOptions &options);

// The same for a pipeline whose argument shapes were fixed with fix_device_shape (what a Generator
// does when it targets Spyre); `args` are its input buffers in order, matching options.inputs.
DeviceProgram compile_pipeline_for_spyre(Halide::Pipeline pipeline, const std::vector<Halide::Argument> &args,
                                         const CompileOptions &options);

// Fixes a buffer's bounds and strides to its device layout (an ImageParam, a Generator input, or a
// Func's output_buffer()). compile_for_spyre does this itself.
void fix_device_shape(Halide::OutputImageParam buffer, const TensorSpec &spec, const MachineDesc &machine = {});

// The Stmt after each back-end pass, for inspection (pass name, text).
std::vector<std::pair<std::string, std::string>> spyre_pass_dumps(Halide::Func output,
                                                                  const std::vector<Halide::ImageParam> &inputs,
                                                                  const CompileOptions &options);

struct SpyreRun {
    Halide::Runtime::Buffer<> output;  // dense, Halide order: the first output
    std::vector<Halide::Runtime::Buffer<>> outputs;  // every output (and in-out buffer), in program order
    SimStats stats;
};

// Runs a compiled program on the simulator: inputs are stickified into their device layouts,
// the outputs (and in-out buffers) unstickified back. An in-out buffer takes its
// initial contents from `inputs`, in buffer order with the inputs. Shapes and types must match the program's buffers (error names the
// argument otherwise).
SpyreRun run_on_spyre(const DeviceProgram &program, const std::vector<Halide::Runtime::Buffer<>> &inputs,
                      const MachineDesc &machine = {}, const SimOptions &options = {});
// The same with Halide::Buffer inputs (as ImageParam::set takes them).
SpyreRun run_on_spyre(const DeviceProgram &program, const std::vector<Halide::Buffer<>> &inputs,
                      const MachineDesc &machine = {}, const SimOptions &options = {});

// Device image of a host buffer for buffer `decl`, and the reverse.
std::vector<uint8_t> to_device(const Halide::Runtime::Buffer<> &host, const BufferDecl &decl, const MachineDesc &m);
Halide::Runtime::Buffer<> from_device(const std::vector<uint8_t> &image, const BufferDecl &decl, const MachineDesc &m);

}  // namespace spyre
