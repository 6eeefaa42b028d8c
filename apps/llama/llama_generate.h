// Text generation's loop over token ids: a prompt, then new tokens drawn one at a time from the
// last token's logits (greedy at temperature 0; otherwise temperature, top-k and top-p sampling),
// until max_new_tokens or a stop id (the config's EOS or the user's). The logits come from a step
// function (LlamaModel on the device, or the plain decoder); the sampling runs on the host, and is
// the same on every platform for a seed: std::mt19937_64, whose sequence the C++ standard fixes,
// turned into a uniform double by explicit arithmetic (no std::*_distribution, whose output the
// standard leaves to the library).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace spyre::llama {

struct SamplingOptions {
    double temperature = 0;  // 0: greedy (the first largest logit)
    int top_k = 0;           // keep the k likeliest tokens; 0: all
    double top_p = 1;        // then the fewest likeliest whose probability reaches top_p; 1: all
    uint64_t seed = 0;
};

// Draws token ids from logits. Temperature scales the logits; the candidates are the tokens by
// falling logit (ties: the lower id first), cut to top_k, then to the shortest prefix whose
// probability (softmax in double) is at least top_p; one is drawn with probability in proportion.
class Sampler {
public:
    // spyre::Error for a negative or non-finite temperature, negative top_k, top_p outside (0, 1].
    explicit Sampler(const SamplingOptions &o);
    int next(const std::vector<float> &logits);

private:
    SamplingOptions o_;
    std::mt19937_64 rng_;
};

struct GenerateOptions {
    int max_new_tokens = 16;
    SamplingOptions sampling;
    std::vector<int> stop_ids;  // generation stops after emitting one of these (it is kept)
};

struct Generated {
    std::vector<int> ids;  // the new tokens (not the prompt)
    bool stopped = false;  // the last is a stop id
};

// Runs `step` (the ids given at the sequence's next positions; returns the last one's logits) on
// the prompt, then on each new token but the last. spyre::Error for an empty prompt, an id outside
// [0, vocab) or a negative max_new_tokens.
using StepFunction = std::function<std::vector<float>(const std::vector<int> &)>;
Generated generate(const StepFunction &step, int vocab, const std::vector<int> &prompt, const GenerateOptions &o);

// "1,2,3" into ids; spyre::Error naming `what` and the piece that is not an integer.
std::vector<int> parse_ids(const std::string &text, const std::string &what);

}  // namespace spyre::llama
