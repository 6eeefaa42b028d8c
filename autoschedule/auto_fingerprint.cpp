#include "auto_fingerprint.h"

#include <cstdio>
#include <sstream>

#include "device/layout.h"

namespace spyre::autosched {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// The layout of what a stored schedule holds (tuned_schedule.h): a change to it, or to the
// Directive records, must change every key.
constexpr const char *kFingerprintVersion = "spyre auto_schedule fingerprint 2";

// Halide's printer with Funcs, inputs and variables under their canonical names.
class CanonicalPrinter : public IRPrinter {
public:
    CanonicalPrinter(std::ostream &os, const CanonicalNames &names) : IRPrinter(os), names_(names) {}

protected:
    using IRPrinter::visit;
    void visit(const Variable *op) override {
        auto it = lets_.find(op->name);
        stream << (it != lets_.end() ? it->second : names_.canonical(op->name));
    }
    // Halide names the lets its simplifier makes uniquely too ("t0", "t2"): by order of appearance.
    void visit(const Let *op) override {
        const std::string name = "L" + std::to_string(lets_.size());
        stream << "(let " << name << " = ";
        print(op->value);
        lets_[op->name] = name;
        stream << " in ";
        print(op->body);
        stream << ")";
    }
    void visit(const Call *op) override {
        if (op->call_type != Call::Halide && op->call_type != Call::Image) return IRPrinter::visit(op);
        stream << names_.canonical(op->name) << "[" << op->value_index << "](";
        for (size_t i = 0; i < op->args.size(); i++) {
            if (i) stream << ", ";
            print(op->args[i]);
        }
        stream << ")";
    }

private:
    const CanonicalNames &names_;
    std::map<std::string, std::string> lets_;
};

uint64_t fnv1a(const std::string &s, uint64_t h) {
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

std::string type_text(const Type &t) {
    std::ostringstream os;
    os << t;
    return os.str();
}

std::string shape_text(const std::vector<int64_t> &shape) {
    std::string s;
    for (size_t i = 0; i < shape.size(); i++) s += (i ? "x" : "") + std::to_string(shape[i]);
    return s;
}

void add(CanonicalNames &n, const std::string &name, const std::string &canonical) {
    if (n.to_canonical.count(name)) return;
    n.to_canonical[name] = canonical;
    n.from_canonical[canonical] = name;
}

}  // namespace

std::string CanonicalNames::canonical(const std::string &name) const {
    auto it = to_canonical.find(name);
    return it == to_canonical.end() ? name : it->second;
}

std::string CanonicalNames::actual(const std::string &canonical_name) const {
    auto it = from_canonical.find(canonical_name);
    return it == from_canonical.end() ? canonical_name : it->second;
}

Fingerprint fingerprint(const PipelineInfo &info, const std::vector<ImageParam> &inputs, const CompileOptions &options,
                        const AutoOptions &ao) {
    Fingerprint fp;
    CanonicalNames &n = fp.names;
    for (size_t i = 0; i < info.inputs.size(); i++) {
        add(n, info.inputs[i].name, "P" + std::to_string(i));
        add(n, info.inputs[i].func, "I" + std::to_string(i));
    }
    for (size_t i = 0; i < info.stages.size(); i++) add(n, info.stages[i].name, "F" + std::to_string(i));
    // Pure variables and reduction variables in the order the definitions first name them.
    int vars = 0, rvars = 0;
    for (const StageInfo &s : info.stages) {
        for (const std::string &a : s.function.args()) add(n, a, "A" + std::to_string(vars++));
        for (const Definition &d : s.function.updates())
            for (const ReductionVariable &rv : d.schedule().rvars()) add(n, rv.var, "R" + std::to_string(rvars++));
    }

    std::ostringstream os;
    os << kFingerprintVersion << "\n";
    for (size_t i = 0; i < inputs.size() && i < options.inputs.size(); i++)
        os << "input " << n.canonical(inputs[i].name()) << " " << type_text(inputs[i].type()) << " "
           << shape_text(options.inputs[i].shape) << " " << layout_to_string(options.inputs[i].layout) << "\n";
    os << "output " << shape_text(options.output.shape) << " " << layout_to_string(options.output.layout) << "\n";
    CanonicalPrinter p(os, n);
    auto definition = [&](const Definition &d) {
        os << "  (";
        for (size_t i = 0; i < d.args().size(); i++) {
            if (i) os << ", ";
            p.print(d.args()[i]);
        }
        os << ") =";
        for (const Expr &v : d.values()) {
            os << " ";
            p.print(v);
        }
        for (const ReductionVariable &rv : d.schedule().rvars()) {
            os << " | " << n.canonical(rv.var) << " in [";
            p.print(rv.min);
            os << ", +";
            p.print(rv.extent);
            os << ")";
        }
        if (d.predicate().defined() && !is_const_one(d.predicate())) {
            os << " where ";
            p.print(d.predicate());
        }
        os << "\n";
    };
    for (const StageInfo &s : info.stages) {
        os << "func " << n.canonical(s.name) << (s.is_output ? " output" : "") << (s.also_output ? " also_output" : "");
        for (const Type &t : s.function.output_types()) os << " " << type_text(t);
        os << "\n";
        definition(s.function.definition());
        for (const Definition &d : s.function.updates()) definition(d);
    }
    os << "machine " << options.machine.to_json_text() << "\n";
    os << "seed " << ao.seed << " evaluations " << ao.max_evaluations << " max_cores " << ao.max_cores
       << " reassociation " << ao.allow_reassociation << " time_budget_s " << ao.time_budget_s << " free_layouts";
    for (const std::string &f : ao.free_layouts) os << " " << (f == "*" ? f : n.canonical(f));
    // A stopped search's order depends on its workers' count too (the keys of searches without a stop
    // are as they were before the option).
    if (ao.stop_after_timing > 0) os << " stop_after_timing " << ao.stop_after_timing << " workers " << ao.workers;
    os << "\n";
    fp.text = os.str();
    char key[33];
    std::snprintf(key, sizeof key, "%016llx%016llx", (unsigned long long)fnv1a(fp.text, 14695981039346656037ull),
                  (unsigned long long)fnv1a(fp.text, 0x9e3779b97f4a7c15ull));
    fp.key = key;
    return fp;
}

std::vector<Directive> rename_directives(const std::vector<Directive> &ds, const CanonicalNames &names,
                                         bool to_canonical) {
    auto map = [&](const std::string &s) { return to_canonical ? names.canonical(s) : names.actual(s); };
    std::vector<Directive> out = ds;
    for (Directive &d : out) {
        d.func = map(d.func);
        if (!d.at_func.empty()) d.at_func = map(d.at_func);
        for (std::string &v : d.vars) v = map(v);
    }
    return out;
}

}  // namespace spyre::autosched
