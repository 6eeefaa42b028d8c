#include "ktir_reader.h"

#include <fstream>
#include <sstream>

#include "device/error.h"
#include "ktir_parser.h"

namespace spyre::ktir {

std::string Type::text() const {
    auto elem_text = [](Kind k, int bits) -> std::string {
        if (k == Index) return "index";
        if (bits == -16) return "bf16";
        return (k == Float ? "f" : "i") + std::to_string(bits);
    };
    if (kind == None) return "none";
    if (!shaped()) return elem_text(kind, bits);
    std::string s = kind == Tensor ? "tensor<" : kind == MemRef ? "memref<" : "!ktdp.access_tile<";
    for (int64_t d : shape) s += (d == kDynamic ? std::string("?") : std::to_string(d)) + "x";
    return s + elem_text(elem, bits) + ">";
}

int64_t eval_const(const IExpr &e) {
    switch (e.kind) {
    case IExpr::Const: return e.c;
    case IExpr::Neg: return -eval_const(e.args[0]);
    case IExpr::Add: return eval_const(e.args[0]) + eval_const(e.args[1]);
    case IExpr::Mul: return eval_const(e.args[0]) * eval_const(e.args[1]);
    default: throw_error("expression is not a constant");
    }
}

Module read_ktir(const std::string &text) {
    if (text.size() > (size_t(64) << 20)) throw_error("KTIR text of ", text.size(), " bytes is larger than 64 MiB");
    parsing::Parser r(text);
    return r.module();
}

Module read_ktir_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw_error("cannot open KTIR file '", path, "'");
    std::stringstream ss;
    ss << f.rdbuf();
    try {
        return read_ktir(ss.str());
    } catch (const Error &e) {
        throw e.reworded(path + ": " + e.what());
    }
}

}  // namespace spyre::ktir
