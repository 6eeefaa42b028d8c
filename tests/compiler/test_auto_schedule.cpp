// spyre::auto_schedule (autoschedule/auto_schedule.h) on pipelines written here without a directive:
// the schedules it picks match Halide's CPU realisation, stay within the machine's cores and LX,
// are the same for a seed, come within 5% of exhaustive search on a small space, print as C++, and
// bad input gets an error naming what is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>

#include "auto_directives.h"
#include "auto_layouts.h"
#include "auto_print.h"
#include "auto_schedule.h"
#include "auto_search.h"
#include "auto_space.h"
#include "auto_structure.h"
#include "compiler_test_util.h"
#include "device/error.h"
#include "device/program_io.h"
#include "flash_attention.h"
#include "matmul.h"
#include "matmul_stage.h"
#include "sim/model_validity.h"
#include "sim/program_work.h"
#include "sim/simulator.h"
#include "softmax.h"
#include "test_paths.h"
#include "user_terms.h"

namespace spyre::testing {
namespace {

using namespace Halide;

// A fused residual add and layer norm: h = a + b (fp32), then normalised over each row.
Algorithm residual_norm(int cols) {
    return [=] {
        Kernel k;
        ImageParam a(Float(16), 2, "a"), b(Float(16), 2, "b"), gamma(Float(16), 1, "gamma");
        Var x("x"), y("y");
        RDom r(0, cols, "r");
        Func h("h"), mean("mean"), var("var"), out("out");
        h(x, y) = cast<float>(a(x, y)) + cast<float>(b(x, y));
        mean(y) = sum(h(r, y)) / float(cols);
        Expr d = h(r, y) - mean(y);
        var(y) = sum(d * d) / float(cols);
        out(x, y) = cast<float16_t>((h(x, y) - mean(y)) / sqrt(var(y) + 1e-5f) * cast<float>(gamma(x)));
        k.inputs = {a, b, gamma};
        k.output = out;
        k.funcs = {{"h", h}, {"mean", mean}, {"var", var}};  // at root on the CPU, not inlined per element
        return k;
    };
}

// A pointwise chain over two inputs: silu(a * b + a) - relu(b), all in fp16.
Algorithm pointwise_chain() {
    return [] {
        Kernel k;
        ImageParam a(Float(16), 2, "a"), b(Float(16), 2, "b");
        Var x("x"), y("y");
        Func t("t"), s("s"), out("out");
        t(x, y) = a(x, y) * b(x, y) + a(x, y);
        s(x, y) = t(x, y) / (cast<float16_t>(1.0f) + exp(-t(x, y)));
        out(x, y) = s(x, y) - max(b(x, y), cast<float16_t>(0.0f));
        k.inputs = {a, b};
        k.output = out;
        return k;
    };
}

// A column mean: acc(x) += in(x, r) over the rows, in fp32, then scaled to fp16.
Algorithm column_mean(int rows) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x");
        RDom r(0, rows, "r");
        Func acc("acc"), out("out");
        acc(x) = 0.0f;
        acc(x) += cast<float>(in(x, r));
        out(x) = cast<float16_t>(acc(x) / float(rows));
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"acc", acc}};
        return k;
    };
}

// torch.softmax(x, dim=0) of a (rows, cols) tensor: column maxima and fp32 column sums over the
// rows, read by the 2-D ops. As schedules/softmax.h writes it (updates over the rows), or with the
// reductions inline (maximum(), sum()), which makes Halide-internal Funcs for them.
Algorithm softmax_dim0(int cols, int rows, bool inline_reductions) {
    return [=] {
        Kernel k;
        if (!inline_reductions) {
            SoftmaxKernel sk = make_softmax(cols, rows, 0);
            k.inputs = {sk.in};
            k.output = sk.out;
            k.funcs = {{"mx", sk.mx}, {"e", sk.e}, {"s", sk.s}};
            return k;
        }
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        RDom r(0, rows, "r");
        Func mx("mx"), e("e"), s("s"), out("softmax");
        mx(x) = maximum(in(x, r));
        e(x, y) = exp(in(x, y) - mx(x));
        s(x) = sum(cast<float>(e(x, r)));
        out(x, y) = e(x, y) / cast<float16_t>(s(x));
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"mx", mx}, {"e", e}, {"s", s}};
        return k;
    };
}

// A transpose with a scale: out(x, y) = 2 * in(y, x), the input's rows becoming the output's sticks.
Algorithm scaled_transpose() {
    return [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = in(y, x) * cast<float16_t>(2.0f);
        k.inputs = {in};
        k.output = out;
        return k;
    };
}

// A quantized linear layer written plainly: int8 weights converted to fp16, a matmul into fp32, a
// per-output-channel scale.
Algorithm quantized_linear(int inner) {
    return [=] {
        Kernel k;
        ImageParam a(Float(16), 2, "a"), w(Int(8), 2, "w"), scale(Float(16), 1, "scale");
        Var n("n"), m("m"), kk("kk");
        RDom r(0, inner, "r");
        Func wd("wd"), acc("acc"), out("out");
        wd(n, kk) = cast<float16_t>(w(n, kk));
        acc(n, m) = 0.0f;
        acc(n, m) += cast<float>(wd(n, r)) * cast<float>(a(r, m));
        out(n, m) = cast<float16_t>(acc(n, m) * cast<float>(scale(n)));
        k.inputs = {a, w, scale};
        k.output = out;
        k.funcs = {{"acc", acc}};
        return k;
    };
}

// A depthwise causal conv1d over the sequence (the stick dimension), with per-channel taps w(c, j):
// the weights' stick dimension is the output's rows.
Algorithm depthwise_conv(int seq) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in"), w(Float(16), 2, "w");
        Var t("t"), c("c");
        Func e = BoundaryConditions::constant_exterior(in, cast<float16_t>(0), {{0, seq}, {Expr(), Expr()}});
        Func out("out");
        out(t, c) = w(c, 0) * e(t, c) + w(c, 1) * e(t - 1, c) + w(c, 2) * e(t - 2, c);
        k.inputs = {in, w};
        k.output = out;
        return k;
    };
}

// Row sums of a few long rows: out(y) = sum over x of in(x, y), in fp32.
Algorithm few_long_rows(int cols) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var y("y");
        RDom r(0, cols, "r");
        Func out("out");
        out(y) = 0.0f;
        out(y) += cast<float>(in(r, y));
        k.inputs = {in};
        k.output = out;
        return k;
    };
}

// A matmul with few outputs and a long K.
// The catalogue's batched matmul (schedules/matmul.h), whose space has ring-shared operands.
Algorithm bmm_algorithm(int batch, int rows, int inner, int cols) {
    return [=] {
        MatmulKernel mk = make_bmm(batch, rows, inner, cols);
        Kernel k;
        k.inputs = {mk.a, mk.w};
        k.output = mk.out;
        k.funcs = {{"acc", mk.acc}};
        return k;
    };
}

Algorithm small_matmul(int inner) {
    return [=] {
        Kernel k;
        ImageParam a(Float(16), 2, "a"), w(Float(16), 2, "w");
        Var n("n"), m("m");
        RDom r(0, inner, "r");
        Func acc("acc"), out("out");
        acc(n, m) = 0.0f;
        acc(n, m) += cast<float>(a(r, m)) * cast<float>(w(n, r));
        out(n, m) = cast<float16_t>(acc(n, m));
        k.inputs = {a, w};
        k.output = out;
        k.funcs = {{"acc", acc}};
        return k;
    };
}

// One activation times a weight matrix per batch (lm_head over the vocabulary's parts, each part's
// weights its own): x {K, M}, w {N, K, B} -> {N, M, B}.
Algorithm weights_per_batch_matmul(int inner) {
    return [=] {
        Kernel k;
        ImageParam x(Float(16), 2, "x"), w(Float(16), 3, "w");
        Var n("n"), m("m"), b("b");
        RDom r(0, inner, "r");
        Func acc("acc"), out("out");
        acc(n, m, b) = 0.0f;
        acc(n, m, b) += cast<float>(x(r, m)) * cast<float>(w(n, r, b));
        out(n, m, b) = cast<float16_t>(acc(n, m, b));
        k.inputs = {x, w};
        k.output = out;
        k.funcs = {{"acc", acc}};
        k.vars = {{"n", n}, {"m", m}, {"b", b}};
        return k;
    };
}

// The reduction domain of `f`'s update, as its definition names it.
RDom update_rdom(const Func &f) {
    struct Find : Internal::IRVisitor {
        Internal::ReductionDomain d;
        using Internal::IRVisitor::visit;
        void visit(const Internal::Variable *v) override {
            if (v->reduction_domain.defined()) d = v->reduction_domain;
        }
    } find;
    for (const Expr &e : f.function().update(0).values()) e.accept(&find);
    return RDom(find.d);
}

CompileOptions auto_schedule_options_for(const std::vector<std::vector<int>> &ins, const std::vector<int> &out,
                           const MachineDesc &m = {}) {
    CompileOptions o;
    o.machine = m;
    for (const auto &s : ins) o.inputs.push_back(TensorSpec{std::vector<int64_t>(s.begin(), s.end()), {}});
    o.output = TensorSpec{std::vector<int64_t>(out.begin(), out.end()), {}};
    return o;
}

// An instance of `alg`, the options for its shapes, and its candidate space.
struct CaseSpace {
    Kernel k;
    CompileOptions o;
    autosched::SpaceResult space;
};

