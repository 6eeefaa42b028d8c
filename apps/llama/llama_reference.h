// A plain C++ Llama decoder (no Halide, no device): the layer's math as the model card states it,
// in fp32 with the activations rounded to fp16 where the kernels store them, over the same weights
// as a LlamaModel. The independent check of the kernels' algorithm: GQA's head sharing, RoPE with
// Llama 3.1's scaled frequencies at each token's position, the causal mask over the KV cache.
// Attention here is the textbook softmax (one pass, fp32 probabilities), where the kernel folds
// key tiles into an online softmax with fp16 probabilities: the logits agree to a tolerance, not
// bit for bit (tests/llama).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "llama_config.h"

namespace spyre::llama {

class LlamaModel;
class LlamaCheckpoint;

class ReferenceLlama {
public:
    // Copies `model`'s weights (functional mode).
    ReferenceLlama(const LlamaConfig &c, const LlamaModel &model);
    // Reads `ck`'s weights, rounded to fp16 as the model stores them; `m` gives the vocabulary's
    // parts (vocab_split), which the head's sums follow as the device's do.
    ReferenceLlama(const LlamaCheckpoint &ck, const MachineDesc &m);

    // Runs the tokens of one sequence at its next positions; returns the last token's logits.
    std::vector<float> step(const std::vector<int> &ids);
    int position() const { return position_; }

private:
    std::vector<float> rmsnorm(const std::vector<float> &x, const std::vector<float> &gain) const;
    // x {inner} times w {cols, inner} (Halide order: w[k * cols + n]).
    std::vector<float> matvec(const std::vector<float> &x, const std::vector<float> &w, int cols) const;

    LlamaConfig c_;
    VocabSplit split_;
    std::map<std::string, std::vector<float>> w_;
    std::vector<std::vector<std::vector<float>>> k_cache_, v_cache_;  // [layer][position]: {kv_width}
    int position_ = 0;
};

// The index of the largest value (the first, on ties).
int argmax_of(const std::vector<float> &v);

}  // namespace spyre::llama
