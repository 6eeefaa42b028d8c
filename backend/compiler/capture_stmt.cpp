#include "capture_stmt.h"

#include <algorithm>
#include <limits>
#include <set>

#include "device/dtype_host.h"
#include "device/error.h"
#include "halide_errors.h"
#include "lower_halide.h"
#include "prove_bounds.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

DType dtype_of(Type t, const std::string &what) {
    DType d;
    if (t.is_scalar() && dtype_from_host(t, &d)) return d;
    throw_error(what, ": element type ", t, " is not supported on Spyre (", kDeviceTypesText, " are)");
}

std::string shape_text(const std::vector<int64_t> &shape) {
    std::string s;
    for (size_t d = 0; d < shape.size(); d++) s += (d ? " x " : "") + std::to_string(shape[d]);
    return s;
}

// Sizes are checked before lowering: Halide would otherwise turn an index that overflows its 32-bit
// arithmetic into an unreachable() the back end cannot explain.
void check_fits_device(const ArgSpec &a, int64_t bytes, int elem_bytes, const MachineDesc &m, const std::string &what) {
    if (bytes > m.device_memory_bytes)
        throw_error(what, ": shape ", shape_text(a.shape), " needs ", bytes, " bytes in its device layout, more than the ",
                    m.device_memory_bytes, " bytes of device memory");
    if (bytes / elem_bytes > std::numeric_limits<int32_t>::max())
        throw_error(what, ": shape ", shape_text(a.shape), " has ", bytes / elem_bytes,
                    " elements in its device layout; Halide indexes a buffer with 32-bit integers, so at most ",
                    std::numeric_limits<int32_t>::max());
}

// Element strides that make Halide's flattened index equal the element offset in the buffer's
// Halide view (halide_view: its stick count moved innermost, which makes the index affine). A
// layout whose stick count sits elsewhere is reached by remapping each transfer (layout_dma.h).
std::vector<int64_t> element_strides(const ArgSpec &a, DType t, const MachineDesc &m, const std::string &what) {
    check_layout(a.layout, a.shape, what);
    DeviceGeometry g = device_geometry(a.layout, a.shape, t, m.stick_bytes);
    int eb = dtype_bytes(t);
    check_fits_device(a, g.total_bytes, eb, m, what);
    if (a.layout.stick_dim != 0)
        throw_error(what, ": layout ", layout_to_string(a.layout),
                    " is not supported by the compiler yet: the stick dimension must be dim 0 (the innermost in "
                    "Halide's order; PyTorch's last)");
    const DeviceGeometry view = device_geometry(halide_view(a.layout, int(a.shape.size())), a.shape, t, m.stick_bytes);
    std::vector<int64_t> strides(a.shape.size(), 1);
    for (size_t d = 1; d < a.shape.size(); d++) strides[d] = view.dim_stride[d] / eb;
    return strides;
}

void constrain(Internal::Dimension dim, int64_t extent, int64_t stride) {
    dim.set_bounds(0, int(extent)).set_stride(int(stride));
}

}  // namespace

void fix_device_shape(OutputImageParam p, const ArgSpec &a, const MachineDesc &m, const std::string &what) {
    if (int(a.shape.size()) != p.dimensions())
        throw_error(what, ": shape has ", a.shape.size(), " dims, the buffer has ", p.dimensions());
    DType t = dtype_of(p.type(), what);
    std::vector<int64_t> st = element_strides(a, t, m, what);
    for (int d = 0; d < p.dimensions(); d++) constrain(p.dim(d), a.shape[d], st[d]);
}

void check_single_valued_output(const Func &output) {
    if (output.outputs() != 1)
        // The name as written: Halide makes a second Func "pair" in one process "pair$1".
        throw_error("output '", output.name().substr(0, output.name().find('$')), "': Funcs with several values (a Tuple) cannot be outputs; make each "
                    "value a Func of its own and give the pipeline both (Pipeline({a, b}))");
}

namespace {

BufferInfo device_buffer(const std::string &name, Type type, const ArgSpec &a, Place place, const MachineDesc &m,
                         const std::string &what) {
    BufferInfo b;
    b.name = name, b.func = name, b.type = dtype_of(type, what), b.place = place;
    b.shape = a.shape, b.layout = a.layout;
    check_layout(a.layout, a.shape, what);
    int64_t bytes = device_geometry(a.layout, a.shape, b.type, m.stick_bytes).total_bytes;
    check_fits_device(a, bytes, dtype_bytes(b.type), m, what);
    b.elems = bytes / dtype_bytes(b.type);
    return b;
}

}  // namespace

