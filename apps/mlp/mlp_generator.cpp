// The MLP block of schedules/mlp.h (gelu(x W1 + b1) W2 + b2) as a Halide Generator: x {dim, rows},
// W1 {hidden, dim}, b1 {hidden}, W2 {dim, hidden}, b2 {dim} -> {dim, rows}, fp16. `schedule` is one
// of matched, dram, single_split (split over `cores` cores) or "cpu" (the CPU reference).
//   spyre-gen -g mlp -o out/ schedule=matched dim=64 hidden=256 rows=64 cores=1
#include "mlp.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class MlpGenerator : public spyre::gen::SpyreGenerator<MlpGenerator> {
public:
    GeneratorParam<int> dim{"dim", 256, 1, 1 << 20};
    GeneratorParam<int> hidden{"hidden", 2048, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 256, 1, 1 << 20};
    GeneratorParam<int> cores{"cores", 32, 1, 1 << 20};

    Input<Buffer<>> x{"x", Float(16), 2};
    Input<Buffer<>> w1{"w1", Float(16), 2};
    Input<Buffer<>> b1{"b1", Float(16), 1};
    Input<Buffer<>> w2{"w2", Float(16), 2};
    Input<Buffer<>> b2{"b2", Float(16), 1};
    Output<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        spyre::MlpKernel k = spyre::make_mlp(dim, hidden, rows);
        spyre::gen::rebind_input(k.x, x, k.out);
        spyre::gen::rebind_input(k.w1, w1, k.out);
        spyre::gen::rebind_input(k.b1, b1, k.out);
        spyre::gen::rebind_input(k.w2, w2, k.out);
        spyre::gen::rebind_input(k.b2, b2, k.out);
        output = k.out;
        apply_schedule(
            info(), spyre::gen::ParamValues{{"dim", dim}, {"hidden", hidden}, {"rows", rows}, {"cores", cores}},
            {k.x, k.w1, k.b1, k.w2, k.b2}, k.out, [&] { spyre::schedule_mlp(k, "cpu"); },
            [&](const spyre::MachineDesc &m) { spyre::schedule_mlp(k, schedule, cores, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g;
        g.name = "mlp";
        g.description = "MLP block gelu(x W1 + b1) W2 + b2: fp16 x {dim, rows} -> {dim, rows}, split over `cores` "
                        "(schedules/mlp.h)";
        g.schedules = [] { return spyre::gen::spyre_schedules(spyre::mlp_schedules()); };
        g.int_params = {{"dim", 256}, {"hidden", 2048}, {"rows", 256}, {"cores", 32}};
        g.inputs_of = [](const spyre::gen::ParamValues &v) {
            const int64_t d = v.at("dim"), h = v.at("hidden"), m = v.at("rows");
            return std::vector<spyre::gen::BufferShape>{
                {"x", {d, m}}, {"w1", {h, d}}, {"b1", {h}}, {"w2", {d, h}}, {"b2", {d}}};
        };
        g.output_of = [](const spyre::gen::ParamValues &v) {
            return spyre::gen::BufferShape{"mlp", {v.at("dim"), v.at("rows")}};
        };
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(MlpGenerator, mlp)
