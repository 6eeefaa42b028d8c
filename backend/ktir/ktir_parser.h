// The KTIR reader's recursive-descent parser (internal to backend/ktir; the public entry is
// ktir_reader.h): one Parser per text, on the token cursor of ktir_lexer.h. Its work is split by
// concern: ktir_parse_types.cpp (element and shaped types, type lists), ktir_parse_affine.cpp
// (index expressions, affine maps and sets), ktir_parse_attributes.cpp (attributes, attribute
// dicts, `#alias` / `!alias` definitions) and ktir_parse_ops.cpp (the module, functions, regions
// and operations, custom and generic form).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ktir_ast.h"
#include "ktir_lexer.h"

namespace spyre::ktir::parsing {

constexpr size_t kMaxRank = 8;

class Parser : public TokenCursor {
public:
    explicit Parser(const std::string &src) : TokenCursor(src) {}

    Module module();

private:
    // ------------------------------------------------------------------ aliases
    void alias_def(bool attr);

    // ------------------------------------------------------------------ types
    static bool elem_type(const std::string &w, Type *t);
    // dims 'x' element, from the text of a shaped type's body.
    Type shaped(Type::Kind kind, const std::string &body0, int at);
    Type type();
    std::vector<Type> type_list();

    // ------------------------------------------------------------------ affine expressions
    // names: dimension / symbol identifiers of a map or set; SSA values (%x) are always allowed.
    struct Names {
        std::vector<std::string> dims, syms;
    };
    IExpr iexpr(const Names &n);
    IExpr iterm(const Names &n);
    IExpr ifactor(const Names &n);
    Names dim_sym_lists(int *dims, int *syms);
    std::shared_ptr<AffineMap> affine_map();
    std::shared_ptr<IntegerSet> affine_set();

    // ------------------------------------------------------------------ attributes
    Attr attribute();
    std::map<std::string, Attr> attr_dict();
    void opt_attr_dict(Op &op);

    // ------------------------------------------------------------------ functions and regions
    Function function();
    Region region();

    // ------------------------------------------------------------------ operations
    void ins_outs(Op &op);
    std::vector<int64_t> int_list();
    void results_from(Op &op, const std::vector<Type> &types);
    // `%a, %b` operands then `: type` (one type for all operands and the result).
    void same_type_op(Op &op);
    Op generic_op(Op op);
    // `%a, %b : t1, t2` appended to op's operands and operand types; returns how many (an error
    // at op's line names `what` when the counts differ).
    size_t typed_values(Op &op, const std::string &what);
    // An integer-set attribute into op.attrs[key] (an error names the op and key otherwise).
    void set_attr(Op &op, const char *key);
    // A `!ktdp.tile_future<...>` type (or its shortened `<...>` form): its partial tensor types
    // into op.attrs["partial_types"] (an Array of TypeAttr), its groups set into op.attrs["groups"].
    void future_type(Op &op);
    Op operation();

    std::map<std::string, Attr> attr_aliases_;
    std::map<std::string, Type> type_aliases_;
};

}  // namespace spyre::ktir::parsing
