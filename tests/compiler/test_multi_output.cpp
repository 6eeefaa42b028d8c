// Pipelines with several outputs, as vLLM's fused_add_rms_norm has them: the residual sum
// s = x + res and the normalised rows of s, both results of one kernel (Pipeline({s, norm})). Each
// output matches Halide's CPU realisation of the same pipeline; a wrong number of output shapes and
// a Tuple output are refused by name.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "auto_schedule.h"
#include "compile_kernel.h"
#include "device/error.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// The fused residual add and RMSNorm over rows of `cols`, one fresh instance per call.
struct AddRmsNorm {
    ImageParam x{Float(16), 2, "x"}, res{Float(16), 2, "res"}, w{Float(16), 1, "w"};
    Var c{"c"}, r{"r"};
    Func resid{"resid"}, ss{"ss"}, norm{"norm"};
    explicit AddRmsNorm(int cols) {
        RDom k(0, cols, "k");
        resid(c, r) = x(c, r) + res(c, r);
        Expr v = cast<float>(resid(k, r));
        ss(r) = sum(v * v);
        Expr scale = 1.0f / sqrt(ss(r) / float(cols) + 1e-5f);
        norm(c, r) = cast<float16_t>(cast<float>(resid(c, r)) * scale) * w(c);
    }
    Pipeline pipeline() { return Pipeline({resid, norm}); }
};

struct MultiOutputCase {
    std::string schedule;  // "rows": every stage at root; "cores": 32 cores, ss in LX per tile
    int cols, rows;
};

void schedule_add_rms_norm(AddRmsNorm &k, const MultiOutputCase &c) {
    Var ro("ro"), ri("ri");
    spyre::schedule(k.resid).stick_vectorize(k.c);
    if (c.schedule == "rows") {
        spyre::schedule(k.ss).scratchpad_root();
        spyre::schedule(k.norm).stick_vectorize(k.c);
    } else {
        spyre::schedule(k.resid).ring_split(k.r, 32);
        spyre::schedule(k.norm).ring_split(k.r, 32).split(k.r, ro, ri, 2).stick_vectorize(k.c);
        spyre::schedule(k.ss).scratchpad_store_at(k.norm, ro);
    }
}

// Random inputs of a case (x, res, w) and Halide's CPU realisation of both outputs on them.
struct AddRmsNormData {
    std::vector<Runtime::Buffer<>> in;
    Buffer<float16_t> want_sum, want_norm;
};
AddRmsNormData add_rms_norm_data(const MultiOutputCase &c, uint32_t seed) {
    AddRmsNormData d;
    d.in = {random_buffer(halide_type_of<float16_t>(), {c.cols, c.rows}, -2, 2, seed),
            random_buffer(halide_type_of<float16_t>(), {c.cols, c.rows}, -2, 2, seed + 1),
            random_buffer(halide_type_of<float16_t>(), {c.cols}, 0.5f, 1.5f, seed + 2)};
    AddRmsNorm cpu(c.cols);
    cpu.x.set(Buffer<>(*d.in[0].raw_buffer())), cpu.res.set(Buffer<>(*d.in[1].raw_buffer()));
    cpu.w.set(Buffer<>(*d.in[2].raw_buffer()));
    cpu.ss.compute_root();
    d.want_sum = Buffer<float16_t>(c.cols, c.rows), d.want_norm = Buffer<float16_t>(c.cols, c.rows);
    cpu.pipeline().realize(Realization(d.want_sum, d.want_norm), cpu_reference_target());
    return d;
}

class MultiOutput : public ::testing::TestWithParam<MultiOutputCase> {};

TEST_P(MultiOutput, FusedAddRmsNormMatchesCpuOnBothOutputs) {
    const MultiOutputCase c = GetParam();
    const AddRmsNormData data = add_rms_norm_data(c, 1);
    const std::vector<Runtime::Buffer<>> &in = data.in;
    const Buffer<float16_t> &want_sum = data.want_sum, &want_norm = data.want_norm;

    AddRmsNorm dev(c.cols);
    schedule_add_rms_norm(dev, c);
    CompileOptions opt = kernel_options({{c.cols, c.rows}, {c.cols, c.rows}, {c.cols}}, {});
    opt.outputs = {TensorSpec{{c.cols, c.rows}, {}}, TensorSpec{{c.cols, c.rows}, {}}};
    DeviceProgram p = compile_for_spyre(dev.pipeline(), {dev.x, dev.res, dev.w}, opt);
    int outputs = 0;
    for (const BufferDecl &b : p.buffers) outputs += b.kind == BufferKind::Output;
    EXPECT_EQ(outputs, 2);
    SpyreRun run = run_on_spyre(p, in);
    ASSERT_EQ(run.outputs.size(), 2u);
    const Comparison s = compare(run.outputs[0], *want_sum.get()), n = compare(run.outputs[1], *want_norm.get());
    EXPECT_EQ(s.mismatches, 0) << "resid: " << s.first_mismatch;
    EXPECT_LE(n.max_ulp, 1) << "norm: " << n.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Shapes, MultiOutput,
                         ::testing::Values(MultiOutputCase{"rows", 256, 8}, MultiOutputCase{"rows", 100, 3},
                                           MultiOutputCase{"cores", 4096, 64}, MultiOutputCase{"cores", 1000, 70}),
                         [](const auto &info) {
                             const MultiOutputCase &c = info.param;
                             return c.schedule + "_" + std::to_string(c.cols) + "x" + std::to_string(c.rows);
                         });

// schedule=auto on the two-output pipeline: the norm is scheduled, the sum kept in device memory
// (an output), and the Pipeline compiled with the choice matches the CPU on both outputs.
class MultiOutputAuto : public ::testing::TestWithParam<MultiOutputCase> {};

