#include "boundary_condition_names.h"

#include <regex>
#include <set>

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// The Funcs Halide 14's BoundaryConditions name after themselves.
const std::set<std::string> &condition_kinds() {
    static const std::set<std::string> k = {"repeat_edge", "constant_exterior", "repeat_image", "mirror_image",
                                            "mirror_interior"};
    return k;
}

std::string without_copy_number(const std::string &n) { return n.substr(0, n.find('$')); }

bool is_lambda(const std::string &n) {
    static const std::regex lambda(R"(lambda_\d+(\$\d+)?)");
    return std::regex_match(n, lambda);
}

// The one Func or input a definition reads, other than itself ("" when it reads none or several).
struct Reads : IRGraphVisitor {
    std::string self;
    std::set<std::string> names;
    std::map<std::string, Function> funcs;
    std::set<std::string> images;
    using IRGraphVisitor::visit;
    void visit(const Call *c) override {
        if (c->call_type == Call::Halide && c->name != self) {
            names.insert(c->name);
            if (c->func.defined()) funcs.emplace(c->name, Function(c->func));
        } else if (c->call_type == Call::Image) {
            names.insert(c->name);
            images.insert(c->name);
        }
        IRGraphVisitor::visit(c);
    }
};

// What a boundary condition (or a lambda) wraps, as the user knows it: "input 'in'", "Func 'f'".
std::optional<std::pair<std::string, std::string>> wrapped(const Function &f, int depth = 0) {
    if (depth > 8 || !f.has_pure_definition()) return std::nullopt;
    Reads r;
    r.self = f.name();
    for (const Expr &v : f.values()) v.accept(&r);
    if (r.names.size() != 1) return std::nullopt;
    const std::string n = *r.names.begin();
    if (r.images.count(n)) return std::make_pair(n, "input '" + n + "'");
    auto g = r.funcs.find(n);
    if (g == r.funcs.end()) return std::nullopt;
    const std::string base = without_copy_number(n);
    // An ImageParam's own Func ("in_im"), a lambda or another condition: what it wraps.
    if (is_lambda(n) || condition_kinds().count(base) || (base.size() > 3 && base.compare(base.size() - 3, 3, "_im") == 0))
        if (auto w = wrapped(g->second, depth + 1)) return w;
    return std::make_pair(base, "Func '" + base + "'");
}

}  // namespace

std::optional<MadeFuncName> made_func_name(const Function &f) {
    const std::string base = without_copy_number(f.name());
    if (condition_kinds().count(base)) {
        auto w = wrapped(f);
        if (!w) return std::nullopt;  // a user's own Func named like a condition
        return MadeFuncName{base + "(" + w->first + ")", "the " + base + " boundary condition of " + w->second};
    }
    if (is_lambda(f.name())) {
        if (auto w = wrapped(f))
            return MadeFuncName{"Func(" + w->first + ")", "the Func a boundary condition wraps " + w->second + " in"};
        return MadeFuncName{"lambda()", "a Func made by lambda()"};
    }
    return std::nullopt;
}

std::map<std::string, std::string> made_func_phrases(const std::vector<Func> &outputs) {
    std::map<std::string, std::string> names;
    for (const Func &o : outputs) {
        std::map<std::string, Function> env = find_transitive_calls(o.function());
        env.emplace(o.name(), o.function());
        for (const auto &[n, f] : env)
            if (auto m = made_func_name(f)) names.emplace(n, m->phrase);
    }
    return names;
}

std::string func_subject(const Func &f) {
    if (f.defined())
        if (auto m = made_func_name(f.function())) return m->phrase;
    return "Func " + without_copy_number(f.name());
}

}  // namespace spyre
