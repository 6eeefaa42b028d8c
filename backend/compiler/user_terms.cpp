#include "user_terms.h"

#include <cctype>
#include <regex>

namespace spyre {

namespace {

// What a directive's suffix on a loop name means, in the directive's words.
std::string loop_role(std::string &var) {
    static const std::pair<const char *, const char *> roles[] = {
        {"_in_pe", "its PE loop"},      {"_pe", "its PE loop"},        {"_core", "its split over cores"},
        {"_part", "its partials per core"}, {"_share", "its ring share"}, {"_phased", "its DMA phases"},
        {"_sticks", "its sticks"},      {"_lanes", "its vector lanes"}, {"_in", "its share per core"},
    };
    // ring_share's loop carries its run length too (ko_share8).
    size_t digits = var.size();
    while (digits > 0 && std::isdigit((unsigned char)var[digits - 1])) digits--;
    for (const auto &[suffix, role] : roles) {
        const std::string s = suffix;
        for (size_t end : {var.size(), digits}) {
            if (end > s.size() && var.compare(end - s.size(), s.size(), s) == 0 && (end == var.size() || s == "_share")) {
                var.resize(end - s.size());
                return role;
            }
        }
    }
    return "";
}

// "acc$5" is acc; "sum$part3" (normalize_stmt's second allocation of sum) is sum; "r$x" is the RVar
// r.x of RDom r.
std::string strip_dollars(const std::string &name) {
    static const std::regex copy(R"(\$(?:part)?\d+)"), rvar(R"(\$([xyzw])\b)");
    return std::regex_replace(std::regex_replace(name, copy, ""), rvar, ".$1");
}

// A Func's name as the user wrote it: an ImageParam's Func is the ImageParam, a wrapper is f.in().
std::string func_name(const std::string &raw) {
    std::string n = strip_dollars(raw);
    bool wrapper = false;
    for (const char *w : {"_global_wrapper", "_wrapper"}) {
        size_t at = n.rfind(w);
        if (at != std::string::npos && at + std::string(w).size() == n.size()) {
            n.resize(at);
            wrapper = true;
            break;
        }
    }
    // ImageParam::operator() calls a Func named for the ImageParam with "_im" appended (a wrapper of
    // one is the ImageParam's .in(); a user's own Func of that name has no '$' copy number).
    if ((raw.find("_im$") != std::string::npos || wrapper) && n.size() > 3 && n.compare(n.size() - 3, 3, "_im") == 0)
        n.resize(n.size() - 3);
    return wrapper ? n + ".in()" : n;
}

}  // namespace

std::string in_user_terms(const std::string &message) {
    // Loops first: func.s<stage>.<var>[.<var>...]; the last var is the loop, the others its parents.
    static const std::regex loop(R"(([A-Za-z_][\w$]*)\.s(\d+)\.((?:[A-Za-z_][\w$]*\.)*)([A-Za-z_][\w$]*))");
    std::string out, rest = message;
    std::smatch m;
    while (std::regex_search(rest, m, loop)) {
        std::string var = m[4].str();
        std::string role = loop_role(var);
        var = strip_dollars(var);
        std::string stage = m[2].str() == "0" ? "" : "'s update " + m[2].str();
        out += m.prefix().str() + "loop " + var + " of " + func_name(m[1].str()) + stage +
               (role.empty() ? "" : " (" + role + ")");
        rest = m.suffix().str();
    }
    out += rest;
    // Then Funcs: any identifier with a '$' suffix or a wrapper's.
    static const std::regex func(R"([A-Za-z_]\w*(?:\$(?:part)?\d+)(?:_global_wrapper|_wrapper)?(?:\$(?:part)?\d+)?|[A-Za-z_]\w*_global_wrapper)");
    std::string done;
    rest = out;
    while (std::regex_search(rest, m, func)) {
        done += m.prefix().str() + func_name(m[0].str());
        rest = m.suffix().str();
    }
    done += rest;
    // RVars anywhere else (Halide's own messages list loops such as "p.compute_at(sum, r$x)").
    static const std::regex rvar(R"(\b([A-Za-z_]\w*)\$([xyzw])\b)");
    done = std::regex_replace(done, rvar, "$1.$2");
    // Counts of one read as counts.
    static const std::regex one(R"(\b1 (column|row|stick|element|core|tile|group|iteration)s\b)");
    return std::regex_replace(done, one, "1 $1");
}

std::string generated_name_in(const std::string &message, const std::set<std::string> *declared) {
    static const std::regex generated(
        R"([A-Za-z_]\w*\$\w+|[A-Za-z_]\w*_global_wrapper\w*|[A-Za-z_][\w$]*\.s\d+\.[A-Za-z_][\w$.]*)"
        R"(|\blambda_\d+\b|__outermost|\b[A-Za-z_]\w*\.lx\d+\b|\$|\b\d+/\d+ bits\b)"
        // A boundary condition's Func by its Halide name: "Func repeat_edge", or a summary's "repeat_edge:tile".
        R"(|(?:Func ['"]?|schedule for )(?:repeat_edge|constant_exterior|repeat_image|mirror_image|mirror_interior)\b)"
        R"(|\b(?:repeat_edge|constant_exterior|repeat_image|mirror_image|mirror_interior):)");
    // A name the user chose is theirs, whatever it looks like (a Func named lambda_1).
    for (auto it = std::sregex_iterator(message.begin(), message.end(), generated); it != std::sregex_iterator(); ++it)
        if (!declared || !declared->count(it->str())) return it->str();
    if (!declared) return "";
    // Halide's unnamed Vars (v37), and f.0: the Tuple components of a Func. (Its implicit Vars, _0,
    // are C++ names a user writes: Halide::_0.)
    static const std::regex made(R"(\bv\d+\b|\b([A-Za-z_]\w*)\.\d+\b)");
    for (auto it = std::sregex_iterator(message.begin(), message.end(), made); it != std::sregex_iterator(); ++it) {
        const std::smatch &t = *it;
        if (t[1].matched ? declared->count(t[1].str()) != 0 : declared->count(t.str()) == 0) return t.str();
    }
    return "";
}

}  // namespace spyre