TEST_P(MultiOutputAuto, FusedAddRmsNormMatchesCpuOnBothOutputs) {
    const MultiOutputCase c = GetParam();
    const AddRmsNormData data = add_rms_norm_data(c, 4);
    const std::vector<Runtime::Buffer<>> &in = data.in;
    const Buffer<float16_t> &want_sum = data.want_sum, &want_norm = data.want_norm;

    AddRmsNorm dev(c.cols);
    CompileOptions opt = kernel_options({{c.cols, c.rows}, {c.cols, c.rows}, {c.cols}}, {});
    opt.outputs = {TensorSpec{{c.cols, c.rows}, {}}, TensorSpec{{c.cols, c.rows}, {}}};
    AutoOptions ao;
    ao.max_evaluations = 24;
    ao.progress = false;
    const AutoResult r = auto_schedule(dev.pipeline(), {dev.x, dev.res, dev.w}, opt, ao);
    ASSERT_EQ(r.options.outputs.size(), 2u);
    EXPECT_NE(r.cpp.find("device_root()"), std::string::npos) << r.cpp;  // the sum, an output
    DeviceProgram p = compile_for_spyre(dev.pipeline(), {dev.x, dev.res, dev.w}, r.options);
    SpyreRun run = run_on_spyre(p, in);
    ASSERT_EQ(run.outputs.size(), 2u);
    const Comparison s = compare(run.outputs[0], *want_sum.get()), n = compare(run.outputs[1], *want_norm.get());
    EXPECT_EQ(s.mismatches, 0) << "resid: " << s.first_mismatch << "\n" << r.cpp;
    EXPECT_LE(n.max_ulp, 1) << "norm: " << n.first_mismatch << "\n" << r.cpp;
    // The search timed the program it chose: the Pipeline's own is the same kernel.
    EXPECT_NEAR(run.stats.us, r.us, 0.05 * r.us) << r.cpp;
}

INSTANTIATE_TEST_SUITE_P(Shapes, MultiOutputAuto,
                         ::testing::Values(MultiOutputCase{"auto", 4096, 64}, MultiOutputCase{"auto", 1000, 7}),
                         [](const auto &info) {
                             return std::to_string(info.param.cols) + "x" + std::to_string(info.param.rows);
                         });

TEST(MultiOutput, OutputShapesMustMatchTheOutputs) {
    AddRmsNorm k(64);
    schedule_add_rms_norm(k, {"rows", 64, 4});
    CompileOptions opt = kernel_options({{64, 4}, {64, 4}, {64}}, {64, 4});
    EXPECT_NE(error_of([&] { compile_for_spyre(k.pipeline(), {k.x, k.res, k.w}, opt); })
                  .find("the pipeline has 2 outputs; give one shape each in CompileOptions::outputs"),
              std::string::npos);
    opt.outputs = {TensorSpec{{64, 4}, {}}};
    EXPECT_NE(error_of([&] { compile_for_spyre(k.pipeline(), {k.x, k.res, k.w}, opt); })
                  .find("the pipeline has 2 outputs but CompileOptions::outputs gives 1 shapes"),
              std::string::npos);
}

TEST(MultiOutput, AnOutputWithoutAShapeOrAPipelineWithoutOutputsIsRefused) {
    AddRmsNorm k(64);
    schedule_add_rms_norm(k, {"rows", 64, 4});
    CompileOptions opt = kernel_options({{64, 4}, {64, 4}, {64}}, {});
    opt.outputs = {TensorSpec{{64, 4}, {}}, TensorSpec{}};
    EXPECT_NE(error_of([&] { compile_for_spyre(k.pipeline(), {k.x, k.res, k.w}, opt); })
                  .find("CompileOptions::outputs[1] ('norm') has no shape"),
              std::string::npos);
    EXPECT_NE(error_of([&] { compile_for_spyre(Pipeline(), {}, kernel_options({}, {64})); }).find("the pipeline has no output"),
              std::string::npos);
}

// The back end's own check, for callers that build a KernelSignature themselves.
TEST(MultiOutput, ASignatureWithTooFewOutputShapesIsRefused) {
    AddRmsNorm k(64);
    schedule_add_rms_norm(k, {"rows", 64, 4});
    const MachineDesc m;
    for (ImageParam p : {k.x, k.res}) fix_device_shape(p, TensorSpec{{64, 4}, {}}, m);
    fix_device_shape(k.w, TensorSpec{{64}, {}}, m);
    for (Func f : {k.resid, k.norm}) fix_device_shape(f.output_buffer(), TensorSpec{{64, 4}, {}}, m);
    KernelSignature sig;
    sig.kernel_name = "k";
    sig.inputs = {{"x", {64, 4}, {}}, {"res", {64, 4}, {}}, {"w", {64}, {}}};
    sig.output = {k.resid.name(), {64, 4}, {}};
    const std::string e = error_of([&] { compile_kernel(k.pipeline(), {k.x, k.res, k.w}, sig, m); });
    EXPECT_NE(e.find("the pipeline has 2 outputs but 1 output shapes were given"), std::string::npos) << e;
}

TEST(MultiOutput, TupleOutputsAreRefusedByName) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func pair("pair");
    pair(x, y) = Tuple(in(x, y), in(x, y) * 2);
    CompileOptions opt = kernel_options({{64, 4}}, {64, 4});
    const std::string e = error_of([&] { compile_for_spyre(Pipeline(pair), {in}, opt); });
    EXPECT_NE(e.find("output 'pair': Funcs with several values"), std::string::npos) << e;
}

}  // namespace
}  // namespace spyre::testing
