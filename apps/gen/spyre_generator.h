// What every Spyre generator (apps/<name>/<name>_generator.cpp) shares: the SpyreGenerator<T> base
// with the `schedule` and `machine` GeneratorParams, and apply_schedule(), the end of generate()
// that fixes the buffers to their device layouts and applies the named schedule, the CPU reference
// schedule or the autoscheduler (whose choice stays on the generator: SpyreGeneratorState). Needs
// Halide.h: include from generator translation units only.
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

// Fixes every input and output to the shapes `info` gives for the integer GeneratorParams
// `values`, in the layouts `request` names (row-major, sticked on dim 0, for the others): what
// compile_pipeline_for_spyre expects of a Generator's pipeline.
inline TensorSpec spec_of(const BufferShape &b, const AutoRequest &request) { return TensorSpec{b.shape, layout_of(b, request)}; }

inline void fix_device_shapes(const GeneratorInfo &info, const ParamValues &values,
                              const std::vector<Halide::ImageParam> &inputs, const std::vector<Halide::Func> &outputs,
                              const MachineDesc &m, const AutoRequest &request) {
    std::vector<BufferShape> shapes = info.input_shapes(values), out_shapes = info.output_shapes(values);
    if (shapes.size() != inputs.size())
        throw std::runtime_error(info.name + ": " + std::to_string(inputs.size()) + " inputs but " +
                                 std::to_string(shapes.size()) + " shapes");
    if (out_shapes.size() != outputs.size())
        throw std::runtime_error(info.name + ": " + std::to_string(outputs.size()) + " outputs but " +
                                 std::to_string(out_shapes.size()) + " output shapes");
    for (size_t i = 0; i < inputs.size(); i++) fix_device_shape(inputs[i], spec_of(shapes[i], request), m);
    for (size_t i = 0; i < outputs.size(); i++)
        fix_device_shape(outputs[i].output_buffer(), spec_of(out_shapes[i], request), m);
}

// The end of every Spyre generator's generate(): with schedule=cpu the CPU reference schedule;
// otherwise the buffers fixed to their device layouts and the named Spyre schedule, for the
// machine the `machine` param names; schedule=auto records its choice in `state.auto_choice`.
// `outputs` are the generator's outputs in order (one, or several for a Pipeline({a, b})).
template <typename CpuSchedule, typename SpyreSchedule>
void apply_schedule(SpyreGeneratorState &state, const GeneratorInfo &info, const ParamValues &values,
                    const std::string &schedule, const std::string &machine_path,
                    const std::vector<Halide::ImageParam> &inputs, const std::vector<Halide::Func> &outputs,
                    CpuSchedule cpu, SpyreSchedule spyre) {
    if (schedule == "cpu") return cpu();
    MachineDesc m = machine_from_param(machine_path);
    fix_device_shapes(info, values, inputs, outputs, m, state.auto_request);
    if (schedule == "auto") {
        // Every generator's pipeline, scheduled by the autoscheduler for its shapes and machine
        // (at most the generator's `cores`, when it has that parameter).
        CompileOptions o;
        o.kernel_name = info.name;
        o.machine = m;
        for (const BufferShape &b : info.input_shapes(values)) o.inputs.push_back(spec_of(b, state.auto_request));
        const std::vector<BufferShape> out_shapes = info.output_shapes(values);
        o.output = spec_of(out_shapes[0], state.auto_request);
        if (out_shapes.size() > 1)
            for (const BufferShape &b : out_shapes) o.outputs.push_back(spec_of(b, state.auto_request));
        AutoOptions ao;
        auto cores = values.find("cores");
        if (cores != values.end()) ao.max_cores = int(cores->second);
        ao.free_layouts = state.auto_request.free_layouts;
        ao.tuning_db = state.auto_request.tuning_db;
        AutoResult r = auto_schedule(Halide::Pipeline(outputs), inputs, o, ao);
        state.auto_choice = AutoChoice{r.cpp, {}, r.from_tuning_db, r.fingerprint};
        // The buffers in the layouts it chose (the caller's where it chose none).
        for (size_t i = 0; i < inputs.size(); i++) {
            fix_device_shape(inputs[i], r.options.inputs[i], m);
            state.auto_choice.layouts.push_back(r.options.inputs[i].layout);
        }
        const std::vector<TensorSpec> chosen_outputs = outputs.size() > 1 ? r.options.outputs
                                                                          : std::vector<TensorSpec>{r.options.output};
        for (size_t i = 0; i < outputs.size(); i++) {
            fix_device_shape(outputs[i].output_buffer(), chosen_outputs.at(i), m);
            state.auto_choice.layouts.push_back(chosen_outputs.at(i).layout);
        }
        return;
    }
    spyre(m);
}

