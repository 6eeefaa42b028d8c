#include "auto_layouts.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>

namespace spyre::autosched {

namespace {

std::vector<int> order_of(const DeviceLayout &l, int rank) {
    return l.order.empty() ? default_layout(rank).order : l.order;
}

std::string order_text(const std::vector<int> &order, const char *sep = ",") {
    std::string s;
    for (int d : order) s += (s.empty() ? "" : sep) + std::to_string(d);
    return s;
}

}  // namespace

std::vector<DeviceLayout> layout_choices(const LayoutArg &arg) {
    std::vector<DeviceLayout> out;
    if (!arg.free || arg.rank < 2 || arg.rank > 4 || arg.layout.stick_dim != 0) return out;
    const std::vector<int> own = order_of(arg.layout, arg.rank);
    // The other dims in every order, from the row-major one, and the stick count anywhere among them
    // (ranks 2 and 3) or innermost and outermost (rank 4: 12 orders rather than 24).
    std::vector<int> perm;
    for (int d = arg.rank - 1; d >= 1; d--) perm.push_back(d);
    do {
        for (int at = int(perm.size()); at >= 0; at--) {
            if (arg.rank == 4 && at != 0 && at != int(perm.size())) continue;
            std::vector<int> order = perm;
            order.insert(order.begin() + at, 0);
            if (order != own) out.push_back(DeviceLayout{0, order});
        }
    } while (std::prev_permutation(perm.begin(), perm.end()));
    return out;
}

std::vector<Candidate> with_layout_variants(const std::vector<Candidate> &cs, const std::vector<LayoutArg> &args) {
    std::vector<std::vector<DeviceLayout>> choices;
    size_t combos = 1, singles = 0;
    for (const LayoutArg &a : args) {
        choices.push_back(layout_choices(a));
        combos *= choices.back().size() + 1;
        singles += choices.back().size();
    }
    std::vector<Candidate> out = cs;
    if (singles == 0) return out;
    // The assignments: choice index per argument (0: the caller's layout, k: choices[k - 1]).
    std::vector<std::vector<size_t>> picks;
    if (combos - 1 <= 8) {
        std::vector<size_t> p(args.size(), 0);
        for (;;) {
            size_t a = 0;
            while (a < args.size() && ++p[a] > choices[a].size()) p[a++] = 0;
            if (a == args.size()) break;
            picks.push_back(p);
        }
    } else {
        for (size_t a = 0; a < args.size(); a++)
            for (size_t k = 1; k <= choices[a].size(); k++) {
                std::vector<size_t> p(args.size(), 0);
                p[a] = k;
                picks.push_back(p);
            }
    }
    for (const Candidate &base : cs)
        for (const std::vector<size_t> &p : picks) {
            Candidate v = base;
            v.layouts.clear();
            for (size_t a = 0; a < args.size(); a++) {
                v.layouts.push_back(p[a] ? choices[a][p[a] - 1] : args[a].layout);
                if (p[a]) v.set(args[a].name + ".layout", order_text(choices[a][p[a] - 1].order));
            }
            v.refines = base.summary();
            out.push_back(std::move(v));
        }
    return out;
}

std::vector<Candidate> with_intermediate_layout_variants(const std::vector<Candidate> &cs, const PipelineInfo &info) {
    std::vector<Candidate> out = cs;
    for (const Candidate &base : cs)
        for (size_t i = 0; i < base.directives.size() && base.refines.empty(); i++) {
            const Directive &d = base.directives[i];
            if (d.kind != Directive::DeviceRoot) continue;
            const StageInfo *st = info.find(d.func);
            if (!st || st->args.size() < 2 || st->args.size() > 4) continue;
            std::vector<std::string> rest(st->args.begin() + 1, st->args.end());
            std::sort(rest.begin(), rest.end());
            do {
                std::vector<std::string> order{st->args[0]};
                order.insert(order.end(), rest.begin(), rest.end());
                // The stick count innermost (k = 0), or just outside dim k: every place at rank 2
                // and 3, the outermost at rank 4.
                for (int k = 0; k < int(order.size()); k++) {
                    if (order.size() == 4 && k != 0 && k != 3) continue;
                    if (order == st->args && k == 0) continue;
                    Candidate v = base;
                    Directive layout{Directive::DeviceLayout, d.func, order, {}, ""};
                    if (k > 0) layout.ints = {k};
                    v.directives.insert(v.directives.begin() + std::ptrdiff_t(i) + 1, layout);
                    // Its loops in the same order (the innermost loop each dim was split into), so
                    // that each core writes its share in long runs.
                    if (st->updates == 0 && order != st->args) {
                        std::map<std::string, std::string> inner;
                        for (const std::string &a : st->args) inner[a] = a;
                        for (const Directive &o : base.directives)
                            if (o.func == d.func && (o.kind == Directive::Split || o.kind == Directive::HSplit))
                                for (auto &kv : inner)
                                    if (kv.second == o.vars.at(0)) kv.second = o.vars.at(2);
                        std::vector<std::string> loops;
                        for (size_t j = 1; j < order.size(); j++) loops.push_back(inner[order[j]]);
                        v.directives.push_back(Directive{Directive::HReorder, d.func, loops, {}, ""});
                    }
                    std::string dims;
                    for (const std::string &a : order) dims += (dims.empty() ? "" : ",") + display_name(a);
                    if (k > 0) dims += ";sticks>" + display_name(order[size_t(k)]);
                    v.set(info.shown(d.func) + ".layout", dims);
                    v.refines = base.summary();
                    out.push_back(std::move(v));
                }
            } while (std::next_permutation(rest.begin(), rest.end()));
        }
    return out;
}

CompileOptions with_layouts(const CompileOptions &opt, const Candidate &c) {
    CompileOptions o = opt;
    if (c.layouts.size() != o.inputs.size() + 1) return o;
    for (size_t i = 0; i < o.inputs.size(); i++) o.inputs[i].layout = c.layouts[i];
    o.output.layout = c.layouts.back();
    return o;
}

std::string layouts_key(const Candidate &c) {
    std::string k;
    for (const DeviceLayout &l : c.layouts) k += layout_to_string(l) + ";";
    return k;
}

std::string layouts_cpp(const CompileOptions &opt, const std::string &var, const std::string &prefix) {
    std::ostringstream os;
    auto line = [&](const std::string &what, const TensorSpec &t) {
        const int rank = int(t.shape.size());
        if (t.layout.stick_dim == 0 && order_of(t.layout, rank) == default_layout(rank).order) return;
        os << prefix << var << "." << what << ".layout = {" << t.layout.stick_dim << ", {" << order_text(order_of(t.layout, rank), ", ")
           << "}};\n";
    };
    for (size_t i = 0; i < opt.inputs.size(); i++) line("inputs[" + std::to_string(i) + "]", opt.inputs[i]);
    line("output", opt.output);
    return os.str();
}

}  // namespace spyre::autosched
