// The batched matmul of schedules/matmul.h as a Halide Generator: A {inner, rows, batch} x
// W {cols, inner} -> {cols, rows, batch}, fp16 (accumulated in fp32). `schedule` is "pe" or
// "vector" (split over `cores` cores by batch, then N, then M) or "cpu" (the CPU reference).
//   spyre-gen -g bmm -o out/ schedule=pe batch=2 rows=64 inner=128 cols=256 cores=8
#include "matmul.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class BmmGenerator : public spyre::gen::SpyreGenerator<BmmGenerator> {
public:
    GeneratorParam<int> batch{"batch", 4, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 64, 1, 1 << 20};
    GeneratorParam<int> inner{"inner", 256, 1, 1 << 20};
    GeneratorParam<int> cols{"cols", 512, 1, 1 << 20};
    GeneratorParam<int> cores{"cores", 32, 1, 1 << 20};

    Input<Buffer<>> a{"a", Float(16), 3};
    Input<Buffer<>> w{"w", Float(16), 2};
    Output<Buffer<>> output{"output", Float(16), 3};

    void generate() {
        spyre::MatmulKernel k = spyre::make_bmm(batch, rows, inner, cols);
        spyre::gen::rebind_input(k.a, a, k.out);
        spyre::gen::rebind_input(k.w, w, k.out);
        output = k.out;
        apply_schedule(
            info(), values(), {k.a, k.w}, k.out, [&] { spyre::schedule_bmm(k, "cpu"); },
            [&](const spyre::MachineDesc &m) { spyre::schedule_bmm(k, schedule, cores, m); });
    }

private:
    spyre::gen::ParamValues values() const {
        return {{"batch", batch}, {"rows", rows}, {"inner", inner}, {"cols", cols}, {"cores", cores}};
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g;
        g.name = "bmm";
        g.description = "batched matmul: fp16 A {inner, rows, batch} x W {cols, inner} -> {cols, rows, batch}, "
                        "split over `cores` (schedules/matmul.h)";
        g.schedules = [] { return spyre::gen::spyre_schedules(spyre::bmm_schedules()); };
        g.int_params = {{"batch", 4}, {"rows", 64}, {"inner", 256}, {"cols", 512}, {"cores", 32}};
        g.inputs_of = [](const spyre::gen::ParamValues &v) {
            return std::vector<spyre::gen::BufferShape>{{"a", {v.at("inner"), v.at("rows"), v.at("batch")}},
                                                        {"w", {v.at("cols"), v.at("inner")}}};
        };
        g.output_of = [](const spyre::gen::ParamValues &v) {
            return spyre::gen::BufferShape{"bmm", {v.at("cols"), v.at("rows"), v.at("batch")}};
        };
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(BmmGenerator, bmm)
