#include "compile_kernel.h"

#include <functional>
#include <sstream>

#include "allocate_lx.h"
#include "check_barriers.h"
#include "classify_memory.h"
#include "device/error.h"
#include "device/program_verify.h"
#include "fold_accumulators.h"
#include "halide_errors.h"
#include "infer_dma.h"
#include "legalise_types.h"
#include "lower_ring_reductions.h"
#include "lower_shifted_loads.h"
#include "lower_gathers.h"
#include "lower_store_predicates.h"
#include "map_cores.h"
#include "normalize_stmt.h"
#include "plan_pipelines.h"
#include "plan_ring_shares.h"
#include "partition_tails.h"
#include "rotate_producers.h"
#include "select_instructions.h"
#include "tighten_extents.h"
#include "boundary_condition_names.h"
#include "user_terms.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// Every message that leaves the compiler names what the user wrote (user_terms.h), the Funcs
// Halide made for the boundary conditions of `outputs` included (boundary_condition_names.h).
template <typename F>
auto in_user_terms_on_error(const std::map<std::string, std::string> &made, F &&f) -> decltype(f()) {
    try {
        return f();
    } catch (const Error &e) {
        throw e.reworded(in_user_terms(e.what(), &made));
    }
}

// Runs the passes after capture; `capture` lowers with Halide and fills the plan's arguments.
BackendResult run_passes(const std::function<Stmt(KernelPlan &)> &capture, const std::vector<std::string> &order,
                         const std::vector<std::string> &outputs, const KernelSignature &sig, const MachineDesc &machine,
                         const BackendOptions &opts) {
    BackendResult r;
    KernelPlan &plan = r.plan;
    plan.kernel_name = sig.kernel_name;
    plan.machine = machine;
    machine.validate();
    auto keep = [&](const char *pass, const Stmt &s) {
        if (!opts.keep_stmt) return;
        std::ostringstream os;
        os << s;
        r.stmts.push_back({pass, os.str()});
    };
    Stmt s = with_halide_errors(sig.kernel_name, "capturing the pipeline", [&] { return capture(plan); });
    keep("capture_stmt", s);
    try {
        s = normalize_stmt(s, plan);
        keep("normalize_stmt", s);
        s = legalise_types(s);
        keep("legalise_types", s);
        s = tighten_extents(s);
        keep("tighten_extents", s);
        s = lower_shifted_loads(s, plan);
        keep("lower_shifted_loads", s);
        classify_memory(s, plan);
        s = lower_store_predicates(s, plan);
        keep("lower_store_predicates", s);
        s = fold_accumulators(s, plan);
        keep("fold_accumulators", s);
        s = lower_ring_reductions(s, plan);
        keep("lower_ring_reductions", s);
        s = map_cores(s, plan);
        keep("map_cores", s);
        s = lower_gathers(s, plan);
        keep("lower_gathers", s);
        s = infer_dma(s, plan, opts.staging_budget_bytes);
        keep("infer_dma", s);
        // Rotated producers hold two copies of their buffer; a kernel that then does not fit LX
        // (or that selection refuses) is compiled again without the rotation.
        const Stmt staged = s;
        const KernelPlan staged_plan = plan;
        const size_t kept = r.stmts.size();
        auto rest = [&](bool rotate, bool extended) {
            s = staged;
            plan = staged_plan;
            r.stmts.resize(kept);
            if (rotate) {
                s = rotate_producers(staged, plan);
                keep("rotate_producers", s);
            }
            plan_pipelines(s, plan, extended);
            allocate_lx(s, plan);
            plan_ring_shares(s, plan);
            r.program = select_instructions(s, plan, order, outputs);
            check_barriers(r.program, plan.kernel_name);
        };
        // The extended pipelines (plan_pipelines.h) hold more tiles in LX than the plain ones; a
        // kernel they leave too little LX (or that selection refuses) is compiled with the plain
        // ones, each way with the rotation first.
        const std::pair<bool, bool> tries[] = {{true, true}, {false, true}, {true, false}, {false, false}};
        for (size_t t = 0; t < 4; t++) {
            try {
                rest(tries[t].first, tries[t].second);
                break;
            } catch (const Error &e) {
                if (t == 3 || e.kind() == ErrorKind::Internal) throw;  // a bug is not a misfit
            }
        }
    } catch (const Halide::Error &e) {
        // The user's schedule was lowered already: Halide failing in a back-end pass is a bug here.
        throw_internal("kernel ", sig.kernel_name, ": internal compiler error in the Spyre back end (a Halide call "
                    "failed in one of its passes; please report it with the pipeline and its schedule): ", e.what());
    } catch (const Error &e) {
        if (!opts.keep_stmt) throw;
        r.stmts.push_back({"error", e.what()});  // dumps up to the failing pass, for inspection
        return r;
    }
    verify_for_machine(r.program, machine);
    return r;
}

}  // namespace

