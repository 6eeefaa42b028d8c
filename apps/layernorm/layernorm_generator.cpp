// The layernorm kernel of schedules/norms.h as a Halide Generator. `schedule` names one of the norm
// Spyre schedules or "cpu" (the statistics at root, serial: the CPU reference).
//   spyre-gen -g layernorm -o out/ schedule=tiles cols=1024 rows=512
#include "norms.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class LayernormGenerator : public Generator<LayernormGenerator> {
public:
    GeneratorParam<int> cols{"cols", 1024, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 512, 1, 1 << 20};
    GeneratorParam<std::string> schedule{"schedule", "cpu"};
    GeneratorParam<std::string> machine{"machine", ""};

    Input<Buffer<>> in{"in", Float(16), 2};
    Input<Buffer<>> gamma{"gamma", Float(16), 1};
    Input<Buffer<>> beta{"beta", Float(16), 1};
    Output<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        spyre::NormKernel k = spyre::make_norm("layernorm", cols, rows);
        std::vector<ImageParam> inputs = {in, gamma, beta};
        for (size_t i = 0; i < inputs.size(); i++) spyre::gen::rebind_input(k.inputs[i], inputs[i], k.out);
        output = k.out;
        spyre::gen::apply_schedule(
            info(), spyre::gen::ParamValues{{"cols", cols}, {"rows", rows}}, schedule, machine, k.inputs, k.out,
            [&] {
                for (auto &stat : k.stats) stat.second.compute_root();
            },
            [&](const spyre::MachineDesc &m) { spyre::schedule_norm(k, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i{
        "layernorm",
        "layernorm over rows of an fp16 {cols, rows} tensor, gamma and beta of {cols} (schedules/norms.h)",
        [] { return spyre::norm_schedules(); },
        {},
        [](int64_t c, int64_t r) { return std::vector<spyre::gen::BufferShape>{{"in", {c, r}}, {"gamma", {c}}, {"beta", {c}}}; },
        [](int64_t c, int64_t r) { return spyre::gen::BufferShape{"layernorm", {c, r}}; }};
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(LayernormGenerator, layernorm)
