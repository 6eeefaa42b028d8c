#include "compile.h"

#include "broadcast_inputs.h"
#include "compile_kernel.h"
#include "inline_reductions.h"
#include "user_terms.h"
#include "device/dtype_host.h"
#include "device/error.h"
#include "device/image_pool.h"
#include "restickify_arguments.h"

namespace spyre {

using namespace Halide;

KernelSignature kernel_signature(const Func &output, const std::vector<ImageParam> &inputs, const CompileOptions &o) {
    KernelSignature sig;
    sig.kernel_name = o.kernel_name;
    if (o.inputs.size() != inputs.size())
        throw_error("kernel ", o.kernel_name, ": ", inputs.size(), " ImageParams but ", o.inputs.size(),
                    " input shapes in CompileOptions::inputs");
    for (size_t i = 0; i < inputs.size(); i++)
        sig.inputs.push_back(ArgSpec{inputs[i].name(), o.inputs[i].shape, o.inputs[i].layout});
    if (o.output.shape.empty()) throw_error("kernel ", o.kernel_name, ": CompileOptions::output has no shape");
    sig.output = ArgSpec{output.name(), o.output.shape, o.output.layout};
    return sig;
}

namespace {

halide_type_t host_type(DType t) { return dtype_host_type(t); }

}  // namespace

DeviceProgram compile_for_spyre(Func output, const std::vector<ImageParam> &inputs, const CompileOptions &options) {
    schedule_inline_reductions({output}, options.machine);
    BackendOptions bo;
    bo.staging_budget_bytes = options.staging_budget_bytes;
    // The kernel sees arguments sticked on another dim sticked on dim 0; their restickify goes around it.
    const CompileOptions ko = kernel_options(options);
    const DeviceProgram kernel = compile_staging_broadcasts(output, inputs, options, [&] {
        return compile_kernel(output, inputs, kernel_signature(output, inputs, ko), options.machine, bo).program;
    });
    return needs_restickify(options) ? restickify_arguments(kernel, options) : kernel;
}

namespace {

// Each output's spec: options.outputs when given (one per output), else options.output for a
// pipeline of one output.
std::vector<TensorSpec> output_specs(const Pipeline &pipeline, const CompileOptions &options) {
    // An undefined Pipeline (Pipeline()) has no outputs to ask for: Halide would dereference null.
    const size_t n = pipeline.defined() ? pipeline.outputs().size() : 0;
    if (n == 0) throw_error("kernel ", options.kernel_name, ": the pipeline has no output");
    if (options.outputs.empty()) {
        if (n > 1)
            throw_error("kernel ", options.kernel_name, ": the pipeline has ", n, " outputs; give one shape each in "
                        "CompileOptions::outputs");
        if (options.output.shape.empty()) throw_error("kernel ", options.kernel_name, ": CompileOptions::output has no shape");
        return {options.output};
    }
    if (options.outputs.size() != n)
        throw_error("kernel ", options.kernel_name, ": the pipeline has ", n, " outputs but CompileOptions::outputs "
                    "gives ", options.outputs.size(), " shapes");
    for (size_t i = 0; i < n; i++)
        if (options.outputs[i].shape.empty())
            throw_error("kernel ", options.kernel_name, ": CompileOptions::outputs[", i, "] ('",
                        in_user_terms(pipeline.outputs()[i].name()), "') has no shape");
    return options.outputs;
}

}  // namespace

DeviceProgram compile_for_spyre(Pipeline pipeline, const std::vector<ImageParam> &inputs, const CompileOptions &options) {
    if (options.inputs.size() != inputs.size())
        throw_error("kernel ", options.kernel_name, ": ", inputs.size(), " ImageParams but ", options.inputs.size(),
                    " input shapes in CompileOptions::inputs");
    const std::vector<TensorSpec> specs = output_specs(pipeline, options);
    std::vector<Argument> args;
    for (size_t i = 0; i < inputs.size(); i++) {
        fix_device_shape(inputs[i], options.inputs[i], options.machine);
        args.push_back(inputs[i]);
    }
    for (size_t i = 0; i < specs.size(); i++) {
        Func f = pipeline.outputs()[i];
        check_single_valued_output(f);  // before output_buffer(), which a Tuple's Func does not have
        fix_device_shape(f.output_buffer(), specs[i], options.machine);
    }
    if (specs.size() != 1) return compile_pipeline_for_spyre(pipeline, args, options);
    return compile_staging_broadcasts(pipeline.outputs()[0], inputs, options,
                                      [&] { return compile_pipeline_for_spyre(pipeline, args, options); });
}

DeviceProgram compile_pipeline_for_spyre(Pipeline pipeline, const std::vector<Argument> &args,
                                         const CompileOptions &options) {
    KernelSignature sig;
    sig.kernel_name = options.kernel_name;
    if (options.inputs.size() != args.size())
        throw_error("kernel ", options.kernel_name, ": ", args.size(), " arguments but ", options.inputs.size(),
                    " input shapes in CompileOptions::inputs");
    // The kernel sees arguments sticked on another dim sticked on dim 0; their restickify goes around it.
    const CompileOptions ko = kernel_options(options);
    for (size_t i = 0; i < args.size(); i++)
        sig.inputs.push_back(ArgSpec{args[i].name, ko.inputs[i].shape, ko.inputs[i].layout});
    const std::vector<TensorSpec> specs = output_specs(pipeline, ko);
    for (size_t i = 0; i < specs.size(); i++) {
        ArgSpec a{pipeline.outputs()[i].name(), specs[i].shape, specs[i].layout};
        if (i == 0) sig.output = a;
        else sig.more_outputs.push_back(a);
    }
    schedule_inline_reductions(pipeline.outputs(), options.machine);
    BackendOptions bo;
    bo.staging_budget_bytes = options.staging_budget_bytes;
    const DeviceProgram kernel = compile_kernel(pipeline, args, sig, options.machine, bo).program;
    return needs_restickify(options) ? restickify_arguments(kernel, options) : kernel;
}

void fix_device_shape(OutputImageParam buffer, const TensorSpec &spec, const MachineDesc &machine) {
    // An argument sticked on another dim is restickified around the kernel, which sees it sticked
    // on dim 0 (restickify_arguments.h).
    const DeviceLayout layout = spec.layout.stick_dim != 0 ? DeviceLayout{} : spec.layout;
    fix_device_shape(buffer, ArgSpec{buffer.name(), spec.shape, layout}, machine, "buffer '" + buffer.name() + "'");
}

std::vector<std::pair<std::string, std::string>> spyre_pass_dumps(Func output, const std::vector<ImageParam> &inputs,
                                                                  const CompileOptions &options) {
    schedule_inline_reductions({output}, options.machine);
    BackendOptions bo;
    bo.staging_budget_bytes = options.staging_budget_bytes;
    bo.keep_stmt = true;
    // The kernel's passes: arguments sticked on another dim as the kernel sees them (restickify_arguments.h).
    const CompileOptions ko = kernel_options(options);
    return compile_staging_broadcasts(output, inputs, options, [&] {
        return compile_kernel(output, inputs, kernel_signature(output, inputs, ko), options.machine, bo).stmts;
    });
}

std::vector<uint8_t> to_device(const Runtime::Buffer<> &host, const BufferDecl &decl, const MachineDesc &m) {
    std::string what = buffer_kind_name(decl.kind) + std::string(" '") + decl.name + "'";
    if (host.type() != host_type(decl.type))
        throw_error(what, ": host buffer has type ", host_type_name(host.type()), ", the kernel expects ",
                    host_type_name(host_type(decl.type)));
    if (host.dimensions() != int(decl.shape.size()))
        throw_error(what, ": host buffer has ", host.dimensions(), " dims, the kernel expects ", decl.shape.size());
    for (int d = 0; d < host.dimensions(); d++)
        if (host.dim(d).extent() != decl.shape[d])
            throw_error(what, ": dim ", d, " has extent ", host.dim(d).extent(), ", the kernel expects ", decl.shape[d]);
    // stickify reads a dense buffer, dim 0 innermost; copy only a host buffer that is not one.
    bool dense = true;
    int64_t stride = 1;
    for (int d = 0; d < host.dimensions(); d++) {
        dense = dense && host.dim(d).stride() == stride;
        stride *= host.dim(d).extent();
    }
    if (dense) return stickify(host.data(), decl.shape, decl.type, decl.layout, m.stick_bytes);
    Runtime::Buffer<> copy = host.copy();
    return stickify(copy.data(), decl.shape, decl.type, decl.layout, m.stick_bytes);
}

Runtime::Buffer<> from_device(const std::vector<uint8_t> &image, const BufferDecl &decl, const MachineDesc &m) {
    std::vector<int> sizes(decl.shape.begin(), decl.shape.end());
    Runtime::Buffer<> out(host_type(decl.type), sizes);
    unstickify(image, out.data(), decl.shape, decl.type, decl.layout, m.stick_bytes);
    return out;
}

SpyreRun run_on_spyre(const DeviceProgram &program, const std::vector<Runtime::Buffer<>> &inputs,
                      const MachineDesc &machine, const SimOptions &options) {
    std::vector<std::vector<uint8_t>> images(program.buffers.size());
    size_t next = 0;
    std::vector<size_t> outs;
    for (size_t i = 0; i < program.buffers.size(); i++) {
        const BufferDecl &b = program.buffers[i];
        if (b.kind == BufferKind::Input || b.kind == BufferKind::InOut) {
            if (next >= inputs.size())
                throw_error("kernel ", program.kernel_name, ": ", inputs.size(), " input buffers given, it needs more");
            if (!options.timing_only) images[i] = to_device(inputs[next], b, machine);
            next++;
        }
        if (b.kind == BufferKind::Output || b.kind == BufferKind::InOut) outs.push_back(i);
    }
    if (next != inputs.size())
        throw_error("kernel ", program.kernel_name, ": ", inputs.size(), " input buffers given, it takes ", next);
    SpyreRun r;
    if (options.timing_only) images.clear();
    SimResult sim = simulate(program, machine, std::move(images), options);
    r.stats = sim.stats;
    if (!options.timing_only) {
        for (size_t i : outs) r.outputs.push_back(from_device(sim.buffers[i], program.buffers[i], machine));
        if (!r.outputs.empty()) r.output = r.outputs[0];
    }
    give_back_images(sim.buffers);  // the next run's images start on resident pages
    return r;
}

SpyreRun run_on_spyre(const DeviceProgram &program, const std::vector<Buffer<>> &inputs, const MachineDesc &machine,
                      const SimOptions &options) {
    std::vector<Runtime::Buffer<>> raw;
    for (const Buffer<> &b : inputs) raw.push_back(*b.get());
    return run_on_spyre(program, raw, machine, options);
}

}  // namespace spyre