BackendResult compile_kernel(Func output, const std::vector<ImageParam> &inputs, const KernelSignature &sig,
                             const MachineDesc &machine, const BackendOptions &opts) {
    std::vector<std::string> order;
    for (const ImageParam &p : inputs) order.push_back(p.name());
    return in_user_terms_on_error(made_func_phrases({output}), [&] {
        return run_passes([&](KernelPlan &plan) { return capture_stmt(output, inputs, sig, plan); }, order,
                          {output.name()}, sig, machine, opts);
    });
}

BackendResult compile_kernel(Pipeline pipeline, const std::vector<Argument> &args, const KernelSignature &sig,
                             const MachineDesc &machine, const BackendOptions &opts) {
    std::vector<std::string> order;
    for (const Argument &a : args) order.push_back(a.name);
    if (!pipeline.defined() || pipeline.outputs().empty()) throw_error("kernel ", sig.kernel_name, ": the pipeline has no output");
    std::vector<std::string> outputs;
    for (const Func &f : pipeline.outputs()) outputs.push_back(f.name());
    return in_user_terms_on_error(made_func_phrases(pipeline.outputs()), [&] {
        return run_passes([&](KernelPlan &plan) { return capture_stmt(pipeline, args, sig, plan); }, order, outputs,
                          sig, machine, opts);
    });
}

CapturedKernel capture_kernel(Func output, const std::vector<ImageParam> &inputs, const KernelSignature &sig,
                              const MachineDesc &machine, const BackendOptions &opts,
                              const std::vector<Argument> &factors) {
    CapturedKernel k;
    k.sig = sig, k.machine = machine, k.opts = opts, k.output = output.name();
    for (const ImageParam &p : inputs) k.order.push_back(p.name());
    k.plan.kernel_name = sig.kernel_name;
    k.plan.machine = machine;
    machine.validate();
    k.made = made_func_phrases({output});
    k.stmt = in_user_terms_on_error(k.made, [&] {
        return with_halide_errors(sig.kernel_name, "capturing the pipeline",
                                  [&] { return capture_stmt(output, inputs, sig, k.plan, factors); });
    });
    return k;
}

BackendResult finish_kernel(const CapturedKernel &k, const std::map<std::string, int> &values) {
    std::map<std::string, Expr> subs;
    for (const auto &v : values) subs[v.first] = Expr(v.second);
    Stmt s = with_halide_errors(k.sig.kernel_name, "binding the schedule's factors",
                                [&] { return partition_tails(simplify(substitute(subs, k.stmt))); });
    struct Free : IRVisitor {
        const std::map<std::string, Expr> *subs;
        std::string missing;
        using IRVisitor::visit;
        void visit(const Variable *v) override {
            if (v->param.defined() && !v->param.is_buffer() && !subs->count(v->name)) missing = v->name;
        }
    } free;
    free.subs = &subs;
    s.accept(&free);
    if (!free.missing.empty())
        throw_internal("kernel ", k.sig.kernel_name, ": internal: schedule factor '", free.missing, "' has no value");
    return in_user_terms_on_error(k.made, [&] {
        return run_passes([&](KernelPlan &plan) {
            plan = k.plan;
            return s;
        }, k.order, {k.output}, k.sig, k.machine, k.opts);
    });
}

}  // namespace spyre
