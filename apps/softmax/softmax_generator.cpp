// The softmax kernel of schedules/softmax.h as a Halide Generator. `schedule` names one of its
// Spyre schedules (the generator then fixes its buffers to their device layouts) or "cpu", the CPU
// reference schedule (for add_halide_library).
//   spyre-gen -g softmax -o out/ schedule=stage4 cols=1024 rows=512
//   spyre-gen -g softmax -o out/ schedule=stage4 cols=1024 rows=512 dim=0   (torch.softmax(x, dim=0))
//   spyre-gen -g softmax -o out/ schedule=stage4 dim=0 cores=4               (its columns over 4 cores)
#include "softmax.h"

#include <algorithm>

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class SoftmaxGenerator : public spyre::gen::SpyreRowsGenerator<SoftmaxGenerator> {
public:
    // PyTorch's dim of the (rows, cols) tensor: 1 (each row, the default) or 0 (each column, the
    // kernel of IBM's single-core table).
    Halide::GeneratorParam<int> dim{"dim", 1, 0, 1};
    // The cores a schedule splits its work over (schedule_softmax's `cores`; cores32 and phased
    // take 32, and dim 0's stages 1-3 run on one core as IBM measured them), and the most
    // schedule=auto may use. 0: the schedule's own (one core; auto: the machine's).
    Halide::GeneratorParam<int> cores{"cores", 0, 0, 32};

    void generate() {
        spyre::SoftmaxKernel k = spyre::make_softmax(cols, rows, dim);
        finish(
            info(), {&k.in}, {in}, k.out, [&] { spyre::schedule_softmax_cpu(k); },
            [&](const spyre::MachineDesc &m) { spyre::schedule_softmax(k, schedule, m, std::max(1, int(cores))); },
            cores > 0 ? spyre::gen::ParamValues{{"cores", cores}} : spyre::gen::ParamValues{});
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g = spyre::gen::rows_generator_info(
            "softmax",
            "softmax of an fp16 {cols, rows} tensor over each row (dim=1) or each column (dim=0) (schedules/softmax.h)",
            [] { return spyre::softmax_schedules(); }, "softmax");
        g.extra_params = {{"cores", "0"}, {"dim", "1"}};
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(SoftmaxGenerator, softmax)
