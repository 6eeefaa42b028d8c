#include "ktir_ssa.h"

#include <algorithm>
#include <functional>
#include <set>

#include "device/error.h"

namespace spyre::ktir {

void make_names_unique(Function &f) {
    std::vector<std::map<std::string, std::string>> scopes(1);
    std::map<std::string, int> count;
    auto def = [&](std::string &name, int line) {
        if (scopes.back().count(name)) throw_error("line ", line, ": value %", name, " is defined twice");
        int k = count[name]++;
        std::string u = k ? name + "@" + std::to_string(k) : name;
        scopes.back()[name] = u;
        name = u;
    };
    auto ref = [&](std::string &name, const Op &op) {
        for (size_t i = scopes.size(); i-- > 0;) {
            auto it = scopes[i].find(name);
            if (it != scopes[i].end()) {
                name = it->second;
                return;
            }
        }
        throw_error("line ", op.line, ": ", op.name, ": value %", name, " is not defined");
    };
    std::function<void(IExpr &, const Op &, int)> ref_expr = [&](IExpr &e, const Op &op, int depth) {
        if (depth > 64) throw_error("line ", op.line, ": expression nested too deeply");
        if (e.kind == IExpr::Value) ref(e.name, op);
        for (IExpr &a : e.args) ref_expr(a, op, depth + 1);
    };
    std::function<void(Region &)> walk = [&](Region &r) {
        for (Op &op : r.ops) {
            for (std::string &o : op.operands) ref(o, op);
            for (IExpr &e : op.indices) ref_expr(e, op, 0);
            for (Region &sub : op.regions) {
                scopes.emplace_back();
                for (std::string &a : sub.args) def(a, op.line);
                walk(sub);
                scopes.pop_back();
            }
            for (std::string &res : op.results) def(res, op.line);
        }
    };
    for (std::string &a : f.args) def(a, f.line);
    walk(f.body);
}

namespace {

void expr_values(const IExpr &e, std::vector<std::string> &out) {
    if (e.kind == IExpr::Value) out.push_back(e.name);
    for (const IExpr &a : e.args) expr_values(a, out);
}

}  // namespace

SsaInfo analyse_ssa(const Function &f) {
    SsaInfo s;
    int counter = 0;
    // Positions first: a loop's end must be known when the uses inside it are recorded.
    std::function<void(const Region &)> number = [&](const Region &reg) {
        for (size_t i = 0; i < reg.ops.size(); i++) {
            const Op &op = reg.ops[i];
            OpPosition &p = s.ops[&op];
            p.index = counter++;
            p.parent = &reg;
            p.pos = i;
            for (const Region &sub : op.regions) number(sub);
            p.end = counter++;
        }
    };
    number(f.body);
    std::vector<std::pair<int, int>> loops;  // enclosing scf.for ops, outermost first
    auto use = [&](const std::string &name, const Op *op, int at) {
        ValueUses &d = s.values[name];
        d.users.push_back(op);
        int last = at;
        // A value defined outside a loop and used inside it lives until the loop ends.
        for (const auto &l : loops)
            if (l.first <= at && at <= l.second && d.def < l.first) {
                last = std::max(last, l.second);
                break;
            }
        d.last = std::max(d.last, last);
    };
    for (const std::string &a : f.args) s.values[a].def = -1;
    std::function<void(const Region &)> walk = [&](const Region &reg) {
        for (const Op &op : reg.ops) {
            const OpPosition &p = s.ops[&op];
            for (const std::string &res : op.results) {
                s.values[res].def = p.index;
                s.values[res].last = p.index;
            }
            bool loop = op.name == "scf.for";
            // scf.for's lower bound is read in every iteration (the induction value is lb + i * step):
            // it lives until the loop ends, like a value the body reads.
            for (size_t i = 0; i < op.operands.size(); i++) use(op.operands[i], &op, loop && i == 0 ? p.end : p.index);
            std::vector<std::string> iv;
            for (const IExpr &e : op.indices) expr_values(e, iv);
            for (const std::string &o : iv) use(o, &op, p.index);
            if (loop) loops.push_back({p.index, p.end});
            for (const Region &sub : op.regions) {
                for (const std::string &a : sub.args) {
                    s.values[a].def = p.index;
                    s.values[a].last = p.index;
                }
                walk(sub);
            }
            if (loop) loops.pop_back();
        }
    };
    walk(f.body);
    return s;
}

}  // namespace spyre::ktir
