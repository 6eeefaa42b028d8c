#include "llama_generate.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "device/error.h"

namespace spyre::llama {

Sampler::Sampler(const SamplingOptions &o) : o_(o), rng_(o.seed) {
    if (!(o.temperature >= 0) || !std::isfinite(o.temperature))
        throw_error("sampling: temperature ", o.temperature, " (0 for greedy, or above)");
    if (o.top_k < 0) throw_error("sampling: top_k ", o.top_k, " (0 for all tokens, or above)");
    if (!(o.top_p > 0 && o.top_p <= 1)) throw_error("sampling: top_p ", o.top_p, " outside (0, 1]");
}

int Sampler::next(const std::vector<float> &logits) {
    if (logits.empty()) throw_error("sampling: no logits");
    // The first largest logit; NaN logits are never chosen.
    int best = 0;
    for (size_t i = 1; i < logits.size(); i++)
        if (logits[i] > logits[size_t(best)] || std::isnan(logits[size_t(best)])) best = int(i);
    if (o_.temperature == 0) return best;
    // The candidates by falling logit, the lower id first on ties.
    std::vector<int> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int i) { return std::isnan(logits[size_t(i)]) ? -INFINITY : double(logits[size_t(i)]); };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) > key(b); });
    if (o_.top_k > 0 && size_t(o_.top_k) < order.size()) order.resize(size_t(o_.top_k));
    const double top = key(order[0]);
    if (!std::isfinite(top)) return best;
    std::vector<double> p(order.size());
    double total = 0;
    for (size_t i = 0; i < order.size(); i++) total += p[i] = std::exp((key(order[i]) - top) / o_.temperature);
    if (o_.top_p < 1) {
        // The fewest likeliest tokens whose probability reaches top_p.
        double mass = 0;
        size_t keep = 0;
        while (keep < p.size() && mass < o_.top_p * total) mass += p[keep++];
        p.resize(std::max<size_t>(keep, 1));
        total = std::accumulate(p.begin(), p.end(), 0.0);
    }
    // A uniform double in [0, 1) from the top 53 bits of one draw.
    const double u = double(rng_() >> 11) * (1.0 / 9007199254740992.0);
    const double target = u * total;
    double sum = 0;
    for (size_t i = 0; i < p.size(); i++) {
        sum += p[i];
        if (target < sum) return order[i];
    }
    return order[p.size() - 1];
}

Generated generate(const StepFunction &step, int vocab, const std::vector<int> &prompt, const GenerateOptions &o) {
    if (prompt.empty()) throw_error("generate: an empty prompt (give at least one token id)");
    for (size_t i = 0; i < prompt.size(); i++)
        if (prompt[i] < 0 || prompt[i] >= vocab)
            throw_error("generate: prompt id ", prompt[i], " (position ", i, ") outside the vocabulary [0, ", vocab, ")");
    if (o.max_new_tokens < 0) throw_error("generate: max_new_tokens ", o.max_new_tokens, " (0 or more)");
    Sampler sampler(o.sampling);
    Generated g;
    if (o.max_new_tokens == 0) return g;
    std::vector<float> logits = step(prompt);
    for (;;) {
        if (int(logits.size()) != vocab)
            throw_error("generate: the step gave ", logits.size(), " logits for a vocabulary of ", vocab);
        const int id = sampler.next(logits);
        g.ids.push_back(id);
        if (std::find(o.stop_ids.begin(), o.stop_ids.end(), id) != o.stop_ids.end()) {
            g.stopped = true;
            break;
        }
        if (int(g.ids.size()) == o.max_new_tokens) break;
        logits = step({id});
    }
    return g;
}

std::vector<int> parse_ids(const std::string &text, const std::string &what) {
    std::vector<int> ids;
    size_t at = 0;
    while (at <= text.size()) {
        const size_t comma = std::min(text.find(',', at), text.size());
        std::string piece = text.substr(at, comma - at);
        piece.erase(0, piece.find_first_not_of(" \t"));
        piece.erase(piece.find_last_not_of(" \t") + 1);
        char *end = nullptr;
        errno = 0;
        const long long v = piece.empty() ? 0 : std::strtoll(piece.c_str(), &end, 10);
        if (piece.empty() || *end != '\0' || errno == ERANGE || v < 0 || v > std::numeric_limits<int>::max())
            throw_error(what, ": '", piece, "' in '", text, "' is not a token id (a comma-separated list of integers, ",
                        "0 or more)");
        ids.push_back(int(v));
        at = comma + 1;
    }
    return ids;
}

}  // namespace spyre::llama
