// lower_halide (backend/compiler/lower_halide.h) gives the Stmt that Halide's own lowering gives
// (Pipeline::compile_to_module, the Stmt taken by a custom lowering pass at its end), but for the
// assertions and buffer-field lets of the checks it leaves out. Halide names temporaries from
// process-wide counters, so the reference is lowered in a forked child: both start from the same
// counters, and only the numbering of the `tN` lets, which the checks consume, is normalised.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <regex>
#include <sstream>

#include "capture_stmt.h"
#include "compiler_test_util.h"
#include "conv1d.h"
#include "flash_attention.h"
#include "lower_halide.h"
#include "matmul.h"

namespace spyre::testing {
namespace {

using namespace Halide;
using namespace Halide::Internal;

// The Stmt's text without the lines only the checks make, its `tN` lets numbered by first use.
std::string normalised(const std::string &text) {
    std::istringstream in(text);
    std::string line, out;
    std::map<std::string, std::string> renamed;
    const std::regex temp("\\bt[0-9]+\\b");
    while (std::getline(in, line)) {
        if (line.find("assert(") != std::string::npos || line.find("_halide_buffer_get_") != std::string::npos)
            continue;
        std::string renumbered;
        auto last = line.cbegin();
        for (std::sregex_iterator it(line.begin(), line.end(), temp), end; it != end; ++it) {
            renumbered.append(last, line.cbegin() + it->position());
            auto [pos, fresh] = renamed.emplace(it->str(), "T" + std::to_string(renamed.size()));
            renumbered += pos->second;
            last = line.cbegin() + it->position() + it->length();
        }
        renumbered.append(last, line.cend());
        out += renumbered + "\n";
    }
    return out;
}

class TakeStmt : public IRMutator {
public:
    explicit TakeStmt(Stmt *out) : out_(out) {}
    using IRMutator::mutate;
    Stmt mutate(const Stmt &s) override { return *out_ = s; }

private:
    Stmt *out_;
};

// Halide's own lowering of `p`, in a child process (so that this one's name counters stay as they
// were), as text.
std::string reference_lowering(Pipeline p, const std::vector<Argument> &args) {
    int fds[2];
    if (pipe(fds) != 0) return "pipe failed";
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        std::string text;
        try {
            Stmt s;
            p.add_custom_lowering_pass(new TakeStmt(&s));
            p.compile_to_module(args, "kernel", spyre_lowering_target());
            std::ostringstream o;
            o << s;
            text = o.str();
        } catch (const std::exception &e) {
            text = std::string("Halide threw: ") + e.what();
        }
        for (size_t done = 0; done < text.size();) {
            ssize_t n = write(fds[1], text.data() + done, text.size() - done);
            if (n <= 0) break;
            done += size_t(n);
        }
        _exit(0);
    }
    close(fds[1]);
    std::string text;
    char buf[65536];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return text;
}

struct Lowerable {
    Pipeline pipeline;
    std::vector<Argument> args;
};

// Fixes the arguments' shapes as the back end does (dense device layouts).
void fix_shapes(Lowerable &l, const std::vector<ImageParam> &inputs, const std::vector<std::vector<int64_t>> &shapes,
                Func out, const std::vector<int64_t> &out_shape) {
    const MachineDesc m;
    for (size_t i = 0; i < inputs.size(); i++) {
        fix_device_shape(inputs[i], ArgSpec{inputs[i].name(), shapes[i], {}}, m, inputs[i].name());
        l.args.push_back(inputs[i]);
    }
    fix_device_shape(out.output_buffer(), ArgSpec{out.name(), out_shape, {}}, m, out.name());
    l.pipeline = Pipeline(out);
}

struct LowerHalideCase {
    std::string name;
    std::function<Lowerable()> build;
};

void PrintTo(const LowerHalideCase &c, std::ostream *os) { *os << c.name; }

Lowerable flash(const std::string &schedule, bool causal) {
    FlashAttentionKernel k = make_flash_attention(128, 256, 2, 64, 64, causal);
    schedule_flash_attention(k, schedule, 2);
    Lowerable l;
    fix_shapes(l, {k.q, k.k, k.v}, {{128, 256, 2}, {128, 256, 2}, {128, 256, 2}}, k.out, {128, 256, 2});
    return l;
}

const std::vector<LowerHalideCase> &lower_halide_cases() {
    static const std::vector<LowerHalideCase> all = {
        {"FlashKvResident", [] { return flash("kv_resident", false); }},
        {"CausalKvChunked", [] { return flash("kv_chunked", true); }},
        {"BmmPeRing",
         [] {
             MatmulKernel k = make_bmm(2, 64, 256, 512);
             schedule_bmm(k, "pe_ring", 4);
             Lowerable l;
             fix_shapes(l, {k.a, k.w}, {{256, 64, 2}, {512, 256}}, k.out, {512, 64, 2});
             return l;
         }},
        {"Conv1dTiles",
         [] {
             Conv1dKernel k = make_conv1d(512, 64, 4, true);
             schedule_conv1d(k, "tiles");
             Lowerable l;
             fix_shapes(l, {k.in, k.w}, {{512, 64}, {64, 4}}, k.out, {512, 64});
             return l;
         }},
        // A split factor left symbolic, as the autoscheduler lowers a structure once for its tiles.
        {"SymbolicSplitFactor",
         [] {
             ImageParam in(Float(16), 2, "in");
             Param<int> factor("factor");
             Var x("x"), y("y"), yo("yo"), yi("yi");
             Func out("out");
             out(x, y) = in(x, y) * cast<float16_t>(2.0f);
             spyre::schedule(out).stick_vectorize(x);
             out.split(y, yo, yi, factor, TailStrategy::GuardWithIf);
             Lowerable l;
             fix_shapes(l, {in}, {{128, 96}}, out, {128, 96});
             l.args.push_back(factor);
             return l;
         }},
        // A Func in registers, realized per tile of a tail: Halide bounds its size to a constant
        // before flattening (the one case lower_halide runs that bounding for).
        {"RegistersOverATail",
         [] {
             ImageParam in(Float(16), 2, "in");
             Var x("x"), y("y"), yo("yo"), yi("yi");
             Func tmp("tmp"), out("out");
             tmp(x, y) = in(x, y) * cast<float16_t>(2.0f);
             out(x, y) = tmp(x, y) + cast<float16_t>(1.0f);
             out.split(y, yo, yi, 4, TailStrategy::GuardWithIf);
             tmp.compute_at(out, yo).store_in(MemoryType::Register);
             Lowerable l;
             fix_shapes(l, {in}, {{8, 98}}, out, {8, 98});
             return l;
         }},
    };
    return all;
}

class LowerHalide : public ::testing::TestWithParam<LowerHalideCase> {};

TEST_P(LowerHalide, GivesTheStmtOfHalidesOwnLowering) {
    Lowerable l = GetParam().build();
    std::string want = reference_lowering(l.pipeline, l.args);
    ASSERT_EQ(want.find("Halide threw"), std::string::npos) << want;
    std::ostringstream got;
    // lower_halide leaves out find_intrinsics (lower_halide.h says why); all else is Halide's.
    got << Halide::Internal::find_intrinsics(lower_halide(l.pipeline, l.args, "kernel", spyre_lowering_target()));
    EXPECT_EQ(normalised(got.str()), normalised(want));
}

INSTANTIATE_TEST_SUITE_P(Kernels, LowerHalide, ::testing::ValuesIn(lower_halide_cases()),
                         [](const ::testing::TestParamInfo<LowerHalideCase> &i) { return i.param.name; });

TEST(LowerHalideErrors, ABufferNotAmongTheArgumentsIsRefusedByName) {
    ImageParam a(Float(16), 2, "a"), b(Float(16), 2, "b");
    Var x("x"), y("y");
    Func out("out");
    out(x, y) = a(x, y) + b(x, y);
    spyre::schedule(out).stick_vectorize(x);
    // Through the back end's entry: shapes for `a` only, and `b` not given.
    CompileOptions o;
    o.kernel_name = "sum";
    o.inputs = {TensorSpec{{128, 4}, {}}};
    o.output = TensorSpec{{128, 4}, {}};
    EXPECT_EQ(error_of([&] { compile_for_spyre(out, {a}, o); }),
              "kernel sum: the pipeline reads buffer 'b', which is not among its arguments");
}

// The device program must not depend on the machine that compiles it: the target is fixed, not
// the host's, and carries no CPU feature that a pass could read.
TEST(LowerHalideTarget, IsTheSameFixedTargetOnEveryHost) {
    const Target t = spyre_lowering_target();
    EXPECT_EQ(t.to_string(), "x86-64-linux-no_asserts-no_bounds_query-strict_float");
    EXPECT_FALSE(t.has_feature(Target::AVX));
    EXPECT_FALSE(t.has_feature(Target::SSE41));
}

TEST(LowerHalideErrors, AScalarParameterNotAmongTheArgumentsIsRefusedByName) {
    ImageParam in(Float(16), 2, "scaled_in");
    Param<int> factor("missing_factor");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func out("scaled");
    out(x, y) = in(x, y);
    out.split(y, yo, yi, factor, TailStrategy::GuardWithIf);
    EXPECT_EQ(error_of([&] { lower_halide(Pipeline(out), {in}, "scaled", spyre_lowering_target()); }),
              "kernel scaled: the pipeline reads parameter 'missing_factor', which is not among its arguments");
}

TEST(LowerHalideErrors, AnOutputWithoutDefinitionIsRefusedByName) {
    Func out("never_defined");
    EXPECT_EQ(error_of([&] { lower_halide(Pipeline(out), {}, "empty", spyre_lowering_target()); }),
              "kernel empty: the output Func never_defined has no definition");
}

}  // namespace
}  // namespace spyre::testing
