#include "llama_reference.h"

#include <cmath>

#include "device/half.h"
#include "llama_checkpoint.h"
#include "llama_model.h"

namespace spyre::llama {

namespace {

float f16(float v) { return round_to_half(v); }

std::string layer_name(int l, const std::string &what) { return "L" + std::to_string(l) + "." + what; }

}  // namespace

int argmax_of(const std::vector<float> &v) {
    int best = 0;
    for (size_t i = 1; i < v.size(); i++)
        if (v[i] > v[size_t(best)]) best = int(i);
    return best;
}

ReferenceLlama::ReferenceLlama(const LlamaConfig &c, const LlamaModel &model)
    : c_(c), split_(vocab_split(c, model.options().machine)), k_cache_(size_t(c.layers)), v_cache_(size_t(c.layers)) {
    std::vector<std::string> names = {"embed", "final_norm", "lm_head"};
    for (int l = 0; l < c.layers; l++)
        for (const char *w : {"attn_norm", "wqkv", "wo", "ffn_norm", "w1", "w3", "w2"})
            names.push_back(layer_name(l, w));
    for (const std::string &n : names) w_[n] = model.weights(n);
}

ReferenceLlama::ReferenceLlama(const LlamaCheckpoint &ck, const MachineDesc &m)
    : c_(ck.config()), split_(vocab_split(ck.config(), m)), k_cache_(size_t(c_.layers)), v_cache_(size_t(c_.layers)) {
    auto rounded = [](std::vector<float> v) {
        for (float &x : v) x = f16(x);
        return v;
    };
    w_["embed"] = rounded(ck.weight("embed"));
    w_["final_norm"] = rounded(ck.weight("final_norm"));
    w_["lm_head"] = rounded(split_lm_head(c_, split_, ck.weight("lm_head")));
    for (int l = 0; l < c_.layers; l++)
        for (const char *w : {"attn_norm", "wqkv", "wo", "ffn_norm", "w1", "w3", "w2"})
            w_[layer_name(l, w)] = rounded(ck.weight(layer_name(l, w)));
}

std::vector<float> ReferenceLlama::rmsnorm(const std::vector<float> &x, const std::vector<float> &gain) const {
    double sum = 0;
    for (float v : x) sum += double(v) * v;
    const float rms = float(std::sqrt(sum / x.size() + c_.norm_eps));
    std::vector<float> out(x.size());
    for (size_t i = 0; i < x.size(); i++) out[i] = f16(x[i] / rms * gain[i]);
    return out;
}

std::vector<float> ReferenceLlama::matvec(const std::vector<float> &x, const std::vector<float> &w, int cols) const {
    std::vector<float> out(size_t(cols), 0.0f);
    for (size_t k = 0; k < x.size(); k++) {
        const float *row = &w[k * size_t(cols)];
        for (int n = 0; n < cols; n++) out[size_t(n)] += x[k] * row[n];
    }
    return out;
}

std::vector<float> ReferenceLlama::step(const std::vector<int> &ids) {
    const LlamaConfig &c = c_;
    const int H = c.hidden, D = c.head_dim, group = c.heads / c.kv_heads;
    std::vector<int> positions;
    for (size_t t = 0; t < ids.size(); t++) positions.push_back(position_ + int(t));
    const RopeTables tables = rope_tables(c, positions);
    // The tables are fp16 on the device, as the kernel reads them.
    auto rope = [&](std::vector<float> &v, size_t t) {
        std::vector<float> in = v;
        const int half = D / 2;
        for (size_t x = 0; x < v.size(); x++) {
            const int i = int(x % size_t(D));
            const float rot = i < half ? -in[x + half] : in[x - half];
            const float cs = f16(tables.cos[t * D + i]), sn = f16(tables.sin[t * D + i]);
            v[x] = f16(in[x] * cs + rot * sn);
        }
    };
    std::vector<std::vector<float>> xs;
    for (int id : ids) {
        const int row = std::min(std::max(id, 0), c.vocab - 1);
        const std::vector<float> &e = w_["embed"];
        xs.emplace_back(e.begin() + size_t(row) * H, e.begin() + size_t(row + 1) * H);
    }
    for (int l = 0; l < c.layers; l++) {
        auto wl = [&](const char *n) -> std::vector<float> & { return w_[layer_name(l, n)]; };
        std::vector<std::vector<float>> qs;
        for (size_t t = 0; t < xs.size(); t++) {
            const std::vector<float> xn = rmsnorm(xs[t], wl("attn_norm"));
            // One projection of {q | k | v} (the weights' columns in that order).
            const std::vector<float> qkv = matvec(xn, wl("wqkv"), c.q_width() + 2 * c.kv_width());
            std::vector<float> q(qkv.begin(), qkv.begin() + c.q_width()),
                k(qkv.begin() + c.q_width(), qkv.begin() + c.q_width() + c.kv_width()),
                v(qkv.begin() + c.q_width() + c.kv_width(), qkv.end());
            for (auto *p : {&q, &k, &v})
                for (float &e : *p) e = f16(e);
            rope(q, t);
            rope(k, t);
            qs.push_back(q);
            k_cache_[size_t(l)].push_back(k);
            v_cache_[size_t(l)].push_back(v);
        }
        const float scale = 1.0f / std::sqrt(float(D));
        for (size_t t = 0; t < xs.size(); t++) {
            const int pos = positions[t];
            std::vector<float> attn(static_cast<size_t>(c.q_width()));
            for (int h = 0; h < c.heads; h++) {
                const int kvh = h / group;  // grouped-query attention
                std::vector<float> s(static_cast<size_t>(pos) + 1);
                float mx = -INFINITY;
                for (int p = 0; p <= pos; p++) {
                    float dot = 0;
                    for (int d = 0; d < D; d++)
                        dot += qs[t][size_t(h * D + d)] * k_cache_[size_t(l)][size_t(p)][size_t(kvh * D + d)];
                    s[size_t(p)] = dot * scale;
                    mx = std::max(mx, s[size_t(p)]);
                }
                float total = 0;
                for (float &e : s) total += (e = std::exp(e - mx));
                for (int d = 0; d < D; d++) {
                    float o = 0;
                    for (int p = 0; p <= pos; p++) o += s[size_t(p)] * v_cache_[size_t(l)][size_t(p)][size_t(kvh * D + d)];
                    attn[size_t(h * D + d)] = f16(o / total);
                }
            }
            std::vector<float> o = matvec(attn, wl("wo"), H);
            std::vector<float> h(static_cast<size_t>(H));
            for (int i = 0; i < H; i++) h[size_t(i)] = f16(o[size_t(i)] + xs[t][size_t(i)]);
            const std::vector<float> hn = rmsnorm(h, wl("ffn_norm"));
            // The gate projection is stored in fp16 before its silu (llama_model.h).
            const std::vector<float> g = matvec(hn, wl("w1"), c.intermediate), u = matvec(hn, wl("w3"), c.intermediate);
            std::vector<float> m(static_cast<size_t>(c.intermediate));
            for (size_t i = 0; i < m.size(); i++) {
                const float gi = f16(g[i]);
                m[i] = f16(gi / (1.0f + std::exp(-gi)) * u[i]);
            }
            const std::vector<float> down = matvec(m, wl("w2"), H);
            for (int i = 0; i < H; i++) xs[t][size_t(i)] = f16(down[size_t(i)] + h[size_t(i)]);
        }
    }
    position_ += int(ids.size());
    // The head: lm_head's weights are stored in the vocabulary's parts (llama_stages.h).
    const std::vector<float> xf = rmsnorm(xs.back(), w_["final_norm"]);
    const int cols = split_.part_cols;
    const std::vector<float> &w = w_["lm_head"];
    std::vector<float> logits(size_t(split_.padded()), 0.0f);
    for (int p = 0; p < split_.parts; p++)
        for (int k = 0; k < H; k++)
            for (int n = 0; n < cols; n++)
                logits[size_t(p * cols + n)] += xf[size_t(k)] * w[(size_t(p) * H + size_t(k)) * cols + size_t(n)];
    logits.resize(size_t(c.vocab));
    for (float &v : logits) v = f16(v);
    return logits;
}

}  // namespace spyre::llama
