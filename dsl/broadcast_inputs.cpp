#include "broadcast_inputs.h"

#include <map>
#include <set>
#include <string>

#include "compute_level.h"
#include "directives.h"

namespace spyre {

using namespace Halide;
using Internal::Function;

namespace {

// The pure Vars of a definition that a vectorized loop runs over: Halide names a loop split from x
// "x.<name>" (x.x_lanes, x.xi.xi_lanes), and calls in the definition index by x itself.
std::set<std::string> vectorized_vars(const Internal::Definition &d) {
    std::set<std::string> vs;
    for (const Internal::Dim &dim : d.schedule().dims())
        if (dim.for_type == Internal::ForType::Vectorized) vs.insert(dim.var.substr(0, dim.var.find('.')));
    return vs;
}

// How a pipeline reads one input: whether every read is a broadcast in a vector Func.
struct InputReads : Internal::IRVisitor {
    std::set<std::string> input;      // the input, and its identity wrappers (ImageParam::in())
    std::set<std::string> lane_vars;  // of the definition being visited
    int index_depth = 0;              // inside another call's arguments
    int reads = 0;
    bool broadcast_only = true;
    bool elementwise_only = true;  // every read in a Func with no vectorized loop, none an index
    using IRVisitor::visit;
    // A Let whose value follows a vectorized Var follows it too (t = x % 64; cos(t, p)).
    void visit(const Internal::Let *l) override {
        l->value.accept(this);
        bool follows = false;
        for (const std::string &v : lane_vars) follows |= Internal::expr_uses_var(l->value, v);
        const bool added = follows && lane_vars.insert(l->name).second;
        l->body.accept(this);
        if (added) lane_vars.erase(l->name);
    }
    void visit(const Internal::Call *c) override {
        if ((c->call_type == Internal::Call::Image || c->call_type == Internal::Call::Halide) && input.count(c->name)) {
            reads++;
            if (lane_vars.empty() || index_depth > 0) broadcast_only = false;
            if (!lane_vars.empty() || index_depth > 0) elementwise_only = false;
            for (const Expr &a : c->args)
                for (const std::string &v : lane_vars) broadcast_only &= !Internal::expr_uses_var(a, v);
        }
        const bool indexes = c->call_type == Internal::Call::Image || c->call_type == Internal::Call::Halide;
        index_depth += indexes;
        for (const Expr &a : c->args) a.accept(this);
        index_depth -= indexes;
    }
};

bool computed_at_root(const Function &f) { return compute_level_of(f).is_root(); }
bool inlined(const Function &f) { return compute_level_of(f).is_inlined() && !f.has_update_definition(); }

// f is an inlined copy of the input, f(x, y) = input(x, y) (what ImageParam::in() makes).
bool is_identity_wrapper(const Function &f, const std::string &input) {
    if (!inlined(f) || f.definition().values().size() != 1) return false;
    const auto *c = f.definition().values()[0].as<Internal::Call>();
    if (!c || c->call_type != Internal::Call::Image || c->name != input || c->args.size() != f.args().size()) return false;
    for (size_t i = 0; i < c->args.size(); i++) {
        const auto *v = c->args[i].as<Internal::Variable>();
        if (!v || v->name != f.args()[i]) return false;
    }
    return true;
}

}  // namespace

bool stage_broadcast_inputs(const Func &output, const std::vector<ImageParam> &inputs, const std::vector<TensorSpec> &specs,
                            const MachineDesc &machine) {
    bool staged_any = false;
    std::map<std::string, Function> funcs = Internal::find_transitive_calls(output.function());
    funcs.emplace(output.name(), output.function());
    for (size_t i = 0; i < inputs.size() && i < specs.size(); i++) {
        int64_t bytes = inputs[i].type().bytes();
        for (int64_t e : specs[i].shape) bytes *= e;
        if (bytes > kBroadcastInputBytes) continue;
        InputReads reads;
        reads.input.insert(inputs[i].name());
        bool staged = false;  // by the schedule: a wrapper (in(), stage_all_in_lx) of the input's own Func
        for (const auto &kv : funcs)
            if (is_identity_wrapper(kv.second, inputs[i].name())) {
                reads.input.insert(kv.first);
                staged |= !kv.second.schedule().wrappers().empty();
            }
        if (staged) continue;
        std::set<std::string> readers;  // the Funcs whose code reads it (an inlined reader's consumers)
        for (const auto &kv : funcs) {
            const Function &f = kv.second;
            if (reads.input.count(kv.first)) continue;
            const int before = reads.reads;
            reads.lane_vars = vectorized_vars(f.definition());
            for (const Expr &e : f.definition().values()) e.accept(&reads);
            for (const Internal::Definition &u : f.updates()) {
                reads.lane_vars = vectorized_vars(u);
                for (const Expr &e : u.values()) e.accept(&reads);
            }
            if (reads.reads > before) readers.insert(kv.first);
        }
        // A vector of parameters (one per row, head or channel) read as broadcasts, or a small input
        // of any rank read one element at a time (an unvectorized Func reading in(x / 2, y)).
        const bool broadcast = specs[i].shape.size() == 1 && reads.broadcast_only;
        if (reads.reads == 0 || !(broadcast || reads.elementwise_only)) continue;
        // A Func computed at root runs before the output's loops, where the copy is made.
        bool inside_output = true;
        for (std::set<std::string> seen; !readers.empty();) {
            const std::string f = *readers.begin();
            readers.erase(readers.begin());
            if (!seen.insert(f).second || f == output.name()) continue;
            if (!inlined(funcs.at(f))) {
                inside_output &= !computed_at_root(funcs.at(f));
                continue;
            }
            for (const auto &kv : funcs)
                if (Internal::find_direct_calls(kv.second).count(f)) readers.insert(kv.first);
        }
        if (!inside_output) continue;
        stage_all_in_lx(inputs[i], output, Var::outermost(), machine);
        staged_any = true;
    }
    return staged_any;
}

}  // namespace spyre
