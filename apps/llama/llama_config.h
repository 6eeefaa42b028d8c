// The shape of a Llama decoder model (Llama-3.1-8B, or a reduced one with the same structure for
// checking numerics) and the rotary position tables it takes, with Llama 3.1's frequency scaling.
// Host-side facts only: no Halide, no device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device/machine_desc.h"

namespace spyre::llama {

struct LlamaConfig {
    std::string name;
    int hidden = 4096;         // model width
    int heads = 32;            // query heads
    int kv_heads = 8;          // key and value heads (grouped-query attention)
    int head_dim = 128;
    int intermediate = 14336;  // the SwiGLU MLP's width
    int vocab = 128256;
    int layers = 32;
    float norm_eps = 1e-5f;
    // Rotary embedding: base and Llama 3.1's scaling of the low frequencies (rope_scaling in the
    // model's config.json: factor 8, low_freq_factor 1, high_freq_factor 4, original context 8192).
    float rope_theta = 500000.0f;
    float rope_factor = 8.0f, rope_low_freq_factor = 1.0f, rope_high_freq_factor = 4.0f;
    int rope_original_context = 8192;

    int q_width() const { return heads * head_dim; }
    int kv_width() const { return kv_heads * head_dim; }
    // Bytes of one layer's weights (fp16), and of the head's (final norm and lm_head).
    // A layer's weights: its projections in fp16, or a byte an element (int8 or fp8) with an fp16
    // scale per output column (Weights, below), and its norms' gains in fp16.
    int64_t layer_weight_bytes(bool byte_projections = false) const;
    int64_t head_weight_bytes() const;
};

// Llama-3.1-8B (Meta's published configuration).
LlamaConfig llama31_8b();
// The same structure at hidden 256, 4 query and 2 KV heads of 64, intermediate 704, vocabulary
// 1024, 2 layers: small enough to run with numerics on the simulator.
LlamaConfig llama_tiny();
// "8b" or "tiny"; spyre::Error naming the known ones otherwise.
LlamaConfig llama_config(const std::string &name);

// How the layers' projection weights are stored: fp16, or a byte an element with an fp16 scale per
// output column: int8 (symmetric, per channel: w ~ q * scale, q in [-127, 127]) or fp8 E4M3 codes
// (w ~ fp8(code) * scale, |fp8| up to 448). Either halves the bytes a decode step streams
// (schedules/qlinear.h dequantizes each K panel in LX for the PE array).
enum class Weights { F16, Int8, Fp8 };
inline bool byte_weights(Weights w) { return w != Weights::F16; }
// "fp16", "int8" or "fp8"; spyre::Error naming the known ones otherwise.
Weights weights_by_name(const std::string &name);
const char *weights_name(Weights w);

// The rotary inverse frequencies, head_dim / 2 of them: theta^(-2i / head_dim), with Llama 3.1's
// scaling (wavelengths above original_context / low_freq_factor divided by `factor`, those below
// original_context / high_freq_factor kept, and a smooth blend between).
std::vector<double> rope_inverse_frequencies(const LlamaConfig &c);

// The vocabulary in parts that one core can address (the machine's max_span_bytes): lm_head's
// columns and the embedding's rows. Each part is `part_cols` wide, a multiple of the sticks the
// cores split evenly (up to all of them), so that lm_head keeps every core busy; the last part's
// columns past the vocabulary are zero weights whose logits no argmax reads. Llama-3.1-8B's 128256
// take 4 parts of 32768 (each 4096-wide fp16 part is 256 MiB, the span exactly), padded to 131072
// (2.2% more lm_head weights); a vocabulary of whole sticks that fits one span is one part, unpadded.
struct VocabSplit {
    int parts = 1, part_cols = 0;
    int padded() const { return parts * part_cols; }
};
VocabSplit vocab_split(const LlamaConfig &c, const MachineDesc &m);
// lm_head's weights {vocab, hidden} (Halide order: w[k * vocab + n]) in those parts, as the model
// stores them: one {part_cols, hidden} matrix after another, the columns past the vocabulary zero.
std::vector<float> split_lm_head(const LlamaConfig &c, const VocabSplit &v, const std::vector<float> &whole);

// cos and sin tables for the rotate-half RoPE kernel (schedules/rope.h), {head_dim, positions.size()}
// in Halide order, as fp32 values (the caller rounds them to fp16): row t holds position
// positions[t]'s angles, each frequency twice (element i and i + head_dim / 2).
struct RopeTables {
    std::vector<float> cos, sin;
};
RopeTables rope_tables(const LlamaConfig &c, const std::vector<int> &positions);

}  // namespace spyre::llama
