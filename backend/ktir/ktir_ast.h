// The syntax tree of a KTIR module (IBM's `ktdp` MLIR dialect, RFC 0682, with func, scf, arith,
// math, linalg and tensor ops) as ktir_reader produces it: functions of operations in SSA form.
// One Op struct serves every operation; its op-specific fields say which ops fill them. Every op
// keeps its source line, so the importer's errors can name it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace spyre::ktir {

struct Type {
    enum Kind { None, Index, Int, Float, Tensor, MemRef, Tile } kind = None;
    int bits = 0;             // Int / Float width; for Tensor / MemRef the element's width
    Kind elem = None;         // Tensor / MemRef element kind (Index, Int or Float)
    std::vector<int64_t> shape;
    bool scalar() const { return kind == Index || kind == Int || kind == Float; }
    bool shaped() const { return kind == Tensor || kind == MemRef || kind == Tile; }
    std::string text() const;
};

// An index expression: affine subscripts (`%a + %i * 4`), affine_map results and affine_set
// constraints. Dim / Sym refer to the map's or set's dimension and symbol lists.
struct IExpr {
    enum Kind { Const, Value, Dim, Sym, Add, Mul, FloorDiv, CeilDiv, Mod, Neg } kind = Const;
    int64_t c = 0;       // Const value; Dim / Sym position
    std::string name;    // Value: SSA name (without %)
    std::vector<IExpr> args;
};

struct AffineMap {
    int dims = 0, syms = 0;
    std::vector<IExpr> results;
};

struct IntegerSet {
    int dims = 0, syms = 0;
    std::vector<IExpr> exprs;
    std::vector<bool> equality;  // expr == 0 when true, expr >= 0 otherwise
};

struct Attr {
    enum Kind { Unit, Int, Float, String, Array, Map, Set, Dialect, TypeAttr, Dict, Other } kind = Unit;
    int64_t i = 0;
    double f = 0;
    bool hex = false;   // Int written in hex (a float constant's bit pattern)
    std::string s;      // String; Dialect: "#ktdp.spyre_memory_space" etc.; Other: raw text
    std::string body;   // Dialect: the text between < and >
    Type type;          // the `: type` suffix of a literal, or the TypeAttr
    std::vector<Attr> items;                  // Array
    std::shared_ptr<AffineMap> map;           // Map
    std::shared_ptr<IntegerSet> set;          // Set
    std::map<std::string, Attr> dict;         // Dict
};

// A memory view's size or stride given by a value (ktdp.construct_memory_view), and a type's '?'.
constexpr int64_t kDynamic = -1;

struct Op;

struct Region {
    std::vector<std::string> args;  // block arguments (loop iv, iter_args, reduce combiner args)
    std::vector<Type> arg_types;
    std::vector<Op> ops;
};

struct Op {
    std::string name;  // "arith.addf", "ktdp.load", ...
    int line = 0;
    std::vector<std::string> results;  // SSA names without %
    std::vector<Type> result_types;
    std::vector<std::string> operands;
    std::vector<Type> operand_types;
    std::map<std::string, Attr> attrs;
    std::vector<Region> regions;

    // ktdp.construct_access_tile, tensor.extract: subscripts; affine.apply: map operands are in
    // `operands` and the map in attrs["map"].
    std::vector<IExpr> indices;
    // ktdp.construct_memory_view: sizes and strides; an entry given by a value is kDynamic, the value
    // an operand after the base (the sizes' first), until the importer specialises it.
    std::vector<int64_t> sizes, strides;
    // tensor.extract_slice / insert_slice: static offsets (sizes and strides in `sizes`, `strides`);
    // operands are the source, then (insert_slice) the destination.
    std::vector<int64_t> offsets;
    // linalg.reduce / linalg.broadcast `dimensions`, linalg.transpose `permutation`.
    std::vector<int64_t> dims;
    // tensor.collapse_shape / expand_shape reassociation.
    std::vector<std::vector<int64_t>> reassoc;
    // arith.cmpi / cmpf predicate; linalg.reduce short-form combiner ("arith.addf").
    std::string predicate, combiner;
    // arith.constant value.
    Attr value;
    // scf.for: operands are lb, ub, step, then the iter_args initial values; regions[0].args are
    // the induction variable then the iter_args. scf.if: operands[0] is the condition.
    // linalg ops: `ins` operands first, then `outs`; n_ins counts the ins.
    int n_ins = 0;
    // ktdp.construct_indirect_access_tile: `ivars` names its intermediate variables, which are
    // IExpr::Dim (their position) in its subscripts; `indirect` has one entry per subscript of the
    // view, -1 for a direct one (its expression in `indices`) or k for `ind(%idx[...])` of operand
    // 1 + k (its place in `indices` holds 0). Each ind()'s own subscripts follow the view's in
    // `indices`, in order, as many as its view has dimensions.
    std::vector<std::string> ivars;
    std::vector<int> indirect;
};

struct Function {
    std::string name;
    int line = 0;
    std::vector<std::string> args;
    std::vector<Type> arg_types;
    std::map<std::string, Attr> attrs;
    Region body;
};

struct Module {
    std::vector<Function> funcs;
};

}  // namespace spyre::ktir
