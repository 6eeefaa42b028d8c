#include "auto_directives.h"

#include "boundary_condition_names.h"
#include "device/error.h"
#include "spyre_intrinsics.h"
#include "directives.h"

namespace spyre::autosched {

using namespace Halide;

namespace {

Func lookup(const std::map<std::string, Func> &funcs, const std::string &name, const char *what) {
    auto it = funcs.find(name);
    if (it == funcs.end()) throw_error("auto_schedule: ", what, " '", name, "' is not in the pipeline");
    return it->second;
}

VarOrRVar var_of(const Func &f, const std::string &name, bool update) {
    if (name == kOutermost) return Var::outermost();
    // In an update, a name that is none of the Func's pure args is a reduction variable (the RDom's,
    // or one split or renamed from it).
    if (update) {
        bool pure = false;
        for (const Var &a : f.args()) pure |= a.name() == name;
        if (!pure) return RVar(name);
    }
    return Var(name);
}

std::vector<VarOrRVar> vars_of(const Func &f, const std::vector<std::string> &names, bool update) {
    std::vector<VarOrRVar> v;
    for (const std::string &n : names) v.push_back(var_of(f, n, update));
    return v;
}

// Which of a directive's ints is a factor that a Param can stand for: the split factors and the
// core count of a ring split (the others change the loops' structure or names).
bool has_factor(const Directive &d) {
    if (d.fixed) return false;
    switch (d.kind) {
    case Directive::RingSplit:
    case Directive::Split:
    case Directive::HSplit:
    case Directive::HUpdateSplit: return true;
    default: return false;
    }
}

}  // namespace

namespace {
std::string key_of(const std::vector<Directive> &ds, bool blank_factors) {
    std::string key;
    for (const Directive &d : ds) {
        key += std::to_string(int(d.kind)) + "|" + d.func + "|" + d.at_func + "|" + std::to_string(d.update);
        for (const std::string &v : d.vars) key += "|" + v;
        for (size_t i = 0; i < d.ints.size(); i++)
            key += "|" + (blank_factors && i == 0 && has_factor(d) ? "?" : std::to_string(d.ints[i]));
        key += ";";
    }
    return key;
}
}  // namespace

std::string structure_key(const std::vector<Directive> &ds) { return key_of(ds, true); }
std::string directives_key(const std::vector<Directive> &ds) { return key_of(ds, false); }

namespace {
std::string factor_name(size_t i) { return "auto_factor" + std::to_string(i); }
}  // namespace

std::map<std::string, int> factor_values(const std::vector<Directive> &ds) {
    std::map<std::string, int> v;
    for (const Directive &d : ds)
        if (has_factor(d)) v[factor_name(v.size())] = d.ints.at(0);
    return v;
}

void apply_directives(const std::vector<Directive> &ds, const std::map<std::string, Func> &pipeline_funcs,
                      const std::map<std::string, Func> &input_funcs, const MachineDesc &m, FactorParams *factors) {
    std::map<std::string, Func> funcs = pipeline_funcs;  // and the clones CloneIn names
    // Whether d's factor becomes a Param: not a fixed one, whose constant is part of the structure.
    const auto symbolic = [&](const Directive &d) { return factors && has_factor(d); };
    // The factor of d as a new Param bound to its value.
    auto param = [&](const Directive &d) {
        Param<int> p(factor_name(factors->params.size()));
        factors->params.push_back(p);
        factors->values[p.name()] = d.ints.at(0);
        return p;
    };
    for (const Directive &d : ds) {
        if (d.kind == Directive::StageAllInLx) {
            Func in = lookup(input_funcs, d.func, "input");
            Func at = lookup(funcs, d.at_func, "Func");
            Func w = in.in();
            // What stage_all_in_lx does for an ImageParam, on its Func (the ImageParam of a copy
            // of the pipeline is the original's; its Func is the copy's).
            Var v = d.vars[0] == kOutermost ? Var::outermost() : phased_loop_var(at, Var(d.vars[0]));
            w.compute_at(at, v).store_in(MemoryType::VTCM);
            Type t = w.output_types()[0];
            const Var x = w.args()[0], lanes_of_x(x.name() + kLanesSuffix);
            w.split(x, x, lanes_of_x, int(m.stick_bytes / t.bytes()), TailStrategy::RoundUp).vectorize(lanes_of_x);
            if (d.vars.size() > 1) w.store_at(at, d.vars[1] == kOutermost ? Var::outermost() : Var(d.vars[1]));
            continue;
        }
        if (d.kind == Directive::StageInLxAt) {
            Func at = lookup(funcs, d.at_func, "Func");
            Func w = lookup(input_funcs, d.func, "input").in(at);
            w.compute_at(LoopLevel(at, var_of(at, d.vars.at(0), true))).store_in(MemoryType::VTCM);
            schedule(w, m).stick_vectorize(w.args()[0]);
            continue;
        }
        Func f = lookup(funcs, d.func, "Func");
        if (d.kind == Directive::CloneIn) {
            const std::string &alias = d.vars.at(0);
            if (funcs.count(alias)) throw_error("auto_schedule: clone name '", alias, "' is already a Func of the pipeline");
            funcs[alias] = f.clone_in(lookup(funcs, d.at_func, "Func"));
            continue;
        }
        auto var = [&](int i) { return d.vars.at(i) == kOutermost ? Var::outermost() : Var(d.vars.at(i)); };
        switch (d.kind) {
        case Directive::RingSplit:
            if (symbolic(d)) schedule(f, m).ring_split(var(0), param(d), std::max(0, d.ints.at(1)));
            else if (d.ints.at(1) > 0) schedule(f, m).ring_split(var(0), d.ints[0], d.ints[1]);
            else schedule(f, m).ring_split(var(0), d.ints[0]);
            break;
        case Directive::Split:
            if (symbolic(d)) schedule(f, m).split(var(0), var(1), var(2), param(d));
            else schedule(f, m).split(var(0), var(1), var(2), d.ints.at(0));
            break;
        case Directive::StickVectorize: schedule(f, m).stick_vectorize(var(0), d.ints.at(0)); break;
        case Directive::StoreAt: schedule(f, m).scratchpad_store_at(lookup(funcs, d.at_func, "Func"), var(0)); break;
        case Directive::LxRoot: schedule(f, m).scratchpad_root(); break;
        case Directive::DeviceRoot: schedule(f, m).device_root(); break;
        case Directive::DeviceLayout: {
            std::vector<Var> order;
            for (const std::string &v : d.vars) order.push_back(Var(v));
            if (d.ints.empty()) {
                schedule(f, m).device_layout(order);
            } else {
                if (d.ints[0] < 0 || d.ints[0] >= int(order.size()))
                    throw_error(func_subject(f), ": device_layout's stick count is placed outside dim ", d.ints[0],
                                " of its ", order.size());
                schedule(f, m).device_layout(order, order[size_t(d.ints[0])]);
            }
            break;
        }
        case Directive::PeMatmul: schedule(f, m).pe_matmul(RVar(d.vars.at(0))); break;
        case Directive::OnPe: schedule(f, m).on_pe(RVar(d.vars.at(0)), d.update); break;
        case Directive::RingShare: schedule(f, m).ring_share(RVar(d.vars.at(0)), d.ints.at(0)); break;
        case Directive::DmaPhases: schedule(f, m).dma_phases(var(0)); break;
        case Directive::RingSplitReduction:
            schedule(f, m).ring_split_reduction(RVar(d.vars.at(0)), d.ints.at(0), d.ints.at(1), d.ints.at(2) != 0);
            break;
        case Directive::HSplit: {
            const TailStrategy tail = d.ints.size() > 1 && d.ints[1] == 1 ? TailStrategy::RoundUp : TailStrategy::Auto;
            if (symbolic(d)) f.split(var(0), var(1), var(2), param(d), tail);
            else f.split(var(0), var(1), var(2), d.ints.at(0), tail);
            break;
        }
        case Directive::HFuse: f.fuse(var(0), var(1), var(2)); break;
        case Directive::HParallel: f.parallel(var(0)); break;
        case Directive::HReorder: f.reorder(vars_of(f, d.vars, false)); break;
        case Directive::HVectorize: f.vectorize(var(0), d.ints.at(0), TailStrategy::RoundUp); break;
        case Directive::HComputeAtLx: {
            Func at = lookup(funcs, d.at_func, "Func");
            f.compute_at(LoopLevel(at, var_of(at, d.vars.at(0), true))).store_in(MemoryType::VTCM);
            break;
        }
        case Directive::HStoreAt: {
            Func at = lookup(funcs, d.at_func, "Func");
            f.store_at(LoopLevel(at, var_of(at, d.vars.at(0), true)));
            break;
        }
        case Directive::HUpdateSplit:
            if (symbolic(d)) f.update(d.update).split(RVar(d.vars.at(0)), RVar(d.vars.at(1)), RVar(d.vars.at(2)), param(d));
            else f.update(d.update).split(RVar(d.vars.at(0)), RVar(d.vars.at(1)), RVar(d.vars.at(2)), d.ints.at(0));
            break;
        case Directive::HUpdateRename: f.update(d.update).rename(RVar(d.vars.at(0)), RVar(d.vars.at(1))); break;
        case Directive::HUpdateReorder: f.update(d.update).reorder(vars_of(f, d.vars, true)); break;
        case Directive::HUpdateVectorize: f.update(d.update).vectorize(var(0), d.ints.at(0), TailStrategy::RoundUp); break;
        case Directive::StageAllInLx:
        case Directive::StageInLxAt:
        case Directive::CloneIn: break;
        }
    }
}

}  // namespace spyre::autosched
