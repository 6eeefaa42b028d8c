#include "auto_structure.h"

#include <algorithm>
#include <functional>
#include <cctype>
#include <set>

#include "boundary_condition_names.h"
#include "device/error.h"

namespace spyre::autosched {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// The Funcs (Call::Halide) an expression calls, with the element type each call returns.
struct CallCollector : IRVisitor {
    std::map<std::string, Type> calls;
    std::vector<const Call *> all;
    using IRVisitor::visit;
    void visit(const Call *c) override {
        if (c->call_type == Call::Halide) {
            calls.emplace(c->name, c->type);
            all.push_back(c);
        }
        IRVisitor::visit(c);
    }
};

void collect(const Definition &d, CallCollector &c) {
    for (const Expr &e : d.values()) e.accept(&c);
    for (const Expr &e : d.args()) e.accept(&c);
}

const Call *as_call(Expr e) {
    while (const Cast *c = e.as<Cast>()) e = c->value;
    const Call *call = e.as<Call>();
    return call && call->call_type == Call::Halide ? call : nullptr;
}

bool is_var(const Expr &e, const std::string &name) {
    const Variable *v = e.as<Variable>();
    return v && v->name == name;
}

// f(args) += a * b with one reduction variable used by both operands.
std::optional<MatmulShape> matmul_shape(const Function &f) {
    if (f.updates().size() != 1 || f.values().size() != 1) return std::nullopt;
    const Definition &u = f.updates()[0];
    if (!u.schedule().rvars().size() || u.schedule().rvars().size() != 1) return std::nullopt;
    const std::string r = u.schedule().rvars()[0].var;
    for (size_t i = 0; i < u.args().size(); i++)
        if (!is_var(u.args()[i], f.args()[i])) return std::nullopt;
    const Add *add = u.values()[0].as<Add>();
    if (!add) return std::nullopt;
    const Call *self = as_call(add->a);
    Expr prod = add->b;
    if (!self || self->name != f.name()) {
        self = as_call(add->b);
        prod = add->a;
    }
    if (!self || self->name != f.name()) return std::nullopt;
    const Mul *mul = prod.as<Mul>();
    if (!mul) return std::nullopt;
    const Call *a = as_call(mul->a), *w = as_call(mul->b);
    if (!a || !w) return std::nullopt;
    // Each operand indexed by r (directly, or in an index: flash attention's V rows j * tile + r).
    auto uses_r = [&](const Call *c) {
        for (const Expr &e : c->args)
            if (expr_uses_var(e, r)) return true;
        return false;
    };
    if (!uses_r(a) || !uses_r(w)) return std::nullopt;
    // The stage form: A(k, m[, b]), W(n, k[, b]), f(n, m[, b]); a batched f may read A or W (not
    // both: that would be a 2-D matmul repeated) without the batch.
    auto stage = [&](const Call *A, const Call *W) {
        const auto &p = f.args();
        if (p.size() < 2 || p.size() > 3) return false;
        const bool a_batch = A->args.size() == 3, w_batch = W->args.size() == 3;
        if (A->args.size() != (p.size() == 3 && !a_batch ? 2 : p.size())) return false;
        if (W->args.size() != 2 && !(p.size() == 3 && w_batch)) return false;
        if (p.size() == 3 && !a_batch && !w_batch) return false;
        if (!is_var(A->args[0], r)) return false;
        for (size_t i = 1; i < A->args.size(); i++)
            if (!is_var(A->args[i], p[i])) return false;
        if (w_batch && !is_var(W->args[2], p[2])) return false;
        return is_var(W->args[0], p[0]) && is_var(W->args[1], r);
    };
    MatmulShape s;
    s.rvar = r;
    if (stage(w, a)) std::swap(a, w);
    s.a = a->name;
    s.w = w->name;
    s.stage_form = stage(a, w);
    s.w_batched = s.stage_form && w->args.size() == 3;
    return s;
}

// Does every call of update 0 read along f's innermost arg, which the update keeps pure?
bool streams_along_x(const Function &f) {
    if (f.updates().empty() || f.args().empty()) return false;
    const std::string x = f.args()[0];
    bool streams = false;
    for (const Definition &u : f.updates()) {
        bool pure_x = false;
        for (const Expr &a : u.args()) pure_x |= is_var(a, x);
        if (!pure_x) return false;
        CallCollector c;
        for (const Expr &e : u.values()) e.accept(&c);
        // Along the sticks of what it reads: x indexes their stick dimension (in(x, r)); a row
        // reduction out(y) += in(r, y) reads across its y instead. A read without x (m(r), a
        // statistic per row of the rows it sums) is the same for every column: a broadcast.
        for (const Call *call : c.all) {
            if (call->name == f.name()) continue;
            bool uses_x = false;
            for (const Expr &a : call->args) uses_x |= expr_uses_var(a, x);
            if (!uses_x) continue;
            if (!expr_uses_var(call->args[0], x)) return false;
            streams = true;
        }
    }
    return streams;
}

bool inline_reduction_name(const std::string &n) {
    for (const char *base : {"sum", "maximum", "minimum", "product", "argmax", "argmin"}) {
        std::string b(base);
        if (n == b || (n.rfind(b, 0) == 0 && n.size() > b.size() && !std::isalpha((unsigned char)n[b.size()])))
            return true;
    }
    return false;
}

}  // namespace

