// RoPE of schedules/rope.h with interleaved pairs (GPT-J style) as a Halide Generator: in
// {cols, rows} (heads * head_dim x positions), cos and sin {head_dim, rows} -> {cols, rows}, fp16. `schedule` is "root", "tiles",
// "cores32", "auto" or "cpu".
//   spyre-gen -g rope_interleaved -o out/ schedule=cores32 cols=4096 rows=2048 head_dim=128
#include "rope.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class RopeInterleavedGenerator : public Generator<RopeInterleavedGenerator> {
public:
    GeneratorParam<int> cols{"cols", 1024, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 512, 1, 1 << 20};
    GeneratorParam<int> head_dim{"head_dim", 64, 1, 1 << 20};
    GeneratorParam<std::string> schedule{"schedule", "cpu"};
    GeneratorParam<std::string> machine{"machine", ""};

    Input<Buffer<>> in{"in", Float(16), 2};
    Input<Buffer<>> cos{"cos", Float(16), 2};
    Input<Buffer<>> sin{"sin", Float(16), 2};
    Output<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        spyre::RopeKernel k = spyre::make_rope(cols, rows, head_dim, spyre::RopeStyle::Interleaved);
        spyre::gen::rebind_input(k.in, in, k.out);
        spyre::gen::rebind_input(k.cos, cos, k.out);
        spyre::gen::rebind_input(k.sin, sin, k.out);
        output = k.out;
        spyre::gen::apply_schedule(info(), values(), schedule, machine, {k.in, k.cos, k.sin}, k.out, [] {},
                                   [&](const spyre::MachineDesc &m) { spyre::schedule_rope(k, schedule, m); });
    }

private:
    spyre::gen::ParamValues values() const { return {{"cols", cols}, {"rows", rows}, {"head_dim", head_dim}}; }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g;
        g.name = "rope_interleaved";
        g.description = "rotary position embedding (interleaved pairs 2k, 2k + 1) of an fp16 "
                        "{heads * head_dim, positions} tensor with cos and sin tables {head_dim, positions} (schedules/rope.h)";
        g.schedules = [] { return spyre::gen::spyre_schedules(spyre::rope_schedules()); };
        g.int_params = {{"cols", 1024}, {"rows", 512}, {"head_dim", 64}};
        g.inputs_of = [](const spyre::gen::ParamValues &v) {
            return std::vector<spyre::gen::BufferShape>{{"in", {v.at("cols"), v.at("rows")}},
                                                        {"cos", {v.at("head_dim"), v.at("rows")}},
                                                        {"sin", {v.at("head_dim"), v.at("rows")}}};
        };
        g.output_of = [](const spyre::gen::ParamValues &v) {
            return spyre::gen::BufferShape{"rope", {v.at("cols"), v.at("rows")}};
        };
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(RopeInterleavedGenerator, rope_interleaved)
