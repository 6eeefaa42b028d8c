// The gelu kernel of schedules/pointwise.h (tanh form, fp16) as a Halide Generator. `schedule`
// names one of the pointwise Spyre schedules or "cpu" (Halide's default schedule: all inline).
//   spyre-gen -g gelu -o out/ schedule=tiles cols=1024 rows=512
#include "pointwise.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class GeluGenerator : public spyre::gen::SpyreRowsGenerator<GeluGenerator> {
public:
    void generate() {
        spyre::PointwiseKernel k = spyre::make_pointwise("gelu", Float(16), cols, rows);
        finish(
            info(), {&k.inputs[0]}, {in}, k.out, [] {},
            [&](const spyre::MachineDesc &m) { spyre::schedule_pointwise(k, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = spyre::gen::rows_generator_info(
        "gelu",
        "gelu (tanh form) of an fp16 {cols, rows} tensor (schedules/pointwise.h)",
        [] { return spyre::pointwise_schedules(); }, "pointwise_gelu");
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(GeluGenerator, gelu)