CaseSpace case_space(const Algorithm &alg, const std::vector<std::vector<int>> &ins, const std::vector<int> &out,
                     int cores, bool reassociate = false) {
    CaseSpace c{alg(), auto_schedule_options_for(ins, out), {}};
    autosched::SpaceShapes shapes;
    for (const auto &i : ins) shapes.inputs.push_back(std::vector<int64_t>(i.begin(), i.end()));
    shapes.output = std::vector<int64_t>(out.begin(), out.end());
    c.space = autosched::candidate_space(autosched::analyse_pipeline(c.k.output, c.k.inputs), shapes, c.o.machine,
                                         cores, reassociate);
    return c;
}

AutoOptions quick(uint32_t seed = 1) {
    AutoOptions a;
    a.seed = seed;
    a.max_evaluations = 24;
    a.progress = false;
    return a;
}

Schedule auto_scheduled(const std::vector<std::vector<int>> &ins, const std::vector<int> &out, AutoResult *result,
                        const MachineDesc &m = {}, AutoOptions ao = quick()) {
    return [=](Kernel &k) { *result = auto_schedule(k.output, k.inputs, auto_schedule_options_for(ins, out, m), ao); };
}

struct ShapeCase {
    int cols, rows;
};

class AutoResidualNorm : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(AutoResidualNorm, MatchesCpu) {
    const ShapeCase c = GetParam();
    AutoResult r;
    std::vector<std::vector<int>> ins{{c.cols, c.rows}, {c.cols, c.rows}, {c.cols}};
    DiffResult d = run_differential(residual_norm(c.cols), auto_scheduled(ins, {c.cols, c.rows}, &r), ins,
                                    {c.cols, c.rows});
    EXPECT_LE(d.cmp.max_ulp, 1) << d.cmp.first_mismatch << "\n" << r.cpp;
    EXPECT_GT(r.timed, 0);
    EXPECT_NEAR(d.stats.us, r.us, 1e-6 * r.us) << "the schedule applied is the one timed";
}

INSTANTIATE_TEST_SUITE_P(Shapes, AutoResidualNorm, ::testing::Values(ShapeCase{256, 64}, ShapeCase{1000, 37}),
                         [](const auto &i) { return std::to_string(i.param.cols) + "x" + std::to_string(i.param.rows); });

class AutoPointwiseChain : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(AutoPointwiseChain, MatchesCpu) {
    const ShapeCase c = GetParam();
    AutoResult r;
    std::vector<std::vector<int>> ins{{c.cols, c.rows}, {c.cols, c.rows}};
    DiffResult d = run_differential(pointwise_chain(), auto_scheduled(ins, {c.cols, c.rows}, &r), ins,
                                    {c.cols, c.rows}, -2, 2);
    EXPECT_LE(d.cmp.max_ulp, 2) << d.cmp.first_mismatch << "\n" << r.cpp;  // exp: 2 ULP, as softmax
}

INSTANTIATE_TEST_SUITE_P(Shapes, AutoPointwiseChain, ::testing::Values(ShapeCase{512, 128}, ShapeCase{200, 33}),
                         [](const auto &i) { return std::to_string(i.param.cols) + "x" + std::to_string(i.param.rows); });

class AutoColumnMean : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(AutoColumnMean, MatchesCpu) {
    const ShapeCase c = GetParam();
    AutoResult r;
    std::vector<std::vector<int>> ins{{c.cols, c.rows}};
    DiffResult d = run_differential(column_mean(c.rows), auto_scheduled(ins, {c.cols}, &r), ins, {c.cols});
    EXPECT_EQ(d.cmp.max_ulp, 0) << d.cmp.first_mismatch << "\n" << r.cpp;
    EXPECT_EQ(r.family, "columns");
}

INSTANTIATE_TEST_SUITE_P(Shapes, AutoColumnMean, ::testing::Values(ShapeCase{4096, 16}, ShapeCase{1000, 5}),
                         [](const auto &i) { return std::to_string(i.param.cols) + "x" + std::to_string(i.param.rows); });

struct SoftmaxDim0Case {
    int cols, rows, max_cores;
    bool inline_reductions = false;
};

class AutoSoftmaxDim0 : public ::testing::TestWithParam<SoftmaxDim0Case> {};

// Column reductions read by 2-D ops (torch.softmax(x, dim=0)): no row split or row tile can divide
// them (every row needs the reductions over all rows), so the columns go in strips of whole sticks
// over at most max_cores cores (and at most one core per stick of columns), as
// schedules/softmax.cpp's stage4 does by hand.
TEST_P(AutoSoftmaxDim0, ColumnStripsMatchCpuWithinMaxCores) {
    const SoftmaxDim0Case c = GetParam();
    AutoOptions ao = quick();
    ao.max_cores = c.max_cores;
    ao.max_evaluations = 12;
    AutoResult r;
    std::vector<std::vector<int>> ins{{c.cols, c.rows}};
    DiffResult d = run_differential(softmax_dim0(c.cols, c.rows, c.inline_reductions),
                                    auto_scheduled(ins, {c.cols, c.rows}, &r, {}, ao), ins, {c.cols, c.rows});
    EXPECT_LE(d.cmp.max_ulp, 2) << d.cmp.first_mismatch << "\n" << r.cpp;  // exp: 2 ULP, as softmax
    EXPECT_EQ(r.family, "column_strips") << r.summary;
    EXPECT_LE(d.program.num_cores, std::min(c.max_cores, (c.cols + 63) / 64)) << r.summary;
    EXPECT_NEAR(d.stats.us, r.us, 1e-6 * r.us) << "the schedule applied is the one timed";
}

INSTANTIATE_TEST_SUITE_P(Shapes, AutoSoftmaxDim0,
                         ::testing::Values(SoftmaxDim0Case{256, 128, 1}, SoftmaxDim0Case{256, 128, 4},
                                           SoftmaxDim0Case{1024, 128, 16}, SoftmaxDim0Case{1024, 128, 32},
                                           SoftmaxDim0Case{1000, 70, 4}, SoftmaxDim0Case{1024, 512, 1},
                                           SoftmaxDim0Case{256, 128, 4, true}, SoftmaxDim0Case{1024, 128, 32, true}),
                         [](const auto &i) {
                             return std::to_string(i.param.cols) + "x" + std::to_string(i.param.rows) + "_" +
                                    std::to_string(i.param.max_cores) + "cores" +
                                    (i.param.inline_reductions ? "_inline" : "");
                         });

// A column reduction that reads a statistic of each row it sums: m(y) = sum(in(r, y)), out(x) =
// sum(in(x, ry) - m(ry)) (spyre-fuzz-diff --seed 13 --case 97). The read m(ry) is the same for
// every column, a broadcast, so out still streams along its columns; m, a reduction along each
// row, is placed once per tile of columns and also tried unvectorized (with 16 rows, vectorized
// along them it reads past the input's last row). No candidate compiled before.
TEST(AutoColumnReduction, AStatisticPerSummedRowIsPlacedOnceAndMatchesCpu) {
    Algorithm alg = [] {
        ImageParam in(Float(32), 2, "in0");
        Var x("x"), y("y");
        Func m("m"), out("out");
        RDom r(0, 128, "r");
        m(y) = sum(in(r, y));
        RDom ry(0, 16, "ry");
        out(x) = sum(in(x, ry) - m(ry));
        Kernel k;
        k.inputs = {in};
        k.output = out;
        return k;
    };
    AutoResult r;
    DiffResult d = run_differential(alg, auto_scheduled({{128, 16}}, {128}, &r), {{128, 16}}, {128});
    EXPECT_EQ(d.cmp.mismatches, 0) << d.cmp.first_mismatch << "\n" << r.cpp;
    EXPECT_EQ(r.family, "columns") << r.summary;
    EXPECT_NE(r.summary.find("rows:scalar"), std::string::npos) << r.summary;
}

// The candidates that leave an update as Halide's default say so: Halide prints no "has not been
// scheduled" warning while the search lowers them (it printed 32 for this pipeline).
TEST(AutoSoftmaxDim0Quiet, TheSearchPrintsNoHalideWarnings) {
    AutoOptions ao = quick();
    ao.max_evaluations = 40;
    AutoResult r;
    std::vector<std::vector<int>> ins{{256, 128}};
    Kernel k = softmax_dim0(256, 128, false)();
    ::testing::internal::CaptureStderr();
    r = auto_schedule(k.output, k.inputs, auto_schedule_options_for(ins, {256, 128}), ao);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.find("has not been scheduled"), std::string::npos) << err;
    EXPECT_GT(r.timed, 0);
}

// Columns that are not whole strips (1000 = 15.6 sticks): the last strip runs on into the stick
// padding (RoundUp, as the hand schedule splits), so every strip width compiles; a guarded split
// predicated the output's stores, which have no Spyre form, wherever a strip was wider than a stick.
TEST(AutoSoftmaxDim0Space, EveryStripWidthCompilesWhenTheColumnsAreNotWholeStrips) {
    CaseSpace c = case_space(softmax_dim0(1000, 70, false), {{1000, 70}}, {1000, 70}, 4);
    int widths = 0;
    for (const autosched::Candidate &cand : c.space.candidates) {
        auto is = [&](const char *name, const char *value) {
            return cand.choice(name) && cand.choice(name)->value == value;
        };
        if (cand.family != "column_strips" || !is("cores", "4") || !is("t", "strip") || !is("e", "strip") ||
            !is("inputs", "strip"))
            continue;
        widths++;
        EXPECT_EQ(error_of([&] { autosched::time_candidate(c.k.output, c.k.inputs, cand, c.o); }), "(no error)")
            << cand.summary();
    }
    EXPECT_EQ(widths, 3) << "strips of 1, 2 and 4 sticks: each core's 4";
}

