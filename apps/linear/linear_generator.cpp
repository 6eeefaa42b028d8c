// The linear layer of schedules/matmul.h (out = x W + bias) as a Halide Generator: x {inner, rows, 1}
// x W {cols, inner} + bias {cols} -> {cols, rows, 1}, fp16 (accumulated in fp32; the kernel is the
// bmm with one batch, hence the unit third dimension). `schedule` is one of the bmm schedules ("pe",
// "vector", split over `cores` cores) or "cpu" (the CPU reference).
//   spyre-gen -g linear -o out/ schedule=pe rows=64 inner=192 cols=256 cores=4
#include "matmul.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class LinearGenerator : public spyre::gen::SpyreGenerator<LinearGenerator> {
public:
    GeneratorParam<int> rows{"rows", 64, 1, 1 << 20};
    GeneratorParam<int> inner{"inner", 192, 1, 1 << 20};
    GeneratorParam<int> cols{"cols", 256, 1, 1 << 20};
    GeneratorParam<int> cores{"cores", 4, 1, 1 << 20};

    Input<Buffer<>> x{"x", Float(16), 3};
    Input<Buffer<>> w{"w", Float(16), 2};
    Input<Buffer<>> bias{"bias", Float(16), 1};
    Output<Buffer<>> output{"output", Float(16), 3};

    void generate() {
        spyre::MatmulKernel k = spyre::make_linear(rows, inner, cols);
        spyre::gen::rebind_input(k.a, x, k.out);
        spyre::gen::rebind_input(k.w, w, k.out);
        spyre::gen::rebind_input(k.bias, bias, k.out);
        output = k.out;
        apply_schedule(
            info(), spyre::gen::ParamValues{{"rows", rows}, {"inner", inner}, {"cols", cols}, {"cores", cores}},
            {k.a, k.w, k.bias}, k.out, [&] { spyre::schedule_bmm(k, "cpu"); },
            [&](const spyre::MachineDesc &m) { spyre::schedule_bmm(k, schedule, cores, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g;
        g.name = "linear";
        g.description = "linear layer: fp16 x {inner, rows, 1} x W {cols, inner} + bias {cols} -> {cols, rows, 1}, "
                        "split over `cores` (schedules/matmul.h)";
        g.schedules = [] { return spyre::gen::spyre_schedules(spyre::bmm_schedules()); };
        g.int_params = {{"rows", 64}, {"inner", 192}, {"cols", 256}, {"cores", 4}};
        g.inputs_of = [](const spyre::gen::ParamValues &v) {
            return std::vector<spyre::gen::BufferShape>{{"x", {v.at("inner"), v.at("rows"), 1}},
                                                        {"w", {v.at("cols"), v.at("inner")}},
                                                        {"bias", {v.at("cols")}}};
        };
        g.output_of = [](const spyre::gen::ParamValues &v) {
            return spyre::gen::BufferShape{"linear", {v.at("cols"), v.at("rows"), 1}};
        };
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(LinearGenerator, linear)
