#include "auto_moves.h"

#include <cstdlib>
#include <limits>
#include <map>
#include <algorithm>
#include <utility>

namespace spyre::autosched {

namespace {

// choice name -> the choice
std::map<std::string, Choice> by_name(const std::vector<Choice> &choices) {
    std::map<std::string, Choice> t;
    for (const Choice &c : choices) t[c.name] = c;
    return t;
}

// A choice's value as a number, if it is one.
std::optional<double> number(const std::string &v) {
    if (v.empty()) return std::nullopt;
    char *end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (end != v.c_str() + v.size()) return std::nullopt;
    return x;
}

}  // namespace

std::optional<ChoiceDiff> one_choice_apart(const std::vector<Choice> &a, const std::vector<Choice> &b) {
    const auto ta = by_name(a), tb = by_name(b);
    std::optional<ChoiceDiff> diff;
    int n = 0;
    for (const auto &[name, c] : ta) {
        auto it = tb.find(name);
        if (it == tb.end() || it->second != c) {
            n++;
            diff = ChoiceDiff{name, c.value, it == tb.end() ? "" : it->second.value};
        }
    }
    for (const auto &[name, c] : tb)
        if (!ta.count(name)) {
            n++;
            diff = ChoiceDiff{name, "", c.value};
        }
    if (n != 1) return std::nullopt;
    return diff;
}

std::vector<size_t> local_moves(const std::vector<std::vector<Choice>> &choices, size_t best,
                                const std::vector<size_t> &candidates, const std::function<bool(size_t)> &timed,
                                const std::function<bool(size_t)> &lowered) {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<std::pair<size_t, ChoiceDiff>> apart;
    std::map<std::string, std::pair<double, double>> nearest;  // choice -> nearest value below, above
    for (size_t i : candidates) {
        if (i == best) continue;
        std::optional<ChoiceDiff> d = one_choice_apart(choices.at(best), choices.at(i));
        if (!d) continue;
        const std::optional<double> from = number(d->from), to = number(d->to);
        if (from && to) {
            auto &nb = nearest.emplace(d->name, std::make_pair(-inf, inf)).first->second;
            if (*to < *from) nb.first = std::max(nb.first, *to);
            else nb.second = std::min(nb.second, *to);
        }
        apart.push_back({i, std::move(*d)});
    }
    std::vector<size_t> moves;
    for (const auto &[i, d] : apart) {
        if (timed(i)) continue;
        const std::optional<double> from = number(d.from), to = number(d.to);
        if (from && to && !lowered(i)) {
            const auto &nb = nearest.at(d.name);
            if (*to != nb.first && *to != nb.second) continue;
        }
        moves.push_back(i);
    }
    return moves;
}

}  // namespace spyre::autosched
