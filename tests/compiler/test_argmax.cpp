// argmax and argmin over a row, written as the docs write them: Halide's inline argmax(...) or
// argmin(...) (a Tuple of the index and the value), one output Func taking the index and another the
// value. Each matches Halide's CPU realisation exactly, including ties (the first extreme element
// wins) and odd row lengths, on one core and with the rows split over the cores.
#include <gtest/gtest.h>

#include "auto_schedule.h"
#include "compiler_test_util.h"
#include "device/error.h"
#include "ktir/ktir_export.h"
#include "user_terms.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct ArgCase {
    std::string op;     // "argmax" or "argmin"
    std::string take;   // "index" or "value"
    std::string type;   // "f16", "f32" or "i32"
    int cols, rows, cores;
};
void PrintTo(const ArgCase &c, std::ostream *os) {
    *os << c.op << "_" << c.take << "_" << c.type << "_" << c.cols << "x" << c.rows << "c" << c.cores;
}
std::string case_name(const ::testing::TestParamInfo<ArgCase> &i) {
    std::ostringstream os;
    PrintTo(i.param, &os);
    return os.str();
}

Type type_of(const std::string &t) { return t == "f16" ? Float(16) : t == "f32" ? Float(32) : Int(32); }

Algorithm arg_alg(const ArgCase &c) {
    return [=] {
        Kernel k;
        ImageParam in(type_of(c.type), 2, "in");
        Var y("y");
        RDom r(0, c.cols, "r");
        Func out("out");
        Tuple t = c.op == "argmax" ? argmax(in(r, y)) : argmin(in(r, y));
        out(y) = c.take == "index" ? t[0] : t[1];
        k.inputs = {in};
        k.output = out;
        k.vars = {{"y", y}};
        return k;
    };
}

Schedule arg_sched(const ArgCase &c) {
    return [=](Kernel &k) {
        if (c.cores > 1) spyre::schedule(k.output).ring_split(k.vars.at("y"), c.cores);
    };
}

class ArgReduce : public ::testing::TestWithParam<ArgCase> {};

// Inputs on a coarse grid (-4 .. 4 in steps of 1/4), so that rows have ties: the first of equal
// extremes must win, as Halide's strict comparison keeps it.
TEST_P(ArgReduce, MatchesCpu) {
    const ArgCase c = GetParam();
    Halide::Runtime::Buffer<> in(type_of(c.type), c.cols, c.rows);
    uint32_t s = 12345;
    auto next = [&] { s = s * 1664525u + 1013904223u; return int((s >> 8) % 33) - 16; };
    for (int y = 0; y < c.rows; y++)
        for (int x = 0; x < c.cols; x++) {
            int v = next();
            if (c.type == "f16") in.as<float16_t>()(x, y) = float16_t(v / 4.0f);
            else if (c.type == "f32") in.as<float>()(x, y) = v / 4.0f;
            else in.as<int32_t>()(x, y) = v;
        }
    DiffResult r = run_differential_on(arg_alg(c), arg_sched(c), {in}, {c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ArgReduce,
                         ::testing::Values(ArgCase{"argmax", "index", "f16", 1000, 16, 1},
                                           ArgCase{"argmax", "value", "f16", 1000, 16, 1},
                                           ArgCase{"argmin", "index", "f16", 64, 3, 1},
                                           ArgCase{"argmax", "index", "f32", 77, 5, 1},
                                           ArgCase{"argmin", "index", "i32", 130, 7, 1},
                                           ArgCase{"argmax", "index", "f16", 4096, 64, 32},
                                           ArgCase{"argmin", "value", "f32", 300, 40, 8},
                                           // greedy sampling over Llama-3.1-8B's vocabulary
                                           ArgCase{"argmax", "index", "f16", 128256, 3, 1},
                                           ArgCase{"argmax", "index", "f16", 128256, 4, 4}),
                         case_name);

// The same update written by hand with tuple_select, as Halide's tutorials write an argmax.
TEST(ArgReduceByHand, TupleSelectUpdateMatchesCpu) {
    Algorithm alg = [] {
        Kernel k;
        ImageParam in(Float(32), 2, "in");
        Var y("y");
        RDom r(0, 200, "r");
        Func best("best"), out("out");
        best(y) = Tuple(0, Float(32).min());
        best(y) = tuple_select(in(r, y) > best(y)[1], Tuple(r, in(r, y)), best(y));
        out(y) = best(y)[0];
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"best", best}};
        k.vars = {{"y", y}};
        return k;
    };
    DiffResult r = run_differential(alg, [](Kernel &) {}, {{200, 9}}, {9});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// An RDom that does not start at 0: the device's index counts from the row's first element, so
// the compiler refuses it, naming the Func and what to write instead.
TEST(ArgReduceErrors, AnRDomNotStartingAtZeroIsRefusedWithAHint) {
    Algorithm alg = [] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var y("y");
        RDom r(64, 128, "r");  // whole sticks from the row's second stick
        Func out("out");
        out(y) = argmax(in(r, y))[0];
        k.inputs = {in};
        k.output = out;
        k.vars = {{"y", y}};
        return k;
    };
    const std::string e = error_of([&] { run_differential(alg, [](Kernel &) {}, {{192, 8}}, {8}); });
    EXPECT_NE(e.find("of a one-dimensional RDom that starts at 0"), std::string::npos) << e;
    EXPECT_NE(e.find("Func out"), std::string::npos) << e;
    EXPECT_EQ(generated_name_in(e), "") << e;
}

