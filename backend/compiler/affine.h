// Affine views of Halide index expressions: index = rest + sum(coeff[v] * v) over a chosen set of
// loop variables, where `rest` does not mention them. The passes use it to find contiguous runs
// (stick vectors, DMA footprints) and to collapse loop nests into counted vector instructions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "Halide.h"

namespace spyre {

struct Affine {
    std::map<std::string, int64_t> coeff;  // only non-zero coefficients
    Halide::Expr rest;                     // int expression free of the chosen variables

    int64_t of(const std::string &v) const {
        auto it = coeff.find(v);
        return it == coeff.end() ? 0 : it->second;
    }
};

// Decomposes `e` (an int scalar expression; lets already substituted) with respect to `vars`.
// Returns nullopt when `e` is not affine in them (a product of two of them, a division, ...).
std::optional<Affine> affine_in(const Halide::Expr &e, const std::set<std::string> &vars);

// True if `e` mentions any of `vars`.
bool mentions(const Halide::Expr &e, const std::set<std::string> &vars);

// True if `e` reads a buffer (an index that is data, as a gather's).
bool reads_memory(const Halide::Expr &e);

// True when `e` is a multiple of `k` for every value of its variables. Terms that are not affine
// (a core index divided or taken modulo) count as unknown integers scaled by their coefficient.
bool provably_multiple(const Halide::Expr &e, int64_t k);

// The constant value of an int expression after simplification, if it has one.
std::optional<int64_t> const_int(const Halide::Expr &e);

// The values a loop's variable takes, [min, min + extent - 1], bounded over the loops (and lets)
// around it in `scope`; everything when its bounds do not resolve.
Halide::Internal::Interval loop_range(const Halide::Expr &min, const Halide::Expr &extent,
                                      const Halide::Internal::Scope<Halide::Internal::Interval> &scope);

}  // namespace spyre
