// The softmax kernel of schedules/softmax.h as a Halide Generator. `schedule` names one of its
// Spyre schedules (the generator then fixes its buffers to their device layouts) or "cpu", the CPU
// reference schedule (for add_halide_library).
//   spyre-gen -g softmax -o out/ schedule=stage4 cols=1024 rows=512
#include "softmax.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class SoftmaxGenerator : public Generator<SoftmaxGenerator> {
public:
    GeneratorParam<int> cols{"cols", 1024, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 512, 1, 1 << 20};
    GeneratorParam<std::string> schedule{"schedule", "cpu"};
    GeneratorParam<std::string> machine{"machine", ""};

    Input<Buffer<>> in{"in", Float(16), 2};
    Output<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        spyre::SoftmaxKernel k = spyre::make_softmax(cols, rows);
        spyre::gen::rebind_input(k.in, in, k.out);
        output = k.out;
        spyre::gen::apply_schedule(
            info(), spyre::gen::ParamValues{{"cols", cols}, {"rows", rows}}, schedule, machine, {k.in}, k.out, [&] { spyre::schedule_softmax_cpu(k); },
            [&](const spyre::MachineDesc &m) { spyre::schedule_softmax(k, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i{
        "softmax",
        "softmax over rows of an fp16 {cols, rows} tensor (schedules/softmax.h)",
        [] { return spyre::softmax_schedules(); },
        {},
        [](int64_t c, int64_t r) { return std::vector<spyre::gen::BufferShape>{{"in", {c, r}}}; },
        [](int64_t c, int64_t r) { return spyre::gen::BufferShape{"softmax", {c, r}}; }};
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(SoftmaxGenerator, softmax)
