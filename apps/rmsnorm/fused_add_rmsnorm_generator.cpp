// vLLM's fused_add_rms_norm (schedules/fused_add_rmsnorm.h) as a Halide Generator with two
// outputs: the residual sum and its RMSNorm, fp16 {cols, rows}, gamma of {cols}.
//   spyre-gen -g fused_add_rmsnorm -o out/ schedule=cores32 cols=4096 rows=64
// writes a host function fused_add_rmsnorm(in, residual, gamma, added, norm).
#include "fused_add_rmsnorm.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class FusedAddRmsNormGenerator : public spyre::gen::SpyreGenerator<FusedAddRmsNormGenerator> {
public:
    GeneratorParam<int> cols{"cols", 1024, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 512, 1, 1 << 20};
    Input<Buffer<>> in{"in", Float(16), 2};
    Input<Buffer<>> residual{"residual", Float(16), 2};
    Input<Buffer<>> gamma{"gamma", Float(16), 1};
    Output<Buffer<>> added{"added", Float(16), 2};
    Output<Buffer<>> norm{"norm", Float(16), 2};

    void generate() {
        spyre::FusedAddRmsNormKernel k = spyre::make_fused_add_rmsnorm(cols, rows);
        spyre::gen::rebind_input(k.in, in, k.norm);
        spyre::gen::rebind_input(k.residual, residual, k.norm);
        spyre::gen::rebind_input(k.gamma, gamma, k.norm);
        added = k.added;
        norm = k.norm;
        apply_schedule(
            info(), spyre::gen::ParamValues{{"cols", cols}, {"rows", rows}}, k.inputs(), k.outputs(),
            [&] { k.sum_x2.compute_root(); },
            [&](const spyre::MachineDesc &m) { spyre::schedule_fused_add_rmsnorm(k, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g;
        g.name = "fused_add_rmsnorm";
        g.description = "residual add and RMSNorm, two outputs (added, norm): fp16 {cols, rows} + {cols, rows}, gamma "
                        "of {cols} (schedules/fused_add_rmsnorm.h)";
        g.schedules = [] { return spyre::fused_add_rmsnorm_schedules(); };
        g.int_params = {{"cols", 1024}, {"rows", 512}};
        g.reference_ulp = 1;  // the sum exact, the norm's sum of squares in another order
        g.inputs_of = [](const spyre::gen::ParamValues &v) {
            const int64_t c = v.at("cols"), r = v.at("rows");
            return std::vector<spyre::gen::BufferShape>{{"in", {c, r}}, {"residual", {c, r}}, {"gamma", {c}}};
        };
        g.outputs_of = [](const spyre::gen::ParamValues &v) {
            const int64_t c = v.at("cols"), r = v.at("rows");
            return std::vector<spyre::gen::BufferShape>{{"added", {c, r}}, {"norm", {c, r}}};
        };
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(FusedAddRmsNormGenerator, fused_add_rmsnorm)