std::string display_name(const std::string &n) {
    size_t d = n.rfind('$');
    if (d == std::string::npos || d + 1 == n.size()) return n;
    for (size_t i = d + 1; i < n.size(); i++)
        if (!std::isdigit((unsigned char)n[i])) return n;
    return n.substr(0, d);
}

std::map<std::string, Function> pipeline_env(const Func &output) {
    std::map<std::string, Function> env = find_transitive_calls(output.function());
    env[output.name()] = output.function();
    return env;
}

std::string PipelineInfo::shown(const std::string &name) const {
    const StageInfo *s = find(name);
    return s ? s->shown : display_name(name);
}

const StageInfo *PipelineInfo::find(const std::string &name) const {
    for (const StageInfo &s : stages)
        if (s.name == name) return &s;
    return nullptr;
}

PipelineInfo sub_pipeline(const PipelineInfo &info, const std::string &func, std::vector<size_t> *input_index) {
    std::set<std::string> keep{func};
    std::vector<std::string> todo{func};
    while (!todo.empty()) {
        const std::string name = todo.back();
        todo.pop_back();
        if (const StageInfo *s = info.find(name))
            for (const std::string &r : s->reads)
                if (keep.insert(r).second) todo.push_back(r);
    }
    PipelineInfo sub;
    for (const StageInfo &s : info.stages) {
        if (!keep.count(s.name)) continue;
        StageInfo c = s;
        c.is_output = s.name == func;
        c.also_output = false;
        c.consumers.clear();
        for (const std::string &n : s.consumers)
            if (keep.count(n) && !c.is_output) c.consumers.push_back(n);
        sub.stages.push_back(c);
    }
    // The output last, as analyse_pipeline orders a pipeline.
    auto out = std::find_if(sub.stages.begin(), sub.stages.end(), [&](const StageInfo &s) { return s.is_output; });
    if (out != sub.stages.end()) std::rotate(out, out + 1, sub.stages.end());
    for (size_t i = 0; i < info.inputs.size(); i++) {
        if (!keep.count(info.inputs[i].func)) continue;
        InputInfo in = info.inputs[i];
        in.consumers.clear();
        for (const std::string &n : info.inputs[i].consumers)
            if (keep.count(n)) in.consumers.push_back(n);
        in.read_elsewhere = in.consumers.size() != info.inputs[i].consumers.size();
        sub.inputs.push_back(in);
        if (input_index) input_index->push_back(i);
    }
    return sub;
}

const InputInfo *PipelineInfo::find_input_func(const std::string &func) const {
    for (const InputInfo &i : inputs)
        if (i.func == func) return &i;
    return nullptr;
}