// The base of every Spyre generator: `class MyGenerator : public spyre::gen::SpyreGenerator<MyGenerator>`
// declares its shape GeneratorParams and its buffers, builds its pipeline in generate() and ends it
// with apply_schedule(info(), values, inputs, output, cpu_schedule, spyre_schedule).
template <typename T>
class SpyreGenerator : public Halide::Generator<T>, public SpyreGeneratorState {
public:
    // One of the generator's Spyre schedules, "auto", or "cpu" (the CPU reference schedule).
    Halide::GeneratorParam<std::string> schedule{"schedule", "cpu"};
    // A machine description file; "" is the default machine.
    Halide::GeneratorParam<std::string> machine{"machine", ""};

protected:
    template <typename CpuSchedule, typename SpyreSchedule>
    void apply_schedule(const GeneratorInfo &info, const ParamValues &values, const std::vector<Halide::ImageParam> &inputs,
                        Halide::Func output, CpuSchedule cpu, SpyreSchedule spyre) {
        gen::apply_schedule(*this, info, values, schedule, machine, inputs, {output}, cpu, spyre);
    }
    // The same for a generator with several outputs, in the pipeline's order (GeneratorInfo::outputs_of).
    template <typename CpuSchedule, typename SpyreSchedule>
    void apply_schedule(const GeneratorInfo &info, const ParamValues &values, const std::vector<Halide::ImageParam> &inputs,
                        const std::vector<Halide::Func> &outputs, CpuSchedule cpu, SpyreSchedule spyre) {
        gen::apply_schedule(*this, info, values, schedule, machine, inputs, outputs, cpu, spyre);
    }
};

// The base of a generator over rows of an fp16 {cols, rows} tensor (softmax, layernorm, rmsnorm,
// gelu, stencil, transpose): the cols and rows GeneratorParams, the input `in` (its first input;
// the derived class declares any others after it) and the output. Its info is rows_generator_info.
template <typename T>
class SpyreRowsGenerator : public SpyreGenerator<T> {
public:
    Halide::GeneratorParam<int> cols{"cols", 1024, 1, 1 << 20};
    Halide::GeneratorParam<int> rows{"rows", 512, 1, 1 << 20};
    Halide::GeneratorInput<Halide::Buffer<>> in{"in", Halide::Float(16), 2};
    Halide::GeneratorOutput<Halide::Buffer<>> output{"output", Halide::Float(16), 2};

protected:
    // The end of generate() for a schedules/ kernel built at cols x rows: its ImageParams
    // (`kernel_inputs`) read the generator's `inputs` instead (rebind_input), `out` is the output,
    // and apply_schedule schedules it.
    template <typename CpuSchedule, typename SpyreSchedule>
    // `extra` adds integer parameters apply_schedule reads (e.g. "cores", auto's core limit).
    void finish(const GeneratorInfo &info, const std::vector<Halide::ImageParam *> &kernel_inputs,
                const std::vector<Halide::ImageParam> &inputs, Halide::Func out, CpuSchedule cpu, SpyreSchedule spyre,
                const ParamValues &extra = {}) {
        std::vector<Halide::ImageParam> params;
        for (size_t i = 0; i < kernel_inputs.size(); i++) {
            rebind_input(*kernel_inputs[i], inputs.at(i), out);
            params.push_back(*kernel_inputs[i]);
        }
        output = out;
        ParamValues values{{"cols", cols}, {"rows", rows}};
        values.insert(extra.begin(), extra.end());
        this->apply_schedule(info, values, params, out, cpu, spyre);
    }
};

}  // namespace spyre::gen