// An argmax of a value that does not change along the RDom, and one whose index is kept as a float:
// refused, each naming what the device cannot do.
TEST(ArgReduceErrors, AValueConstantAlongTheRowOrAFloatIndexIsRefused) {
    auto refused = [](bool float_index) {
        Algorithm alg = [=] {
            Kernel k;
            ImageParam in(Float(32), 2, "in");
            Var y("y");
            RDom r(0, 64, "r");
            Func best("best"), out("out");
            if (float_index) {
                best(y) = Tuple(0.0f, Float(32).min());
                best(y) = tuple_select(in(r, y) > best(y)[1], Tuple(cast<float>(r), in(r, y)), best(y));
                out(y) = best(y)[0];
            } else {
                out(y) = argmax(r, in(0, y))[0];
            }
            k.inputs = {in};
            k.output = out;
            k.vars = {{"y", y}};
            return k;
        };
        return error_of([&] { run_differential(alg, [](Kernel &) {}, {{64, 8}}, {8}); });
    };
    const std::string constant = refused(false), floating = refused(true);
    EXPECT_NE(constant.find("an argmax of a value that does not vary along its row"), std::string::npos) << constant;
    EXPECT_NE(floating.find("argmax keeps a f32 value of f32 elements and a f32 index"), std::string::npos) << floating;
}

// KTIR has no argmax the importer reads back: the export refuses the kernel, naming the instruction.
TEST(ArgReduceErrors, KtirExportNamesTheArgmaxInstruction) {
    const ArgCase c{"argmax", "index", "f16", 256, 4, 1};
    DiffResult r = run_differential(arg_alg(c), arg_sched(c), {{c.cols, c.rows}}, {c.rows});
    const std::string e = error_of([&] { ktir::export_ktir(r.program); });
    EXPECT_NE(e.find("(VREDARGMAX, f16): no KTIR form"), std::string::npos) << e;
}

// schedule=auto on an argmax the catalogue does not have: what it picks matches the CPU, and is
// no slower than the hand schedule of one row per core.
class AutoArgReduce : public ::testing::TestWithParam<ArgCase> {};

TEST_P(AutoArgReduce, MatchesCpuAndTheHandSchedule) {
    const ArgCase c = GetParam();
    AutoResult result;
    auto sched = [&](Kernel &k) {
        const CompileOptions o = kernel_options({{c.cols, c.rows}}, {c.rows});
        AutoOptions ao;
        ao.max_evaluations = 8;
        ao.progress = false;
        result = auto_schedule(k.output, k.inputs, o, ao);
    };
    DiffResult got = run_differential(arg_alg(c), sched, {{c.cols, c.rows}}, {c.rows});
    EXPECT_EQ(got.cmp.mismatches, 0) << got.cmp.first_mismatch << "\n" << result.cpp;
    DiffResult hand = run_differential(arg_alg(c), arg_sched(c), {{c.cols, c.rows}}, {c.rows});
    EXPECT_LE(got.stats.us, hand.stats.us) << result.cpp;
}

INSTANTIATE_TEST_SUITE_P(Shapes, AutoArgReduce,
                         ::testing::Values(ArgCase{"argmax", "index", "f16", 4096, 64, 32},
                                           ArgCase{"argmin", "value", "f32", 1000, 7, 1}),
                         case_name);

