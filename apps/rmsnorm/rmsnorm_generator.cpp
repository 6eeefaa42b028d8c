// The rmsnorm kernel of schedules/norms.h as a Halide Generator. `schedule` names one of the norm
// Spyre schedules or "cpu" (the statistics at root, serial: the CPU reference).
//   spyre-gen -g rmsnorm -o out/ schedule=tiles cols=1024 rows=512
#include "norms.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class RmsnormGenerator : public spyre::gen::SpyreRowsGenerator<RmsnormGenerator> {
public:
    Input<Buffer<>> gamma{"gamma", Float(16), 1};

    void generate() {
        spyre::NormKernel k = spyre::make_norm("rmsnorm", cols, rows);
        finish(
            info(), {&k.inputs[0], &k.inputs[1]}, {in, gamma}, k.out, [&] {
                for (auto &stat : k.stats) stat.second.compute_root();
            },
            [&](const spyre::MachineDesc &m) { spyre::schedule_norm(k, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = spyre::gen::rows_generator_info(
        "rmsnorm",
        "rmsnorm over rows of an fp16 {cols, rows} tensor, gamma of {cols} (schedules/norms.h)",
        [] { return spyre::norm_schedules(); }, "rmsnorm", {"gamma"});
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(RmsnormGenerator, rmsnorm)
