#include "llama_config.h"

#include <cmath>

#include "device/error.h"

namespace spyre::llama {

int64_t LlamaConfig::layer_weight_bytes(bool byte_projections) const {
    const int64_t h = hidden;
    const int64_t attention = h * q_width() * 2 + h * kv_width() * 2;  // wq and wo, wk and wv
    const int64_t mlp = 3 * h * intermediate;
    const int64_t norms = 2 * 2 * h;  // the two norms' gains
    if (!byte_projections) return 2 * (attention + mlp) + norms;
    // A scale per output column: wqkv's q + 2 kv, wo's h, w1's and w3's intermediate, w2's h.
    const int64_t scales = 2 * (int64_t(q_width()) + 2 * kv_width() + 2 * h + 2 * int64_t(intermediate));
    return attention + mlp + scales + norms;
}

int64_t LlamaConfig::head_weight_bytes() const { return 2 * (int64_t(hidden) * vocab + hidden); }

LlamaConfig llama31_8b() {
    LlamaConfig c;
    c.name = "8b";
    return c;
}

LlamaConfig llama_tiny() {
    LlamaConfig c;
    c.name = "tiny";
    c.hidden = 256, c.heads = 4, c.kv_heads = 2, c.head_dim = 64, c.intermediate = 704, c.vocab = 1024, c.layers = 2;
    return c;
}

LlamaConfig llama_config(const std::string &name) {
    if (name == "8b") return llama31_8b();
    if (name == "tiny") return llama_tiny();
    throw_error("llama: unknown configuration '", name, "'; known: 8b, tiny");
}

VocabSplit vocab_split(const LlamaConfig &c, const MachineDesc &m) {
    const int lanes = int(m.stick_bytes / 2);
    for (int p = 1; p <= c.vocab; p++) {
        const int need = (c.vocab + p - 1) / p;
        // The most cores (a power of two) whose whole sticks the part's columns can give each.
        int g = 1;
        while (g * 2 <= m.cores && int64_t(lanes) * g * 2 <= need) g *= 2;
        const int unit = lanes * g, cols = (need + unit - 1) / unit * unit;
        if (int64_t(cols) * c.hidden * 2 <= m.max_span_bytes) return VocabSplit{p, cols};
    }
    throw_error("llama: a vocabulary of ", c.vocab, " has no part of ", c.hidden,
                "-wide fp16 rows that fits one core's span of ", m.max_span_bytes, " bytes");
}

std::vector<float> split_lm_head(const LlamaConfig &c, const VocabSplit &v, const std::vector<float> &whole) {
    if (whole.size() != size_t(c.vocab) * size_t(c.hidden))
        throw_error("llama: lm_head of ", whole.size(), " values for a vocabulary of ", c.vocab, " by ", c.hidden);
    std::vector<float> parts(size_t(v.padded()) * size_t(c.hidden), 0.0f);
    for (int p = 0; p < v.parts; p++)
        for (int k = 0; k < c.hidden; k++)
            for (int n = 0; n < v.part_cols && p * v.part_cols + n < c.vocab; n++)
                parts[(size_t(p) * c.hidden + size_t(k)) * v.part_cols + size_t(n)] =
                    whole[size_t(k) * c.vocab + size_t(p * v.part_cols + n)];
    return parts;
}

std::vector<double> rope_inverse_frequencies(const LlamaConfig &c) {
    const double pi = std::acos(-1.0);
    const double low_wavelen = c.rope_original_context / double(c.rope_low_freq_factor);
    const double high_wavelen = c.rope_original_context / double(c.rope_high_freq_factor);
    std::vector<double> inv(c.head_dim / 2);
    for (size_t i = 0; i < inv.size(); i++) {
        const double f = std::pow(double(c.rope_theta), -2.0 * double(i) / c.head_dim);
        const double wavelen = 2 * pi / f;
        if (wavelen > low_wavelen) {
            inv[i] = f / c.rope_factor;  // long wavelengths: stretched to the longer context
        } else if (wavelen < high_wavelen) {
            inv[i] = f;  // short ones: as trained
        } else {
            const double smooth = (c.rope_original_context / wavelen - c.rope_low_freq_factor) /
                                  (c.rope_high_freq_factor - c.rope_low_freq_factor);
            inv[i] = (1 - smooth) * f / c.rope_factor + smooth * f;
        }
    }
    return inv;
}

RopeTables rope_tables(const LlamaConfig &c, const std::vector<int> &positions) {
    const std::vector<double> inv = rope_inverse_frequencies(c);
    const int d = c.head_dim, half = d / 2;
    RopeTables t;
    t.cos.resize(size_t(d) * positions.size());
    t.sin.resize(t.cos.size());
    for (size_t p = 0; p < positions.size(); p++)
        for (int i = 0; i < d; i++) {
            const double angle = positions[p] * inv[i % half];
            t.cos[p * d + i] = float(std::cos(angle));
            t.sin[p * d + i] = float(std::sin(angle));
        }
    return t;
}

Weights weights_by_name(const std::string &name) {
    if (name == "fp16") return Weights::F16;
    if (name == "int8") return Weights::Int8;
    if (name == "fp8") return Weights::Fp8;
    throw_error("llama: weights '", name, "'; known: fp16, int8, fp8");
}

const char *weights_name(Weights w) { return w == Weights::Int8 ? "int8" : w == Weights::Fp8 ? "fp8" : "fp16"; }

}  // namespace spyre::llama