struct MatmulCase {
    int rows, inner, cols;
};

class AutoQuantizedLinear : public ::testing::TestWithParam<MatmulCase> {};

// The int8 weights' conversion is found and computed per K panel beside the MATMUL, as the hand
// schedule (schedules/qlinear.cpp) does, instead of a rows schedule that holds all of W.
TEST_P(AutoQuantizedLinear, ConvertsWPerPanelAndMatchesCpu) {
    const MatmulCase c = GetParam();
    AutoResult r;
    std::vector<std::vector<int>> ins{{c.inner, c.rows}, {c.cols, c.inner}, {c.cols}};
    DiffResult d = run_differential(quantized_linear(c.inner), auto_scheduled(ins, {c.cols, c.rows}, &r), ins,
                                    {c.cols, c.rows}, -6, 6);
    EXPECT_EQ(d.cmp.max_ulp, 0) << d.cmp.first_mismatch << "\n" << r.cpp;
    EXPECT_EQ(r.family, "matmul") << r.summary;
    EXPECT_NE(r.cpp.find("wd.compute_at(acc, ko"), std::string::npos) << r.cpp;
    EXPECT_NE(r.cpp.find("= a.in(acc);"), std::string::npos) << "A's panel staged at the same loop: " << r.cpp;
    EXPECT_EQ(d.stats.pe_macs % (int64_t(c.rows) * c.cols), 0) << "the PE array does the products";
    EXPECT_GT(d.stats.pe_macs, 0);
}

INSTANTIATE_TEST_SUITE_P(Shapes, AutoQuantizedLinear,
                         ::testing::Values(MatmulCase{64, 512, 1024}, MatmulCase{16, 512, 1024}),
                         [](const auto &i) {
                             return std::to_string(i.param.rows) + "x" + std::to_string(i.param.inner) + "x" +
                                    std::to_string(i.param.cols);
                         });

// With rows too long for tiles of a stick's worth of channels, the per-channel weights are copied
// per core (whole sticks of channels) instead of per tile (part-sticks, which the back end refuses).
TEST(AutoDepthwiseConv, WeightsPerCoreWhenTilesCutTheirSticksMatchesCpu) {
    MachineDesc m;
    m.lx_usable_bytes = 256 * 1024;
    m.lx_ws_knee_bytes = 128 * 1024;
    const int seq = 4096, channels = 512;
    std::vector<std::vector<int>> ins{{seq, channels}, {channels, 3}};
    AutoResult r;
    DiffResult d = run_differential(depthwise_conv(seq), auto_scheduled(ins, {seq, channels}, &r, m), ins,
                                    {seq, channels}, -1, 1, m);
    EXPECT_EQ(d.cmp.max_ulp, 0) << d.cmp.first_mismatch << "\n" << r.cpp;
    EXPECT_NE(r.summary.find("w:core"), std::string::npos) << r.summary;
    EXPECT_GT(d.program.num_cores, 1) << r.summary;
}

int ring_reduces(const DeviceProgram &p) {
    int n = 0;
    for (const Instr &i : p.code) n += i.op == Opcode::RING_REDUCE;
    return n;
}

// With reassociation allowed, a reduction whose outputs are too few to spread over the cores is
// split over them instead; the partials meet on the ring. Sums then differ from the CPU's by
// rounding only. Without it, no schedule splits a reduction.
TEST(AutoSplitK, FewLongRowsSplitTheirSumsOverTheCores) {
    // 32 rows: one fp32 stick of sums, which a row split cannot divide over cores in whole sticks.
    std::vector<std::vector<int>> ins{{4096, 32}};
    AutoResult plain, split;
    DiffResult a = run_differential(few_long_rows(4096), auto_scheduled(ins, {32}, &plain), ins, {32}, -1, 1);
    EXPECT_EQ(a.cmp.max_ulp, 0) << a.cmp.first_mismatch;
    EXPECT_EQ(ring_reduces(a.program), 0) << plain.summary;
    EXPECT_EQ(a.program.num_cores, 1) << plain.summary;
    AutoOptions ao = quick();
    ao.allow_reassociation = true;
    DiffResult b = run_differential(few_long_rows(4096), auto_scheduled(ins, {32}, &split, {}, ao), ins, {32}, -1, 1);
    EXPECT_EQ(split.family, "split_k") << split.summary;
    EXPECT_GT(b.program.num_cores, 2);
    EXPECT_EQ(ring_reduces(b.program), 1);
    EXPECT_LT(split.us, plain.us) << split.summary << " vs " << plain.summary;
    EXPECT_LE(b.cmp.max_ulp, 16) << b.cmp.first_mismatch;  // a 4096-term fp32 sum in another order
    EXPECT_NE(split.cpp.find("ring_split_reduction("), std::string::npos) << split.cpp;
}

TEST(AutoSplitK, SmallMatmulWithALongKSplitsKOverThePeArrays) {
    const int K = 8192;
    std::vector<std::vector<int>> ins{{K, 64}, {64, K}};
    AutoOptions ao = quick();
    ao.allow_reassociation = true;
    AutoResult r;
    DiffResult d = run_differential(small_matmul(K), auto_scheduled(ins, {64, 64}, &r, {}, ao), ins, {64, 64}, -1, 1);
    EXPECT_EQ(r.family, "split_k") << r.summary;
    EXPECT_EQ(ring_reduces(d.program), 1);
    EXPECT_EQ(d.stats.pe_macs, int64_t(K) * 64 * 64);
    // One fp16 ULP of the largest outputs (|out| < 128): the partials add in core order.
    EXPECT_LE(d.cmp.max_abs_error, 0.0625) << d.cmp.first_mismatch;
}

struct BatchedWeightsCase {
    int batch, rows, inner, cols;
};

class AutoWeightsPerBatch : public ::testing::TestWithParam<BatchedWeightsCase> {};

// A W per batch and one A for all is a matmul stage too (it had only vector-unit row schedules,
// 85x slower than the hand schedule at lm_head's size): on the PE array, as fast as the stage
// schedule by hand, and right (a W ring shared across batches would mix their weights).
TEST_P(AutoWeightsPerBatch, RunsOnThePeArrayAndMatchesCpu) {
    const BatchedWeightsCase c = GetParam();
    std::vector<std::vector<int>> ins{{c.inner, c.rows}, {c.cols, c.inner, c.batch}};
    const std::vector<int> out{c.cols, c.rows, c.batch};
    AutoResult r;
    DiffResult d = run_differential(weights_per_batch_matmul(c.inner), auto_scheduled(ins, out, &r), ins, out, -1, 1);
    // On the PE array (either family: since the shared A crosses device memory once, a rows
    // schedule that gives each core a batch may win).
    EXPECT_EQ(d.stats.pe_macs, int64_t(c.batch) * c.rows * c.inner * c.cols) << r.summary;
    EXPECT_LE(d.cmp.max_abs_error, 0.0625) << d.cmp.first_mismatch << "\n" << r.cpp;
    const DiffResult hand = run_differential(
        weights_per_batch_matmul(c.inner),
        [&](Kernel &k) {
            MatmulStage st;
            st.what = "weights per batch";
            st.out = k.output, st.acc = k.funcs.at("acc"), st.k = update_rdom(st.acc);
            st.n = k.vars.at("n"), st.m = k.vars.at("m"), st.b = k.vars.at("b");
            st.batch = c.batch, st.rows = c.rows, st.inner = c.inner, st.cols = c.cols;
            schedule_matmul_stage(st, "pe", 32, MachineDesc{});
        },
        ins, out, -1, 1);
    EXPECT_LE(d.stats.us, hand.stats.us) << r.summary;
}

// Every PE candidate compiles (none is refused at these shapes) and is right, the rings in
// particular: a W ring may go round one batch's cores only, since each batch has weights of its own.
TEST(AutoWeightsPerBatchSpace, EveryPeCandidateCompilesAndMatchesCpu) {
    using namespace autosched;
    const std::vector<std::vector<int>> ins{{256, 8}, {512, 256, 2}};
    const std::vector<int> out{512, 8, 2};
    CaseSpace cs = case_space(weights_per_batch_matmul(256), ins, out, 32);
    int checked = 0, rings_w = 0;
    RefusalLog refusals({});  // every PE candidate compiles
    for (const Candidate &c : cs.space.candidates) {
        if (c.family != "matmul" || c.choice("vector")) continue;
        DiffResult d;
        try {
            d = run_differential(weights_per_batch_matmul(256),
                                 [&](Kernel &k) {
                                     // The candidate names the space's instance of the Funcs.
                                     std::map<std::string, Func> funcs{{cs.k.output.name(), k.output},
                                                                       {cs.k.funcs.at("acc").name(), k.funcs.at("acc")}};
                                     std::map<std::string, Func> in{{cs.k.inputs[0].name(), Func(k.inputs[0])},
                                                                    {cs.k.inputs[1].name(), Func(k.inputs[1])}};
                                     apply_directives(c.directives, funcs, in, MachineDesc{});
                                 },
                                 ins, out, -1, 1);
        } catch (const std::exception &x) {
            refusals.add(x, c.summary());
            continue;
        }
        EXPECT_LE(d.cmp.max_abs_error, 0.0625) << c.summary() << ": " << d.cmp.first_mismatch;
        checked++;
        rings_w += c.choice("pe_ring_w") != nullptr;
    }
    EXPECT_GE(checked, 4);
    EXPECT_GE(rings_w, 1);
}

