#include "restickify_arguments.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "device/dtype_host.h"
#include "device/error.h"
#include "device/program_sequence.h"
#include "directives.h"

namespace spyre {

using namespace Halide;

namespace {

bool restickified(const TensorSpec &t) { return t.layout.stick_dim != 0; }

// The outputs' specs: CompileOptions::outputs for a pipeline of several, else CompileOptions::output.
std::vector<TensorSpec> outputs_of(const CompileOptions &o) {
    return o.outputs.empty() ? std::vector<TensorSpec>{o.output} : o.outputs;
}

// The tensor an argument sticked on dim 1 is, byte for byte: its dims swapped, sticked on (its) dim 0,
// the order's entries swapped the same way.
TensorSpec swapped(const TensorSpec &t) {
    TensorSpec s;
    s.shape = {t.shape[1], t.shape[0]};
    s.layout.stick_dim = 0;
    for (int d : t.layout.order.empty() ? std::vector<int>{0, 1} : t.layout.order) s.layout.order.push_back(1 - d);
    return s;
}

void check_restickifiable(const TensorSpec &t, DType type, const std::string &what, const MachineDesc &m) {
    const std::string layout = layout_to_string(t.layout);
    if (t.shape.size() != 2 || t.layout.stick_dim != 1)
        throw_error(what, ": layout ", layout, ": an argument sticked on another dim than dim 0 is restickified "
                    "for the kernel only at rank 2, sticked on dim 1; give it sticked on dim 0");
    if (type != DType::F16)
        throw_error(what, ": layout ", layout, ": an argument sticked on dim 1 is restickified for the kernel only "
                    "in f16, not ", dtype_name(type));
    const int64_t lanes = m.stick_bytes / dtype_bytes(type);
    for (int d = 0; d < 2; d++)
        if (t.shape[size_t(d)] % lanes)
            throw_error(what, ": layout ", layout, ": restickifying it transposes whole sticks, so both dims must be "
                        "whole sticks of ", lanes, "; dim ", d, " has ", t.shape[size_t(d)]);
}

// A program on `cores` cores that writes dst(x, y) = src(y, x): src {a, b} in its layout, dst
// {b, a} in its own, both sticked on dim 0 and whole sticks. Each core takes whole sticks of the
// output's rows (src's stick dim); a tile is 64 of them by up to 8 sticks of the output's row.
DeviceProgram compile_transpose_part(const TensorSpec &src, const TensorSpec &dst, DType type, int cores,
                                     const std::string &name, const MachineDesc &m);

// The same part again for another schedule of the same kernel (the autoscheduler compiles many):
// kept by everything it depends on.
DeviceProgram transpose_part(const TensorSpec &src, const TensorSpec &dst, DType type, int cores,
                             const std::string &name, const MachineDesc &m) {
    static std::mutex lock;
    static std::map<std::string, DeviceProgram> kept;
    std::string key = name + "|" + std::to_string(int(type)) + "|" + std::to_string(cores) + "|" +
                      layout_to_string(src.layout) + "|" + layout_to_string(dst.layout) + "|" + m.to_json_text();
    for (int64_t e : src.shape) key += "|" + std::to_string(e);
    {
        std::lock_guard<std::mutex> g(lock);
        auto it = kept.find(key);
        if (it != kept.end()) return it->second;
    }
    DeviceProgram p = compile_transpose_part(src, dst, type, cores, name, m);
    std::lock_guard<std::mutex> g(lock);
    if (kept.size() > 64) kept.clear();
    kept.emplace(key, p);
    return p;
}

DeviceProgram compile_transpose_part(const TensorSpec &src, const TensorSpec &dst, DType type, int cores,
                                     const std::string &name, const MachineDesc &m) {
    ImageParam in(dtype_host_type(type), 2, name + "_src");
    Var x("x"), y("y"), ys("ys"), yi("yi"), xo("xo"), xi("xi");
    Func out(name);
    out(x, y) = in(y, x);
    const int lanes = int(m.stick_bytes / dtype_bytes(type));
    const int rows = int(dst.shape[1]), cols = int(dst.shape[0]);
    int sticks = 1;
    for (int k = 8; k > 1; k--)
        if (cols % (k * lanes) == 0) {
            sticks = k;
            break;
        }
    SpyreSchedule s = schedule(out, m);
    s.split(y, ys, yi, lanes);
    if (cores > 1) s.ring_split(ys, cores, rows / lanes);
    s.split(x, xo, xi, sticks * lanes);
    out.reorder(xi, yi, xo, ys);
    s.stick_vectorize(xi);
    CompileOptions o;
    o.kernel_name = name;
    o.machine = m;
    o.inputs = {src};
    o.output = dst;
    return compile_for_spyre(out, {in}, o);  // on fewer cores when its rows are fewer sticks
}

}  // namespace

bool needs_restickify(const CompileOptions &options) {
    const std::vector<TensorSpec> outs = outputs_of(options);
    return std::any_of(options.inputs.begin(), options.inputs.end(), restickified) ||
           std::any_of(outs.begin(), outs.end(), restickified);
}

CompileOptions kernel_options(const CompileOptions &options) {
    CompileOptions o = options;
    auto fix = [](TensorSpec &t) {
        if (restickified(t)) t.layout = DeviceLayout{};
    };
    for (TensorSpec &t : o.inputs) fix(t);
    fix(o.output);
    for (TensorSpec &t : o.outputs) fix(t);
    return o;
}

DeviceProgram restickify_arguments(const DeviceProgram &kernel, const CompileOptions &options) {
    const std::vector<TensorSpec> outs = outputs_of(options);
    std::vector<TensorSpec> args = options.inputs;
    args.insert(args.end(), outs.begin(), outs.end());
    // The kernel's arguments are its first buffers, inputs then outputs, as compile_for_spyre makes them.
    std::vector<BufferDecl> buffers = kernel.buffers;
    std::vector<int> kernel_map(kernel.buffers.size());
    for (size_t i = 0; i < kernel_map.size(); i++) kernel_map[i] = int(i);
    std::vector<DeviceProgram> befores, afters;
    std::vector<std::vector<int>> before_maps, after_maps;
    for (size_t i = 0; i < args.size() && i < kernel.buffers.size(); i++) {
        if (!restickified(args[i])) continue;
        const BufferDecl &b = kernel.buffers[i];
        const bool input = i < options.inputs.size();
        const std::string what = std::string(input ? "input '" : "output '") + b.name + "'";
        check_restickifiable(args[i], b.type, what, options.machine);
        // The kernel reads (writes) a copy in the default layout; the argument keeps the caller's.
        BufferDecl copy = b;
        copy.name = b.name + "_restickified";
        copy.kind = BufferKind::Temp;
        copy.layout = DeviceLayout{};
        const int at = int(buffers.size());
        buffers.push_back(copy);
        buffers[i].layout = args[i].layout;
        kernel_map[i] = at;
        const TensorSpec row_major{b.shape, DeviceLayout{}};
        if (input) {
            befores.push_back(transpose_part(swapped(args[i]), row_major, b.type, kernel.num_cores,
                                             b.name + "_restickify", options.machine));
            before_maps.push_back({int(i), at});
        } else {
            afters.push_back(transpose_part(row_major, swapped(args[i]), b.type, kernel.num_cores,
                                            b.name + "_restickify", options.machine));
            after_maps.push_back({at, int(i)});
        }
    }
    std::vector<ProgramPart> parts;
    for (size_t k = 0; k < befores.size(); k++) parts.push_back({&befores[k], before_maps[k]});
    parts.push_back({&kernel, kernel_map});
    for (size_t k = 0; k < afters.size(); k++) parts.push_back({&afters[k], after_maps[k]});
    return sequence_programs(kernel.kernel_name, buffers, parts);
}

}  // namespace spyre