Stmt capture_stmt(Func output, const std::vector<ImageParam> &inputs, const KernelSignature &sig, KernelPlan &plan,
                  const std::vector<Argument> &factors) {
    if (inputs.size() != sig.inputs.size())
        throw_error("kernel ", sig.kernel_name, ": ", inputs.size(), " inputs but ", sig.inputs.size(),
                    " input shapes given");
    std::vector<Argument> args;
    for (size_t i = 0; i < inputs.size(); i++) {
        fix_device_shape(inputs[i], sig.inputs[i], plan.machine, "input '" + inputs[i].name() + "'");
        args.push_back(inputs[i]);
    }
    std::string what = "output '" + output.name() + "'";
    if (output.outputs() != 1) throw_error(what, ": Funcs with several outputs are not supported");
    fix_device_shape(output.output_buffer(), sig.output, plan.machine, what);
    return capture_stmt(Pipeline(output), args, sig, plan, factors);
}

namespace {

// Halide 14 lowers a split whose inner variable is named "s" wrongly and silently: the loops lose
// their outer variable (out.split(y, yo, s, 50), or split(s, so, s, 50) as ring_split(s, n) makes,
// index every row as row 0; checked against Halide's own lowering, with no Spyre pass involved).
// Refuse such a schedule instead of running it.
void check_split_names(const Function &out) {
    std::map<std::string, Function> env = find_transitive_calls(out);
    env[out.name()] = out;
    for (const auto &kv : env) {
        const Function &f = kv.second;
        auto check = [&](const Definition &d) {
            for (const Split &sp : d.schedule().splits())
                if (sp.is_split() && (sp.inner == "s" || ends_with(sp.inner, ".s")))
                    throw_error("Func ", f.name(), ": a split of ", sp.old_var, " names its inner loop 's', which "
                                "Halide 14 lowers wrongly (every iteration reads and writes the first row); give "
                                "that Var another name");
        };
        check(f.definition());
        for (const Definition &u : f.updates()) check(u);
    }
}

// A split factor of an intermediate Func that reads that Func's own output buffer (the two-argument
// ring_split(v, n), which takes v's extent from it) names a buffer only the pipeline's output has:
// Halide would fail on it inside its simplifier. Refused, saying to give the extent.
void check_output_extents(const Function &out, const std::set<std::string> &outputs) {
    std::map<std::string, Function> env = find_transitive_calls(out);
    for (const auto &kv : env) {
        const Function &f = kv.second;
        if (f.name() == out.name() || outputs.count(f.name())) continue;
        const std::string user = f.name().substr(0, f.name().find('$'));
        auto check = [&](const Definition &d) {
            for (const Split &sp : d.schedule().splits()) {
                if (!sp.is_split() || !sp.factor.defined()) continue;
                struct OwnBuffer : IRVisitor {
                    std::string func;
                    bool found = false;
                    using IRVisitor::visit;
                    void visit(const Variable *v) override {
                        found |= v->param.defined() && v->param.is_buffer() && v->param.name() == func;
                    }
                } own;
                own.func = f.name();
                sp.factor.accept(&own);
                if (!own.found) continue;
                const std::string var = sp.old_var.substr(sp.old_var.rfind('.') + 1);
                std::string call = "a split of " + var;
                if (ends_with(sp.outer, var + "_core")) {
                    call = "ring_split(" + var;
                    // ring_split's factor is ceil(extent / cores): (extent + cores - 1) / cores.
                    if (const Div *q = sp.factor.as<Div>())
                        if (auto cores = as_const_int(q->b)) call += ", " + std::to_string(*cores);
                    call += ")";
                }
                throw_error("Func ", user, ": ", call, " takes the extent of ", var, " from ", user,
                            "'s output buffer, but ", user, " is not the pipeline's output (",
                            out.name().substr(0, out.name().find('$')), " is), and has none; give the extent: "
                            "ring_split(", var, ", cores, extent)");
            }
        };
        check(f.definition());
        for (const Definition &u : f.updates()) check(u);
    }
}

// Where a device_layout put the Func's stick count (its record, schedule_record.h): outside = 0, the
// default (innermost), when it has none.
KernelPlan::StickCountPlace stick_count_place(const Function &g) {
    KernelPlan::StickCountPlace place;
    const std::string var = stick_count_outside(g);
    if (var.empty()) return place;
    const std::vector<StorageDim> &dims = g.schedule().storage_dims();
    const std::vector<std::string> args = g.args();
    for (size_t j = 0; j < dims.size(); j++) {
        if (dims[j].var == var) place.outside = int(j);
        place.storage_dims.push_back(int(std::find(args.begin(), args.end(), dims[j].var) - args.begin()));
    }
    return place;
}

}  // namespace

