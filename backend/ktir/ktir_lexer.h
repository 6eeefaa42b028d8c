// The KTIR reader's tokens (internal to backend/ktir; the public entry is ktir_reader.h): lex()
// splits MLIR text into them, and TokenCursor walks them with the primitives every part of the
// parser shares (peek / next / expect / accept, integers, SSA names, `loc(...)`, balanced groups),
// so that every error names its line the same way. ktir_parser.h builds the parser on it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "device/error.h"

namespace spyre::ktir::parsing {

constexpr int kMaxDepth = 64;  // regions, expressions and attributes nested in each other

struct Token {
    enum Kind { Eof, Value, Sym, Hash, Bang, Word, Int, Float, String, Punct } kind = Eof;
    std::string text;
    int line = 0;
    size_t begin = 0, end = 0;  // byte offsets in the source
};

// Splits the source into tokens. Words run over [A-Za-z0-9_.$]; a word starting with a digit is a
// number when it reads as one (so shapes such as 1x64xf16 stay one word).
std::vector<Token> lex(const std::string &s);

// The value of a decimal or 0x-hex integer token; false when it is not one or does not fit in int64_t.
bool parse_i64(const std::string &w, int64_t *out);

class TokenCursor {
protected:
    explicit TokenCursor(const std::string &src) : src_(src), toks_(lex(src)) {}

    const Token &peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
    const Token &next() {
        const Token &t = toks_[pos_];
        if (pos_ + 1 < toks_.size()) pos_++;
        return t;
    }
    bool at_eof() const { return peek().kind == Token::Eof; }
    bool is_punct(const char *p) const { return peek().kind == Token::Punct && peek().text == p; }
    bool is_word(const char *w) const { return peek().kind == Token::Word && peek().text == w; }
    int line() const { return peek().line; }
    [[noreturn]] void fail(const std::string &msg) const { fail_at(line(), msg); }
    [[noreturn]] static void fail_at(int line, const std::string &msg) { throw_error("line ", line, ": ", msg); }
    static std::string describe(const Token &t);
    void expect(const char *p);
    void expect_word(const char *w);
    bool accept(const char *p);
    std::string value_name();
    int64_t integer();

    struct DepthGuard {
        int &d;
        DepthGuard(int &depth, const TokenCursor &r) : d(depth) {
            if (++d > kMaxDepth) r.fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
        }
        ~DepthGuard() { d--; }
    };

    // Skips `loc(...)` after an op or argument.
    void skip_loc();
    // Skips a balanced (...), [...], {...} or <...> group starting at the current token.
    void skip_balanced();
    // The raw text between '<' (the current token) and its matching '>', consumed.
    std::string angle_body();

    const std::string &src_;
    std::vector<Token> toks_;
    size_t pos_ = 0;
    int depth_ = 0;  // DepthGuard's count of the nesting in progress
};

}  // namespace spyre::ktir::parsing
