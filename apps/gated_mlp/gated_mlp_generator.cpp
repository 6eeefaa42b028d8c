// The gated MLP block of schedules/gated_mlp.h (SwiGLU: silu(x W1) * (x W3), then W2) as a Halide
// Generator: x {dim, rows}, W1 and W3 {hidden, dim}, W2 {dim, hidden} -> {dim, rows}, fp16.
// `schedule` is tiled or pe_ring (split over `cores` cores) or "cpu" (the CPU reference).
//   spyre-gen -g gated_mlp -o out/ schedule=pe_ring dim=4096 hidden=11008 rows=512 cores=32
#include "gated_mlp.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class GatedMlpGenerator : public spyre::gen::SpyreGenerator<GatedMlpGenerator> {
public:
    GeneratorParam<int> dim{"dim", 256, 1, 1 << 20};
    GeneratorParam<int> hidden{"hidden", 1024, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 256, 1, 1 << 20};
    GeneratorParam<int> cores{"cores", 32, 1, 1 << 20};

    Input<Buffer<>> x{"x", Float(16), 2};
    Input<Buffer<>> w1{"w1", Float(16), 2};
    Input<Buffer<>> w3{"w3", Float(16), 2};
    Input<Buffer<>> w2{"w2", Float(16), 2};
    Output<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        spyre::GatedMlpKernel k = spyre::make_gated_mlp(dim, hidden, rows);
        spyre::gen::rebind_input(k.x, x, k.out);
        spyre::gen::rebind_input(k.w1, w1, k.out);
        spyre::gen::rebind_input(k.w3, w3, k.out);
        spyre::gen::rebind_input(k.w2, w2, k.out);
        output = k.out;
        apply_schedule(
            info(), spyre::gen::ParamValues{{"dim", dim}, {"hidden", hidden}, {"rows", rows}, {"cores", cores}},
            {k.x, k.w1, k.w3, k.w2}, k.out, [&] { spyre::schedule_gated_mlp(k, "cpu"); },
            [&](const spyre::MachineDesc &m) { spyre::schedule_gated_mlp(k, schedule, cores, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g;
        g.name = "gated_mlp";
        g.description = "gated MLP block (SwiGLU) (silu(x W1) * (x W3)) W2: fp16 x {dim, rows} -> {dim, rows}, split "
                        "over `cores` (schedules/gated_mlp.h)";
        g.schedules = [] { return spyre::gen::spyre_schedules(spyre::gated_mlp_schedules()); };
        g.int_params = {{"dim", 256}, {"hidden", 1024}, {"rows", 256}, {"cores", 32}};
        g.inputs_of = [](const spyre::gen::ParamValues &v) {
            const int64_t d = v.at("dim"), h = v.at("hidden"), m = v.at("rows");
            return std::vector<spyre::gen::BufferShape>{{"x", {d, m}}, {"w1", {h, d}}, {"w3", {h, d}}, {"w2", {d, h}}};
        };
        g.output_of = [](const spyre::gen::ParamValues &v) {
            return spyre::gen::BufferShape{"gated_mlp", {v.at("dim"), v.at("rows")}};
        };
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(GatedMlpGenerator, gated_mlp)
