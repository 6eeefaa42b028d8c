// The 3-tap stencil of schedules/stencil.h as a Halide Generator: in {cols, rows} -> {cols, rows},
// fp16, repeat_edge at the row ends. `schedule` is "root", "tiles", "cores32", "auto" or "cpu".
//   spyre-gen -g stencil -o out/ schedule=cores32 cols=4096 rows=1024
#include "stencil.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class StencilGenerator : public spyre::gen::SpyreRowsGenerator<StencilGenerator> {
public:
    void generate() {
        spyre::StencilKernel k = spyre::make_stencil(cols, rows);
        finish(
            info(), {&k.in}, {in}, k.out, [] {},
            [&](const spyre::MachineDesc &m) { spyre::schedule_stencil(k, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = spyre::gen::rows_generator_info(
        "stencil",
        "3-tap filter along the rows of an fp16 {cols, rows} tensor with repeat_edge, each neighbour one "
        "shifted read on the vector unit (schedules/stencil.h)",
        [] { return spyre::gen::spyre_schedules(spyre::stencil_schedules()); }, "stencil");
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(StencilGenerator, stencil)