INSTANTIATE_TEST_SUITE_P(Shapes, AutoWeightsPerBatch,
                         ::testing::Values(BatchedWeightsCase{4, 8, 512, 1024}, BatchedWeightsCase{2, 5, 256, 640}),
                         [](const auto &i) {
                             return std::to_string(i.param.batch) + "x" + std::to_string(i.param.rows) + "x" +
                                    std::to_string(i.param.inner) + "x" + std::to_string(i.param.cols);
                         });

TEST(AutoTranspose, ScaledTransposeMatchesCpu) {
    AutoResult r;
    std::vector<std::vector<int>> ins{{512, 256}};  // {cols, rows}: 256 rows, whole sticks
    DiffResult d = run_differential(scaled_transpose(), auto_scheduled(ins, {256, 512}, &r), ins, {256, 512});
    EXPECT_EQ(d.cmp.max_ulp, 0) << d.cmp.first_mismatch << "\n" << r.cpp;
    EXPECT_NE(r.cpp.find("reorder(xi, "), std::string::npos) << "one output stick per row: " << r.cpp;
}

TEST(AutoScheduleLimits, StaysWithinMaxCoresAndTheMachinesCores) {
    std::vector<std::vector<int>> ins{{512, 256}, {512, 256}};
    {
        Kernel k = pointwise_chain()();
        AutoOptions ao = quick();
        ao.max_cores = 4;
        CompileOptions o = auto_schedule_options_for(ins, {512, 256});
        auto_schedule(k.output, k.inputs, o, ao);
        EXPECT_LE(compile_for_spyre(k.output, k.inputs, o).num_cores, 4);
    }
    {
        MachineDesc m;
        m.cores = 8;
        // A machine whose one core draws a fraction of the channel, so more cores pay off (on the
        // default machine one core can drive the channel, and a small kernel may stay on one).
        m.dma_core_bytes_per_ns = 20;
        Kernel k = pointwise_chain()();
        CompileOptions o = auto_schedule_options_for(ins, {512, 256}, m);
        auto_schedule(k.output, k.inputs, o, quick());
        DeviceProgram p = compile_for_spyre(k.output, k.inputs, o);
        EXPECT_LE(p.num_cores, 8);
        EXPECT_GT(p.num_cores, 1) << "with a slow per-core DMA, a 256-row pointwise kernel is faster on more than one core";
    }
}

TEST(AutoScheduleLimits, FitsASmallLx) {
    MachineDesc m;
    m.lx_bytes = 256 * 1024;
    m.lx_usable_bytes = 128 * 1024;
    m.lx_ws_knee_bytes = 64 * 1024;
    std::vector<std::vector<int>> ins{{4096, 64}, {4096, 64}, {4096}};
    AutoResult r;
    DiffResult d =
        run_differential(residual_norm(4096), auto_scheduled(ins, {4096, 64}, &r, m), ins, {4096, 64}, -4, 4, m);
    EXPECT_LE(d.cmp.max_ulp, 1) << r.cpp;
    EXPECT_LE(d.stats.lx_peak_bytes, m.lx_usable_bytes) << r.cpp;
    EXPECT_GT(r.pruned_lx, 0) << "the pre-filter drops tiles that cannot fit";
}

// The time the search reports is the time of the kernel the caller compiles from its schedule (the
// winner is lowered on its own at the end: a shared lowering can differ from that), for causal
// attention, whose shared lowerings differ most, and a norm over rows that split unevenly.
TEST(AutoScheduleSearch, TheReportedTimeIsTheCompiledKernels) {
    struct Case {
        const char *name;
        Algorithm alg;
        std::vector<std::vector<int>> ins;
        std::vector<int> out;
    };
    const Algorithm causal = [] {
        FlashAttentionKernel a = make_flash_attention(64, 256, 2, 64, 64, true);
        Kernel k;
        k.inputs = {a.q, a.k, a.v};
        k.output = a.out;
        return k;
    };
    for (const Case &c : {Case{"causal_attention", causal, {{64, 256, 2}, {64, 256, 2}, {64, 256, 2}}, {64, 256, 2}},
                          Case{"residual_norm", residual_norm(1024), {{1024, 47}, {1024, 47}, {1024}}, {1024, 47}}}) {
        Kernel k = c.alg();
        const CompileOptions o = auto_schedule_options_for(c.ins, c.out);
        const AutoResult r = auto_schedule(k.output, k.inputs, o, quick());
        SimOptions so;
        so.timing_only = true;
        so.summarize_loops = !r.exact;
        EXPECT_EQ(simulate(compile_for_spyre(k.output, k.inputs, o), o.machine, {}, so).stats.us, r.us) << c.name << ": " << r.summary;
    }
}

TEST(AutoScheduleSearch, SameSeedSameSchedule) {
    std::vector<std::vector<int>> ins{{1024, 64}, {1024, 64}, {1024}};
    auto run = [&](uint32_t seed) {
        Kernel k = residual_norm(1024)();
        return auto_schedule(k.output, k.inputs, auto_schedule_options_for(ins, {1024, 64}), quick(seed));
    };
    AutoResult a = run(7), b = run(7);
    EXPECT_EQ(a.summary, b.summary);
    EXPECT_EQ(a.us, b.us);
    EXPECT_EQ(a.timed, b.timed);
    // The C++ is the same but for the line with the search's wall time and the unique suffixes
    // Halide gives the inline reductions of each new instance ("sum", then "sum$5": the first in a
    // process has none).
    auto body = [](const std::string &s) {
        std::string t = s.substr(s.find("\n", s.find("candidates,")) + 1), out;
        // Every `$<digits>` suffix is dropped (a hand scan: std::regex draws a false
        // -Wmaybe-uninitialized from GCC 12 at -Og).
        for (size_t i = 0; i < t.size(); i++) {
            if (t[i] == '$' && i + 1 < t.size() && isdigit((unsigned char)t[i + 1])) {
                while (i + 1 < t.size() && isdigit((unsigned char)t[i + 1])) i++;
                continue;
            }
            out += t[i];
        }
        return out;
    };
    EXPECT_EQ(body(a.cpp), body(b.cpp));
}

// The default search has no wall-time bound (its result must not depend on the machine's load); a
// bound the user sets and the search hits is reported, never silent: here it stops the search before
// the first candidate is timed, and the error says so.
TEST(AutoScheduleSearch, AWallTimeLimitThatCutsTheSearchIsReported) {
    EXPECT_EQ(AutoOptions{}.time_budget_s, 0);
    std::vector<std::vector<int>> ins{{1024, 64}, {1024, 64}, {1024}};
    Kernel k = residual_norm(1024)();
    AutoOptions ao = quick();
    ao.time_budget_s = 1e-9;
    const std::string e = error_of([&] { auto_schedule(k.output, k.inputs, auto_schedule_options_for(ins, {1024, 64}), ao); });
    EXPECT_NE(e.find("no candidate was timed within the time budget"), std::string::npos) << e;
}

// stop_after_timing stops the search after that many candidates of its order, the same ones each
// time: two runs agree, and say where they stopped. (That a run the wall-time limit stopped is
// replayed by stop_after_timing at its count is not tested: where the limit falls depends on the
// machine's load, and a test must not depend on wall time.)
TEST(AutoScheduleSearch, AStopAfterTimingRunIsRepeatable) {
    std::vector<std::vector<int>> ins{{1024, 64}, {1024, 64}, {1024}};
    auto run = [&] {
        Kernel k = residual_norm(1024)();
        AutoOptions ao = quick();
        ao.stop_after_timing = 5;
        return auto_schedule(k.output, k.inputs, auto_schedule_options_for(ins, {1024, 64}), ao);
    };
    const AutoResult a = run(), b = run();
    EXPECT_EQ(a.stopped_at, 5);
    EXPECT_EQ(a.timed, 5);
    EXPECT_FALSE(a.stopped_by_time_limit);
    EXPECT_EQ(a.summary, b.summary);
    EXPECT_EQ(a.us, b.us);
    EXPECT_NE(a.cpp.find("stopped after 5 candidates of its order"), std::string::npos) << a.cpp;
}

TEST(AutoScheduleSearch, ANegativeStopOrTimeLimitIsRefusedByName) {
    std::vector<std::vector<int>> ins{{1024, 64}, {1024, 64}, {1024}};
    Kernel k = residual_norm(1024)();
    AutoOptions ao = quick();
    ao.stop_after_timing = -1;
    std::string e = error_of([&] { auto_schedule(k.output, k.inputs, auto_schedule_options_for(ins, {1024, 64}), ao); });
    EXPECT_NE(e.find("AutoOptions::stop_after_timing is -1"), std::string::npos) << e;
    ao = quick();
    ao.time_budget_s = -2;
    e = error_of([&] { auto_schedule(k.output, k.inputs, auto_schedule_options_for(ins, {1024, 64}), ao); });
    EXPECT_NE(e.find("AutoOptions::time_budget_s is -2"), std::string::npos) << e;
}

