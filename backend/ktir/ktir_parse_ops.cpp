// The parser's module, functions, regions and operations: each op's custom form, and MLIR's
// generic form ("name"(...) : (...) -> ...) (ktir_parser.h).
#include <functional>

#include "ktir_parser.h"

namespace spyre::ktir::parsing {

namespace {

Type index_type() {
    Type t;
    t.kind = Type::Index;
    t.bits = 64;
    return t;
}

}  // namespace

Module Parser::module() {
    Module m;
    while (!at_eof()) {
        if (peek().kind == Token::Hash && peek(1).text == "=") {
            alias_def(true);
        } else if (peek().kind == Token::Bang && peek(1).text == "=") {
            alias_def(false);
        } else if (is_word("module")) {
            next();
            if (peek().kind == Token::Sym) next();
            if (is_word("attributes")) {
                next();
                attr_dict();
            }
            expect("{");
            while (!is_punct("}")) {
                if (at_eof()) fail("module is not closed by '}'");
                if (peek().kind == Token::Hash && peek(1).text == "=") alias_def(true);
                else m.funcs.push_back(function());
            }
            next();
            skip_loc();
        } else if (is_word("func.func")) {
            m.funcs.push_back(function());
        } else {
            fail("expected 'module', 'func.func' or an alias definition, found '" + peek().text + "'");
        }
    }
    return m;
}

Function Parser::function() {
    Function f;
    f.line = line();
    expect_word("func.func");
    if (is_word("private") || is_word("public") || is_word("nested")) next();
    if (peek().kind != Token::Sym) fail("expected the function name (@name), found " + describe(peek()));
    f.name = next().text;
    expect("(");
    if (!is_punct(")")) {
        do {
            f.args.push_back(value_name());
            expect(":");
            f.arg_types.push_back(type());
            if (is_punct("{")) attr_dict();
            skip_loc();
        } while (accept(","));
    }
    expect(")");
    if (accept("->")) {
        if (is_punct("(")) {
            skip_balanced();
        } else {
            type();
        }
    }
    if (is_word("attributes")) {
        next();
        f.attrs = attr_dict();
    }
    f.body = region();
    skip_loc();
    return f;
}

Region Parser::region() {
    DepthGuard g(depth_, *this);
    Region r;
    expect("{");
    if (peek().kind == Token::Word && peek().text.rfind("^", 0) == 0) {  // ^bb0(%a: t, ...):
        next();
        if (accept("(")) {
            if (!is_punct(")")) {
                do {
                    r.args.push_back(value_name());
                    expect(":");
                    r.arg_types.push_back(type());
                    skip_loc();
                } while (accept(","));
            }
            expect(")");
        }
        expect(":");
    }
    while (!is_punct("}")) {
        if (at_eof()) fail("region is not closed by '}'");
        r.ops.push_back(operation());
    }
    next();
    return r;
}

void Parser::ins_outs(Op &op) {
    for (const char *kw : {"ins", "outs"}) {
        if (!is_word(kw)) {
            if (std::string(kw) == "ins") continue;
            fail(op.name + ": expected 'outs(...)', found " + describe(peek()));
        }
        next();
        expect("(");
        const size_t n = typed_values(op, kw);
        expect(")");
        if (std::string(kw) == "ins") op.n_ins = int(n);
    }
}

std::vector<int64_t> Parser::int_list() {
    std::vector<int64_t> v;
    expect("[");
    if (!is_punct("]")) {
        do v.push_back(integer());
        while (accept(","));
    }
    expect("]");
    if (v.size() > 64) fail("list of more than 64 integers");
    return v;
}

void Parser::results_from(Op &op, const std::vector<Type> &types) {
    if (op.results.size() != types.size())
        fail_at(op.line, op.name + " defines " + std::to_string(op.results.size()) + " values but has " +
             std::to_string(types.size()) + " result types");
    op.result_types = types;
}

void Parser::same_type_op(Op &op) {
    if (!is_punct(":") && !is_punct("{")) {
        do op.operands.push_back(value_name());
        while (accept(","));
    }
    // fastmath<...>, overflow<...>, rounding modes: no effect on our numerics.
    while (peek().kind == Token::Word && (peek().text == "fastmath" || peek().text == "overflow") &&
           peek(1).text == "<") {
        next();
        angle_body();
    }
    opt_attr_dict(op);
    expect(":");
    std::vector<Type> ts;
    do ts.push_back(type());
    while (accept(","));
    Type t = ts.back();
    op.operand_types.assign(op.operands.size(), t);
    if (op.name == "arith.select" && ts.size() == 2) op.operand_types[0] = ts[0];
    if (!op.results.empty()) {
        Type rt = t;
        if (op.name == "arith.cmpi" || op.name == "arith.cmpf") {
            if (t.kind == Type::Tensor) {
                rt.elem = Type::Int;
                rt.bits = 1;
            } else {
                rt = Type();
                rt.kind = Type::Int;
                rt.bits = 1;
            }
        }
        results_from(op, {rt});
    }
}

size_t Parser::typed_values(Op &op, const std::string &what) {
    std::vector<std::string> vals;
    if (!is_punct(":")) {
        do vals.push_back(value_name());
        while (accept(","));
    }
    expect(":");
    std::vector<Type> types;
    do types.push_back(type());
    while (accept(","));
    if (types.size() != vals.size())
        fail_at(op.line, op.name + ": " + what + " has " + std::to_string(vals.size()) + " values but " +
                             std::to_string(types.size()) + " types");
    op.operands.insert(op.operands.end(), vals.begin(), vals.end());
    op.operand_types.insert(op.operand_types.end(), types.begin(), types.end());
    return vals.size();
}

void Parser::set_attr(Op &op, const char *key) {
    Attr a = attribute();
    if (a.kind != Attr::Set) fail(op.name + ": " + key + " must be an affine_set");
    op.attrs[key] = a;
}

void Parser::future_type(Op &op) {
    // !ktdp.tile_future<T, groups = SET>, <(T1, T2), groups = SET>, or the same without the name.
    if (peek().kind == Token::Bang) {
        if (peek().text != "ktdp.tile_future")
            fail(op.name + ": expected a !ktdp.tile_future type, found '!" + peek().text + "'");
        next();
    }
    expect("<");
    Attr parts;
    parts.kind = Attr::Array;
    auto part = [&] {
        Attr t;
        t.kind = Attr::TypeAttr;
        t.type = type();
        if (t.type.kind != Type::Tensor) fail(op.name + ": a tile_future's partials must be tensors");
        parts.items.push_back(t);
    };
    if (accept("(")) {
        do part();
        while (accept(","));
        expect(")");
    } else {
        part();
    }
    while (accept(",")) {
        if (is_word("groups")) {
            next();
            expect("=");
            set_attr(op, "groups");
        } else {
            part();
        }
    }
    expect(">");
    if (!op.attrs.count("groups")) fail(op.name + ": the !ktdp.tile_future type has no groups = affine_set<...>");
    op.attrs["partial_types"] = parts;
}

Op Parser::generic_op(Op op) {
    op.name = next().text;
    expect("(");
    if (!is_punct(")")) {
        do op.operands.push_back(value_name());
        while (accept(","));
    }
    expect(")");
    if (is_punct("(")) {  // regions
        next();
        do op.regions.push_back(region());
        while (accept(","));
        expect(")");
    }
    opt_attr_dict(op);
    expect(":");
    expect("(");
    std::vector<Type> in;
    if (!is_punct(")")) {
        do in.push_back(type());
        while (accept(","));
    }
    expect(")");
    expect("->");
    std::vector<Type> out = type_list();
    if (in.size() != op.operands.size())
        fail_at(op.line, op.name + " has " + std::to_string(op.operands.size()) + " operands but " + std::to_string(in.size()) +
             " operand types");
    op.operand_types = in;
    results_from(op, out);
    return op;
}

Op Parser::operation() {
    DepthGuard g(depth_, *this);
    Op op;
    op.line = line();
    if (peek().kind == Token::Value) {
        do {
            std::string n = value_name();
            if (accept(":")) {  // %r:2 = ...
                int64_t k = integer();
                if (k <= 0 || k > 16) fail("result count " + std::to_string(k) + " is out of range");
                for (int64_t i = 0; i < k; i++) op.results.push_back(n + "#" + std::to_string(i));
            } else {
                op.results.push_back(n);
            }
        } while (accept(","));
        expect("=");
    }
    if (peek().kind == Token::String) {
        op = generic_op(op);
        skip_loc();
        return op;
    }
    if (peek().kind != Token::Word) fail("expected an operation name, found " + describe(peek()));
    op.name = next().text;
    const std::string &n = op.name;
    auto starts = [&](const char *p) { return n.rfind(p, 0) == 0; };

    if (n == "arith.constant") {
        op.value = attribute();
        opt_attr_dict(op);
        if (op.value.kind != Attr::Int && op.value.kind != Attr::Float &&
            !(op.value.kind == Attr::Array && op.value.type.kind == Type::Tensor))
            fail("arith.constant: expected a number, true/false or dense<...>");
        if (op.value.type.kind == Type::None) {
            if (accept(":")) op.value.type = type();
            else fail("arith.constant: missing ': type'");
        }
        results_from(op, {op.value.type});
    } else if (n == "arith.cmpi" || n == "arith.cmpf") {
        if (peek().kind != Token::Word) fail(n + ": expected a predicate, found " + describe(peek()));
        op.predicate = next().text;
        expect(",");
        same_type_op(op);
    } else if (n == "arith.index_cast" || n == "arith.index_castui" || n == "arith.extf" ||
               n == "arith.truncf" || n == "arith.sitofp" || n == "arith.uitofp" || n == "arith.fptosi" ||
               n == "arith.fptoui" || n == "arith.extsi" || n == "arith.extui" || n == "arith.trunci" ||
               n == "arith.bitcast") {
        op.operands.push_back(value_name());
        while (is_word("fastmath") || is_word("overflow")) {
            next();
            angle_body();
        }
        opt_attr_dict(op);
        expect(":");
        op.operand_types.push_back(type());
        expect_word("to");
        results_from(op, {type()});
    } else if (starts("arith.") || starts("math.")) {
        same_type_op(op);
    } else if (n == "ktdp.get_compute_tile_id") {
        opt_attr_dict(op);
        expect(":");
        std::vector<Type> ts;
        do ts.push_back(type());
        while (accept(","));
        results_from(op, ts);
    } else if (n == "ktdp.construct_memory_view") {
        op.operands.push_back(value_name());
        expect(",");
        for (const char *kw : {"sizes", "strides"}) {
            expect_word(kw);
            expect(":");
            std::vector<int64_t> v;
            expect("[");
            if (!is_punct("]")) {
                do {
                    if (peek().kind == Token::Value) {
                        // A size or stride given by a value: kDynamic here, the value an operand after
                        // the base (sizes first, in order); the importer specialises it from --arg.
                        op.operands.push_back(value_name());
                        v.push_back(kDynamic);
                        continue;
                    }
                    v.push_back(integer());
                } while (accept(","));
            }
            expect("]");
            if (v.size() > kMaxRank) fail(std::string("ktdp.construct_memory_view: more than 8 ") + kw);
            (std::string(kw) == "sizes" ? op.sizes : op.strides) = v;
            if (std::string(kw) == "sizes") expect(",");
        }
        opt_attr_dict(op);
        expect(":");
        while (op.operand_types.size() < op.operands.size()) op.operand_types.push_back(index_type());
        results_from(op, {type()});
    } else if (n == "ktdp.construct_access_tile") {
        op.operands.push_back(value_name());
        expect("[");
        if (!is_punct("]")) {
            do op.indices.push_back(iexpr(Names{}));
            while (accept(","));
        }
        expect("]");
        opt_attr_dict(op);
        expect(":");
        op.operand_types.push_back(type());
        expect("->");
        results_from(op, {type()});
    } else if (n == "ktdp.construct_indirect_access_tile") {
        // intermediate_variables(%d0, ...) %view[ind(%idx[e, ...]) | (e), ...] {attrs} : types -> tile
        expect_word("intermediate_variables");
        expect("(");
        if (!is_punct(")")) {
            do op.ivars.push_back(value_name());
            while (accept(","));
        }
        expect(")");
        if (op.ivars.size() > kMaxRank) fail("ktdp.construct_indirect_access_tile: more than 8 intermediate variables");
        op.operands.push_back(value_name());
        expect("[");
        std::vector<IExpr> ind_subs;
        if (!is_punct("]")) {
            do {
                if (is_word("ind")) {
                    next();
                    expect("(");
                    op.indirect.push_back(int(op.operands.size()) - 1);
                    op.operands.push_back(value_name());
                    expect("[");
                    if (!is_punct("]")) {
                        do ind_subs.push_back(iexpr(Names{}));
                        while (accept(","));
                    }
                    expect("]");
                    expect(")");
                    op.indices.emplace_back();  // a constant 0 where the view's subscript is indirect
                } else {
                    op.indirect.push_back(-1);
                    op.indices.push_back(iexpr(Names{}));
                }
                if (op.indirect.size() > kMaxRank || ind_subs.size() > kMaxRank * kMaxRank)
                    fail("ktdp.construct_indirect_access_tile: more than 8 subscripts");
            } while (accept(","));
        }
        expect("]");
        op.indices.insert(op.indices.end(), ind_subs.begin(), ind_subs.end());
        // The intermediate variables are the tile's dimensions, not values of the function.
        std::function<void(IExpr &, int)> to_dims = [&](IExpr &e, int depth) {
            if (depth > 64) fail("expression nested too deeply");
            if (e.kind == IExpr::Value)
                for (size_t i = 0; i < op.ivars.size(); i++)
                    if (op.ivars[i] == e.name) {
                        e.kind = IExpr::Dim;
                        e.c = int64_t(i);
                        e.name.clear();
                        break;
                    }
            for (IExpr &a : e.args) to_dims(a, depth + 1);
        };
        for (IExpr &e : op.indices) to_dims(e, 0);
        // symbols(%s, ...): values the variables_space_set's symbols take, after the index views.
        op.n_ins = int(op.operands.size());
        if (is_word("symbols")) {
            next();
            expect("(");
            if (!is_punct(")")) {
                do op.operands.push_back(value_name());
                while (accept(","));
            }
            expect(")");
        }
        opt_attr_dict(op);
        expect(":");
        for (Type &t : type_list()) op.operand_types.push_back(t);
        if (op.operand_types.size() == size_t(op.n_ins))  // symbols(...) are index values
            while (op.operand_types.size() < op.operands.size()) op.operand_types.push_back(index_type());
        expect("->");
        results_from(op, {type()});
    } else if (n == "ktdp.load") {
        op.operands.push_back(value_name());
        opt_attr_dict(op);
        expect(":");
        op.operand_types.push_back(type());
        expect("->");
        results_from(op, {type()});
    } else if (n == "ktdp.store") {
        op.operands.push_back(value_name());
        expect(",");
        op.operands.push_back(value_name());
        opt_attr_dict(op);
        expect(":");
        op.operand_types.push_back(type());
        expect(",");
        op.operand_types.push_back(type());
        results_from(op, {});
    } else if (n == "ktdp.reduce") {
        op.operands.push_back(value_name());
        opt_attr_dict(op);
        expect(":");
        op.operand_types.push_back(type());
        expect("->");
        results_from(op, {type()});
    } else if (n == "ktdp.construct_distributed_memory_view") {
        // (%p0, %p1, ... : memref types) [attr-dict] : memref<global>
        expect("(");
        typed_values(op, "the partition list");
        expect(")");
        opt_attr_dict(op);
        expect(":");
        results_from(op, {type()});
    } else if (n == "ktdp.inter_tile_produce") {
        // producer_tiles_per_group = SET [attr-dict] [: partial types] -> FUTURE { ^bb0(%gid: index): ... }
        expect_word("producer_tiles_per_group");
        expect("=");
        set_attr(op, "producer_tiles_per_group");
        opt_attr_dict(op);
        if (accept(":")) type_list();  // ktir-cpu's examples repeat the partial types here
        expect("->");
        future_type(op);
        op.regions.push_back(region());
        opt_attr_dict(op);
        results_from(op, {Type{}});
    } else if (n == "ktdp.inter_tile_reduce") {
        // (%future) consumer_tiles_per_group = SET, [producer_dependency_per_consumer = SET,]
        // identity(%v : t, ...) [attr-dict] : FUTURE -> result types { ^bb0(lhs..., rhs...): ... }
        expect("(");
        op.operands.push_back(value_name());
        expect(")");
        op.operand_types.push_back(Type{});
        expect_word("consumer_tiles_per_group");
        expect("=");
        set_attr(op, "consumer_tiles_per_group");
        expect(",");
        if (is_word("producer_dependency_per_consumer")) {
            next();
            expect("=");
            set_attr(op, "producer_dependency_per_consumer");
            expect(",");
        }
        expect_word("identity");
        expect("(");
        if (!is_punct(")")) typed_values(op, "identity");
        expect(")");
        opt_attr_dict(op);
        expect(":");
        future_type(op);
        expect("->");
        std::vector<Type> rt = type_list();
        op.regions.push_back(region());
        opt_attr_dict(op);
        results_from(op, rt);
    } else if (n == "ktdp.yield_partial" || n == "ktdp.yield_reduced") {
        if (peek().kind == Token::Value) typed_values(op, "the yield");
        opt_attr_dict(op);
    } else if (n == "scf.for") {
        std::string iv = value_name();
        expect("=");
        op.operands.push_back(value_name());
        expect_word("to");
        op.operands.push_back(value_name());
        expect_word("step");
        op.operands.push_back(value_name());
        std::vector<std::string> iter;
        std::vector<Type> rtypes;
        if (is_word("iter_args")) {
            next();
            expect("(");
            do {
                iter.push_back(value_name());
                expect("=");
                op.operands.push_back(value_name());
            } while (accept(","));
            expect(")");
            expect("->");
            rtypes = type_list();
            if (rtypes.size() != iter.size()) fail("scf.for: iter_args and result types differ in number");
        }
        if (accept(":")) type();  // the induction variable's type
        op.regions.push_back(region());
        Region &r = op.regions.back();
        if (!r.args.empty()) fail("scf.for: unexpected block arguments");
        r.args.push_back(iv);
        r.arg_types.push_back(index_type());
        for (size_t i = 0; i < iter.size(); i++) {
            r.args.push_back(iter[i]);
            r.arg_types.push_back(rtypes[i]);
        }
        opt_attr_dict(op);
        results_from(op, rtypes);
    } else if (n == "scf.if") {
        op.operands.push_back(value_name());
        std::vector<Type> rtypes;
        if (accept("->")) rtypes = type_list();
        op.regions.push_back(region());
        if (is_word("else")) {
            next();
            op.regions.push_back(region());
        }
        opt_attr_dict(op);
        results_from(op, rtypes);
    } else if (n == "tensor.generate") {
        // tensor.generate [%extent, ...] { ^bb0(%i: index, ...): ... tensor.yield %v : t } : tensor<...>
        if (peek().kind == Token::Value) {
            do op.operands.push_back(value_name());
            while (accept(","));
        }
        op.operand_types.assign(op.operands.size(), index_type());
        op.regions.push_back(region());
        opt_attr_dict(op);
        expect(":");
        results_from(op, {type()});
    } else if (n == "scf.yield" || n == "linalg.yield" || n == "tensor.yield" || n == "func.return" || n == "return") {
        if (peek().kind == Token::Value) {
            do op.operands.push_back(value_name());
            while (accept(","));
            expect(":");
            do op.operand_types.push_back(type());
            while (accept(","));
            if (op.operand_types.size() != op.operands.size()) fail(n + ": values and types differ in number");
        }
        opt_attr_dict(op);
    } else if (n == "linalg.reduce") {
        if (is_punct("{")) {  // short form: { arith.addf }
            next();
            if (peek().kind != Token::Word) fail("linalg.reduce: expected the combining op, found " + describe(peek()));
            op.combiner = next().text;
            opt_attr_dict(op);
            expect("}");
        }
        ins_outs(op);
        expect_word("dimensions");
        expect("=");
        op.dims = int_list();
        if (is_punct("(")) {  // long form: (%in: t, %init: t) { ... }, or () { ^bb0(%in: t, %init: t): ... }
            next();
            std::vector<std::string> args;
            std::vector<Type> types;
            if (!is_punct(")")) {
                do {
                    args.push_back(value_name());
                    expect(":");
                    types.push_back(type());
                } while (accept(","));
            }
            expect(")");
            op.regions.push_back(region());
            Region &r = op.regions.back();
            if (!args.empty()) {
                // MLIR forbids a block label after named arguments; so do we, rather than pick one.
                if (!r.args.empty()) fail("linalg.reduce: block arguments both in (...) and in a ^bb0 label");
                r.args = args;
                r.arg_types = types;
            } else if (r.args.empty()) {
                fail("linalg.reduce: a region with no block arguments (write them in (...) or a ^bb0 label)");
            }
        }
        opt_attr_dict(op);
        if (op.operand_types.size() < 2) fail("linalg.reduce: needs ins and outs");
        results_from(op, {op.operand_types.back()});
    } else if (starts("linalg.")) {
        opt_attr_dict(op);
        ins_outs(op);
        while (is_word("dimensions") || is_word("permutation")) {
            next();
            expect("=");
            op.dims = int_list();
        }
        opt_attr_dict(op);
        std::vector<Type> rt;
        if (accept("->")) rt = type_list();
        if (op.operand_types.empty()) fail(n + ": needs outs");
        if (rt.empty() && !op.results.empty()) rt = {op.operand_types.back()};
        results_from(op, rt);
    } else if (n == "tensor.empty") {
        expect("(");
        expect(")");
        opt_attr_dict(op);
        expect(":");
        results_from(op, {type()});
    } else if (n == "tensor.splat") {
        op.operands.push_back(value_name());
        opt_attr_dict(op);
        expect(":");
        results_from(op, {type()});
    } else if (n == "tensor.extract") {
        op.operands.push_back(value_name());
        expect("[");
        if (!is_punct("]")) {
            do op.indices.push_back(iexpr(Names{}));
            while (accept(","));
        }
        expect("]");
        opt_attr_dict(op);
        expect(":");
        op.operand_types.push_back(type());
        Type e;
        e.kind = op.operand_types[0].elem;
        e.bits = op.operand_types[0].bits;
        results_from(op, {e});
    } else if (n == "tensor.extract_slice" || n == "tensor.insert_slice") {
        // %y = tensor.extract_slice %x[offsets] [sizes] [strides] : t to t
        // %y = tensor.insert_slice %x into %d[offsets] [sizes] [strides] : t into t  (static lists only)
        const bool insert = n == "tensor.insert_slice";
        op.operands.push_back(value_name());
        if (insert) {
            expect_word("into");
            op.operands.push_back(value_name());
        }
        op.offsets = int_list();
        op.sizes = int_list();
        op.strides = int_list();
        if (op.offsets.size() != op.sizes.size() || op.sizes.size() != op.strides.size())
            fail(n + ": offsets, sizes and strides differ in number");
        opt_attr_dict(op);
        expect(":");
        op.operand_types.push_back(type());
        expect_word(insert ? "into" : "to");
        Type r = type();
        if (insert) op.operand_types.push_back(r);
        results_from(op, {r});
    } else if (n == "tensor.reshape") {  // %y = tensor.reshape %x(%shape) : (t, shape t) -> t
        op.operands.push_back(value_name());
        expect("(");
        op.operands.push_back(value_name());
        expect(")");
        opt_attr_dict(op);
        expect(":");
        expect("(");
        op.operand_types.push_back(type());
        expect(",");
        op.operand_types.push_back(type());
        expect(")");
        expect("->");
        results_from(op, {type()});
    } else if (n == "tensor.collapse_shape" || n == "tensor.expand_shape") {
        op.operands.push_back(value_name());
        expect("[");
        if (!is_punct("]")) {  // `[]`: to or from a rank-0 tensor
            do {
                op.reassoc.push_back(int_list());
                if (op.reassoc.size() > kMaxRank) fail(n + ": more than 8 groups");
            } while (accept(","));
        }
        expect("]");
        if (is_word("output_shape")) {
            next();
            int_list();
        }
        opt_attr_dict(op);
        expect(":");
        op.operand_types.push_back(type());
        expect_word("into");
        results_from(op, {type()});
    } else if (n == "affine.apply") {
        Attr m = attribute();
        if (m.kind != Attr::Map) fail("affine.apply: expected an affine map");
        op.attrs["map"] = m;
        expect("(");
        if (!is_punct(")")) {
            do op.operands.push_back(value_name());
            while (accept(","));
        }
        expect(")");
        if (accept("[")) {
            if (!is_punct("]")) {
                do op.operands.push_back(value_name());
                while (accept(","));
            }
            expect("]");
        }
        opt_attr_dict(op);
        op.operand_types.assign(op.operands.size(), index_type());
        results_from(op, {index_type()});
    } else {
        fail("unsupported operation '" + n + "'");
    }
    skip_loc();
    return op;
}

}  // namespace spyre::ktir::parsing
