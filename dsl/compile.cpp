#include "compile.h"

#include "compile_kernel.h"
#include "device/dtype_host.h"
#include "device/error.h"
#include "device/image_pool.h"

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
    BackendOptions bo;
    bo.staging_budget_bytes = options.staging_budget_bytes;
    return compile_kernel(output, inputs, kernel_signature(output, inputs, options), options.machine, bo).program;
}

DeviceProgram compile_pipeline_for_spyre(Pipeline pipeline, const std::vector<Argument> &args,
                                         const CompileOptions &options) {
    KernelSignature sig;
    sig.kernel_name = options.kernel_name;
    if (options.inputs.size() != args.size())
        throw_error("kernel ", options.kernel_name, ": ", args.size(), " arguments but ", options.inputs.size(),
                    " input shapes in CompileOptions::inputs");
    for (size_t i = 0; i < args.size(); i++)
        sig.inputs.push_back(ArgSpec{args[i].name, options.inputs[i].shape, options.inputs[i].layout});
    if (options.output.shape.empty()) throw_error("kernel ", options.kernel_name, ": CompileOptions::output has no shape");
    sig.output = ArgSpec{pipeline.outputs().empty() ? "" : pipeline.outputs()[0].name(), options.output.shape,
                         options.output.layout};
    BackendOptions bo;
    bo.staging_budget_bytes = options.staging_budget_bytes;
    return compile_kernel(pipeline, args, sig, options.machine, bo).program;
}

void fix_device_shape(OutputImageParam buffer, const TensorSpec &spec, const MachineDesc &machine) {
    fix_device_shape(buffer, ArgSpec{buffer.name(), spec.shape, spec.layout}, machine, "buffer '" + buffer.name() + "'");
}

std::vector<std::pair<std::string, std::string>> spyre_pass_dumps(Func output, const std::vector<ImageParam> &inputs,
                                                                  const CompileOptions &options) {
    BackendOptions bo;
    bo.staging_budget_bytes = options.staging_budget_bytes;
    bo.keep_stmt = true;
    return compile_kernel(output, inputs, kernel_signature(output, inputs, options), options.machine, bo).stmts;
}

std::vector<uint8_t> to_device(const Runtime::Buffer<> &host, const BufferDecl &decl, const MachineDesc &m) {
    std::string what = buffer_kind_name(decl.kind) + std::string(" '") + decl.name + "'";
    if (host.type() != host_type(decl.type))
        throw_error(what, ": host buffer has type ", int(host.type().code), "/", int(host.type().bits),
                    " bits, the kernel expects ", dtype_name(decl.type));
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
    size_t next = 0, out = program.buffers.size();
    for (size_t i = 0; i < program.buffers.size(); i++) {
        const BufferDecl &b = program.buffers[i];
        if (b.kind == BufferKind::Input || b.kind == BufferKind::InOut) {
            if (next >= inputs.size())
                throw_error("kernel ", program.kernel_name, ": ", inputs.size(), " input buffers given, it needs more");
            if (!options.timing_only) images[i] = to_device(inputs[next], b, machine);
            next++;
        }
        if ((b.kind == BufferKind::Output || b.kind == BufferKind::InOut) && out == program.buffers.size()) {
            out = i;
        }
    }
    if (next != inputs.size())
        throw_error("kernel ", program.kernel_name, ": ", inputs.size(), " input buffers given, it takes ", next);
    SpyreRun r;
    if (options.timing_only) images.clear();
    SimResult sim = simulate(program, machine, std::move(images), options);
    r.stats = sim.stats;
    if (!options.timing_only && out < program.buffers.size())
        r.output = from_device(sim.buffers[out], program.buffers[out], machine);
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