// The refusals the back end gives the candidates of each pipeline these tests walk (by the case's
// name; as of 26be57a), and no other: a candidate the space offers for a pipeline is refused for one
// of these reasons or compiles. Parts of the messages, without the numbers that vary by candidate.
const char *const kLxOverflow = ": LX overflow: the kernel needs ";
const char *const kAccInLxReadOutsideTheSplit = "(by acc), but it is read outside any ring split";
std::vector<std::string> expected_refusals(const std::string &pipeline) {
    static const std::map<std::string, std::vector<std::string>> by_pipeline = {
        {"residual_norm",
         {"Func mean: stores a run that does not start on a stick boundary",
          "Func mean: access to mean does not start on a stick boundary",
          "Func sum: access to a does not start on a stick boundary"}},
        {"residual_norm_uneven_rows",
         {"Func mean: stores a run that does not start on a stick boundary",
          "Func mean: access to mean does not start on a stick boundary"}},
        {"quantized_linear",
         {"Halide refused the pipeline or its schedule while lowering the schedule: Func \"wd\" is computed at the "
          "following invalid location",
          "Func acc: pe_matmul: operands must be float16 values widened to float32", kAccInLxReadOutsideTheSplit,
          // w, or w.in()
          "from an address that is not on a stick boundary: its vectors are 64 elements and a stick of w",
          "(by wd), but it is read under the ring split loop m of out (its split over cores) with another share"}},
        {"depthwise_conv",
         {"Func out: access to w does not start on a stick boundary",
          "Func w.in(): access to w does not start on a stick boundary",
          "Func out: ring split loop c of out (its split over cores) gives each core 32 elements along the stick "
          "dimension of "}},
        {"small_matmul_split_k", {kLxOverflow, kAccInLxReadOutsideTheSplit}},
        {"bmm_ring_shared", {kLxOverflow, kAccInLxReadOutsideTheSplit}},
        {"bmm_summarised", {"no tile staged at this loop is the same on every core of a run of "}},
    };
    auto it = by_pipeline.find(pipeline);
    return it == by_pipeline.end() ? std::vector<std::string>{} : it->second;  // none: every candidate compiles
}

struct CacheCase {
    const char *name;
    Algorithm alg;
    std::vector<std::vector<int>> ins;
    std::vector<int> out;
};

class AutoLoweringCache : public ::testing::TestWithParam<CacheCase> {};

// Candidates that differ only in tile sizes and core counts share one Halide lowering (their factors
// as Params, substituted afterwards): each is timed exactly as its own lowering times it, refused
// where that is refused, computes what it computes, and the lowerings are fewer than the
// candidates.
TEST_P(AutoLoweringCache, SharedLoweringTimesEqualThePlainOnes) {
    using namespace autosched;
    const CacheCase &c = GetParam();
    CaseSpace cs = case_space(c.alg, c.ins, c.out, 8);
    Kernel &k = cs.k;
    const CompileOptions &o = cs.o;
    const SpaceResult &space = cs.space;
    // The best estimates and their siblings, as the search picks them.
    std::vector<size_t> idx(space.candidates.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
        return space.candidates[a].estimate_ns < space.candidates[b].estimate_ns;
    });
    std::map<std::string, std::vector<size_t>> by_key;
    for (size_t i : idx) by_key[structure_key(space.candidates[i].directives)].push_back(i);
    std::vector<size_t> picked;
    for (size_t i : idx) {
        const auto &sib = by_key[structure_key(space.candidates[i].directives)];
        if (sib.size() < 2) continue;
        for (size_t j = 0; j < sib.size() && j < 6; j++) picked.push_back(sib[j]);
        if (picked.size() >= 24) break;
    }
    ASSERT_GE(picked.size(), 6u) << "the space has candidates that share a lowering";
    LoweringCache cache;
    int compared = 0;
    RefusalLog refusals(expected_refusals(c.name));
    for (size_t i : picked) {
        const Candidate &cand = space.candidates[i];
        double plain = -1, shared = -1;
        std::string plain_refusal, shared_refusal;
        try {
            plain = time_candidate(k.output, k.inputs, cand, o, int64_t(1) << 20, false);
        } catch (const std::exception &x) {
            refusals.add(x, cand.summary() + " (its own lowering)");
            plain_refusal = x.what();
        }
        try {
            shared = time_candidate(k.output, k.inputs, cand, o, int64_t(1) << 20, false, &cache);
        } catch (const std::exception &x) {
            refusals.add(x, cand.summary() + " (the shared lowering)");
            shared_refusal = x.what();
        }
        EXPECT_EQ(plain, shared) << cand.summary();
        EXPECT_EQ(plain_refusal, shared_refusal) << cand.summary();
        compared += plain > 0;
        // The first few also compute the same numbers (the shared program is a different Stmt).
        if (plain > 0 && compared <= 3) {
            std::vector<Halide::Runtime::Buffer<>> data;
            for (size_t i = 0; i < c.ins.size(); i++)
                data.push_back(random_buffer(k.inputs[i].type(), c.ins[i], -4, 4, uint32_t(77 + i)));
            const SpyreRun a = run_on_spyre(lower_candidate(k.output, k.inputs, cand, o, &cache), data);
            const SpyreRun b = run_on_spyre(lower_candidate(k.output, k.inputs, cand, o, nullptr), data);
            EXPECT_EQ(compare(a.output, b.output).mismatches, 0) << cand.summary();
        }
    }
    EXPECT_GT(compared, 3);
    EXPECT_GT(cache.shared_hits(), 0);
    EXPECT_LT(cache.lowerings(), int64_t(picked.size()));
}

INSTANTIATE_TEST_SUITE_P(
    Pipelines, AutoLoweringCache,
    ::testing::Values(CacheCase{"residual_norm", residual_norm(1024), {{1024, 64}, {1024, 64}, {1024}}, {1024, 64}},
                      // Rows that split unevenly over the cores and tiles: the last core's rows
                      // and the last tiles are partitioned off after the factors are substituted
                      // (partition_tails.h), as Halide does with constant factors.
                      CacheCase{"residual_norm_uneven_rows", residual_norm(1024), {{1024, 47}, {1024, 47}, {1024}}, {1024, 47}},
                      CacheCase{"pointwise_chain", pointwise_chain(), {{512, 128}, {512, 128}}, {512, 128}},
                      CacheCase{"quantized_linear", quantized_linear(256), {{256, 64}, {256, 256}, {256}}, {256, 64}},
                      CacheCase{"depthwise_conv", depthwise_conv(1024), {{1024, 256}, {256, 3}}, {1024, 256}}),
    [](const auto &i) { return std::string(i.param.name); });

// A factor marked fixed stays a constant in the shared lowering (part of the structure): the
// candidate is finished from that lowering, not lowered a second time on its own.
TEST(AutoLoweringCacheFixed, AFixedFactorStaysConstantInTheSharedLowering) {
    using namespace autosched;
    std::vector<std::vector<int>> ins{{1024, 64}, {1024, 64}, {1024}};
    Kernel k = residual_norm(1024)();
    CompileOptions o = auto_schedule_options_for(ins, {1024, 64});
    PipelineInfo info = analyse_pipeline(k.output, k.inputs);
    SpaceResult space = candidate_space(info, {{{1024, 64}, {1024, 64}, {1024}}, {1024, 64}}, o.machine, 8);
    int checked = 0;
    RefusalLog refusals(expected_refusals("residual_norm"));
    for (Candidate c : space.candidates) {
        auto split = std::find_if(c.directives.begin(), c.directives.end(),
                                  [](const Directive &d) { return d.kind == Directive::Split; });
        if (split == c.directives.end()) continue;
        split->fixed = true;
        double plain = -1;
        try {
            plain = time_candidate(k.output, k.inputs, c, o, int64_t(1) << 20, false);
        } catch (const std::exception &x) {
            refusals.add(x, c.summary());
            continue;
        }
        LoweringCache cache;
        EXPECT_EQ(time_candidate(k.output, k.inputs, c, o, int64_t(1) << 20, false, &cache), plain) << c.summary();
        EXPECT_EQ(cache.lowerings(), 1) << c.summary();
        EXPECT_EQ(cache.shared_hits(), 1) << c.summary();
        if (++checked == 3) break;
    }
    EXPECT_EQ(checked, 3);
}

// A structure no other candidate shares is lowered as the caller lowers it: the program is
// compile_for_spyre's, it is kept (asking again lowers nothing), and the cache says it holds the
// candidate's own program, which spares the search's final check a second lowering.
TEST(AutoLoweringCacheAlone, ACandidateLoweredAloneKeepsItsOwnProgram) {
    using namespace autosched;
    CaseSpace cs = case_space(residual_norm(1024), {{1024, 64}, {1024, 64}, {1024}}, {1024, 64}, 8);
    const Kernel &k = cs.k;
    const CompileOptions &o = cs.o;
    int checked = 0;
    RefusalLog refusals(expected_refusals("residual_norm"));
    for (const Candidate &c : cs.space.candidates) {
        DeviceProgram plain;
        try {
            plain = lower_candidate(k.output, k.inputs, c, o, nullptr);
        } catch (const std::exception &x) {
            refusals.add(x, c.summary());
            continue;
        }
        LoweringCache cache;
        cache.lower_alone(c);
        EXPECT_FALSE(cache.holds_own_program(c));
        const DeviceProgram first = lower_candidate(k.output, k.inputs, c, o, &cache);
        const DeviceProgram again = lower_candidate(k.output, k.inputs, c, o, &cache);
        EXPECT_EQ(serialize_program(first), serialize_program(plain)) << c.summary();
        EXPECT_EQ(serialize_program(again), serialize_program(plain)) << c.summary();
        EXPECT_EQ(cache.lowerings(), 1) << c.summary();
        EXPECT_EQ(cache.shared_hits(), 0) << c.summary();
        EXPECT_TRUE(cache.holds_own_program(c)) << c.summary();
        if (++checked == 3) break;
    }
    EXPECT_EQ(checked, 3);
}

