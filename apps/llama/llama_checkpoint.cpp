#include "llama_checkpoint.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "device/error.h"
#include "device/half.h"
#include "json_object.h"

namespace spyre::llama {

namespace {

using nlohmann::json;

const char *json_kind(const json &v) {
    if (v.is_number_float()) return "a non-integer number";
    if (v.is_number_integer()) return "an integer";
    return v.type_name();
}

// The largest size a field may give: keeps every product of two of them inside int64.
constexpr int64_t kMaxDim = 1 << 24;

int int_field(const json &j, const std::string &origin, const std::string &key, int64_t lo, int64_t hi) {
    if (!j.contains(key)) throw_error(origin, ": field ", key, " missing");
    const json &v = j[key];
    if (!v.is_number_integer())
        throw_error(origin, ": ", key, " must be an integer, got ", json_kind(v), " ", v.dump().substr(0, 40));
    const bool too_big = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi);
    if (too_big || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
        throw_error(origin, ": ", key, " is ", v.dump(), ", outside [", lo, ", ", hi, "]");
    return int(v.get<int64_t>());
}

double number_field(const json &j, const std::string &origin, const std::string &key, double lo, double hi) {
    if (!j.contains(key)) throw_error(origin, ": field ", key, " missing");
    const json &v = j[key];
    if (!v.is_number()) throw_error(origin, ": ", key, " must be a number, got ", json_kind(v), " ", v.dump().substr(0, 40));
    const double x = v.get<double>();
    if (!(x >= lo && x <= hi)) throw_error(origin, ": ", key, " is ", v.dump(), ", outside [", lo, ", ", hi, "]");
    return x;
}

std::string shape_text(const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::string read_text(const std::filesystem::path &p) {
    std::ifstream f(p, std::ios::binary);
    if (!f) throw_error(p.string(), ": cannot open for reading");
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string hf_layer(int l, const std::string &what) { return "model.layers." + std::to_string(l) + "." + what; }

}  // namespace

LlamaConfig read_llama_config(const std::string &text, const std::string &origin, std::vector<int> *eos_ids,
                              bool *tie_word_embeddings) {
    json j = parse_json_object(text, origin);
    // What this decoder is: Llama's layer, no biases, SiLU.
    auto expect_string = [&](const char *key, const char *want) {
        if (!j.contains(key) || j[key].is_null()) return;
        if (!j[key].is_string() || j[key].get<std::string>() != want)
            throw_error(origin, ": ", key, " is ", j[key].dump().substr(0, 60), "; this decoder is Llama's (", key, " \"",
                        want, "\")");
    };
    expect_string("model_type", "llama");
    expect_string("hidden_act", "silu");
    for (const char *key : {"attention_bias", "mlp_bias"})
        if (j.contains(key) && !(j[key].is_boolean() && !j[key].get<bool>()) && !j[key].is_null())
            throw_error(origin, ": ", key, " is ", j[key].dump().substr(0, 40), "; the model has no biases");
    LlamaConfig c;
    c.name = "checkpoint";
    c.hidden = int_field(j, origin, "hidden_size", 1, kMaxDim);
    c.intermediate = int_field(j, origin, "intermediate_size", 1, kMaxDim);
    c.layers = int_field(j, origin, "num_hidden_layers", 1, 4096);
    c.heads = int_field(j, origin, "num_attention_heads", 1, 4096);
    c.kv_heads = j.contains("num_key_value_heads") && !j["num_key_value_heads"].is_null()
                     ? int_field(j, origin, "num_key_value_heads", 1, 4096)
                     : c.heads;
    if (c.heads % c.kv_heads)
        throw_error(origin, ": num_attention_heads ", c.heads, " is not a multiple of num_key_value_heads ", c.kv_heads);
    if (j.contains("head_dim") && !j["head_dim"].is_null()) {
        c.head_dim = int_field(j, origin, "head_dim", 2, 4096);
    } else {
        if (c.hidden % c.heads)
            throw_error(origin, ": hidden_size ", c.hidden, " is not a multiple of num_attention_heads ", c.heads,
                        " (and there is no head_dim)");
        c.head_dim = c.hidden / c.heads;
    }
    if (c.head_dim % 2) throw_error(origin, ": head_dim ", c.head_dim, " is odd; rotary embedding pairs its elements");
    if (int64_t(c.heads) * c.head_dim > kMaxDim)
        throw_error(origin, ": num_attention_heads x head_dim = ", int64_t(c.heads) * c.head_dim, " is over ", kMaxDim);
    c.vocab = int_field(j, origin, "vocab_size", 1, kMaxDim);
    c.norm_eps = float(number_field(j, origin, "rms_norm_eps", 0, 1));
    c.rope_theta = j.contains("rope_theta") ? float(number_field(j, origin, "rope_theta", 1, 1e12)) : 10000.0f;
    // No scaling unless rope_scaling asks for Llama 3's: factor 1 leaves every frequency as it is.
    c.rope_factor = 1, c.rope_low_freq_factor = 1, c.rope_high_freq_factor = 4, c.rope_original_context = 8192;
    if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) {
        const json &r = j["rope_scaling"];
        const std::string where = origin + ": rope_scaling";
        if (!r.is_object()) throw_error(where, " must be an object or null, got ", json_kind(r));
        const char *type_key = r.contains("rope_type") ? "rope_type" : "type";
        if (!r.contains(type_key)) throw_error(where, ": field rope_type missing");
        if (!r[type_key].is_string()) throw_error(where, ": ", type_key, " must be a string, got ", json_kind(r[type_key]));
        const std::string type = r[type_key].get<std::string>();
        if (type == "llama3") {
            c.rope_factor = float(number_field(r, where, "factor", 1, 1e6));
            c.rope_low_freq_factor = float(number_field(r, where, "low_freq_factor", 1e-6, 1e6));
            c.rope_high_freq_factor = float(number_field(r, where, "high_freq_factor", 1e-6, 1e6));
            c.rope_original_context = int_field(r, where, "original_max_position_embeddings", 1, 1 << 30);
            if (!(c.rope_high_freq_factor > c.rope_low_freq_factor))
                throw_error(where, ": high_freq_factor ", c.rope_high_freq_factor, " must be above low_freq_factor ",
                            c.rope_low_freq_factor);
        } else if (type != "default") {
            throw_error(where, " type '", type.substr(0, 40),
                        "' is not implemented; the model scales RoPE as Llama 3 does (\"llama3\") or not at all");
        }
    }
    if (tie_word_embeddings) {
        *tie_word_embeddings = false;
        if (j.contains("tie_word_embeddings") && !j["tie_word_embeddings"].is_null()) {
            if (!j["tie_word_embeddings"].is_boolean())
                throw_error(origin, ": tie_word_embeddings must be a boolean, got ", json_kind(j["tie_word_embeddings"]));
            *tie_word_embeddings = j["tie_word_embeddings"].get<bool>();
        }
    }
    if (eos_ids) {
        eos_ids->clear();
        if (j.contains("eos_token_id") && !j["eos_token_id"].is_null()) {
            const json &e = j["eos_token_id"];
            auto one = [&](const json &v) {
                if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > std::numeric_limits<int>::max())
                    throw_error(origin, ": eos_token_id must be a token id or a list of them, got ", e.dump().substr(0, 60));
                eos_ids->push_back(int(v.get<int64_t>()));
            };
            if (e.is_array())
                for (const json &v : e) one(v);
            else
                one(e);
        }
    }
    return c;
}

LlamaCheckpoint LlamaCheckpoint::make(const std::string &config_json, const std::string &config_origin,
                                      SafetensorsSet set) {
    LlamaCheckpoint ck;
    ck.config_ = read_llama_config(config_json, config_origin, &ck.eos_, &ck.tied_);
    ck.set_ = std::move(set);
    // Every tensor the model reads: there, of a dtype it reads, of the config's shape.
    const LlamaConfig &c = ck.config_;
    auto check = [&](const std::string &name, std::vector<int64_t> shape, const std::string &from) {
        const SafetensorsEntry *e = ck.set_.find(name);
        if (!e) throw_error(ck.set_.origin(), ": tensor '", name, "' missing");
        if (e->dtype != "F16" && e->dtype != "BF16" && e->dtype != "F32")
            throw_error(e->file, ": tensor '", name, "' is ", e->dtype, "; the model reads F16, BF16 or F32");
        if (e->shape != shape)
            throw_error(e->file, ": tensor '", name, "' has shape ", shape_text(e->shape), "; ", config_origin, " (", from,
                        ") makes it ", shape_text(shape));
    };
    const int64_t H = c.hidden, Q = c.q_width(), KV = c.kv_width(), I = c.intermediate, V = c.vocab;
    check("model.embed_tokens.weight", {V, H}, "vocab_size, hidden_size");
    for (int l = 0; l < c.layers; l++) {
        check(hf_layer(l, "input_layernorm.weight"), {H}, "hidden_size");
        check(hf_layer(l, "self_attn.q_proj.weight"), {Q, H}, "num_attention_heads x head_dim, hidden_size");
        check(hf_layer(l, "self_attn.k_proj.weight"), {KV, H}, "num_key_value_heads x head_dim, hidden_size");
        check(hf_layer(l, "self_attn.v_proj.weight"), {KV, H}, "num_key_value_heads x head_dim, hidden_size");
        check(hf_layer(l, "self_attn.o_proj.weight"), {H, Q}, "hidden_size, num_attention_heads x head_dim");
        check(hf_layer(l, "post_attention_layernorm.weight"), {H}, "hidden_size");
        check(hf_layer(l, "mlp.gate_proj.weight"), {I, H}, "intermediate_size, hidden_size");
        check(hf_layer(l, "mlp.up_proj.weight"), {I, H}, "intermediate_size, hidden_size");
        check(hf_layer(l, "mlp.down_proj.weight"), {H, I}, "hidden_size, intermediate_size");
    }
    check("model.norm.weight", {H}, "hidden_size");
    // A tied head is the embedding; a checkpoint may still carry its copy (then that is read).
    if (!ck.tied_ || ck.set_.find("lm_head.weight")) check("lm_head.weight", {V, H}, "vocab_size, hidden_size");
    return ck;
}

LlamaCheckpoint LlamaCheckpoint::open(const std::string &dir) {
    namespace fs = std::filesystem;
    const fs::path config = fs::path(dir) / "config.json";
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw_error(dir, ": not a directory (a checkpoint is a directory with config.json)");
    if (!fs::exists(config, ec)) throw_error(dir, ": no config.json");
    const std::string text = read_text(config);
    return make(text, config.string(), SafetensorsSet::open_dir(dir));
}

LlamaCheckpoint LlamaCheckpoint::from_memory(const std::string &config_json,
                                             const std::vector<std::pair<std::string, std::string>> &files,
                                             const std::string &index_json) {
    return make(config_json, "config.json", SafetensorsSet::from_memory(files, index_json));
}

std::vector<std::string> LlamaCheckpoint::tensor_names() const {
    std::vector<std::string> names = {"model.embed_tokens.weight"};
    for (int l = 0; l < config_.layers; l++)
        for (const char *w : {"input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                              "self_attn.v_proj.weight", "self_attn.o_proj.weight", "post_attention_layernorm.weight",
                              "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"})
            names.push_back(hf_layer(l, w));
    names.push_back("model.norm.weight");
    names.push_back(set_.find("lm_head.weight") || !tied_ ? "lm_head.weight" : "model.embed_tokens.weight");
    return names;
}

std::vector<float> LlamaCheckpoint::read(const std::string &tensor) const {
    std::vector<float> v = set_.read_floats(tensor);
    // The model holds fp16: a value past its range would be an infinity in every sum it reaches.
    for (size_t i = 0; i < v.size(); i++)
        if (!std::isfinite(half_to_float(float_to_half(v[i]))))
            throw_error(set_.find(tensor)->file, ": tensor '", tensor, "' element ", i, " is ", v[i],
                        ", not a finite fp16 value (the model holds its weights in fp16)");
    return v;
}

std::vector<float> LlamaCheckpoint::weight(const std::string &name) const {
    const LlamaConfig &c = config_;
    // [out, in] (Hugging Face's Linear) into {out columns, in rows}: w[k * cols + col0 + n].
    auto transpose_into = [](std::vector<float> &w, int cols, int col0, const std::vector<float> &t, int out, int in) {
        for (int n = 0; n < out; n++)
            for (int k = 0; k < in; k++) w[size_t(k) * size_t(cols) + size_t(col0 + n)] = t[size_t(n) * size_t(in) + size_t(k)];
    };
    auto linear = [&](const std::string &tensor, int out, int in) {
        std::vector<float> w(size_t(out) * size_t(in));
        transpose_into(w, out, 0, read(tensor), out, in);
        return w;
    };
    if (name == "embed") return read("model.embed_tokens.weight");
    if (name == "final_norm") return read("model.norm.weight");
    if (name == "lm_head")
        return linear(set_.find("lm_head.weight") || !tied_ ? "lm_head.weight" : "model.embed_tokens.weight", c.vocab,
                      c.hidden);
    // "L<l>.<what>"
    const size_t dot = name.find('.');
    if (name.size() > 1 && name[0] == 'L' && dot != std::string::npos && dot > 1 && dot < 8 &&
        name.find_first_not_of("0123456789", 1) == dot) {
        const int l = std::stoi(name.substr(1, dot - 1));
        const std::string what = name.substr(dot + 1);
        if (l < c.layers) {
            if (what == "attn_norm") return read(hf_layer(l, "input_layernorm.weight"));
            if (what == "ffn_norm") return read(hf_layer(l, "post_attention_layernorm.weight"));
            if (what == "wo") return linear(hf_layer(l, "self_attn.o_proj.weight"), c.hidden, c.q_width());
            if (what == "w1") return linear(hf_layer(l, "mlp.gate_proj.weight"), c.intermediate, c.hidden);
            if (what == "w3") return linear(hf_layer(l, "mlp.up_proj.weight"), c.intermediate, c.hidden);
            if (what == "w2") return linear(hf_layer(l, "mlp.down_proj.weight"), c.hidden, c.intermediate);
            if (what == "wqkv") {
                const int cols = c.q_width() + 2 * c.kv_width();
                std::vector<float> w(size_t(cols) * size_t(c.hidden));
                transpose_into(w, cols, 0, read(hf_layer(l, "self_attn.q_proj.weight")), c.q_width(), c.hidden);
                transpose_into(w, cols, c.q_width(), read(hf_layer(l, "self_attn.k_proj.weight")), c.kv_width(), c.hidden);
                transpose_into(w, cols, c.q_width() + c.kv_width(), read(hf_layer(l, "self_attn.v_proj.weight")),
                               c.kv_width(), c.hidden);
                return w;
            }
        }
    }
    throw_error("llama checkpoint: no weight '", name, "' (embed, L<layer>.{attn_norm,wqkv,wo,ffn_norm,w1,w3,w2}, ",
                "final_norm, lm_head; ", c.layers, " layers)");
}

}  // namespace spyre::llama