Stmt capture_stmt(Pipeline p, const std::vector<Argument> &args, const KernelSignature &sig, KernelPlan &plan,
                  const std::vector<Argument> &factors) {
    const MachineDesc &m = plan.machine;
    if (args.size() != sig.inputs.size())
        throw_error("kernel ", sig.kernel_name, ": ", args.size(), " inputs but ", sig.inputs.size(),
                    " input shapes given");
    if (p.outputs().size() != 1 + sig.more_outputs.size())
        throw_error("kernel ", sig.kernel_name, ": the pipeline has ", p.outputs().size(), " outputs but ",
                    1 + sig.more_outputs.size(), " output shapes were given (CompileOptions::outputs)");
    for (size_t i = 0; i < args.size(); i++) {
        if (!args[i].is_buffer())
            throw_error("kernel ", sig.kernel_name, ": argument '", args[i].name,
                        "' is a scalar; Spyre kernels take buffers only (fix scalars at compile time)");
        plan.buffers[args[i].name] = device_buffer(args[i].name, args[i].type, sig.inputs[i], Place::DeviceInput, m,
                                                   "input '" + args[i].name + "'");
    }
    const std::vector<Func> outputs = p.outputs();  // a copy: outputs() returns one
    std::set<std::string> output_names;
    for (const Func &f : outputs) output_names.insert(f.name());
    for (size_t i = 0; i < outputs.size(); i++) {
        const Func &f = outputs[i];
        const ArgSpec &spec = i == 0 ? sig.output : sig.more_outputs[i - 1];
        check_single_valued_output(f);
        plan.buffers[f.name()] = device_buffer(f.name(), f.output_types()[0], spec, Place::DeviceOutput, m,
                                               "output '" + f.name() + "'");
        check_split_names(f.function());
        check_output_extents(f.function(), output_names);
    }
    std::vector<Argument> all = args;
    for (const Argument &f : factors) {
        if (f.is_buffer() || f.type != Int(32))
            throw_internal("kernel ", sig.kernel_name, ": internal: schedule factor '", f.name, "' is not an int32 scalar");
        all.push_back(f);
    }
    std::map<std::string, std::vector<int64_t>> input_shapes;
    for (size_t i = 0; i < args.size(); i++) input_shapes[args[i].name] = sig.inputs[i].shape;
    with_halide_errors(sig.kernel_name, "proving the algorithm's bounds", [&] {
        for (size_t i = 0; i < outputs.size(); i++)
            prove_bounds(outputs[i].function(), input_shapes, (i == 0 ? sig.output : sig.more_outputs[i - 1]).shape);
    });
    std::map<std::string, Function> lowered;
    Stmt captured = with_halide_errors(sig.kernel_name, "lowering the schedule", [&] {
        return lower_halide(p, all, sig.kernel_name, spyre_lowering_target(), &lowered);
    });
    plan.loops = LoopDirectives::of(lowered);
    if (!captured.defined()) throw_internal("kernel ", sig.kernel_name, ": internal: lowering produced no statement");
    // After lowering, which locks the loop levels it reads.
    for (const Func &f : outputs)
        for (const auto &kv : find_transitive_calls(f.function())) {
            const Function &g = kv.second;
            if (KernelPlan::StickCountPlace at = stick_count_place(g); at.outside > 0) plan.stick_count_outside[g.name()] = at;
            if (!output_names.count(g.name()) && g.has_update_definition() && g.schedule().compute_level().is_inlined())
                plan.per_element_updates.insert(g.name());
        }
    return captured;
}

}  // namespace spyre
