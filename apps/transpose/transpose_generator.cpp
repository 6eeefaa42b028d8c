// The transpose of schedules/transpose.h as a Halide Generator: in {cols, rows} -> {rows, cols},
// fp16. `schedule` is "tiles", "cores32" or "cpu" (the CPU reference).
//   spyre-gen -g transpose -o out/ schedule=cores32 cols=4096 rows=1024
#include "transpose.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class TransposeGenerator : public Generator<TransposeGenerator> {
public:
    GeneratorParam<int> cols{"cols", 1024, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 512, 1, 1 << 20};
    GeneratorParam<std::string> schedule{"schedule", "cpu"};
    GeneratorParam<std::string> machine{"machine", ""};

    Input<Buffer<>> in{"in", Float(16), 2};
    Output<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        spyre::TransposeKernel k = spyre::make_transpose(cols, rows);
        spyre::gen::rebind_input(k.in, in, k.out);
        output = k.out;
        spyre::gen::apply_schedule(
            info(), spyre::gen::ParamValues{{"cols", cols}, {"rows", rows}}, schedule, machine, {k.in}, k.out, [] {},
            [&](const spyre::MachineDesc &m) { spyre::schedule_transpose(k, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i{
        "transpose",
        "transpose of an fp16 {cols, rows} tensor into {rows, cols}, restickified on the vector unit "
        "(schedules/transpose.h)",
        [] { return spyre::gen::spyre_schedules(spyre::transpose_schedules()); },
        {},
        [](int64_t c, int64_t r) { return std::vector<spyre::gen::BufferShape>{{"in", {c, r}}}; },
        [](int64_t c, int64_t r) { return spyre::gen::BufferShape{"transpose", {r, c}}; }};
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(TransposeGenerator, transpose)
