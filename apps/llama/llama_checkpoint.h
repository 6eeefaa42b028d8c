// A Hugging Face Llama checkpoint (Llama 3.x: config.json and safetensors, one file or shards), read
// into the shape of a Llama decoder (LlamaConfig) and its weights in the layout LlamaModel holds
// them. config.json's fields (hidden_size, intermediate_size, num_hidden_layers,
// num_attention_heads, num_key_value_heads, head_dim, rms_norm_eps, rope_theta, rope_scaling,
// vocab_size, tie_word_embeddings, eos_token_id) are checked for type and range; rope_scaling must
// be absent, null, "default" or Llama 3's "llama3" (the others refused by name). Every tensor the
// model needs is checked on opening: present, F16, BF16 or F32, and of the shape the config gives.
// Every refusal is a spyre::Error naming the file, the tensor or field and what is wrong. No Halide.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "llama_config.h"
#include "safetensors.h"

namespace spyre::llama {

class LlamaCheckpoint {
public:
    // `dir` holds config.json and model.safetensors or model.safetensors.index.json with its shards.
    static LlamaCheckpoint open(const std::string &dir);
    // The same from memory: config.json's text, the safetensors files by name, the index's text
    // ("" for a single file). For the fuzz harness and tests.
    static LlamaCheckpoint from_memory(const std::string &config_json,
                                       const std::vector<std::pair<std::string, std::string>> &files,
                                       const std::string &index_json);

    const LlamaConfig &config() const { return config_; }
    // eos_token_id (an integer or a list of them; empty when the config has none).
    const std::vector<int> &eos_ids() const { return eos_; }
    // A weight in LlamaModel's names and layout, as floats of the checkpoint's values (the model
    // rounds them to fp16): "embed" {hidden, vocab} (Halide order: a row of `hidden` per token),
    // "L<l>.attn_norm", "L<l>.ffn_norm", "final_norm" {hidden}; "L<l>.wqkv" {q | k | v columns,
    // hidden}, "L<l>.wo" {hidden, q_width}, "L<l>.w1" (gate), "L<l>.w3" (up) {intermediate, hidden},
    // "L<l>.w2" (down) {hidden, intermediate}, each as w[k * cols + n] (Hugging Face's [out, in]
    // transposed); "lm_head" {vocab, hidden} likewise, whole (the model splits it into the
    // vocabulary's parts), the embedding's when the config ties them. spyre::Error naming the tensor
    // when its bytes cannot be read or a value is not finite in fp16.
    std::vector<float> weight(const std::string &name) const;

    // The Hugging Face tensor names the model reads, for messages and tests.
    std::vector<std::string> tensor_names() const;

private:
    static LlamaCheckpoint make(const std::string &config_json, const std::string &config_origin, SafetensorsSet set);
    // The tensor's values, checked against `shape`.
    std::vector<float> read(const std::string &tensor) const;
    LlamaConfig config_;
    std::vector<int> eos_;
    bool tied_ = false;
    SafetensorsSet set_;
};

// config.json's text into a LlamaConfig and its EOS ids; `origin` names the file in messages.
LlamaConfig read_llama_config(const std::string &text, const std::string &origin, std::vector<int> *eos_ids,
                              bool *tie_word_embeddings);

}  // namespace spyre::llama
