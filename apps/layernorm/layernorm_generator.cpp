// The layernorm kernel of schedules/norms.h as a Halide Generator. `schedule` names one of the norm
// Spyre schedules or "cpu" (the statistics at root, serial: the CPU reference).
//   spyre-gen -g layernorm -o out/ schedule=tiles cols=1024 rows=512
#include "norms.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class LayernormGenerator : public spyre::gen::SpyreRowsGenerator<LayernormGenerator> {
public:
    Input<Buffer<>> gamma{"gamma", Float(16), 1};
    Input<Buffer<>> beta{"beta", Float(16), 1};

    void generate() {
        spyre::NormKernel k = spyre::make_norm("layernorm", cols, rows);
        finish(
            info(), {&k.inputs[0], &k.inputs[1], &k.inputs[2]}, {in, gamma, beta}, k.out, [&] {
                for (auto &stat : k.stats) stat.second.compute_root();
            },
            [&](const spyre::MachineDesc &m) { spyre::schedule_norm(k, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = spyre::gen::rows_generator_info(
        "layernorm",
        "layernorm over rows of an fp16 {cols, rows} tensor, gamma and beta of {cols} (schedules/norms.h)",
        [] { return spyre::norm_schedules(); }, "layernorm", {"gamma", "beta"});
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(LayernormGenerator, layernorm)
