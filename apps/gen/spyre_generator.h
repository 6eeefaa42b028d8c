// Helpers shared by the Spyre generators (apps/<name>/<name>_generator.cpp): the machine
// description named by the `machine` GeneratorParam, and fixing a generator's buffers to their
// device layouts when it targets Spyre. Needs Halide.h: include from generator translation units only.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "Halide.h"
#include "auto_schedule.h"
#include "compile.h"
#include "generator_info.h"
#include "rebind.h"

namespace spyre::gen {

inline MachineDesc machine_from_param(const std::string &path) {
    return path.empty() ? MachineDesc{} : MachineDesc::from_file(path);
}

// Fixes every input and the output to the shapes `info` gives for the integer GeneratorParams
// `values` (row-major, sticked on dim 0): what compile_pipeline_for_spyre expects of a Generator's
// pipeline.
inline void fix_device_shapes(const GeneratorInfo &info, const ParamValues &values,
                              const std::vector<Halide::ImageParam> &inputs, Halide::Func output, const MachineDesc &m) {
    std::vector<BufferShape> shapes = info.input_shapes(values);
    if (shapes.size() != inputs.size())
        throw std::runtime_error(info.name + ": " + std::to_string(inputs.size()) + " inputs but " +
                                 std::to_string(shapes.size()) + " shapes");
    for (size_t i = 0; i < inputs.size(); i++) fix_device_shape(inputs[i], TensorSpec{shapes[i].shape, {}}, m);
    fix_device_shape(output.output_buffer(), TensorSpec{info.output_shape(values).shape, {}}, m);
}

// The same for a generator shaped by cols x rows.
// The end of every Spyre generator's generate(): with schedule=cpu the CPU reference schedule;
// otherwise the buffers fixed to their device layouts and the named Spyre schedule, for the
// machine the `machine` param names.
template <typename CpuSchedule, typename SpyreSchedule>
void apply_schedule(const GeneratorInfo &info, const ParamValues &values, const std::string &schedule,
                    const std::string &machine_path, const std::vector<Halide::ImageParam> &inputs, Halide::Func output,
                    CpuSchedule cpu, SpyreSchedule spyre) {
    if (schedule == "cpu") return cpu();
    MachineDesc m = machine_from_param(machine_path);
    fix_device_shapes(info, values, inputs, output, m);
    if (schedule == "auto") {
        // Every generator's pipeline, scheduled by the autoscheduler for its shapes and machine
        // (at most the generator's `cores`, when it has that parameter).
        CompileOptions o;
        o.kernel_name = info.name;
        o.machine = m;
        for (const BufferShape &b : info.input_shapes(values)) o.inputs.push_back(TensorSpec{b.shape, {}});
        o.output = TensorSpec{info.output_shape(values).shape, {}};
        AutoOptions ao;
        auto cores = values.find("cores");
        if (cores != values.end()) ao.max_cores = int(cores->second);
        ao.free_layouts = auto_free_layouts();
        AutoResult r = auto_schedule(output, inputs, o, ao);
        last_auto_schedule_source() = r.cpp;
        // The buffers in the layouts it chose (the caller's where it chose none).
        last_auto_layouts().clear();
        for (size_t i = 0; i < inputs.size(); i++) {
            fix_device_shape(inputs[i], r.options.inputs[i], m);
            last_auto_layouts().push_back(r.options.inputs[i].layout);
        }
        fix_device_shape(output.output_buffer(), r.options.output, m);
        last_auto_layouts().push_back(r.options.output.layout);
        return;
    }
    spyre(m);
}

}  // namespace spyre::gen
