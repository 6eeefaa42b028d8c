#include "lower_halide.h"

#include <map>
#include <set>

#include "broadcast_uniform_loads.h"
#include "device/error.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// The buffers a Stmt reads or writes, with what fixes their shape: a Parameter's constraints or a
// concrete Buffer's own dims.
struct BufferRef {
    Parameter param;
    Buffer<> image;
    int dims = 0;
};

class FindBufferRefs : public IRGraphVisitor {
public:
    std::map<std::string, BufferRef> refs;

private:
    using IRGraphVisitor::visit;
    void visit(const Call *op) override {
        IRGraphVisitor::visit(op);
        if (op->image.defined() || op->param.defined()) refs[op->name] = {op->param, op->image, int(op->args.size())};
    }
    void visit(const Variable *op) override {
        if (op->param.defined() && op->param.is_buffer() && !refs.count(op->param.name()))
            refs[op->param.name()] = {op->param, Buffer<>(), op->param.dimensions()};
    }
};

// What Halide's buffer checks leave in the Stmt once assertions and bounds queries are off: a
// buffer's min, extent or stride wherever it is used, replaced by its constraint (our argument
// shapes are all fixed). Halide also walks the whole Stmt for the region each buffer is touched over
// (boxes_touched), for checks we never emit; that walk is what this saves. The constraints of every
// argument the Stmt reads or writes, by variable name ("q.stride.1").
std::map<std::string, Expr> buffer_constraints(const Stmt &s, const std::vector<Function> &outputs) {
    FindBufferRefs finder;
    s.accept(&finder);
    std::map<std::string, BufferRef> refs = finder.refs;
    for (const Function &f : outputs)
        for (size_t i = 0; i < f.output_buffers().size(); i++) {
            std::string name = f.output_buffers().size() > 1 ? f.name() + "." + std::to_string(i) : f.name();
            refs[name] = {f.output_buffers()[i], Buffer<>(), f.dimensions()};
        }
    std::map<std::string, Expr> constraints;
    for (const auto &[name, r] : refs)
        for (int d = 0; d < r.dims; d++) {
            const std::string dim = std::to_string(d);
            Expr stride, min, extent;
            if (r.image.defined() && d < r.image.dimensions()) {
                stride = r.image.dim(d).stride(), min = r.image.dim(d).min();
                extent = r.image.dim(d).extent();
            } else if (r.param.defined()) {
                stride = r.param.stride_constraint(d), min = r.param.min_constraint(d);
                extent = r.param.extent_constraint(d);
            }
            if (stride.defined()) constraints[name + ".stride." + dim] = stride;
            if (min.defined()) constraints[name + ".min." + dim] = min;
            if (extent.defined()) constraints[name + ".extent." + dim] = extent;
        }
    return constraints;
}

// Drops the marker computation bounds inference leaves where Halide's buffer checks would go.
class DropImageChecksMarker : public IRMutator {
    using IRMutator::visit;
    Stmt visit(const Block *op) override {
        const Evaluate *e = op->first.as<Evaluate>();
        if (e && Call::as_intrinsic(e->value, {Call::add_image_checks_marker})) return mutate(op->rest);
        return IRMutator::visit(op);
    }
};

bool any_atomic(const std::map<std::string, Function> &env) {
    for (const auto &kv : env) {
        if (kv.second.definition().schedule().atomic()) return true;
        for (const Definition &u : kv.second.updates())
            if (u.schedule().atomic()) return true;
    }
    return false;
}

bool any_in_registers(const std::map<std::string, Function> &env) {
    for (const auto &kv : env)
        if (kv.second.schedule().memory_type() == MemoryType::Register) return true;
    return false;
}

