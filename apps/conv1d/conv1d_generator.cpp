// The depthwise 1-D convolution of schedules/conv1d.h as a Halide Generator: in {cols, rows}
// (sequence x channels) and w {rows, taps} -> {cols, rows}, fp16; `padding` "causal" pads with zeros
// on the left only, "centred" centres the taps. `schedule` is "root", "tiles", "cores32", "auto" or
// "cpu".
//   spyre-gen -g conv1d -o out/ schedule=cores32 cols=4096 rows=1024 taps=4 padding=causal
#include "conv1d.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class Conv1dGenerator : public spyre::gen::SpyreGenerator<Conv1dGenerator> {
public:
    GeneratorParam<int> cols{"cols", 1024, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 512, 1, 1 << 20};
    GeneratorParam<int> taps{"taps", 4, 1, 16};
    GeneratorParam<std::string> padding{"padding", "causal"};

    Input<Buffer<>> in{"in", Float(16), 2};
    Input<Buffer<>> w{"w", Float(16), 2};
    Output<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        if (std::string(padding) != "causal" && std::string(padding) != "centred")
            throw std::runtime_error("conv1d: padding='" + std::string(padding) + "' (known: causal, centred)");
        spyre::Conv1dKernel k = spyre::make_conv1d(cols, rows, taps, std::string(padding) == "causal");
        spyre::gen::rebind_input(k.in, in, k.out);
        spyre::gen::rebind_input(k.w, w, k.out);
        output = k.out;
        apply_schedule(info(), values(), {k.in, k.w}, k.out, [] {},
                                   [&](const spyre::MachineDesc &m) { spyre::schedule_conv1d(k, schedule, m); });
    }

private:
    spyre::gen::ParamValues values() const {
        return {{"cols", cols}, {"rows", rows}, {"taps", taps}};
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g;
        g.name = "conv1d";
        g.description = "depthwise 1-D convolution along the sequence of an fp16 {seq, channels} tensor, `taps` "
                        "weights per channel, zero-padded, causal or centred (schedules/conv1d.h)";
        g.schedules = [] { return spyre::gen::spyre_schedules(spyre::conv1d_schedules()); };
        g.extra_params = {{"padding", "causal"}};
        g.int_params = {{"cols", 1024}, {"rows", 512}, {"taps", 4}};
        g.inputs_of = [](const spyre::gen::ParamValues &v) {
            return std::vector<spyre::gen::BufferShape>{{"in", {v.at("cols"), v.at("rows")}},
                                                        {"w", {v.at("rows"), v.at("taps")}}};
        };
        g.output_of = [](const spyre::gen::ParamValues &v) {
            return spyre::gen::BufferShape{"conv1d", {v.at("cols"), v.at("rows")}};
        };
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(Conv1dGenerator, conv1d)
