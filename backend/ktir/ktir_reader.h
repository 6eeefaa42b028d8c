// Reads KTIR text (MLIR in IBM's `ktdp` dialect, RFC 0682) into a ktir::Module: a hand-written
// recursive-descent reader, since the dialect's custom syntax needs its own parser. It covers what
// the public KTIR kernels use: func.func, ktdp views, access tiles, loads, stores and tile ids,
// scf.for/if/yield, arith, math, linalg (reduce, broadcast, matmul, fill, transpose, named
// elementwise ops), tensor (empty, splat, extract, collapse/expand_shape, reshape), affine maps and
// sets, `#alias` definitions (before or after the module), `loc(...)` locations, dense constants,
// the access tile's short type `<...>` as MLIR prints it in ktdp.load / ktdp.store, and ops in
// MLIR's generic form ("name"(...) : ...).
// Any error throws spyre::Error naming the line. Nesting depth and sizes are bounded.
#pragma once

#include <string>

#include "ktir_ast.h"

namespace spyre::ktir {

Module read_ktir(const std::string &text);
Module read_ktir_file(const std::string &path);

// Evaluates a constant index expression (no SSA values, dims or symbols); throws if it is not.
int64_t eval_const(const IExpr &e);

}  // namespace spyre::ktir
