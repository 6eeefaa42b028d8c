// The quantized linear layer of schedules/qlinear.h as a Halide Generator: a {inner, rows} fp16,
// w {cols, inner} int8, scale {cols} fp16 -> {cols, rows} fp16. `schedule` is "pe", "pe_ring" or
// "vector" (split over `cores` cores, as linear's) or "cpu" (the CPU reference).
//   spyre-gen -g qlinear -o out/ schedule=pe rows=64 inner=256 cols=512 cores=8
#include "qlinear.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class QLinearGenerator : public spyre::gen::SpyreGenerator<QLinearGenerator> {
public:
    GeneratorParam<int> rows{"rows", 64, 1, 1 << 20};
    GeneratorParam<int> inner{"inner", 256, 1, 1 << 20};
    GeneratorParam<int> cols{"cols", 256, 1, 1 << 20};
    GeneratorParam<int> cores{"cores", 4, 1, 1 << 20};

    Input<Buffer<>> a{"a", Float(16), 2};
    Input<Buffer<>> w{"w", Int(8), 2};
    Input<Buffer<>> scale{"scale", Float(16), 1};
    Output<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        spyre::QLinearKernel k = spyre::make_qlinear(rows, inner, cols);
        spyre::gen::rebind_input(k.a, a, k.out);
        spyre::gen::rebind_input(k.w, w, k.out);
        spyre::gen::rebind_input(k.scale, scale, k.out);
        output = k.out;
        apply_schedule(
            info(), spyre::gen::ParamValues{{"rows", rows}, {"inner", inner}, {"cols", cols}, {"cores", cores}},
            {k.a, k.w, k.scale}, k.out, [&] { spyre::schedule_qlinear(k, "cpu"); },
            [&](const spyre::MachineDesc &m) { spyre::schedule_qlinear(k, schedule, cores, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g;
        g.name = "qlinear";
        g.description = "quantized linear layer: fp16 a {inner, rows} x int8 w {cols, inner} with fp16 scales "
                        "{cols} per output channel -> {cols, rows}, split over `cores` (schedules/qlinear.h)";
        g.schedules = [] { return spyre::gen::spyre_schedules(spyre::qlinear_schedules()); };
        g.int_params = {{"rows", 64}, {"inner", 256}, {"cols", 256}, {"cores", 4}};
        g.inputs_of = [](const spyre::gen::ParamValues &v) {
            return std::vector<spyre::gen::BufferShape>{{"a", {v.at("inner"), v.at("rows")}},
                                                        {"w", {v.at("cols"), v.at("inner")}},
                                                        {"scale", {v.at("cols")}}};
        };
        g.output_of = [](const spyre::gen::ParamValues &v) {
            return spyre::gen::BufferShape{"qlinear", {v.at("cols"), v.at("rows")}};
        };
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(QLinearGenerator, qlinear)
