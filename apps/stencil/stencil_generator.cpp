// The 3-tap stencil of schedules/stencil.h as a Halide Generator: in {cols, rows} -> {cols, rows},
// fp16, repeat_edge at the row ends. `schedule` is "root", "tiles", "cores32", "auto" or "cpu".
//   spyre-gen -g stencil -o out/ schedule=cores32 cols=4096 rows=1024
#include "stencil.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class StencilGenerator : public Generator<StencilGenerator> {
public:
    GeneratorParam<int> cols{"cols", 1024, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 512, 1, 1 << 20};
    GeneratorParam<std::string> schedule{"schedule", "cpu"};
    GeneratorParam<std::string> machine{"machine", ""};

    Input<Buffer<>> in{"in", Float(16), 2};
    Output<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        spyre::StencilKernel k = spyre::make_stencil(cols, rows);
        spyre::gen::rebind_input(k.in, in, k.out);
        output = k.out;
        spyre::gen::apply_schedule(
            info(), spyre::gen::ParamValues{{"cols", cols}, {"rows", rows}}, schedule, machine, {k.in}, k.out, [] {},
            [&](const spyre::MachineDesc &m) { spyre::schedule_stencil(k, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i{
        "stencil",
        "3-tap filter along the rows of an fp16 {cols, rows} tensor with repeat_edge, each neighbour one "
        "shifted read on the vector unit (schedules/stencil.h)",
        [] { return spyre::gen::spyre_schedules(spyre::stencil_schedules()); },
        {},
        [](int64_t c, int64_t r) { return std::vector<spyre::gen::BufferShape>{{"in", {c, r}}}; },
        [](int64_t c, int64_t r) { return spyre::gen::BufferShape{"stencil", {c, r}}; }};
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(StencilGenerator, stencil)
