// SSA bookkeeping for the KTIR importer: unique value names (MLIR lets sibling regions reuse a
// name), each op's position in program order, and each value's users and last use, a value used
// inside a loop it was defined outside of living until that loop ends (a loop's lower bound too,
// which every iteration reads). The importer frees a value's register and LX after its last use.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ktir_ast.h"

namespace spyre::ktir {

struct OpPosition {
    int index = 0, end = 0;  // pre-order position; position after the op's regions
    const Region *parent = nullptr;
    size_t pos = 0;  // index in parent->ops
};

struct ValueUses {
    int def = 0;   // position of the defining op (-1: a function argument)
    int last = 0;  // position of the last use (or of the end of a loop that uses it)
    std::vector<const Op *> users;
};

struct SsaInfo {
    std::map<const Op *, OpPosition> ops;
    std::map<std::string, ValueUses> values;
};

// Renames values so that every name in `f` is unique ("x", "x@1", ...). Throws spyre::Error
// naming the line for a use that sees no definition or a name defined twice in one region.
void make_names_unique(Function &f);

// Positions, users and last uses (f's names must be unique; the result points into f).
SsaInfo analyse_ssa(const Function &f);

}  // namespace spyre::ktir
