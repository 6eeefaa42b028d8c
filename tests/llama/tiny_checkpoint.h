// Writes small Hugging Face Llama checkpoints for the tests and the fuzz seeds: safetensors bytes
// from named tensors (F16, BF16 or F32), config.json text, and a whole random checkpoint (hidden
// 128, 2 query heads and 1 KV head of 64, intermediate 256, vocabulary 256, 2 layers) in the
// tensors' Hugging Face names and [out, in] shapes, its dtypes mixed (the embedding BF16, layer 0
// F16, layer 1 and the norms F32, lm_head F16). No gtest, no Halide.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/half.h"

namespace spyre::llama::test {

struct TestTensor {
    std::string name, dtype;     // dtype: F16, BF16 or F32 (or any name, written as F32's bytes)
    std::vector<int64_t> shape;  // outermost first
    std::vector<float> values;
};

inline uint16_t float_to_bf16(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);  // round to nearest even
}

inline float bf16_to_float(uint16_t h) {
    const uint32_t b = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

// The value a tensor of `dtype` stores for v.
inline float stored_value(const std::string &dtype, float v) {
    if (dtype == "F16") return half_to_float(float_to_half(v));
    if (dtype == "BF16") return bf16_to_float(float_to_bf16(v));
    return v;
}

// A safetensors file: the header (tensors in the given order, data back to back), then the data.
inline std::string safetensors_bytes(const std::vector<TestTensor> &tensors,
                                     const nlohmann::json &metadata = nlohmann::json()) {
    nlohmann::json header = nlohmann::json::object();
    std::string data;
    for (const TestTensor &t : tensors) {
        const size_t begin = data.size();
        for (float v : t.values) {
            if (t.dtype == "F16" || t.dtype == "BF16") {
                const uint16_t h = t.dtype == "F16" ? float_to_half(v) : float_to_bf16(v);
                data.push_back(char(h & 0xff));
                data.push_back(char(h >> 8));
            } else {
                char b[4];
                std::memcpy(b, &v, 4);
                data.append(b, 4);
            }
        }
        header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
    }
    if (!metadata.is_null()) header["__metadata__"] = metadata;
    const std::string text = header.dump();
    std::string out(8, '\0');
    const uint64_t n = text.size();
    for (int i = 0; i < 8; i++) out[size_t(i)] = char((n >> (8 * i)) & 0xff);
    return out + text + data;
}

struct TinyShape {
    int hidden = 128, heads = 2, kv_heads = 1, head_dim = 64, intermediate = 256, vocab = 256, layers = 2;
};

// config.json of a Llama 3.1-style model of that shape (rope_scaling llama3, eos 255).
inline nlohmann::json tiny_config(const TinyShape &s = {}) {
    return {{"architectures", {"LlamaForCausalLM"}},
            {"model_type", "llama"},
            {"hidden_size", s.hidden},
            {"intermediate_size", s.intermediate},
            {"num_hidden_layers", s.layers},
            {"num_attention_heads", s.heads},
            {"num_key_value_heads", s.kv_heads},
            {"head_dim", s.head_dim},
            {"hidden_act", "silu"},
            {"rms_norm_eps", 1e-5},
            {"rope_theta", 500000.0},
            {"rope_scaling",
             {{"rope_type", "llama3"},
              {"factor", 8.0},
              {"low_freq_factor", 1.0},
              {"high_freq_factor", 4.0},
              {"original_max_position_embeddings", 8192}}},
            {"max_position_embeddings", 131072},
            {"vocab_size", s.vocab},
            {"tie_word_embeddings", false},
            {"bos_token_id", 1},
            {"eos_token_id", 255},
            {"torch_dtype", "bfloat16"}};
}

// The random tensors of a model of that shape, in Hugging Face's names and shapes.
inline std::vector<TestTensor> tiny_tensors(const TinyShape &s = {}, uint32_t seed = 7) {
    uint32_t state = seed * 2654435761u + 99u;
    auto uniform = [&](size_t n, float scale, float centre) {
        std::vector<float> v(n);
        for (float &x : v) {
            state = state * 1664525u + 1013904223u;
            x = centre + scale * (float((state >> 8) & 0xFFFFFF) / float(1 << 23) - 1.0f);
        }
        return v;
    };
    auto proj = [&](const std::string &name, const std::string &dtype, int out, int in) {
        return TestTensor{name, dtype, {out, in}, uniform(size_t(out) * size_t(in), 1.0f / std::sqrt(float(in)), 0)};
    };
    auto norm = [&](const std::string &name) { return TestTensor{name, "F32", {s.hidden}, uniform(size_t(s.hidden), 0.2f, 1)}; };
    const int q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
    std::vector<TestTensor> t;
    t.push_back({"model.embed_tokens.weight", "BF16", {s.vocab, s.hidden}, uniform(size_t(s.vocab) * s.hidden, 1, 0)});
    for (int l = 0; l < s.layers; l++) {
        const std::string p = "model.layers." + std::to_string(l) + ".", dt = l == 0 ? "F16" : "F32";
        t.push_back(norm(p + "input_layernorm.weight"));
        t.push_back(proj(p + "self_attn.q_proj.weight", dt, q, s.hidden));
        t.push_back(proj(p + "self_attn.k_proj.weight", dt, kv, s.hidden));
        t.push_back(proj(p + "self_attn.v_proj.weight", dt, kv, s.hidden));
        t.push_back(proj(p + "self_attn.o_proj.weight", dt, s.hidden, q));
        t.push_back(norm(p + "post_attention_layernorm.weight"));
        t.push_back(proj(p + "mlp.gate_proj.weight", dt, s.intermediate, s.hidden));
        t.push_back(proj(p + "mlp.up_proj.weight", dt, s.intermediate, s.hidden));
        t.push_back(proj(p + "mlp.down_proj.weight", dt, s.hidden, s.intermediate));
    }
    t.push_back(norm("model.norm.weight"));
    t.push_back(proj("lm_head.weight", "F16", s.vocab, s.hidden));
    return t;
}

inline void write_text(const std::filesystem::path &p, const std::string &text) {
    std::ofstream f(p, std::ios::binary);
    f << text;
}

// A checkpoint directory: config.json and model.safetensors, or (shards > 1) the tensors dealt into
// that many files model-0000i-of-0000n.safetensors with model.safetensors.index.json.
inline void write_checkpoint(const std::filesystem::path &dir, const nlohmann::json &config,
                             const std::vector<TestTensor> &tensors, int shards = 1) {
    std::filesystem::create_directories(dir);
    write_text(dir / "config.json", config.dump(2));
    if (shards <= 1) {
        write_text(dir / "model.safetensors", safetensors_bytes(tensors, {{"format", "pt"}}));
        return;
    }
    nlohmann::json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
    for (int i = 0; i < shards; i++) {
        const std::string name = "model-0000" + std::to_string(i + 1) + "-of-0000" + std::to_string(shards) + ".safetensors";
        std::vector<TestTensor> mine;
        for (size_t k = size_t(i); k < tensors.size(); k += size_t(shards)) {
            mine.push_back(tensors[k]);
            index["weight_map"][tensors[k].name] = name;
        }
        write_text(dir / name, safetensors_bytes(mine, {{"format", "pt"}}));
    }
    write_text(dir / "model.safetensors.index.json", index.dump(2));
}

}  // namespace spyre::llama::test
