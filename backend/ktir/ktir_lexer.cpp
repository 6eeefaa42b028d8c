// The KTIR reader's lexer and the token cursor its parsers share (ktir_lexer.h).
#include "ktir_lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace spyre::ktir::parsing {

std::vector<Token> lex(const std::string &s) {
    std::vector<Token> out;
    size_t i = 0;
    int line = 1;
    auto word_char = [](char c) { return std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$'; };
    while (true) {
        while (i < s.size()) {
            if (s[i] == '\n') {
                line++;
                i++;
            } else if (std::isspace((unsigned char)s[i])) {
                i++;
            } else if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '/') {
                while (i < s.size() && s[i] != '\n') i++;
            } else {
                break;
            }
        }
        Token t;
        t.line = line;
        t.begin = i;
        if (i >= s.size()) {
            t.end = i;
            out.push_back(t);
            return out;
        }
        char c = s[i];
        if (c == '%' || c == '@' || c == '#' || c == '!' || c == '^') {
            size_t j = i + 1;
            if (c == '@' && j < s.size() && s[j] == '"') {  // @"quoted symbol"
                size_t k = s.find('"', j + 1);
                if (k == std::string::npos) throw_error("line ", line, ": unterminated symbol name");
                t.kind = Token::Sym;
                t.text = s.substr(j + 1, k - j - 1);
                i = k + 1;
            } else {
                while (j < s.size() && (word_char(s[j]) || s[j] == '-')) {
                    if (s[j] == '-' && c != '%') break;
                    if (s[j] == '-') break;
                    j++;
                }
                if (c == '%' && j < s.size() && s[j] == '#') {  // %0#1: one result of a multi-result op
                    j++;
                    while (j < s.size() && std::isdigit((unsigned char)s[j])) j++;
                }
                if (j == i + 1) throw_error("line ", line, ": '", c, "' without a name");
                t.kind = c == '%' ? Token::Value : c == '@' ? Token::Sym : c == '#' ? Token::Hash
                                                 : c == '!' ? Token::Bang : Token::Word;
                t.text = s.substr(i + 1, j - i - 1);
                if (c == '^') t.text = "^" + t.text;
                i = j;
            }
        } else if (c == '"') {
            size_t j = i + 1;
            std::string v;
            while (j < s.size() && s[j] != '"') {
                if (s[j] == '\n') throw_error("line ", line, ": unterminated string");
                if (s[j] == '\\' && j + 1 < s.size()) j++;
                v += s[j++];
            }
            if (j >= s.size()) throw_error("line ", line, ": unterminated string");
            t.kind = Token::String;
            t.text = v;
            i = j + 1;
        } else if (std::isdigit((unsigned char)c)) {
            size_t j = i;
            while (j < s.size()) {
                if (word_char(s[j])) {
                    j++;
                } else if ((s[j] == '+' || s[j] == '-') && j > i && (s[j - 1] == 'e' || s[j - 1] == 'E') &&
                           s.compare(i, 2, "0x") != 0 && j + 1 < s.size() && std::isdigit((unsigned char)s[j + 1])) {
                    j++;
                } else {
                    break;
                }
            }
            t.text = s.substr(i, j - i);
            i = j;
            const std::string &w = t.text;
            bool digits = w.find_first_not_of("0123456789") == std::string::npos;
            bool hex = w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X') &&
                       w.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
            bool flt = false;
            if (!digits && !hex) {
                char *endp = nullptr;
                std::strtod(w.c_str(), &endp);
                flt = endp && *endp == 0 && w.find_first_of(".eE") != std::string::npos &&
                      w.find('x') == std::string::npos;
            }
            t.kind = digits || hex ? Token::Int : flt ? Token::Float : Token::Word;
        } else if (word_char(c)) {
            size_t j = i;
            while (j < s.size() && word_char(s[j])) j++;
            t.kind = Token::Word;
            t.text = s.substr(i, j - i);
            i = j;
        } else {
            t.kind = Token::Punct;
            static const char *two[] = {"->", ">=", "<=", "=="};
            t.text = std::string(1, c);
            for (const char *p : two)
                if (s.compare(i, 2, p) == 0) t.text = p;
            if (std::strchr("()[]{}<>,:=+-*?|", c) == nullptr && t.text.size() == 1)
                throw_error("line ", line, ": unexpected character '", c, "'");
            i += t.text.size();
        }
        t.end = i;
        out.push_back(t);
    }
}

bool parse_i64(const std::string &w, int64_t *out) {
    errno = 0;
    char *endp = nullptr;
    bool hex = w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X');
    unsigned long long v = std::strtoull(w.c_str(), &endp, hex ? 16 : 10);
    if (errno || !endp || *endp) return false;
    if (!hex && v > (unsigned long long)INT64_MAX) return false;
    *out = int64_t(v);
    return true;
}

std::string TokenCursor::describe(const Token &t) {
    switch (t.kind) {
    case Token::Eof: return "end of input";
    case Token::Value: return "'%" + t.text + "'";
    case Token::Sym: return "'@" + t.text + "'";
    case Token::Hash: return "'#" + t.text + "'";
    case Token::Bang: return "'!" + t.text + "'";
    default: return "'" + t.text + "'";
    }
}

void TokenCursor::expect(const char *p) {
    if (!is_punct(p)) fail(std::string("expected '") + p + "', found " + describe(peek()));
    next();
}

void TokenCursor::expect_word(const char *w) {
    if (!is_word(w)) fail(std::string("expected '") + w + "', found " + describe(peek()));
    next();
}

bool TokenCursor::accept(const char *p) {
    if (!is_punct(p)) return false;
    next();
    return true;
}

std::string TokenCursor::value_name() {
    if (peek().kind != Token::Value) fail("expected an SSA value (%name), found " + describe(peek()));
    return next().text;
}

int64_t TokenCursor::integer() {
    bool neg = accept("-");
    if (peek().kind != Token::Int) fail("expected an integer, found " + describe(peek()));
    int64_t v;
    if (!parse_i64(peek().text, &v)) fail("integer '" + peek().text + "' is out of range");
    next();
    return neg ? -v : v;
}

void TokenCursor::skip_loc() {
    if (!is_word("loc") || peek(1).text != "(") return;
    next();
    skip_balanced();
}

void TokenCursor::skip_balanced() {
    std::string open = peek().text;
    std::string close = open == "(" ? ")" : open == "[" ? "]" : open == "{" ? "}" : ">";
    int depth = 0;
    do {
        if (at_eof()) fail("unbalanced '" + open + "'");
        if (peek().kind == Token::Punct) {
            if (peek().text == open) depth++;
            else if (peek().text == close) depth--;
        }
        next();
    } while (depth > 0);
}

std::string TokenCursor::angle_body() {
    expect("<");
    size_t begin = peek().begin;
    int depth = 1;
    while (true) {
        if (at_eof()) fail("unbalanced '<'");
        if (is_punct("<")) depth++;
        if (is_punct(">")) {
            if (--depth == 0) break;
        }
        next();
    }
    std::string body = src_.substr(begin, peek().begin - begin);
    next();
    return body;
}

}  // namespace spyre::ktir::parsing
