#include "user_terms.h"

#include <cctype>
#include <optional>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

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

// `text` with each match of `re` replaced by what `with` makes of it.
template <typename F>
std::string replace_each(const std::string &text, const std::regex &re, F &&with) {
    std::string out;
    auto last = text.cbegin();
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
        out.append(last, (*it)[0].first);
        out += with(*it);
        last = (*it)[0].second;
    }
    out.append(last, text.cend());
    return out;
}

// The names of Halide's boundary-condition Funcs are also words of the messages that list the
// conditions ("repeat_edge, constant_exterior, mirror_image"); a list is not a Func.
const char *const kConditionWords = "repeat_edge|constant_exterior|repeat_image|mirror_image|mirror_interior";

}  // namespace

std::string in_user_terms(const std::string &message, const std::map<std::string, std::string> *made) {
    // A name may reach here without its "$<n>" (a message rewritten once already): then the one
    // made Func of that name. Phrases go in as "\x01<index>\x02" until the end, so that the
    // condition's name inside one is not taken for a Func again.
    std::vector<const std::string *> phrases;
    auto made_phrase = [&](const std::string &raw) -> std::optional<std::string> {
        if (!made) return std::nullopt;
        const std::string *found = nullptr;
        auto it = made->find(raw);
        if (it != made->end()) found = &it->second;
        if (!found) {
            bool several = false;
            for (const auto &[name, phrase] : *made)
                if (name.substr(0, name.find('$')) == raw) several |= std::exchange(found, &phrase) != nullptr;
            if (several) return std::nullopt;
        }
        if (!found) return std::nullopt;
        phrases.push_back(found);
        return "\x01" + std::to_string(phrases.size() - 1) + "\x02";
    };
    // Loops first: func.s<stage>.<var>[.<var>...]; the last var is the loop, the others its parents.
    static const std::regex loop(R"(([A-Za-z_][\w$]*)\.s(\d+)\.((?:[A-Za-z_][\w$]*\.)*)([A-Za-z_][\w$]*))");
    std::string out = replace_each(message, loop, [&](const std::smatch &m) {
        std::string var = m[4].str();
        std::string role = loop_role(var);
        static const std::regex unnamed(R"(v\d+)");
        if (var == "__outermost") {
            var = "Var::outermost()";
        } else if (std::regex_match(var, unnamed) && m[3].length() > 0) {
            // Halide's own Var for vectorize(x, n) or unroll(x, n): the lanes it split from x.
            std::string parent = m[3].str();
            parent.pop_back();
            var = parent.substr(parent.rfind('.') + 1);
            role = "the lanes Halide split from it";
        }
        var = strip_dollars(var);
        const std::optional<std::string> phrase = made_phrase(m[1].str());
        std::string stage = m[2].str() == "0" ? "" : "'s update " + m[2].str();
        return "loop " + var + " of " + (phrase ? *phrase : func_name(m[1].str())) + stage +
               (role.empty() ? "" : " (" + role + ")");
    });
    // Halide's list of a Func's loops ("Vars: x.xi x.xo y __outermost"): the loops as the user
    // named them, without the level Halide adds above them all.
    static const std::regex vars(R"(Vars:((?: +[\w$.]+)+))");
    out = replace_each(out, vars, [](const std::smatch &m) {
        std::istringstream is(m[1].str());
        std::string v, list;
        while (is >> v)
            if (v != "__outermost") list += (list.empty() ? " " : ", ") + strip_dollars(v.substr(v.rfind('.') + 1));
        return "its loops:" + list;
    });
    static const std::regex outermost(R"(\b__outermost\b)");
    out = std::regex_replace(out, outermost, "Var::outermost()");
    // The Funcs Halide made for a boundary condition, in the caller's words (boundary_condition_names.h).
    if (made && !made->empty()) {
        static const std::regex condition_list(std::string(R"((?:\w+::)*(?:)") + kConditionWords + R"()(?:(?:, | or )(?:)" +
                                               kConditionWords + R"())+|\w+::(?:)" + kConditionWords + ")");
        static const std::regex named(R"((Func ['"]?|['"])?\b([A-Za-z_]\w*(?:\$\d+)?)(?![\w$])['"]?)");
        std::string kept, rest = out;
        std::smatch list;
        auto rewrite = [&](const std::string &text) {
            return replace_each(text, named, [&](const std::smatch &m) {
                const std::optional<std::string> phrase = made_phrase(m[2].str());
                return phrase ? *phrase : m[0].str();
            });
        };
        while (std::regex_search(rest, list, condition_list)) {
            kept += rewrite(list.prefix().str()) + list[0].str();
            rest = list.suffix().str();
        }
        out = kept + rewrite(rest);
    }
    static const std::regex placed("\x01(\\d+)\x02");
    out = replace_each(out, placed, [&](const std::smatch &m) { return *phrases.at(std::stoul(m[1].str())); });
    // A staging copy infer_dma makes of a buffer ("in.lx2"), and a Tuple's element ("state.1").
    static const std::regex staged(R"(\b([A-Za-z_][\w$]*)\.lx\d+\b)");
    out = replace_each(out, staged, [](const std::smatch &m) { return "the LX copy of " + func_name(m[1].str()); });
    static const std::regex element(R"(\b([A-Za-z_][\w$]*)\.(\d+)\b)");
    out = replace_each(out, element, [](const std::smatch &m) { return func_name(m[1].str()) + "[" + m[2].str() + "]"; });
    // An ImageParam's wrapper for one consumer (in.in(out), what stage_in_lx makes): "in_im$3_in_out".
    static const std::regex wrapper_in(R"(\b([A-Za-z_]\w*)_im(?:\$\d+)?_in_([A-Za-z_]\w*?)(?:\$\d+)*\b)");
    out = replace_each(out, wrapper_in, [](const std::smatch &m) { return m[1].str() + ".in(" + m[2].str() + ")"; });
    // Then Funcs: any identifier with a '$' suffix or a wrapper's.
    static const std::regex func(R"([A-Za-z_]\w*(?:\$(?:part)?\d+)(?:_global_wrapper|_wrapper)?(?:\$(?:part)?\d+)?|[A-Za-z_]\w*_global_wrapper)");
    std::string done = replace_each(out, func, [](const std::smatch &m) { return func_name(m[0].str()); });
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