struct BoundCase {
    const char *name;
    Algorithm alg;
    std::vector<std::vector<int>> ins;
    std::vector<int> out;
    int cores = 8;
    bool reassociate = false;  // with the split-K family (ring reductions)
};

class AutoTimeBound : public ::testing::TestWithParam<BoundCase> {};

// The search skips simulating a candidate whose static time bound (time_lower_bound_us) already
// rules it out: that is only sound if no program is ever timed faster than its bound, with loops
// summarised or exactly. Checked on candidates spread over each space's estimate order.
TEST_P(AutoTimeBound, NoCandidateIsTimedFasterThanItsBound) {
    using namespace autosched;
    const BoundCase &c = GetParam();
    CaseSpace cs = case_space(c.alg, c.ins, c.out, c.cores, c.reassociate);
    Kernel &k = cs.k;
    const CompileOptions &o = cs.o;
    const SpaceResult &space = cs.space;
    ASSERT_FALSE(space.candidates.empty());
    LoweringCache cache;
    const size_t step = std::max<size_t>(1, space.candidates.size() / 40);
    int checked = 0;
    double tightest = 0;  // the largest bound / time seen: the bound must also bind somewhere
    RefusalLog refusals(expected_refusals(c.name));
    for (size_t i = 0; i < space.candidates.size(); i += step) {
        const Candidate &cand = space.candidates[i];
        DeviceProgram p;
        try {
            p = lower_candidate(k.output, k.inputs, cand, o, &cache);
        } catch (const std::exception &x) {
            refusals.add(x, cand.summary());
            continue;
        }
        const double bound = time_lower_bound_us(p, o.machine);
        for (bool summarise : {true, false}) {
            SimOptions so;
            so.timing_only = true;
            so.summarize_loops = summarise;
            if (!summarise && program_work(p, o.machine).instructions > (int64_t(1) << 20)) continue;
            const double us = simulate(p, o.machine, {}, so).stats.us;
            EXPECT_LE(bound, us * (1 + 1e-9)) << cand.summary() << (summarise ? " (summarised)" : " (exact)");
            tightest = std::max(tightest, bound / us);
        }
        checked++;
    }
    EXPECT_GT(checked, 5);
    EXPECT_GT(tightest, 0.5) << "the bound is close to the time of some candidate";
}

INSTANTIATE_TEST_SUITE_P(
    Pipelines, AutoTimeBound,
    ::testing::Values(BoundCase{"residual_norm", residual_norm(1024), {{1024, 64}, {1024, 64}, {1024}}, {1024, 64}},
                      BoundCase{"residual_norm_uneven_rows", residual_norm(1024), {{1024, 47}, {1024, 47}, {1024}}, {1024, 47}},
                      BoundCase{"pointwise_chain", pointwise_chain(), {{512, 128}, {512, 128}}, {512, 128}},
                      BoundCase{"column_mean", column_mean(256), {{512, 256}}, {512}},
                      BoundCase{"quantized_linear", quantized_linear(256), {{256, 64}, {256, 256}, {256}}, {256, 64}},
                      BoundCase{"depthwise_conv", depthwise_conv(1024), {{1024, 256}, {256, 3}}, {1024, 256}},
                      BoundCase{"few_long_rows_split_k", few_long_rows(4096), {{4096, 32}}, {32}, 32, true},
                      BoundCase{"small_matmul_split_k", small_matmul(4096), {{4096, 64}, {256, 4096}}, {256, 64}, 32, true},
                      BoundCase{"bmm_ring_shared", bmm_algorithm(4, 128, 512, 1024), {{512, 128, 4}, {1024, 512}}, {1024, 128, 4}, 32},
                      // Long enough that the simulator summarises loops.
                      BoundCase{"bmm_summarised", bmm_algorithm(4, 256, 2048, 4096), {{2048, 256, 4}, {4096, 2048}}, {4096, 256, 4}, 32}),
    [](const auto &i) { return std::string(i.param.name); });

TEST(AutoScheduleSearch, WithinFivePercentOfExhaustiveOnASmallSpace) {
    using namespace autosched;
    std::vector<std::vector<int>> ins{{512, 128}, {512, 128}};
    CompileOptions o = auto_schedule_options_for(ins, {512, 128});
    Kernel k = pointwise_chain()();
    PipelineInfo info = analyse_pipeline(k.output, k.inputs);
    SpaceShapes shapes{{{512, 128}, {512, 128}}, {512, 128}};
    SpaceResult space = candidate_space(info, shapes, o.machine, 4);
    ASSERT_GT(space.candidates.size(), 40u);
    ASSERT_LT(space.candidates.size(), 600u) << "small enough to time every candidate";
    double exhaustive = 0;
    RefusalLog refusals(expected_refusals("pointwise_chain"));  // none: every candidate of the space compiles
    for (const Candidate &c : space.candidates) {
        try {
            double us = time_candidate(k.output, k.inputs, c, o, int64_t(1) << 22, true);
            if (exhaustive == 0 || us < exhaustive) exhaustive = us;
        } catch (const std::exception &x) {
            refusals.add(x, c.summary());
        }
    }
    ASSERT_GT(exhaustive, 0);
    AutoOptions ao = quick();
    ao.max_evaluations = int(space.candidates.size() / 4);  // a quarter of the space
    ao.max_cores = 4;
    AutoResult r = auto_schedule(k.output, k.inputs, o, ao);
    EXPECT_LE(r.us, exhaustive * 1.05) << r.summary;
}

// The sum over the heads of a {dim, seq, heads} tensor: each output row reads that row of every head.
Algorithm head_sum(int heads) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 3, "in");
        Var d("d"), row("row");
        RDom h(0, heads, "h");
        Func acc("acc"), out("out");
        acc(d, row) = 0.0f;
        acc(d, row) += cast<float>(in(d, row, h));
        out(d, row) = cast<float16_t>(acc(d, row));
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"acc", acc}};
        return k;
    };
}

// With every argument's layout free, a sum over the heads reads a tile of rows of every head as one run:
// the heads inside the rows (order {1, 2, 0}). It is faster than with the row-major layout (a run
// per head), and still matches the CPU.
TEST(AutoLayouts, ASumOverHeadsPutsTheHeadsInsideTheRows) {
    std::vector<std::vector<int>> ins{{256, 512, 8}};
    CompileOptions o = auto_schedule_options_for(ins, {256, 512});
    Kernel fixed = head_sum(8)();
    AutoResult row_major = auto_schedule(fixed.output, fixed.inputs, o, quick());
    EXPECT_EQ(row_major.options.inputs[0].layout, DeviceLayout{}) << "a layout the caller did not free stays";
    AutoOptions ao = quick();
    ao.free_layouts = {"*"};  // every argument: the output (rank 2) has no other order
    AutoResult r;
    DiffResult d = run_differential_with_options(
        head_sum(8),
        [&](Kernel &k, const CompileOptions &opt) {
            r = auto_schedule(k.output, k.inputs, opt, ao);
            return r.options;
        },
        {random_buffer(Halide::Float(16), ins[0], -4, 4, 7)}, {256, 512});
    EXPECT_EQ(r.options.inputs[0].layout.order, (std::vector<int>{1, 2, 0})) << r.summary;
    EXPECT_EQ(r.options.output.layout, DeviceLayout{});
    EXPECT_LT(r.us, row_major.us) << r.summary << " vs " << row_major.summary;
    EXPECT_NE(r.cpp.find("options.inputs[0].layout = {0, {1, 2, 0}};"), std::string::npos) << r.cpp;
    EXPECT_EQ(d.cmp.max_ulp, 0) << d.cmp.first_mismatch;
}

