// The parser's types: element types (index, iN / siN / uiN, fN, bf16), shaped types (tensor, memref,
// the access tile; their dims checked against the bounds), `!alias` uses and type lists (ktir_parser.h).
#include <cctype>

#include "ktir_parser.h"

namespace spyre::ktir::parsing {

namespace {

constexpr int64_t kMaxExtent = int64_t(1) << 31;

}  // namespace

bool Parser::elem_type(const std::string &w, Type *t) {
    if (w == "index") {
        t->kind = Type::Index;
        t->bits = 64;
        return true;
    }
    if (w.size() > 1 && (w[0] == 'i' || w[0] == 'f' || w[0] == 'u' || w[0] == 's') &&
        w.find_first_not_of("0123456789", w[0] == 's' || w[0] == 'u' ? 2 : 1) == std::string::npos) {
        size_t at = 1;
        if (w[0] == 's' || w[0] == 'u') {
            if (w[1] != 'i') return false;
            at = 2;
        }
        if (at >= w.size()) return false;
        int64_t b;
        if (!parse_i64(w.substr(at), &b) || b <= 0 || b > 64) return false;
        t->kind = w[0] == 'f' ? Type::Float : Type::Int;
        t->bits = int(b);
        return true;
    }
    if (w == "bf16") {
        t->kind = Type::Float;
        t->bits = -16;  // marks bfloat16, which no device type holds
        return true;
    }
    return false;
}

Type Parser::shaped(Type::Kind kind, const std::string &body0, int at) {
    auto fail = [at](const std::string &m) { fail_at(at, m); };
    std::string body = body0;
    size_t comma = body.find(',');  // memref layout / memory space: ignored
    if (comma != std::string::npos) body = body.substr(0, comma);
    std::string b;
    for (char c : body)
        if (!std::isspace((unsigned char)c)) b += c;
    Type t;
    t.kind = kind;
    size_t i = 0;
    while (i < b.size() && (std::isdigit((unsigned char)b[i]) || b[i] == '?')) {
        // A dynamic dimension of a memory view (memref<?xf32>): -1, which the importer specialises
        // from the view's sizes; of an access tile, -1, which the importer refuses where the tile is
        // made (the rest of the module still imports); anywhere else it is refused here.
        if (b[i] == '?') {
            if (kind != Type::MemRef && kind != Type::Tile)
                fail("dynamic dimension '?' in type '" + body0 + "' is not supported");
            if (i + 1 >= b.size() || b[i + 1] != 'x') break;
            t.shape.push_back(kDynamic);
            if (t.shape.size() > kMaxRank) fail("type '" + body0 + "' has more than 8 dimensions");
            i += 2;
            continue;
        }
        size_t j = i;
        while (j < b.size() && std::isdigit((unsigned char)b[j])) j++;
        if (j >= b.size() || b[j] != 'x') break;  // a bare number is the element type (error below)
        int64_t v;
        if (!parse_i64(b.substr(i, j - i), &v) || v >= kMaxExtent)
            fail("dimension '" + b.substr(i, j - i) + "' in type '" + body0 + "' is too large");
        t.shape.push_back(v);
        if (t.shape.size() > kMaxRank) fail("type '" + body0 + "' has more than 8 dimensions");
        i = j + 1;
    }
    Type e;
    if (!elem_type(b.substr(i), &e)) fail("unknown element type '" + b.substr(i) + "' in '" + body0 + "'");
    if (kind == Type::Tile && e.kind != Type::Index) fail("access tile type '" + body0 + "' must hold index");
    t.elem = e.kind;
    t.bits = e.bits;
    return t;
}

Type Parser::type() {
    DepthGuard g(depth_, *this);
    const Token &t = peek();
    const int at = t.line;
    if (t.kind == Token::Bang) {
        std::string name = t.text;
        next();
        if (name == "ktdp.tile" || name == "ktdp.access_tile") return shaped(Type::Tile, angle_body(), at);
        auto it = type_aliases_.find(name);
        if (it != type_aliases_.end()) return it->second;
        fail("unknown type '!" + name + "'");
    }
    if (t.kind == Token::Word) {
        std::string w = t.text;
        next();
        if (w == "tensor") return shaped(Type::Tensor, angle_body(), at);
        if (w == "memref") return shaped(Type::MemRef, angle_body(), at);
        if (w == "vector") fail("vector types are not supported");
        Type s;
        if (elem_type(w, &s)) return s;
        fail("unknown type '" + w + "'");
    }
    if (t.kind == Token::Punct && t.text == "<") {
        // MLIR prints a dialect's own type without its name where the op's format fixes the
        // dialect (`ktdp.load %t : <1x64xindex> -> ...`); in ktdp that is the access tile.
        return shaped(Type::Tile, angle_body(), at);
    }
    if (t.kind == Token::Punct && t.text == "(") {  // a function type in generic form: (a, b) -> c
        fail("expected a type, found '('");
    }
    fail("expected a type, found " + describe(t));
}

std::vector<Type> Parser::type_list() {
    std::vector<Type> v;
    if (accept("(")) {
        if (!accept(")")) {
            do v.push_back(type());
            while (accept(","));
            expect(")");
        }
        return v;
    }
    do v.push_back(type());
    while (accept(","));
    return v;
}

}  // namespace spyre::ktir::parsing