PipelineInfo analyse_pipeline(const Func &output, const std::vector<ImageParam> &inputs) {
    if (!output.defined()) throw_error("auto_schedule: the output Func is not defined");
    std::map<std::string, Function> env = pipeline_env(output);
    PipelineInfo info;
    std::map<std::string, std::string> input_of_func;  // input Func name -> ImageParam name
    for (const ImageParam &p : inputs) {
        InputInfo in;
        in.name = p.name();
        in.func = Func(p).name();
        in.dims = p.dimensions();
        in.type = p.type();
        input_of_func[in.func] = in.name;
        info.inputs.push_back(in);
    }
    // Producers first: a depth-first walk from the output.
    std::vector<std::string> order;
    std::set<std::string> seen;
    std::map<std::string, CallCollector> calls;
    std::function<void(const std::string &)> visit = [&](const std::string &name) {
        if (seen.count(name)) return;
        seen.insert(name);
        const Function &f = env.at(name);
        if (input_of_func.count(name)) return;
        if (f.has_extern_definition())
            throw_error("auto_schedule: Func ", display_name(name), " is an extern stage; the autoscheduler schedules Halide "
                        "definitions only");
        // A Tuple is searched as a running state folded over a reduction domain (auto_fold.h):
        // updates of one reduction variable each.
        bool folds = !f.updates().empty();
        for (const Definition &u : f.updates()) folds &= u.schedule().rvars().size() == 1;
        if (f.values().size() != 1 && !folds)
            throw_error("auto_schedule: Func ", display_name(name), " has ", f.values().size(),
                        " values (a Tuple); the autoscheduler searches a Tuple only as a state folded over a "
                        "reduction domain, updated by definitions of one reduction variable each (as "
                        "schedules/flash_attention.h's online softmax)");
        CallCollector &c = calls[name];
        collect(f.definition(), c);
        for (const Definition &u : f.updates()) collect(u, c);
        for (const auto &callee : c.calls)
            if (callee.first != name) visit(callee.first);
        order.push_back(name);
    };
    visit(output.name());
    for (const std::string &name : order) {
        const Function &f = env.at(name);
        StageInfo s;
        s.name = name;
        const std::optional<MadeFuncName> made = made_func_name(f);
        s.shown = made ? made->token : display_name(name);
        s.function = f;
        s.args = f.args();
        s.type = f.output_types()[0];
        s.updates = int(f.updates().size());
        s.values = int(f.values().size());
        s.is_output = name == output.name();
        s.matmul = matmul_shape(f);
        s.streams_x = streams_along_x(f);
        if (!s.args.empty() && s.updates == 0) {
            struct Periods : IRVisitor {
                std::string x;
                std::set<int64_t> found;
                using IRVisitor::visit;
                void visit(const Mod *op) override {
                    const int64_t *b = as_const_int(op->b);
                    if (b && *b > 1 && is_var(op->a, x)) found.insert(*b);
                    IRVisitor::visit(op);
                }
            } periods;
            periods.x = s.args[0];
            for (const Expr &v : f.values()) v.accept(&periods);
            // The longest, when it is a multiple of the others (x % 2 of interleaved pairs inside x
            // % head_dim: the pairs are a pattern of lanes within each head).
            if (!periods.found.empty()) {
                const int64_t longest = *periods.found.rbegin();
                bool nested = true;
                for (int64_t q : periods.found) nested &= longest % q == 0;
                if (nested) s.stick_period = int(longest);
            }
        }
        if (!s.args.empty())
            for (const Call *c : calls[name].all) {
                if (c->name == name) continue;
                for (size_t j = 1; j < c->args.size(); j++) s.transposes |= expr_uses_var(c->args[j], s.args[0]);
            }
        if (s.updates == 0 && !s.args.empty() && calls[name].calls.size() == 1 &&
            input_of_func.count(calls[name].calls.begin()->first)) {
            bool at_own_args = true;
            for (const Call *c : calls[name].all) {
                at_own_args &= c->args.size() == s.args.size();
                for (size_t j = 0; at_own_args && j < c->args.size(); j++) at_own_args &= is_var(c->args[j], s.args[j]);
            }
            if (at_own_args) s.elementwise_input = calls[name].calls.begin()->first;
        }
        if (s.args.size() >= 2)
            for (const Call *c : calls[name].all)
                if (input_of_func.count(c->name) && !c->args.empty() && expr_uses_var(c->args[0], s.args.back()))
                    for (InputInfo &in : info.inputs) in.sticks_along_rows |= in.func == c->name;
        // Gathers: a call whose args read a Func or an input (its table), and what they read (its ids).
        for (const Call *c : calls[name].all) {
            struct Reads : IRVisitor {
                std::set<std::string> names;
                using IRVisitor::visit;
                void visit(const Call *op) override {
                    if (op->call_type == Call::Halide || op->call_type == Call::Image) names.insert(op->name);
                    IRVisitor::visit(op);
                }
            } positions;
            for (const Expr &a : c->args) a.accept(&positions);
            if (positions.names.empty()) continue;
            for (InputInfo &in : info.inputs)
                in.in_gather |= in.func == c->name || in.name == c->name || positions.names.count(in.func) ||
                                positions.names.count(in.name);
        }
        for (const Call *c : calls[name].all) {
            if (c->args.empty() || s.args.empty()) continue;
            const Div *d = c->args[0].as<Div>();
            const Add *a = d ? d->a.as<Add>() : nullptr;
            const Variable *v = a ? a->a.as<Variable>() : nullptr;
            const int64_t *k = d ? as_const_int(d->b) : nullptr, *off = a ? as_const_int(a->b) : nullptr;
            if (v && v->name == s.args[0] && k && *k > 1 && *k <= 64 && off && *off != 0)
                s.upsample = std::max(s.upsample, int(*k));
        }
        for (const auto &callee : calls[name].calls) {
            if (callee.first == name) continue;
            s.reads.push_back(callee.first);
            int b = callee.second.bytes();
            s.min_read_bytes = s.min_read_bytes ? std::min(s.min_read_bytes, b) : b;
        }
        info.stages.push_back(s);
    }
    // Image calls that reach a buffer through no ImageParam we were given.
    for (StageInfo &s : info.stages) {
        struct Images : IRVisitor {
            std::set<std::string> names;
            using IRVisitor::visit;
            void visit(const Call *c) override {
                if (c->call_type == Call::Image) names.insert(c->name);
                IRVisitor::visit(c);
            }
        } im;
        for (const Expr &v : s.function.values()) v.accept(&im);
        for (const Definition &u : s.function.updates())
            for (const Expr &v : u.values()) v.accept(&im);
        for (const std::string &n : im.names) {
            bool known = false;
            for (const InputInfo &in : info.inputs) known |= in.name == n;
            if (!known)
                throw_error("auto_schedule: Func ", display_name(s.name), " reads buffer '", n,
                            "', which is not among the inputs given");
        }
    }
    for (StageInfo &s : info.stages)
        for (const std::string &r : s.reads) {
            for (StageInfo &p : info.stages)
                if (p.name == r) p.consumers.push_back(s.name);
            for (InputInfo &in : info.inputs)
                if (in.func == r) in.consumers.push_back(s.name);
        }
    for (StageInfo &s : info.stages)
        s.folded = !s.is_output && s.updates > 0 && s.consumers.size() == 1 && inline_reduction_name(s.name);
    // A folded reduction's args are in the order Halide found its free variables (sum() in
    // out(d, h) = sum(e(r, h) * v(d, r)) is sum(h, d)), not its consumer's: whether a stage reads
    // across its sticks is decided through the calls of the reductions it folds in, at its own args.
    // (A one-dimensional stage's only arg is its rows: m(y) = sum(in(r, y)) reads no transpose.)
    for (StageInfo &s : info.stages) {
        s.reads_across_sticks = s.transposes;
        if (s.folded || s.args.size() < 2) continue;
        bool across = false;
        auto check = [&](const std::vector<Expr> &args) {
            for (size_t j = 1; j < args.size(); j++) across |= expr_uses_var(args[j], s.args[0]);
        };
        for (const Call *c : calls[s.name].all) {
            if (c->name == s.name) continue;
            const StageInfo *f = info.find(c->name);
            if (!f || !f->folded || f->args.size() != c->args.size()) {
                check(c->args);
                continue;
            }
            std::map<std::string, Expr> at;
            for (size_t i = 0; i < f->args.size(); i++) at[f->args[i]] = c->args[i];
            for (const Call *inner : calls[f->name].all) {
                if (inner->name == f->name) continue;
                std::vector<Expr> args;
                for (const Expr &a : inner->args) args.push_back(substitute(at, a));
                check(args);
            }
        }
        s.reads_across_sticks = across;
    }
    return info;
}