// Greedy sampling after the model's head, written from the docs: logits = x W on the PE array (fp32
// accumulation), then the argmax of each row, in one pipeline; decode at batch 8 over a reduced
// vocabulary, and at Llama-3.1-8B's hidden size with W in K panels. The token ids match the CPU's
// exactly.
TEST(LmHeadArgmax, GreedyTokensMatchCpu) {
    struct Shape {
        int hidden, vocab, batch;
        std::string logits;  // "device" (device_root) or "lx" (scratchpad_root)
        int k_panel;         // 0: the whole of K at once
    };
    for (Shape s : {Shape{256, 1024, 8, "device", 0}, Shape{4096, 512, 8, "lx", 512}}) {
        Algorithm alg = [=] {
            Kernel k;
            ImageParam x(Float(16), 2, "x"), w(Float(16), 2, "w");
            Var v("v"), y("y");
            RDom kk(0, s.hidden, "k"), r(0, s.vocab, "r");
            Func logits("logits"), next("next");
            logits(v, y) = 0.0f;
            logits(v, y) += cast<float>(x(kk, y)) * cast<float>(w(v, kk));
            next(y) = argmax(logits(r, y))[0];
            k.inputs = {x, w};
            k.output = next;
            k.funcs = {{"logits", logits}};
            k.vars = {{"v", v}, {"y", y}};
            return k;
        };
        Schedule sched = [=](Kernel &k) {
            Func logits = k.funcs.at("logits");
            RVar rk(logits.update(0).get_schedule().rvars()[0].var), ko("ko"), ki("ki");
            if (s.k_panel) logits.update().split(rk, ko, ki, s.k_panel);  // W in K panels, to fit LX
            auto ls = spyre::schedule(logits);
            if (s.logits == "device") ls.device_root();
            else ls.scratchpad_root();
            ls.stick_vectorize(k.vars.at("v")).pe_matmul(s.k_panel ? ki : rk);
        };
        DiffResult r = run_differential(alg, sched, {{s.hidden, s.batch}, {s.vocab, s.hidden}}, {s.batch}, -1, 1);
        EXPECT_EQ(r.cmp.mismatches, 0) << s.hidden << "x" << s.vocab << ": " << r.cmp.first_mismatch;
        EXPECT_EQ(r.stats.pe_macs, int64_t(s.hidden) * s.vocab * s.batch);
    }
}

// Batch-8 greedy sampling over Llama-3.1-8B's whole vocabulary, a row per core: a 1-D output would
// give each core 32 int32 rows (whole sticks), all 8 rows' logits on one core, past its LX. An
// output of one column per row, next(c, y) over c in [0, 1), keeps each row's index in a stick of
// its own, so ring_split gives a row to each core.
TEST(ArgReduceVocabulary, OneColumnPerRowSplitsTheBatchOverTheCores) {
    const int vocab = 128256, batch = 8;
    Algorithm alg = [=] {
        Kernel k;
        ImageParam logits(Float(16), 2, "logits");
        Var c("c"), y("y");
        RDom r(0, vocab, "r");
        Func next("next");
        next(c, y) = argmax(logits(r, y))[0];
        k.inputs = {logits};
        k.output = next;
        k.vars = {{"c", c}, {"y", y}};
        return k;
    };
    Schedule sched = [=](Kernel &k) { spyre::schedule(k.output).ring_split(k.vars.at("y"), batch, batch); };
    DiffResult r = run_differential(alg, sched, {{vocab, batch}}, {1, batch});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.program.num_cores, batch);
    // auto_schedule on the same form (it had no candidate: it vectorized the one-element rows).
    AutoResult chosen;
    DiffResult a = run_differential(
        alg,
        [&](Kernel &k) {
            AutoOptions ao;
            ao.max_evaluations = 16;
            ao.progress = false;
            chosen = auto_schedule(k.output, k.inputs, kernel_options({{vocab, batch}}, {1, batch}), ao);
        },
        {{vocab, batch}}, {1, batch});
    EXPECT_EQ(a.cmp.mismatches, 0) << a.cmp.first_mismatch << "\n" << chosen.cpp;
    EXPECT_LE(a.stats.us, r.stats.us) << chosen.summary;
}

}  // namespace
}  // namespace spyre::testing
