// The single-head attention of schedules/attention.h (softmax(Q K^T / sqrt(dim)) V) as a Halide
// Generator: Q, K, V {dim, seq} -> {dim, seq}, fp16, one core. `schedule` is "fused", "unfused" or
// "cpu" (the CPU reference).
//   spyre-gen -g attention -o out/ schedule=fused dim=64 seq=128
#include "attention.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class AttentionGenerator : public spyre::gen::SpyreGenerator<AttentionGenerator> {
public:
    GeneratorParam<int> dim{"dim", 128, 1, 1 << 20};
    GeneratorParam<int> seq{"seq", 512, 1, 1 << 20};

    Input<Buffer<>> q{"q", Float(16), 2};
    Input<Buffer<>> k{"k", Float(16), 2};
    Input<Buffer<>> v{"v", Float(16), 2};
    Output<Buffer<>> output{"output", Float(16), 2};

    void generate() {
        spyre::AttentionKernel a = spyre::make_attention(dim, seq);
        spyre::gen::rebind_input(a.q, q, a.out);
        spyre::gen::rebind_input(a.k, k, a.out);
        spyre::gen::rebind_input(a.v, v, a.out);
        output = a.out;
        apply_schedule(
            info(), spyre::gen::ParamValues{{"dim", dim}, {"seq", seq}}, {a.q, a.k, a.v}, a.out,
            [&] { spyre::schedule_attention(a, "cpu"); },
            [&](const spyre::MachineDesc &m) { spyre::schedule_attention(a, schedule, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g;
        g.name = "attention";
        g.description = "single-head attention softmax(Q K^T / sqrt(dim)) V: fp16 Q, K, V {dim, seq} -> {dim, seq}, "
                        "one core (schedules/attention.h)";
        g.schedules = [] { return spyre::gen::spyre_schedules(spyre::attention_schedules()); };
        g.int_params = {{"dim", 128}, {"seq", 512}};
        g.inputs_of = [](const spyre::gen::ParamValues &v) {
            const int64_t d = v.at("dim"), s = v.at("seq");
            return std::vector<spyre::gen::BufferShape>{{"q", {d, s}}, {"k", {d, s}}, {"v", {d, s}}};
        };
        g.output_of = [](const spyre::gen::ParamValues &v) {
            return spyre::gen::BufferShape{"attention", {v.at("dim"), v.at("seq")}};
        };
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(AttentionGenerator, attention)
