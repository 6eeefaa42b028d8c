// The parser's attributes (numbers, strings, arrays, dicts, dialect attributes, dense<...>, affine
// maps and sets, types as attributes) and the `#alias` / `!alias` definitions (ktir_parser.h).
#include <cstdlib>

#include "ktir_parser.h"

namespace spyre::ktir::parsing {

void Parser::alias_def(bool attr) {
    std::string name = next().text;
    expect("=");
    if (attr) {
        attr_aliases_[name] = attribute();
    } else {
        type_aliases_[name] = type();
    }
}

Attr Parser::attribute() {
    DepthGuard g(depth_, *this);
    Attr a;
    const Token &t = peek();
    if (t.kind == Token::Hash) {
        std::string name = t.text;
        next();
        if (is_punct("<")) {
            a.kind = Attr::Dialect;
            a.s = name;
            a.body = angle_body();
            return a;
        }
        auto it = attr_aliases_.find(name);
        if (it == attr_aliases_.end()) fail("unknown attribute alias '#" + name + "'");
        return it->second;
    }
    if (t.kind == Token::String) {
        a.kind = Attr::String;
        a.s = next().text;
        return a;
    }
    if (t.kind == Token::Int || t.kind == Token::Float || (t.kind == Token::Punct && t.text == "-")) {
        bool neg = accept("-");
        if (peek().kind == Token::Int) {
            a.kind = Attr::Int;
            a.hex = peek().text.size() > 2 && peek().text[1] == 'x';
            if (!parse_i64(peek().text, &a.i)) fail("integer '" + peek().text + "' is out of range");
            if (neg) a.i = -a.i;
            a.f = double(a.i);
        } else if (peek().kind == Token::Float) {
            a.kind = Attr::Float;
            a.f = std::strtod(peek().text.c_str(), nullptr);
            if (neg) a.f = -a.f;
        } else {
            fail("expected a number after '-', found " + describe(peek()));
        }
        next();
        if (accept(":")) a.type = type();
        return a;
    }
    if (t.kind == Token::Punct && t.text == "[") {
        next();
        a.kind = Attr::Array;
        if (!is_punct("]")) {
            do a.items.push_back(attribute());
            while (accept(","));
        }
        expect("]");
        return a;
    }
    if (t.kind == Token::Punct && t.text == "{") {
        a.kind = Attr::Dict;
        a.dict = attr_dict();
        return a;
    }
    if (t.kind == Token::Word) {
        std::string w = t.text;
        if (w == "affine_map") {
            next();
            a.kind = Attr::Map;
            a.map = affine_map();
            return a;
        }
        if (w == "affine_set") {
            next();
            a.kind = Attr::Set;
            a.set = affine_set();
            return a;
        }
        if (w == "true" || w == "false") {
            next();
            a.kind = Attr::Int;
            a.i = a.f = w == "true";
            a.type.kind = Type::Int;
            a.type.bits = 1;
            if (accept(":")) a.type = type();
            return a;
        }
        if (w == "unit") {
            next();
            return a;
        }
        if (w == "array") {  // array<i64: 1, 2>
            next();
            expect("<");
            type();
            a.kind = Attr::Array;
            if (accept(":")) {
                do {
                    Attr x;
                    x.kind = Attr::Int;
                    x.i = integer();
                    a.items.push_back(x);
                } while (accept(","));
            }
            expect(">");
            return a;
        }
        if (w == "dense") {  // dense<splat value> or dense<[values]> : type
            next();
            expect("<");
            Attr v = attribute();
            expect(">");
            if (v.kind != Attr::Int && v.kind != Attr::Float && v.kind != Attr::Array)
                fail("dense<...> holds a number or a list of numbers");
            v.type = Type();
            if (accept(":")) v.type = type();
            return v;
        }
        if (w == "loc") {
            next();
            skip_balanced();
            a.kind = Attr::Other;
            return a;
        }
        // A type used as an attribute (e.g. `kind = f32`), or a bare keyword.
        Type ty;
        if (elem_type(w, &ty) || w == "tensor" || w == "memref") {
            a.kind = Attr::TypeAttr;
            a.type = type();
            return a;
        }
        next();
        a.kind = Attr::Other;
        a.s = w;
        if (is_punct("<")) a.body = angle_body();
        return a;
    }
    if (t.kind == Token::Bang) {
        a.kind = Attr::TypeAttr;
        a.type = type();
        return a;
    }
    fail("expected an attribute value, found " + describe(t));
}

std::map<std::string, Attr> Parser::attr_dict() {
    DepthGuard g(depth_, *this);
    std::map<std::string, Attr> d;
    expect("{");
    if (!is_punct("}")) {
        do {
            std::string key;
            if (peek().kind == Token::Word || peek().kind == Token::String) key = next().text;
            else fail("expected an attribute name, found " + describe(peek()));
            if (accept("=")) d[key] = attribute();
            else d[key] = Attr();
        } while (accept(","));
    }
    expect("}");
    return d;
}

void Parser::opt_attr_dict(Op &op) {
    if (is_punct("{")) {
        for (auto &kv : attr_dict()) op.attrs[kv.first] = kv.second;
    }
}

}  // namespace spyre::ktir::parsing
