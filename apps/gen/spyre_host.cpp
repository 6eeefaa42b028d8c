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

std::string type_text(const halide_type_t &t) {
    const char *code = t.code == halide_type_float ? "float" : t.code == halide_type_int ? "int"
                       : t.code == halide_type_uint ? "uint" : "handle";
    return std::string(code) + std::to_string(int(t.bits));
}

}  // namespace

std::vector<uint8_t> to_device_image(const halide_buffer_t &host, const BufferDecl &decl, const MachineDesc &m) {
    std::string what = buffer_kind_name(decl.kind) + std::string(" '") + decl.name + "'";
    if (!(host.type == host_type(decl.type)))
        throw_error(what, ": host buffer has type ", type_text(host.type), ", the kernel expects ", dtype_name(decl.type));
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

SimStats run_program(const DeviceProgram &program, const std::vector<const halide_buffer_t *> &inputs,
                     halide_buffer_t *output, const MachineDesc &machine, const SimOptions &options) {
    std::vector<std::vector<uint8_t>> images(program.buffers.size());
    size_t next = 0, out = program.buffers.size();
    for (size_t i = 0; i < program.buffers.size(); i++) {
        const BufferDecl &b = program.buffers[i];
        if (b.kind == BufferKind::Input || b.kind == BufferKind::InOut) {
            if (next < inputs.size()) {
                if (!inputs[next]) throw_error("input '", b.name, "' is a null buffer");
                if (!options.timing_only) images[i] = to_device_image(*inputs[next], b, machine);
            }
            next++;
        }
        if ((b.kind == BufferKind::Output || b.kind == BufferKind::InOut) && out == program.buffers.size()) {
            out = i;
        }
    }
    if (next != inputs.size())
        throw_error(inputs.size(), " input buffers given, the kernel takes ", next);
    if (out == program.buffers.size()) throw_error("the program has no output buffer");
    const BufferDecl &od = program.buffers[out];
    if (!options.timing_only) {
        if (!output) throw_error("output '", od.name, "' is a null buffer");
        // Check the output's type and extents before running (to_device_image checks them).
        halide_buffer_t probe = *output;
        if (!(probe.type == host_type(od.type)) || probe.dimensions != int(od.shape.size()))
            throw_error("output '", od.name, "': host buffer has type ", type_text(probe.type), " and ",
                        probe.dimensions, " dims, the kernel writes ", dtype_name(od.type), " with ", od.shape.size());
        for (int d = 0; d < probe.dimensions; d++)
            if (probe.dim[d].extent != od.shape[d])
                throw_error("output '", od.name, "': dim ", d, " has extent ", probe.dim[d].extent,
                            ", the kernel writes ", od.shape[d]);
    }
    SimResult sim = simulate(program, machine, options.timing_only ? std::vector<std::vector<uint8_t>>{} : images, options);
    if (!options.timing_only) {
        Halide::Runtime::Buffer<> result = from_device_image(sim.buffers[out], od, machine);
        Halide::Runtime::Buffer<> dst(*output);
        dst.copy_from(result);
    }
    return sim.stats;
}

int run_kernel_file(const std::string &program_path, const std::string &machine_path,
                    const std::vector<const halide_buffer_t *> &inputs, halide_buffer_t *output, SimStats *stats) {
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
        SimStats s = run_program(*program, inputs, output, *machine);
        if (stats) *stats = s;
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "spyre: " << kernel << ": " << e.what() << "\n";
        return -1;
    }
}

}  // namespace spyre::host
