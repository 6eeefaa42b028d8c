#include "auto_print.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "boundary_condition_names.h"

namespace spyre::autosched {

std::string cpp_name(const std::string &n) {
    if (n == kOutermost) return "Halide::Var::outermost()";
    std::string s;
    const std::string shown = display_name(n);
    size_t dollar = shown.find('$');
    std::string base = dollar == std::string::npos ? shown : shown.substr(0, dollar);
    for (char c : base) s += std::isalnum((unsigned char)c) || c == '_' ? c : '_';
    if (s.empty() || std::isdigit((unsigned char)s[0])) s = "_" + s;
    if (dollar != std::string::npos) s += "." + shown.substr(dollar + 1);  // an RDom's dimension: r.x
    return s;
}

namespace {

std::string list(const std::vector<std::string> &names) {
    std::string s;
    for (const std::string &n : names) s += (s.empty() ? "" : ", ") + cpp_name(n);
    return s;
}

bool is_spyre(Directive::Kind k) {
    switch (k) {
    case Directive::RingSplit:
    case Directive::Split:
    case Directive::StickVectorize:
    case Directive::StoreAt:
    case Directive::LxRoot:
    case Directive::DeviceRoot:
    case Directive::DeviceLayout:
    case Directive::PeMatmul:
    case Directive::OnPe:
    case Directive::RingShare:
    case Directive::RingSplitReduction: return true;
    default: return false;
    }
}

// One call, without the object it is called on.
std::string call(const Directive &d, const std::string &m) {
    const std::string mm = m.empty() ? "" : ", " + m;
    const std::string update = "update(" + (d.update ? std::to_string(d.update) : std::string()) + ").";
    std::ostringstream os;
    switch (d.kind) {
    case Directive::RingSplit:
        os << "ring_split(" << cpp_name(d.vars[0]) << ", " << d.ints[0];
        if (d.ints[1] > 0) os << ", " << d.ints[1];
        os << ")";
        break;
    case Directive::Split: os << "split(" << list(d.vars) << ", " << d.ints[0] << ")"; break;
    case Directive::StickVectorize:
        os << "stick_vectorize(" << cpp_name(d.vars[0]) << (d.ints[0] > 1 ? ", " + std::to_string(d.ints[0]) : "") << ")";
        break;
    case Directive::StoreAt: os << "scratchpad_store_at(" << cpp_name(d.at_func) << ", " << cpp_name(d.vars[0]) << ")"; break;
    case Directive::LxRoot: os << "scratchpad_root()"; break;
    case Directive::DeviceRoot: os << "device_root()"; break;
    case Directive::DeviceLayout:
        os << "device_layout({" << list(d.vars) << "}"
           << (d.ints.empty() || d.ints[0] < 0 || d.ints[0] >= int(d.vars.size()) ? std::string()
                                                                                  : ", " + cpp_name(d.vars[size_t(d.ints[0])]))
           << ")";
        break;
    case Directive::PeMatmul: os << "pe_matmul(" << cpp_name(d.vars[0]) << ")"; break;
    case Directive::OnPe:
        os << "on_pe(" << cpp_name(d.vars[0]) << (d.update ? ", " + std::to_string(d.update) : "") << ")";
        break;
    case Directive::RingShare: os << "ring_share(" << cpp_name(d.vars[0]) << ", " << d.ints[0] << ")"; break;
    case Directive::DmaPhases: os << "dma_phases(" << cpp_name(d.vars[0]) << ")"; break;
    case Directive::RingSplitReduction:
        os << "ring_split_reduction(" << cpp_name(d.vars[0]) << ", " << d.ints[0] << ", " << d.ints[1]
           << (d.ints[2] ? ", true" : "") << ")";
        break;
    case Directive::HSplit:
        os << "split(" << list(d.vars) << ", " << d.ints[0]
           << (d.ints.size() > 1 && d.ints[1] == 1 ? ", Halide::TailStrategy::RoundUp" : "") << ")";
        break;
    case Directive::HFuse: os << "fuse(" << list(d.vars) << ")"; break;
    case Directive::HParallel: os << "parallel(" << cpp_name(d.vars[0]) << ")"; break;
    case Directive::HReorder: os << "reorder(" << list(d.vars) << ")"; break;
    case Directive::HVectorize:
        os << "vectorize(" << cpp_name(d.vars[0]) << ", " << d.ints[0] << ", Halide::TailStrategy::RoundUp)";
        break;
    case Directive::HComputeAtLx:
        os << "compute_at(" << cpp_name(d.at_func) << ", " << cpp_name(d.vars[0])
           << ").store_in(Halide::MemoryType::VTCM)";
        break;
    case Directive::HStoreAt: os << "store_at(" << cpp_name(d.at_func) << ", " << cpp_name(d.vars[0]) << ")"; break;
    case Directive::HUpdateSplit: os << update << "split(" << list(d.vars) << ", " << d.ints[0] << ")"; break;
    case Directive::HUpdateRename: os << update << "rename(" << list(d.vars) << ")"; break;
    case Directive::HUpdateReorder: os << update << "reorder(" << list(d.vars) << ")"; break;
    case Directive::HUpdateVectorize:
        os << update << "vectorize(" << cpp_name(d.vars[0]) << ", " << d.ints[0] << ", Halide::TailStrategy::RoundUp)";
        break;
    case Directive::CloneIn: break;  // a declaration, printed by print_cpp
    case Directive::StageAllInLx:
        os << "spyre::stage_all_in_lx(" << cpp_name(d.func) << ", " << cpp_name(d.at_func) << ", "
           << cpp_name(d.vars[0]) << mm << ")";
        if (d.vars.size() > 1) os << ".store_at(" << cpp_name(d.at_func) << ", " << cpp_name(d.vars[1]) << ")";
        break;
    case Directive::StageInLxAt: {
        // A block, so that several stagings print side by side without clashing names.
        const std::string w = cpp_name(d.func) + "_lx";
        os << "{\n    Halide::Func " << w << " = " << cpp_name(d.func) << ".in(" << cpp_name(d.at_func) << ");\n    "
           << w << ".compute_at(" << cpp_name(d.at_func) << ", " << cpp_name(d.vars[0])
           << ").store_in(Halide::MemoryType::VTCM);\n    spyre::schedule(" << w << mm << ").stick_vectorize(" << w
           << ".args()[0]);\n}";
        break;
    }
    }
    return os.str();
}

}  // namespace

std::string print_cpp(const std::vector<Directive> &ds, const PipelineInfo &info, const std::string &machine) {
    // The loop variables the schedule introduces: every name that is no Func's pure arg and no
    // reduction variable of the algorithm. Names used on updates are RVars.
    std::set<std::string> known;
    for (const StageInfo &s : info.stages) {
        for (const std::string &a : s.args) known.insert(a);
        for (const Halide::Internal::Definition &u : s.function.updates())
            for (const auto &rv : u.schedule().rvars()) known.insert(rv.var);
    }
    std::vector<std::string> vars, rvars;
    std::set<std::string> declared;
    auto note = [&](const std::string &n, bool r) {
        if (n == kOutermost || known.count(n) || declared.count(n)) return;
        declared.insert(n);
        (r ? rvars : vars).push_back(n);
    };
    for (const Directive &d : ds) {
        bool upd = d.kind == Directive::HUpdateSplit || d.kind == Directive::HUpdateRename ||
                   d.kind == Directive::HUpdateReorder || d.kind == Directive::PeMatmul || d.kind == Directive::OnPe || d.kind == Directive::RingShare ||
                   d.kind == Directive::RingSplitReduction;
        // A loop of another Func's update (a K panel) is an RVar there.
        if (d.kind == Directive::HComputeAtLx || d.kind == Directive::StageInLxAt) {
            const StageInfo *at = info.find(d.at_func);
            upd = at && std::find(at->args.begin(), at->args.end(), d.vars[0]) == at->args.end();
        }
        if (d.kind == Directive::CloneIn) continue;  // vars {alias}: a Func, not a loop
        for (const std::string &v : d.vars) note(v, upd);
    }
    std::ostringstream os;
    // The machine is passed by the name the caller chose ("m"), unless a Var, RVar or Func of the
    // pipeline has that name (a matmul's rows are often m): the pasted code would not compile.
    std::string m = machine;
    if (!m.empty()) {
        std::set<std::string> taken = known;
        taken.insert(declared.begin(), declared.end());
        for (const StageInfo &s : info.stages) taken.insert(cpp_name(s.name));
        for (const InputInfo &in : info.inputs) taken.insert(cpp_name(in.name));
        for (int i = 2; taken.count(m); i++) m = machine == "m" && i == 2 ? "machine" : machine + std::to_string(i);
        if (m != machine) os << "// " << m << ": the spyre::MachineDesc (" << machine << " is a name of the pipeline)\n";
    }
    if (!vars.empty()) {
        os << "Halide::Var ";
        for (size_t i = 0; i < vars.size(); i++) os << (i ? ", " : "") << cpp_name(vars[i]) << "(\"" << vars[i] << "\")";
        os << ";\n";
    }
    if (!rvars.empty()) {
        os << "Halide::RVar ";
        for (size_t i = 0; i < rvars.size(); i++) os << (i ? ", " : "") << cpp_name(rvars[i]) << "(\"" << rvars[i] << "\")";
        os << ";\n";
    }
    const std::string mm = m.empty() ? "" : ", " + m;
    for (size_t i = 0; i < ds.size();) {
        const Directive &d = ds[i];
        if (d.kind == Directive::CloneIn) {
            os << "Halide::Func " << cpp_name(d.vars[0]) << " = " << cpp_name(d.func) << ".clone_in(" << cpp_name(d.at_func)
               << ");\n";
            i++;
            continue;
        }
        if (d.kind == Directive::StageAllInLx || d.kind == Directive::StageInLxAt) {
            os << call(d, m) << (d.kind == Directive::StageAllInLx ? ";\n" : "\n");
            i++;
            continue;
        }
        // Consecutive calls on one Func chain, spyre directives on spyre::schedule(f), Halide
        // calls on f itself.
        const bool spyre = is_spyre(d.kind);
        // An inline reduction (sum(), maximum()) has no C++ handle: reach it by its Halide name.
        std::string fn = cpp_name(d.func);
        const StageInfo *st = info.find(d.func);
        if (st && st->folded && !st->consumers.empty()) {
            os << "// the inline reduction in " << cpp_name(st->consumers[0]) << " has no C++ name; found by its Halide name:\n";
            fn = "Halide::Func(Halide::Internal::find_transitive_calls(" + cpp_name(info.output().name) +
                 ".function()).at(\"" + d.func + "\"))";
        } else if (st) {
            // A Func Halide made for a boundary condition: its C++ handle is the user's, unknown here.
            if (const std::optional<MadeFuncName> made = made_func_name(st->function)) {
                os << "// " << made->phrase << " (" << made->token << "), found by its Halide name:\n";
                fn = "Halide::Func(Halide::Internal::find_transitive_calls(" + cpp_name(info.output().name) +
                     ".function()).at(\"" + d.func + "\"))";
            }
        }
        os << (spyre ? "spyre::schedule(" + fn + mm + ")" : fn);
        // Halide's update calls chain on the Stage update() returns, the others on the Func.
        auto on_update = [](Directive::Kind k) {
            return k == Directive::HUpdateSplit || k == Directive::HUpdateRename || k == Directive::HUpdateReorder ||
                   k == Directive::HUpdateVectorize;
        };
        size_t j = i;
        while (j < ds.size() && ds[j].func == d.func && ds[j].kind != Directive::StageAllInLx && ds[j].kind != Directive::StageInLxAt &&
               ds[j].kind != Directive::CloneIn && is_spyre(ds[j].kind) == spyre &&
               on_update(ds[j].kind) == on_update(d.kind) && ds[j].update == d.update) {
            std::string c = call(ds[j], m);
            if (j > i && on_update(ds[j].kind)) c = c.substr(c.find(").") + 2);
            os << "." << c;
            j++;
        }
        os << ";\n";
        i = j;
    }
    return os.str();
}

}  // namespace spyre::autosched