std::map<std::string, int64_t> stage_rows(const PipelineInfo &info, const std::vector<int64_t> &output_shape) {
    std::map<std::string, Box> region;  // by stage: the box its consumers read
    {
        Box out;
        for (int64_t e : output_shape) out.push_back(Interval(0, Expr(int(e - 1))));
        region[info.output().name] = out;
    }
    for (auto it = info.stages.rbegin(); it != info.stages.rend(); ++it) {
        const StageInfo &s = *it;
        auto r = region.find(s.name);
        if (r == region.end()) continue;
        Scope<Interval> scope;
        for (size_t i = 0; i < s.args.size() && i < r->second.size(); i++) scope.push(s.args[i], r->second[i]);
        auto reads = [&](const Expr &e, const Scope<Interval> &in) {
            for (const auto &kv : boxes_required(e, in)) {
                if (kv.first == s.name || !info.find(kv.first)) continue;  // its own updates, and inputs
                Box &b = region[kv.first];
                if (b.empty()) b = kv.second;
                else merge_boxes(b, kv.second);
            }
        };
        for (const Expr &v : s.function.values()) reads(v, scope);
        for (const Definition &u : s.function.updates()) {
            Scope<Interval> with_r;
            with_r.set_containing_scope(&scope);
            for (const ReductionVariable &rv : u.schedule().rvars())
                with_r.push(rv.var, Interval(rv.min, simplify(rv.min + rv.extent - 1)));
            for (const Expr &a : u.args()) reads(a, with_r);
            for (const Expr &v : u.values()) reads(v, with_r);
        }
    }
    std::map<std::string, int64_t> rows;
    for (const StageInfo &s : info.stages) {
        auto r = region.find(s.name);
        if (r == region.end() || r->second.empty()) continue;
        const Interval &last = r->second[r->second.size() - 1];
        if (!last.is_bounded()) continue;
        const Expr extent = simplify(last.max - last.min + 1);
        if (const int64_t *e = as_const_int(extent)) rows[s.name] = *e;
    }
    return rows;
}

}  // namespace spyre::autosched