// The passes, in Halide 14's order (src/Lower.cpp, lower_impl), on a deep copy of the pipeline.
Stmt run_passes(const std::vector<Function> &output_funcs, const std::string &name, const Target &t,
                std::map<std::string, Function> *lowered) {
    auto [outputs, env] = deep_copy(output_funcs, build_environment(output_funcs));
    strictify_float(env, t);
    // An update left as Halide's default beside a scheduled pure definition is what Spyre schedules
    // write (their directives reach the updates they apply to): Halide would warn on stderr that it
    // "has not been scheduled", naming the Func as Halide renamed it. The copy is marked, not the
    // user's Func.
    for (auto &kv : env)
        if (kv.second.has_pure_definition() && kv.second.definition().schedule().touched())
            for (size_t i = 0; i < kv.second.updates().size(); i++) kv.second.update(int(i)).schedule().touched() = true;
    for (const Function &f : outputs) Func(f).compute_root().store_root();
    for (auto &kv : env) kv.second.lock_loop_levels();
    env = wrap_func_calls(env);
    if (lowered) *lowered = env;
    auto [order, fused_groups] = realization_order(outputs, env);
    simplify_specializations(env);

    bool any_memoized = false;
    Stmt s = schedule_functions(outputs, fused_groups, env, t, any_memoized);
    if (any_memoized) s = inject_memoization(s, env, name, outputs);
    s = inject_tracing(s, name, false, env, outputs, t);
    s = add_parameter_checks({}, s, t);
    FuncValueBounds func_bounds = compute_function_value_bounds(order, env);
    s = clamp_unsafe_accesses(s, env, func_bounds);
    s = bounds_inference(s, outputs, order, fused_groups, env, func_bounds, t);
    s = remove_extern_loops(s);
    s = sliding_window(s, env);
    s = uniquify_variable_names(s);
    s = simplify(s, false);
    s = simplify_correlated_differences(s);
    s = allocation_bounds_inference(s, env, func_bounds);
    // In place of add_image_checks: the arguments' shapes substituted, here and (as storage
    // flattening names them afresh) after flattening.
    const std::map<std::string, Expr> constraints = buffer_constraints(s, outputs);
    s = substitute(constraints, DropImageChecksMarker().mutate(s));
    s = remove_undef(s);
    s = storage_folding(s, env);
    s = debug_to_file(s, outputs, env);
    s = inject_prefetch(s, env);
    s = lower_safe_promises(s);
    s = skip_stages(s, order);
    s = fork_async_producers(s, env);  // also tightens produce/consume nodes around their uses
    s = split_tuples(s, env);
    s = simplify_correlated_differences(s);
    // Before flattening, bounding small allocations makes constant only Register realizations
    // (and OpenGL's shared ones); on the rest it is a walk of bounds that changes nothing.
    if (any_in_registers(env)) s = bound_small_allocations(s);
    s = substitute(constraints, storage_flattening(s, outputs, env, t));
    if (any_atomic(env)) s = add_atomic_mutex(s, env);
    s = unpack_buffers(s);
    if (any_memoized) s = rewrite_memoized_allocations(s, env);
    s = simplify(s);
    s = unify_duplicate_lets(s);
    s = reduce_prefetch_dimension(s, t);
    s = simplify_correlated_differences(s);
    s = unroll_loops(s);
    s = simplify(vectorize_loops(s, env));
    s = simplify(rewrite_interleavings(s));
    s = simplify(partition_loops(s));
    s = trim_no_ops(s);
    s = rebase_loops_to_zero(s);
    s = hoist_loop_invariant_if_statements(s);
    s = inject_early_frees(s);
    s = simplify_correlated_differences(s);
    s = bound_small_allocations(s);
    s = common_subexpression_elimination(s);
    s = lower_unsafe_promises(s, t);
    s = flatten_nested_ramps(broadcast_uniform_loads(s));
    s = remove_dead_allocations(s);
    s = simplify(s);
    s = hoist_loop_invariant_values(s);
    s = hoist_loop_invariant_if_statements(s);
    // Not find_intrinsics: Halide 14's pattern for a halving subtract negates the constant of a
    // wrapping product (i8((i16(b) - i16(a*3)) / 2) becomes halving_add(b, a*-3)), which differs
    // when a*3 wraps to -128. It only rewrites vectors, so the scalar reference keeps the exact
    // form; the back end computes narrow integers in int32 (legalise_types) and needs no intrinsics.
    return hoist_prefetches(s);
}

}  // namespace

Target spyre_lowering_target() {
    return Target(Target::Linux, Target::X86, 64)
        .with_feature(Target::NoAsserts)
        .with_feature(Target::NoBoundsQuery)
        .with_feature(Target::StrictFloat);
}

Stmt lower_halide(const Pipeline &pipeline, const std::vector<Argument> &args, const std::string &name,
                  const Target &target, std::map<std::string, Function> *lowered) {
    std::vector<Function> outputs;
    for (const Func &f : pipeline.outputs()) {
        if (!f.function().has_pure_definition() && !f.function().has_extern_definition())
            throw_error("kernel ", name, ": the output Func ", f.name(), " has no definition");
        outputs.push_back(f.function());
    }
    Stmt s;
    run_with_large_stack([&] { s = run_passes(outputs, name, target, lowered); });
    // compile_to_module refuses a Stmt that reads a parameter it was not given; so do we.
    std::set<std::string> given;
    for (const Argument &a : args) given.insert(a.name);
    for (const InferredArgument &a : infer_arguments(s, outputs)) {
        if (a.arg.name == "__user_context" || a.buffer.defined() || !a.arg.is_input() || given.count(a.arg.name))
            continue;
        throw_error("kernel ", name, ": the pipeline reads ", a.arg.is_buffer() ? "buffer" : "parameter", " '",
                    a.arg.name, "', which is not among its arguments");
    }
    return s;
}

}  // namespace spyre