// Every order of the other dims with the stick count at every place among them (innermost or
// outermost at rank 4), each a refinement of its base: every combination while that is at most 8
// variants, one argument at a time past that.
TEST(AutoLayouts, VariantsRefineTheirBaseWithEveryOrderAndStickCountPlace) {
    using namespace autosched;
    Candidate base;
    base.family = "rows";
    base.set("cores", "4");
    const LayoutArg a3{"a", {}, 3, true}, b2{"b", {}, 2, true}, fixed3{"out", {}, 3, false}, c4{"c", {}, 4, true};
    EXPECT_EQ(layout_choices(a3).size(), 5u);
    ASSERT_EQ(layout_choices(b2).size(), 1u);
    EXPECT_EQ(layout_choices(b2)[0], torch_spyre_default_layout(2));
    EXPECT_EQ(layout_choices(c4).size(), 11u);
    for (const DeviceLayout &l : layout_choices(c4)) EXPECT_TRUE(l.order.back() == 0 || l.order.front() == 0);
    std::vector<Candidate> v = with_layout_variants({base}, {a3, b2});
    // (5 + 1) x (1 + 1) - 1 = 11 combinations: one argument at a time instead.
    ASSERT_EQ(v.size(), 1u + 5u + 1u);
    EXPECT_EQ(v[1].summary(), "rows cores=4 a.layout=2,0,1");
    ASSERT_NE(v[1].choice("a.layout"), nullptr);
    EXPECT_EQ(v[1].choice("a.layout")->value, "2,0,1");
    EXPECT_EQ(v[1].refines, "rows cores=4");
    ASSERT_EQ(v[1].layouts.size(), 2u);
    EXPECT_EQ(v[1].layouts[0].order, (std::vector<int>{2, 0, 1}));
    EXPECT_EQ(v[1].layouts[1], DeviceLayout{}) << "the caller's layout where the variant changes nothing";
    // Every combination of two rank-2 arguments: 2 x 2 - 1 = 3.
    EXPECT_EQ(with_layout_variants({base}, {b2, LayoutArg{"d", {}, 2, true}}).size(), 1u + 3u);
    EXPECT_EQ(with_layout_variants({base}, {fixed3}).size(), 1u);
}

TEST(AutoLayouts, AFreeLayoutThatNamesNoArgumentIsAnError) {
    std::vector<std::vector<int>> ins{{256, 512, 8}};
    Kernel k = head_sum(8)();
    AutoOptions ao = quick();
    ao.free_layouts = {"inp"};
    const std::string e = error_of([&] { auto_schedule(k.output, k.inputs, auto_schedule_options_for(ins, {256, 512}), ao); });
    EXPECT_NE(e.find("free_layouts names 'inp', which is not an argument of the pipeline (its arguments: in, out)"),
              std::string::npos) << e;
}

TEST(AutoSchedulePrint, PrintsTheDirectivesAsCpp) {
    std::vector<std::vector<int>> ins{{1024, 64}, {1024, 64}, {1024}};
    Kernel k = residual_norm(1024)();
    AutoResult r = auto_schedule(k.output, k.inputs, auto_schedule_options_for(ins, {1024, 64}), quick());
    EXPECT_NE(r.cpp.find("spyre::schedule(out, m)"), std::string::npos) << r.cpp;
    EXPECT_NE(r.cpp.find("stick_vectorize(x)"), std::string::npos) << r.cpp;
    EXPECT_NE(r.cpp.find("// Spyre schedule of out chosen by spyre::auto_schedule"), std::string::npos) << r.cpp;
    EXPECT_EQ(autosched::cpp_name("k$x"), "k.x");
    EXPECT_EQ(autosched::cpp_name("a.b-c"), "a_b_c");
}

// A bordered 3x3 blur: the summary names the Funcs Halide made for BoundaryConditions::repeat_edge
// by the condition and its input (repeat_edge(in), Func(in): what wraps in), never lambda_<n>; the
// printed schedule reaches them by their Halide names, saying which they are.
TEST(AutoSchedulePrint, ABorderedPipelinesSummaryNamesTheBoundaryConditionByItsInput) {
    BorderedBlur b;
    ImageParam in = b.in;
    Func blur = b.blur;
    AutoOptions ao = quick();
    ao.max_evaluations = 2;
    AutoResult r = auto_schedule(blur, {in}, auto_schedule_options_for({{128, 16}}, {128, 16}), ao);
    EXPECT_NE(r.summary.find(" repeat_edge(in):"), std::string::npos) << r.summary;
    EXPECT_NE(r.summary.find(" Func(in):"), std::string::npos) << r.summary;
    const std::set<std::string> declared = b.declared();
    EXPECT_EQ(generated_name_in(r.summary, &declared), "") << r.summary;
    if (r.cpp.find("spyre::schedule(Halide::Func(") != std::string::npos) {
        EXPECT_NE(r.cpp.find("// the repeat_edge boundary condition of input 'in' (repeat_edge(in)), found by its Halide name:"),
                  std::string::npos)
            << r.cpp;
    }
}

TEST(AutoSchedulePrint, MatmulStagesPrintHalideCallsOnTheUpdate) {
    using namespace autosched;
    ImageParam a(Float(16), 2, "a"), w(Float(16), 2, "w");
    Var n("n"), m("m");
    RDom k(0, 256, "k");
    Func acc("acc"), out("out");
    acc(n, m) = 0.0f;
    acc(n, m) += cast<float>(a(k, m)) * cast<float>(w(n, k));
    out(n, m) = cast<float16_t>(acc(n, m));
    PipelineInfo info = analyse_pipeline(out, {a, w});
    // Halide makes the names of Funcs made earlier in the process with the same name unique
    // ("acc$2"): look the stage up by the name it has.
    const std::string an = acc.name(), kx = k.x.name();
    ASSERT_NE(info.find(an), nullptr);
    ASSERT_TRUE(info.find(an)->matmul.has_value());
    EXPECT_TRUE(info.find(an)->matmul->stage_form);
    std::vector<Directive> ds{{Directive::HUpdateSplit, an, {kx, "ko", "ki"}, {64}, ""},
                              {Directive::OnPe, an, {"ki"}, {}, ""},
                              {Directive::HUpdateReorder, an, {"ki_pe", "n", "m", "ko"}, {}, ""},
                              {Directive::RingShare, an, {"ko"}, {4}, ""}};
    std::string cpp = print_cpp(ds, info);
    EXPECT_NE(cpp.find("acc.update().split(k.x, ko, ki, 64);"), std::string::npos) << cpp;
    // The PE loop is marked by the directive that names it, then ordered by Halide's reorder.
    EXPECT_NE(cpp.find("spyre::schedule(acc, machine).on_pe(ki);"), std::string::npos) << cpp;
    EXPECT_NE(cpp.find("acc.update().reorder(ki_pe, n, m, ko);"), std::string::npos) << cpp;
    // The pipeline has a Var m, so the machine is passed as `machine`, and a comment says so.
    EXPECT_NE(cpp.find("spyre::schedule(acc, machine).ring_share(ko, 4);"), std::string::npos) << cpp;
    EXPECT_NE(cpp.find("// machine: the spyre::MachineDesc (m is a name of the pipeline)"), std::string::npos) << cpp;
}

// ---- errors ----

TEST(AutoScheduleErrors, InputShapeCountIsNamed) {
    Kernel k = pointwise_chain()();
    CompileOptions o = auto_schedule_options_for({{64, 8}}, {64, 8});
    try {
        auto_schedule(k.output, k.inputs, o, quick());
        FAIL() << "scheduled";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("2 ImageParams but 1 input shapes"), std::string::npos) << e.what();
    }
}

TEST(AutoScheduleErrors, OutputRankMismatchIsNamed) {
    Kernel k = pointwise_chain()();
    CompileOptions o = auto_schedule_options_for({{64, 8}, {64, 8}}, {64});
    try {
        auto_schedule(k.output, k.inputs, o, quick());
        FAIL() << "scheduled";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("output out has 2 dimensions but its shape has 1"), std::string::npos)
            << e.what();
    }
}

TEST(AutoScheduleErrors, TupleFuncIsNamed) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func pair("pair"), out("out");
    pair(x, y) = Tuple(in(x, y), in(x, y) * in(x, y));
    out(x, y) = pair(x, y)[0] + pair(x, y)[1];
    try {
        auto_schedule(out, {in}, auto_schedule_options_for({{64, 8}}, {64, 8}), quick());
        FAIL() << "scheduled";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("Func pair has 2 values (a Tuple)"), std::string::npos) << e.what();
    }
}

TEST(AutoScheduleErrors, BufferNotAmongTheInputsIsNamed) {
    ImageParam in(Float(16), 2, "in"), other(Float(16), 2, "other");
    Var x("x"), y("y");
    Func out("out");
    out(x, y) = in(x, y) + other(x, y);
    try {
        auto_schedule(out, {in}, auto_schedule_options_for({{64, 8}}, {64, 8}), quick());
        FAIL() << "scheduled";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("reads buffer 'other', which is not among the inputs given"),
                  std::string::npos)
            << e.what();
    }
}

TEST(AutoScheduleErrors, NothingFitsTheLxSaysSo) {
    MachineDesc m;
    m.lx_bytes = 8192;
    m.lx_usable_bytes = 4096;
    m.lx_ws_knee_bytes = 4096;
    Kernel k = residual_norm(8192)();
    std::vector<std::vector<int>> ins{{8192, 4}, {8192, 4}, {8192}};
    try {
        auto_schedule(k.output, k.inputs, auto_schedule_options_for(ins, {8192, 4}, m), quick());
        FAIL() << "scheduled";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("fits the usable LX (4096 bytes)"), std::string::npos) << e.what();
    }
}

TEST(AutoScheduleErrors, UndefinedOutputIsNamed) {
    Func out("out");
    EXPECT_NE(error_of([&] { auto_schedule(out, {}, auto_schedule_options_for({}, {64, 8}), quick()); })
                  .find("the output Func is not defined"),
              std::string::npos);
}

TEST(AutoScheduleErrors, MissingOutputShapeIsNamed) {
    Kernel k = pointwise_chain()();
    CompileOptions o = auto_schedule_options_for({{64, 8}, {64, 8}}, {64, 8});
    o.output.shape.clear();
    EXPECT_NE(error_of([&] { auto_schedule(k.output, k.inputs, o, quick()); }).find("CompileOptions::output has no shape"),
              std::string::npos);
}

