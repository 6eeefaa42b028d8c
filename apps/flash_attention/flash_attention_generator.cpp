// The multi-head attention of schedules/flash_attention.h (keys in tiles, online softmax) as a
// Halide Generator: Q, K, V {dim, seq, heads} -> {dim, seq, heads}, fp16, heads over `cores`
// cores. `schedule` is "kv_stream", "kv_resident", "kv_chunked" (mask=causal only), "auto" or "cpu"
// (the CPU reference). The tiles
// are flash_attention_tiles(seq): part of the algorithm (the order of the fp32 sums), the same for
// every schedule. `mask` "causal" hides from each query the keys after it (a decoder's
// self-attention); "none" (the default) does not.
//   spyre-gen -g flash_attention -o out/ schedule=kv_resident dim=128 seq=2048 heads=32 cores=32 mask=causal
#include "flash_attention.h"

#include "spyre_generator.h"

namespace {

using namespace Halide;

const spyre::gen::GeneratorInfo &info();

class FlashAttentionGenerator : public spyre::gen::SpyreGenerator<FlashAttentionGenerator> {
public:
    GeneratorParam<int> dim{"dim", 128, 1, 1 << 20};
    GeneratorParam<int> seq{"seq", 2048, 1, 1 << 20};
    GeneratorParam<int> heads{"heads", 32, 1, 1 << 20};
    GeneratorParam<int> cores{"cores", 32, 1, 1 << 20};
    GeneratorParam<std::string> mask{"mask", "none"};

    Input<Buffer<>> q{"q", Float(16), 3};
    Input<Buffer<>> k{"k", Float(16), 3};
    Input<Buffer<>> v{"v", Float(16), 3};
    Output<Buffer<>> output{"output", Float(16), 3};

    void generate() {
        if (std::string(mask) != "none" && std::string(mask) != "causal")
            throw std::runtime_error("flash_attention: mask='" + std::string(mask) + "' (known: none, causal)");
        const bool causal = std::string(mask) == "causal";
        const spyre::FlashTiles tiles = spyre::flash_attention_tiles(seq, causal);
        spyre::FlashAttentionKernel a = spyre::make_flash_attention(dim, seq, heads, tiles.q_tile, tiles.k_tile, causal);
        spyre::gen::rebind_input(a.q, q, a.out);
        spyre::gen::rebind_input(a.k, k, a.out);
        spyre::gen::rebind_input(a.v, v, a.out);
        output = a.out;
        apply_schedule(
            info(),
            spyre::gen::ParamValues{{"dim", dim}, {"seq", seq}, {"heads", heads}, {"cores", cores}},
            {a.q, a.k, a.v}, a.out, [&] { spyre::schedule_flash_attention(a, "cpu", cores); },
            [&](const spyre::MachineDesc &m) { spyre::schedule_flash_attention(a, schedule, cores, m); });
    }
};

const spyre::gen::GeneratorInfo &info() {
    static const spyre::gen::GeneratorInfo i = [] {
        spyre::gen::GeneratorInfo g;
        g.name = "flash_attention";
        g.description = "multi-head attention, keys in tiles with an online softmax: fp16 Q, K, V {dim, seq, heads} -> "
                        "{dim, seq, heads}, heads over `cores`; mask=causal hides later keys (schedules/flash_attention.h)";
        g.schedules = [] { return spyre::gen::spyre_schedules(spyre::flash_attention_schedules()); };
        g.extra_params = {{"mask", "none"}};
        g.int_params = {{"dim", 128}, {"seq", 2048}, {"heads", 32}, {"cores", 32}};
        g.inputs_of = [](const spyre::gen::ParamValues &v) {
            const int64_t d = v.at("dim"), s = v.at("seq"), h = v.at("heads");
            return std::vector<spyre::gen::BufferShape>{{"q", {d, s, h}}, {"k", {d, s, h}}, {"v", {d, s, h}}};
        };
        g.output_of = [](const spyre::gen::ParamValues &v) {
            return spyre::gen::BufferShape{"flash_attention", {v.at("dim"), v.at("seq"), v.at("heads")}};
        };
        return g;
    }();
    return i;
}
const spyre::gen::Registrar registrar(info());

}  // namespace

HALIDE_REGISTER_GENERATOR(FlashAttentionGenerator, flash_attention)
