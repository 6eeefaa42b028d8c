// The transpose of schedules/transpose.h as a Halide Generator: in {cols, rows} -> {rows, cols},
// fp16. `schedule` is "tiles", "cores32" or "cpu" (the CPU reference).
//   spyre-gen -g transpose -o out/ schedule=cores32 cols=4096 rows=1024
#include "transpose.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class TransposeGenerator : public spyre::gen::SpyreRowsGenerator<TransposeGenerator> {
public:
    void generate() {
        spyre::TransposeKernel k = spyre::make_transpose(cols, rows);
        finish(
            info(), {&k.in}, {in}, k.out, [] {},
            [&](const spyre::MachineDesc &m) { spyre::schedule_transpose(k, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g = spyre::gen::rows_generator_info(
            "transpose",
            "transpose of an fp16 {cols, rows} tensor into {rows, cols}, restickified on the vector unit "
            "(schedules/transpose.h)",
            [] { return spyre::gen::spyre_schedules(spyre::transpose_schedules()); }, "transpose");
        // The input's rows become sticks: {rows, cols}.
        g.output = [](int64_t c, int64_t r) { return spyre::gen::BufferShape{"transpose", {r, c}}; };
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(TransposeGenerator, transpose)
