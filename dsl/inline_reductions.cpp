#include "inline_reductions.h"

#include <algorithm>
#include <map>
#include <string>

#include "compute_level.h"
#include "directives.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using Internal::Function;

namespace {

// Halide names an inline reduction's Func after it: sum, sum$1, maximum, ...
bool is_inline_reduction(const Function &g) {
    const std::string base = g.name().substr(0, g.name().find('$'));
    for (const char *r : {"sum", "product", "maximum", "minimum"})
        if (base == r) return true;
    return false;
}

// The pure variable of c whose stick-vectorized loop every read of g in c's pure definition takes as
// g's first argument, or "" when there is none (g read elsewhere, at an offset, or c not vectorized).
std::string stick_loop_reading(const Function &c, const std::string &g) {
    struct Reads : Internal::IRVisitor {
        std::string g, v;
        bool ok = true;
        size_t count = 0;
        using IRVisitor::visit;
        void visit(const Internal::Call *call) override {
            if (call->call_type == Internal::Call::Halide && call->name == g) {
                count++;
                const auto *a = call->args.empty() ? nullptr : call->args[0].as<Internal::Variable>();
                if (!a || (!v.empty() && a->name != v)) ok = false;
                else v = a->name;
            }
            IRVisitor::visit(call);
        }
    } reads;
    reads.g = g;
    for (const Expr &e : c.definition().values()) e.accept(&reads);
    // A read of g in one of c's updates (inside a reduction of c's) is left to the schedule.
    const size_t pure_reads = reads.count;
    for (const Internal::Definition &u : c.updates())
        for (const Expr &e : u.values()) e.accept(&reads);
    if (reads.count != pure_reads) return "";
    if (!reads.ok || reads.v.empty()) return "";
    bool pure = false;
    for (const std::string &a : c.args()) pure |= a == reads.v;
    bool vectorized = false;
    const std::string lanes = reads.v + kLanesSuffix;
    for (const Internal::Dim &d : c.definition().schedule().dims())
        vectorized |= d.for_type == Internal::ForType::Vectorized &&
                      (d.var == lanes || Internal::ends_with(d.var, "." + lanes));
    return pure && vectorized ? reads.v : "";
}

// The lanes of c's vector loop along v (its split factor).
int consumer_lanes(const Function &c, const std::string &v) {
    const std::string lanes = v + kLanesSuffix;
    for (const Internal::Split &sp : c.definition().schedule().splits())
        if (sp.inner == lanes || Internal::ends_with(sp.inner, "." + lanes))
            if (const int64_t *f = Internal::as_const_int(sp.factor)) return int(*f);
    return 1;
}

}  // namespace

void schedule_inline_reductions(const std::vector<Func> &outputs, const MachineDesc &machine) {
    std::map<std::string, Function> all;
    for (const Func &o : outputs) {
        all.emplace(o.name(), o.function());
        for (const auto &kv : Internal::find_transitive_calls(o.function())) all.emplace(kv.first, kv.second);
    }
    for (const auto &kv : all) {
        const Function &g = kv.second;
        if (!is_inline_reduction(g) || !g.has_update_definition() || !compute_level_of(g).is_inlined())
            continue;
        std::vector<Function> consumers;
        for (const auto &c : all)
            if (c.first != g.name() && Internal::find_direct_calls(c.second).count(g.name())) consumers.push_back(c.second);
        if (consumers.size() != 1) continue;
        const std::string v = stick_loop_reading(consumers[0], g.name());
        if (v.empty()) continue;
        Func f(g);
        // Its taps along the stick: an RVar's loop would shift each vector by a run-time amount.
        bool taps = false;
        for (int i = 0; i < f.num_update_definitions(); i++) taps |= unroll_stick_offsets(f, i, f.args()[0].name());
        // A stencil that reads only inputs (through inlined Funcs such as a boundary condition) is
        // computed once per row of the consumer, in LX: inside the stick loop each stick would
        // stage its own halo, past the row's ends. Any other inline reduction stays where Halide
        // puts it, inside the consumer's vector loop (a column reduction works there, and a
        // placement of its producers may rely on it).
        if (!taps) continue;
        bool reads_inputs_only = true;
        for (const auto &callee : Internal::find_direct_calls(g))
            if (callee.first != g.name())  // its update reads itself
                reads_inputs_only &= compute_level_of(callee.second).is_inlined() && !callee.second.has_update_definition();
        const std::vector<Internal::Dim> &dims = consumers[0].definition().schedule().dims();
        size_t at = 0;
        while (at < dims.size() && dims[at].var != v && !Internal::ends_with(dims[at].var, "." + v)) at++;
        if (!reads_inputs_only || at + 1 >= dims.size()) continue;
        if (dims[at + 1].var == Var::outermost().name())
            f.compute_root();
        else
            f.compute_at(Func(consumers[0]), Var(dims[at + 1].var));
        // As many of its sticks as the consumer's vector has lanes, as Halide vectorized it there.
        const int lanes = consumer_lanes(consumers[0], v);
        const int own = int(machine.stick_bytes / f.output_types()[0].bytes());
        f.store_in(MemoryType::VTCM);
        schedule(f, machine).stick_vectorize(f.args()[0], std::max(1, lanes / own));
    }
}

}  // namespace spyre
