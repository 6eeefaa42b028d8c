#include "capture_stmt.h"

#include "device/error.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Capture : public IRMutator {
public:
    explicit Capture(Stmt *out) : out_(out) {}
    using IRMutator::mutate;
    Stmt mutate(const Stmt &s) override {
        *out_ = s;
        return s;
    }

private:
    Stmt *out_;
};

DType dtype_of(Type t, const std::string &what) {
    if (t == Float(16)) return DType::F16;
    if (t == Float(32)) return DType::F32;
    if (t == Int(32)) return DType::I32;
    throw_error(what, ": element type ", t, " is not supported on Spyre (float16, float32, int32 are)");
}

// Element strides that make Halide's flattened index equal the element offset in the device
// image. Only layouts whose stick dimension is dim 0 and whose stick count is the innermost outer
// dimension have such strides.
std::vector<int64_t> element_strides(const ArgSpec &a, DType t, const MachineDesc &m, const std::string &what) {
    check_layout(a.layout, a.shape, what);
    DeviceGeometry g = device_geometry(a.layout, a.shape, t, m.stick_bytes);
    int eb = dtype_bytes(t);
    if (a.layout.stick_dim != 0 || (a.shape.size() > 1 && g.stick_index_stride != m.stick_bytes))
        throw_error(what, ": layout ", layout_to_string(a.layout),
                    " is not supported by the compiler yet: the stick dimension must be dim 0 and its stick count the "
                    "innermost outer dimension");
    std::vector<int64_t> strides(a.shape.size(), 1);
    for (size_t d = 1; d < a.shape.size(); d++) strides[d] = g.dim_stride[d] / eb;
    return strides;
}

void constrain(Internal::Dimension dim, int64_t extent, int64_t stride) {
    dim.set_bounds(0, int(extent)).set_stride(int(stride));
}

}  // namespace

Stmt capture_stmt(Func output, const std::vector<ImageParam> &inputs, const KernelSignature &sig, KernelPlan &plan) {
    const MachineDesc &m = plan.machine;
    if (inputs.size() != sig.inputs.size())
        throw_error("kernel ", sig.kernel_name, ": ", inputs.size(), " inputs but ", sig.inputs.size(),
                    " input shapes given");
    std::vector<Argument> args;
    for (size_t i = 0; i < inputs.size(); i++) {
        const ImageParam &p = inputs[i];
        const ArgSpec &a = sig.inputs[i];
        std::string what = "input '" + p.name() + "'";
        if (int(a.shape.size()) != p.dimensions())
            throw_error(what, ": shape has ", a.shape.size(), " dims, the ImageParam has ", p.dimensions());
        DType t = dtype_of(p.type(), what);
        std::vector<int64_t> st = element_strides(a, t, m, what);
        for (int d = 0; d < p.dimensions(); d++) constrain(p.dim(d), a.shape[d], st[d]);
        BufferInfo b;
        b.name = p.name(), b.func = p.name(), b.type = t, b.place = Place::DeviceInput;
        b.shape = a.shape, b.layout = a.layout;
        b.elems = device_geometry(a.layout, a.shape, t, m.stick_bytes).total_bytes / dtype_bytes(t);
        plan.buffers[b.name] = b;
        args.push_back(p);
    }
    {
        const ArgSpec &a = sig.output;
        std::string what = "output '" + output.name() + "'";
        if (output.outputs() != 1) throw_error(what, ": Funcs with several outputs are not supported");
        if (int(a.shape.size()) != output.dimensions())
            throw_error(what, ": shape has ", a.shape.size(), " dims, the Func has ", output.dimensions());
        DType t = dtype_of(output.output_types()[0], what);
        std::vector<int64_t> st = element_strides(a, t, m, what);
        for (int d = 0; d < output.dimensions(); d++) constrain(output.output_buffer().dim(d), a.shape[d], st[d]);
        BufferInfo b;
        b.name = output.name(), b.func = output.name(), b.type = t, b.place = Place::DeviceOutput;
        b.shape = a.shape, b.layout = a.layout;
        b.elems = device_geometry(a.layout, a.shape, t, m.stick_bytes).total_bytes / dtype_bytes(t);
        plan.buffers[b.name] = b;
    }

    Stmt captured;
    Pipeline p(output);
    p.add_custom_lowering_pass(new Capture(&captured));
    // StrictFloat: the device computes op by op as written (IEEE), so Halide must not reassociate
    // or rewrite float arithmetic (x*x + 2x into (x+2)*x, s/1000 into s*0.001) on its way down.
    Target target = get_host_target()
                        .with_feature(Target::NoAsserts)
                        .with_feature(Target::NoBoundsQuery)
                        .with_feature(Target::StrictFloat);
    try {
        p.compile_to_module(args, sig.kernel_name, target);
    } catch (const Halide::CompileError &e) {
        throw_error("kernel ", sig.kernel_name, ": Halide rejected the schedule: ", e.what());
    } catch (const Halide::InternalError &e) {
        throw_error("kernel ", sig.kernel_name, ": Halide internal error while lowering: ", e.what());
    }
    if (!captured.defined()) throw_error("kernel ", sig.kernel_name, ": internal: lowering produced no statement");
    return captured;
}

}  // namespace spyre
