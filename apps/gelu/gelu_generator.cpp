// The gelu kernel of schedules/pointwise.h (tanh form, fp16) as a Halide Generator. `schedule`
// names one of the pointwise Spyre schedules or "cpu" (Halide's default schedule: all inline).
//   spyre-gen -g gelu -o out/ schedule=tiles cols=1024 rows=512
#include "pointwise.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class GeluGenerator : public Generator<GeluGenerator> {
public:
    GeneratorParam<int> cols{"cols", 1024, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 512, 1, 1 << 20};
    GeneratorParam<std::string> schedule{"schedule", "cpu"};
    GeneratorParam<std::string> machine{"machine", ""};

    Input<Buffer<>> in{"in", Float(16), 2};
    Output<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        spyre::PointwiseKernel k = spyre::make_pointwise("gelu", Float(16), cols, rows);
        spyre::gen::rebind_input(k.inputs[0], in, k.out);
        output = k.out;
        spyre::gen::apply_schedule(
            info(), spyre::gen::ParamValues{{"cols", cols}, {"rows", rows}}, schedule, machine, k.inputs, k.out, [] {},
            [&](const spyre::MachineDesc &m) { spyre::schedule_pointwise(k, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i{
        "gelu",
        "gelu (tanh form) of an fp16 {cols, rows} tensor (schedules/pointwise.h)",
        [] { return spyre::pointwise_schedules(); },
        {},
        [](int64_t c, int64_t r) { return std::vector<spyre::gen::BufferShape>{{"in", {c, r}}}; },
        [](int64_t c, int64_t r) { return spyre::gen::BufferShape{"pointwise_gelu", {c, r}}; }};
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(GeluGenerator, gelu)
