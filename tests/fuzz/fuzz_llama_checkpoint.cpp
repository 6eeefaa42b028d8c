// libFuzzer: a Llama checkpoint from outside (config.json, and safetensors as one file or two shards
// with an index; the framing is checkpoint_input.h). Anything but a valid checkpoint must be a
// spyre::Error naming the problem; a valid one must read every weight the model takes (or refuse a
// value fp16 cannot hold, by an Error), each of the size the config gives, and give finite RoPE
// frequencies.
#include <cmath>
#include <cstdint>
#include <string>

#include "checkpoint_input.h"
#include "device/error.h"
#include "llama_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace spyre;
    using namespace spyre::llama;
    const fuzz::CheckpointInput in = fuzz::decode_checkpoint_input(data, size);
    try {
        const LlamaCheckpoint ck = LlamaCheckpoint::from_memory(in.config, in.files, in.index);
        const LlamaConfig &c = ck.config();
        for (double f : rope_inverse_frequencies(c))
            if (!std::isfinite(f)) __builtin_trap();
        const size_t h = size_t(c.hidden), qkv = size_t(c.q_width() + 2 * c.kv_width());
        auto expect = [&](const std::string &name, size_t n) {
            try {
                if (ck.weight(name).size() != n) __builtin_trap();
            } catch (const Error &) {
            }
        };
        expect("embed", size_t(c.vocab) * h);
        expect("lm_head", size_t(c.vocab) * h);
        expect("final_norm", h);
        for (int l = 0; l < c.layers; l++) {
            const std::string p = "L" + std::to_string(l) + ".";
            expect(p + "attn_norm", h);
            expect(p + "ffn_norm", h);
            expect(p + "wqkv", qkv * h);
            expect(p + "wo", h * size_t(c.q_width()));
            expect(p + "w1", size_t(c.intermediate) * h);
            expect(p + "w3", size_t(c.intermediate) * h);
            expect(p + "w2", size_t(c.intermediate) * h);
        }
    } catch (const Error &) {
    }
    return 0;
}
