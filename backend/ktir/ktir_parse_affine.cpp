// The parser's index expressions: affine subscripts, affine_map and affine_set with their dimension
// and symbol lists (ktir_parser.h).
#include "ktir_parser.h"

namespace spyre::ktir::parsing {

IExpr Parser::iexpr(const Names &n) {
    DepthGuard g(depth_, *this);
    IExpr lhs = iterm(n);
    while (is_punct("+") || is_punct("-")) {
        bool sub = next().text == "-";
        IExpr rhs = iterm(n);
        if (sub) {
            IExpr neg;
            neg.kind = IExpr::Neg;
            neg.args.push_back(std::move(rhs));
            rhs = std::move(neg);
        }
        IExpr add;
        add.kind = IExpr::Add;
        add.args.push_back(std::move(lhs));
        add.args.push_back(std::move(rhs));
        lhs = std::move(add);
    }
    return lhs;
}

IExpr Parser::iterm(const Names &n) {
    DepthGuard g(depth_, *this);
    IExpr lhs = ifactor(n);
    while (true) {
        IExpr::Kind k;
        if (is_punct("*")) k = IExpr::Mul;
        else if (is_word("floordiv")) k = IExpr::FloorDiv;
        else if (is_word("ceildiv")) k = IExpr::CeilDiv;
        else if (is_word("mod")) k = IExpr::Mod;
        else break;
        next();
        IExpr rhs = ifactor(n);
        IExpr e;
        e.kind = k;
        e.args.push_back(std::move(lhs));
        e.args.push_back(std::move(rhs));
        lhs = std::move(e);
    }
    return lhs;
}

IExpr Parser::ifactor(const Names &n) {
    DepthGuard g(depth_, *this);
    IExpr e;
    if (accept("-")) {
        e.kind = IExpr::Neg;
        e.args.push_back(ifactor(n));
        return e;
    }
    if (accept("(")) {
        e = iexpr(n);
        expect(")");
        return e;
    }
    if (peek().kind == Token::Int) {
        e.kind = IExpr::Const;
        e.c = integer();
        return e;
    }
    if (peek().kind == Token::Value) {
        e.kind = IExpr::Value;
        e.name = next().text;
        return e;
    }
    if (peek().kind == Token::Word) {
        const std::string &w = peek().text;
        for (size_t i = 0; i < n.dims.size(); i++)
            if (n.dims[i] == w) {
                next();
                e.kind = IExpr::Dim;
                e.c = int64_t(i);
                return e;
            }
        for (size_t i = 0; i < n.syms.size(); i++)
            if (n.syms[i] == w) {
                next();
                e.kind = IExpr::Sym;
                e.c = int64_t(i);
                return e;
            }
    }
    fail("expected an index expression, found " + describe(peek()));
}

Parser::Names Parser::dim_sym_lists(int *dims, int *syms) {
    Names n;
    expect("(");
    if (!is_punct(")")) {
        do {
            if (peek().kind != Token::Word) fail("expected a dimension name, found " + describe(peek()));
            n.dims.push_back(next().text);
        } while (accept(","));
    }
    expect(")");
    if (accept("[")) {
        if (!is_punct("]")) {
            do {
                if (peek().kind != Token::Word) fail("expected a symbol name, found " + describe(peek()));
                n.syms.push_back(next().text);
            } while (accept(","));
        }
        expect("]");
    }
    *dims = int(n.dims.size());
    *syms = int(n.syms.size());
    return n;
}

std::shared_ptr<AffineMap> Parser::affine_map() {
    expect("<");
    auto m = std::make_shared<AffineMap>();
    Names n = dim_sym_lists(&m->dims, &m->syms);
    expect("->");
    expect("(");
    if (!is_punct(")")) {
        do m->results.push_back(iexpr(n));
        while (accept(","));
    }
    expect(")");
    expect(">");
    return m;
}

std::shared_ptr<IntegerSet> Parser::affine_set() {
    expect("<");
    auto s = std::make_shared<IntegerSet>();
    Names n = dim_sym_lists(&s->dims, &s->syms);
    expect(":");
    expect("(");
    if (!is_punct(")")) {
        do {
            IExpr lhs = iexpr(n);
            std::string op = peek().text;
            if (!(is_punct(">=") || is_punct("<=") || is_punct("==")))
                fail("expected '>=', '<=' or '==' in an affine_set constraint, found " + describe(peek()));
            next();
            IExpr rhs = iexpr(n);
            // lhs op rhs  ->  (lhs - rhs) >= 0, (rhs - lhs) >= 0 or (lhs - rhs) == 0
            IExpr neg, e;
            neg.kind = IExpr::Neg;
            e.kind = IExpr::Add;
            if (op == "<=") {
                neg.args.push_back(std::move(lhs));
                e.args.push_back(std::move(rhs));
            } else {
                neg.args.push_back(std::move(rhs));
                e.args.push_back(std::move(lhs));
            }
            e.args.push_back(std::move(neg));
            s->exprs.push_back(std::move(e));
            s->equality.push_back(op == "==");
        } while (accept(","));
    }
    expect(")");
    expect(">");
    return s;
}

}  // namespace spyre::ktir::parsing
