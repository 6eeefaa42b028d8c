#include "spyre_host.h"

#include <iostream>
#include <map>
#include <memory>
#include <mutex>

#include "device/dtype_host.h"
#include "device/error.h"
#include "device/layout.h"
#include "device/program_io.h"

namespace spyre::host {

namespace {

halide_type_t host_type(DType t) { return dtype_host_type(t); }

}  // namespace

std::vector<uint8_t> to_device_image(const halide_buffer_t &host, const BufferDecl &decl, const MachineDesc &m) {
    std::string what = buffer_kind_name(decl.kind) + std::string(" '") + decl.name + "'";
    if (!(host.type == host_type(decl.type)))
        throw_error(what, ": host buffer has type ", host_type_name(host.type), ", the kernel expects ",
                    host_type_name(host_type(decl.type)));
    if (host.dimensions != int(decl.shape.size()))
        throw_error(what, ": host buffer has ", host.dimensions, " dims, the kernel expects ", decl.shape.size());
    for (int d = 0; d < host.dimensions; d++)
        if (host.dim[d].extent != decl.shape[d])
            throw_error(what, ": dim ", d, " has extent ", host.dim[d].extent, ", the kernel expects ", decl.shape[d]);
    if (!host.host) throw_error(what, ": host buffer has no host allocation");
    Halide::Runtime::Buffer<> view(host);
    Halide::Runtime::Buffer<> dense = view.copy();  // dense, dim 0 innermost
    return stickify(dense.data(), decl.shape, decl.type, decl.layout, m.stick_bytes);
}

Halide::Runtime::Buffer<> from_device_image(const std::vector<uint8_t> &image, const BufferDecl &decl,
                                            const MachineDesc &m) {
    std::vector<int> sizes(decl.shape.begin(), decl.shape.end());
    Halide::Runtime::Buffer<> out(host_type(decl.type), sizes);
    unstickify(image, out.data(), decl.shape, decl.type, decl.layout, m.stick_bytes);
    return out;
}

namespace {

// Checks that `host` can take the result of buffer `decl` (its type and extents).
void check_output_buffer(const halide_buffer_t *host, const BufferDecl &decl) {
    if (!host) throw_error("output '", decl.name, "' is a null buffer");
    if (!(host->type == host_type(decl.type)) || host->dimensions != int(decl.shape.size()))
        throw_error("output '", decl.name, "': host buffer has type ", host_type_name(host->type), " and ", host->dimensions,
                    " dims, the kernel writes ", host_type_name(host_type(decl.type)), " with ", decl.shape.size());
    for (int d = 0; d < host->dimensions; d++)
        if (host->dim[d].extent != decl.shape[d])
            throw_error("output '", decl.name, "': dim ", d, " has extent ", host->dim[d].extent, ", the kernel writes ",
                        decl.shape[d]);
}

// run_program's body: `outputs` take the program's first outputs (and in-out buffers), in order.
SimStats run_with_outputs(const DeviceProgram &program, const std::vector<const halide_buffer_t *> &inputs,
                          const std::vector<halide_buffer_t *> &outputs, const MachineDesc &machine,
                          const SimOptions &options) {
    std::vector<std::vector<uint8_t>> images(program.buffers.size());
    std::vector<size_t> results;  // the buffers `outputs` receive, in order
    size_t next = 0;
    for (size_t i = 0; i < program.buffers.size(); i++) {
        const BufferDecl &b = program.buffers[i];
        if (b.kind == BufferKind::Input || b.kind == BufferKind::InOut) {
            if (next < inputs.size()) {
                if (!inputs[next]) throw_error("input '", b.name, "' is a null buffer");
                if (!options.timing_only) images[i] = to_device_image(*inputs[next], b, machine);
            }
            next++;
        }
        if ((b.kind == BufferKind::Output || b.kind == BufferKind::InOut) && results.size() < outputs.size())
            results.push_back(i);
    }
    if (next != inputs.size())
        throw_error(inputs.size(), " input buffers given, the kernel takes ", next);
    if (results.empty()) throw_error("the program has no output buffer");
    if (results.size() != outputs.size())
        throw_error(outputs.size(), " output buffers given, the kernel writes ", results.size());
    if (!options.timing_only)
        for (size_t k = 0; k < results.size(); k++) check_output_buffer(outputs[k], program.buffers[results[k]]);
    SimResult sim = simulate(program, machine, options.timing_only ? std::vector<std::vector<uint8_t>>{} : images, options);
    if (!options.timing_only)
        for (size_t k = 0; k < results.size(); k++) {
            Halide::Runtime::Buffer<> result = from_device_image(sim.buffers[results[k]], program.buffers[results[k]], machine);
            Halide::Runtime::Buffer<> dst(*outputs[k]);
            dst.copy_from(result);
        }
    return sim.stats;
}

int outputs_of_kind(const DeviceProgram &program) {
    int n = 0;
    for (const BufferDecl &b : program.buffers) n += b.kind == BufferKind::Output || b.kind == BufferKind::InOut;
    return n;
}

}  // namespace

SimStats run_program(const DeviceProgram &program, const std::vector<const halide_buffer_t *> &inputs,
                     halide_buffer_t *output, const MachineDesc &machine, const SimOptions &options) {
    return run_with_outputs(program, inputs, {output}, machine, options);
}

SimStats run_program(const DeviceProgram &program, const std::vector<const halide_buffer_t *> &inputs,
                     const std::vector<halide_buffer_t *> &outputs, const MachineDesc &machine,
                     const SimOptions &options) {
    const int n = outputs_of_kind(program);
    if (int(outputs.size()) != n) throw_error(outputs.size(), " output buffers given, the kernel writes ", n);
    return run_with_outputs(program, inputs, outputs, machine, options);
}

int run_kernel_file(const std::string &program_path, const std::string &machine_path,
                    const std::vector<const halide_buffer_t *> &inputs, const std::vector<halide_buffer_t *> &outputs,
                    SimStats *stats) {
    static std::mutex mu;
    static std::map<std::string, std::shared_ptr<const DeviceProgram>> programs;
    static std::map<std::string, std::shared_ptr<const MachineDesc>> machines;
    std::string kernel = program_path;
    try {
        std::shared_ptr<const DeviceProgram> program;
        std::shared_ptr<const MachineDesc> machine;
        {
            std::lock_guard<std::mutex> lock(mu);
            auto &p = programs[program_path];
            if (!p) p = std::make_shared<DeviceProgram>(read_program_file(program_path));
            program = p;
            auto &mc = machines[machine_path];
            if (!mc) mc = std::make_shared<MachineDesc>(machine_path.empty() ? MachineDesc{} : MachineDesc::from_file(machine_path));
            machine = mc;
        }
        kernel = program->kernel_name;
        SimStats s = outputs.size() == 1 ? run_with_outputs(*program, inputs, outputs, *machine, {})
                                         : run_program(*program, inputs, outputs, *machine);
        if (stats) *stats = s;
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "spyre: " << kernel << ": " << e.what() << "\n";
        return -1;
    }
}

int run_kernel_file(const std::string &program_path, const std::string &machine_path,
                    const std::vector<const halide_buffer_t *> &inputs, halide_buffer_t *output, SimStats *stats) {
    return run_kernel_file(program_path, machine_path, inputs, std::vector<halide_buffer_t *>{output}, stats);
}

}  // namespace spyre::host
