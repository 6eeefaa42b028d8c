// RoPE of schedules/rope.h as Halide Generators, one per pairing of the rotated elements: `rope`
// (rotate half: element i with i + head_dim/2) and `rope_interleaved` (GPT-J style pairs 2k, 2k + 1).
// in {cols, rows} (heads * head_dim x positions), cos and sin {head_dim, rows} -> {cols, rows}, fp16.
// `schedule` is "root", "tiles", "cores32", "auto" or "cpu".
//   spyre-gen -g rope -o out/ schedule=cores32 cols=4096 rows=2048 head_dim=128
//   spyre-gen -g rope_interleaved -o out/ schedule=cores32 cols=4096 rows=2048 head_dim=128
#include "rope.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

template <spyre::RopeStyle Style>
const spyre::gen::GeneratorInfo &info();

template <spyre::RopeStyle Style>
class RopeGeneratorOf : public spyre::gen::SpyreGenerator<RopeGeneratorOf<Style>> {
public:
    GeneratorParam<int> cols{"cols", 1024, 1, 1 << 20};
    GeneratorParam<int> rows{"rows", 512, 1, 1 << 20};
    GeneratorParam<int> head_dim{"head_dim", 64, 1, 1 << 20};

    GeneratorInput<Buffer<>> in{"in", Float(16), 2};
    GeneratorInput<Buffer<>> cos{"cos", Float(16), 2};
    GeneratorInput<Buffer<>> sin{"sin", Float(16), 2};
    GeneratorOutput<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        spyre::RopeKernel k = spyre::make_rope(cols, rows, head_dim, Style);
        spyre::gen::rebind_input(k.in, in, k.out);
        spyre::gen::rebind_input(k.cos, cos, k.out);
        spyre::gen::rebind_input(k.sin, sin, k.out);
        output = k.out;
        this->apply_schedule(info<Style>(), values(), {k.in, k.cos, k.sin}, k.out, [] {},
                                   [&](const spyre::MachineDesc &m) { spyre::schedule_rope(k, this->schedule, m); });
    }

private:
    spyre::gen::ParamValues values() const { return {{"cols", cols}, {"rows", rows}, {"head_dim", head_dim}}; }
};

template <spyre::RopeStyle Style>
const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        const bool halves = Style == spyre::RopeStyle::RotateHalf;
        spyre::gen::GeneratorInfo g;
        g.name = halves ? "rope" : "rope_interleaved";
        g.description = std::string("rotary position embedding (") +
                        (halves ? "rotate half" : "interleaved pairs 2k, 2k + 1") +
                        ") of an fp16 {heads * head_dim, positions} tensor with cos and sin tables "
                        "{head_dim, positions} (schedules/rope.h)";
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

const spyre::gen::Registrar rotate_half_registrar(info<spyre::RopeStyle::RotateHalf>());
const spyre::gen::Registrar interleaved_registrar(info<spyre::RopeStyle::Interleaved>());

using RopeGenerator = RopeGeneratorOf<spyre::RopeStyle::RotateHalf>;
using RopeInterleavedGenerator = RopeGeneratorOf<spyre::RopeStyle::Interleaved>;

}  // namespace

HALIDE_REGISTER_GENERATOR(RopeGenerator, rope)
HALIDE_REGISTER_GENERATOR(RopeInterleavedGenerator, rope_interleaved)