TEST(AutoScheduleErrors, InputRankMismatchIsNamed) {
    Kernel k = pointwise_chain()();
    std::string e = error_of([&] { auto_schedule(k.output, k.inputs, auto_schedule_options_for({{64, 8}, {64}}, {64, 8}), quick()); });
    EXPECT_NE(e.find("input b has 2 dimensions but its shape has 1"), std::string::npos) << e;
}

TEST(AutoScheduleErrors, ExternStageIsNamed) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func ext("ext"), out("out");
    ext.define_extern("some_extern", {in}, Float(16), 2);
    out(x, y) = ext(x, y);
    std::string e = error_of([&] { auto_schedule(out, {in}, auto_schedule_options_for({{64, 8}}, {64, 8}), quick()); });
    EXPECT_NE(e.find("Func ext is an extern stage"), std::string::npos) << e;
}

TEST(AutoScheduleErrors, TwoOutputPipelineIsNamed) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = in(x, y);
    g(x, y) = in(x, y) * in(x, y);
    CompileOptions o = auto_schedule_options_for({{64, 8}}, {64, 8});
    std::string e = error_of([&] { auto_schedule(Pipeline({f, g}), {in}, o, quick()); });
    EXPECT_NE(e.find("the pipeline has 2 outputs but CompileOptions::outputs gives 0 shapes"), std::string::npos) << e;
    // Neither output reads the other: nothing to schedule them as one.
    o.outputs = {o.output, o.output};
    e = error_of([&] { auto_schedule(Pipeline({f, g}), {in}, o, quick()); });
    EXPECT_NE(e.find("no output of the pipeline (f, g) reads all the others"), std::string::npos) << e;
    EXPECT_NE(error_of([&] { auto_schedule(Pipeline(), {}, o, quick()); }).find("the pipeline has no output"),
              std::string::npos);
}

// Column sums of a Func that is an output too: the columns family keeps the summed Func in LX,
// never in device memory where an output is stored, so no candidate fits the Pipeline.
TEST(AutoScheduleErrors, AnOutputNoCandidateCanKeepInDeviceMemoryIsNamed) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    RDom r(0, 8, "r");
    Func scaled("scaled"), sums("sums");
    scaled(x, y) = in(x, y) * cast<float16_t>(2.0f);
    sums(x) = 0.0f;
    sums(x) += cast<float>(scaled(x, r));
    CompileOptions o = auto_schedule_options_for({{64, 8}}, {64});
    o.outputs = {TensorSpec{{64, 8}, {}}, TensorSpec{{64}, {}}};
    const std::string e = error_of([&] { auto_schedule(Pipeline({scaled, sums}), {in}, o, quick()); });
    EXPECT_NE(e.find("candidate schedules keeps the pipeline's other outputs (scaled) in device memory"), std::string::npos)
        << e;
}

// Every candidate is refused (the device has no uint16 buffers; a uint16 Func inside the kernel is
// stored in int32, an input cannot be): the error says so and gives the reason for the
// pre-filter's favourite.
TEST(AutoScheduleErrors, NoCandidateCompilesGivesTheBackEndsReason) {
    ImageParam in(UInt(16), 2, "in");
    Var x("x"), y("y");
    Func out("out");
    out(x, y) = in(x, y) + in(x, y);
    std::string e = error_of([&] { auto_schedule(out, {in}, auto_schedule_options_for({{64, 8}}, {64, 8}), quick()); });
    EXPECT_NE(e.find("candidates timed compiles for this machine; the pre-filter's favourite ("), std::string::npos) << e;
    EXPECT_NE(e.find("input 'in': element type uint16 is not supported on Spyre"), std::string::npos) << e;
}

// Rows of 262144 fp16 values (512 KiB): the pre-filter's LX estimate (whole rows of input, output
// and fp32 temporaries per tile) rejects every candidate, but the back end streams such rows in
// parts. With nothing within the estimate, the rejected candidates are timed (before, auto_schedule
// gave up with "no candidate schedule for Func out fits the usable LX" while a hand schedule
// compiled); the result matches the CPU and is no slower than the hand schedule.
TEST(AutoScheduleSearch, RowsWiderThanTheLxEstimateAllowsAreStillScheduled) {
    const int cols = 262144, rows = 4;
    const Algorithm alg = [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = in(x, y) * cast<float16_t>(2.0f) + cast<float16_t>(1.0f);
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    const DiffResult hand = run_differential(alg, [](Kernel &k) {
        spyre::schedule(k.output).ring_split(k.vars.at("y"), 4).stick_vectorize(k.vars.at("x"));
    }, {{cols, rows}}, {cols, rows});
    AutoResult chosen;
    const DiffResult a = run_differential(alg, [&](Kernel &k) {
        AutoOptions ao;
        ao.max_evaluations = 16;
        ao.progress = false;
        chosen = auto_schedule(k.output, k.inputs, kernel_options({{cols, rows}}, {cols, rows}), ao);
    }, {{cols, rows}}, {cols, rows});
    EXPECT_EQ(a.cmp.mismatches, 0) << a.cmp.first_mismatch;
    EXPECT_GT(chosen.pruned_lx, 0);
    EXPECT_LE(a.stats.us, hand.stats.us);
}

TEST(AutoScheduleErrors, DirectiveOnAnUnknownFuncIsNamed) {
    using namespace autosched;
    Kernel k = pointwise_chain()();
    std::map<std::string, Func> funcs{{"out", k.output}}, inputs;
    try {
        apply_directives({{Directive::DeviceRoot, "nope", {}, {}, ""}}, funcs, inputs, MachineDesc{});
        FAIL() << "applied";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("Func 'nope' is not in the pipeline"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace spyre::testing

namespace spyre::testing {
namespace {

// The lines of `text` but its third (the printed schedule's count of candidates and wall time).
std::string without_third_line(const std::string &text) {
    std::istringstream in(text);
    std::string line, out;
    for (int i = 1; std::getline(in, line); i++)
        if (i != 3) out += line + "\n";
    return out;
}

// The example of docs/auto_schedule.md ("An example"), as written there; the doc quotes what it
// prints, but for the line of counts and wall time.
TEST(AutoScheduleDocExample, ResidualNormExampleSchedulesCompilesAndPrints) {
    using namespace Halide;
    ImageParam a(Float(16), 2, "a"), b(Float(16), 2, "b"), gamma(Float(16), 1, "gamma");
    Var x("x"), y("y");
    RDom r(0, 1024, "r");
    Func h("h"), mean("mean"), var("var"), out("out");
    h(x, y) = cast<float>(a(x, y)) + cast<float>(b(x, y));
    mean(y) = sum(h(r, y)) / 1024.0f;
    var(y) = sum((h(r, y) - mean(y)) * (h(r, y) - mean(y))) / 1024.0f;
    out(x, y) = cast<float16_t>((h(x, y) - mean(y)) / sqrt(var(y) + 1e-5f) * cast<float>(gamma(x)));

    spyre::CompileOptions opt;
    opt.inputs = {{{1024, 512}, {}}, {{1024, 512}, {}}, {{1024}, {}}};
    opt.output = {{1024, 512}, {}};
    spyre::AutoOptions quiet;
    quiet.progress = false;
    spyre::AutoResult res = spyre::auto_schedule(out, {a, b, gamma}, opt, quiet);
    spyre::DeviceProgram p = spyre::compile_for_spyre(out, {a, b, gamma}, opt);
    EXPECT_GT(p.num_cores, 1);
    // The validity notes it reports are those of the program the caller compiles, timed here.
    spyre::SimOptions timing;
    timing.timing_only = true;
    const spyre::SimResult run = spyre::simulate(p, opt.machine, {}, timing);
    std::vector<std::string> want;
    for (const spyre::ValidityNote &v : spyre::model_validity(p, run.stats, opt.machine)) want.push_back(v.key);
    EXPECT_TRUE(res.validity_known);
    EXPECT_EQ(res.validity, want);
    EXPECT_EQ(res.validity, std::vector<std::string>{"short_tiles"});  // the 4-row tiles the doc names
    EXPECT_EQ(res.cpp.rfind("// Spyre schedule of out chosen by spyre::auto_schedule (seed 1): ", 0), 0u) << res.cpp;
    EXPECT_NE(res.cpp.find("spyre::schedule(out, m).ring_split(y, "), std::string::npos) << res.cpp;
    // The search's counters, not its rate (a wall-clock figure): it timed some of the space's
    // candidates, and not all of those were refused.
    EXPECT_GT(res.timed, 0);
    EXPECT_LE(res.timed, res.candidates);
    EXPECT_LT(res.failed, res.timed);

    std::ifstream in(std::string(SPYRE_SOURCE_DIR) + "/docs/auto_schedule.md");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str(), begin = "```\n// Spyre schedule of out chosen";
    const size_t from = doc.find(begin), to = doc.find("```\n", from + begin.size());
    ASSERT_NE(from, std::string::npos) << "docs/auto_schedule.md quotes no printed schedule";
    ASSERT_NE(to, std::string::npos);
    EXPECT_EQ(without_third_line(doc.substr(from + 4, to - from - 4)), without_third_line(res.cpp))
        << "paste what the example prints into docs/auto_schedule.md:\n" << res.cpp;
}

}  // namespace
}  // namespace spyre::testing
