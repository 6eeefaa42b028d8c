// Scans: an update that reads its own Func's value from the previous iteration of its reduction
// (a running sum down the columns, acc(x, r) = acc(x, r - 1) + in(x, r)). Each iteration must see
// the value the one before it wrote; the vector unit must not read a step's rows before it has
// written the earlier ones. Checked against Halide's CPU realization, bit for bit.
#include <gtest/gtest.h>

#include <functional>

#include "auto_schedule.h"
#include "compiler_test_util.h"
#include "scan_kernels.h"
#include "device/error.h"
#include "user_terms.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct ScanShape {
    int cols, rows, cores;
};

class ColumnScan : public ::testing::TestWithParam<ScanShape> {};

TEST_P(ColumnScan, RunningSumMatchesCpu) {
    const ScanShape s = GetParam();
    DiffResult r = run_differential(column_scan(s.rows), column_tiles(s.cols, s.cores), {{s.cols, s.rows}},
                                    {s.cols, s.rows}, -1, 1);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ColumnScan,
                         ::testing::Values(ScanShape{64, 64, 1}, ScanShape{100, 37, 1}, ScanShape{100, 37, 32}, ScanShape{200, 45, 2},
                                           ScanShape{64, 4096, 32}, ScanShape{2048, 256, 32}),
                         [](const auto &info) {
                             const ScanShape &s = info.param;
                             return std::to_string(s.cols) + "x" + std::to_string(s.rows) + "_" +
                                    std::to_string(s.cores) + "cores";
                         });

// The autoscheduler splits the columns over the cores in stick-wide tiles, as the hand schedule
// does (a row split cannot divide a scan down the rows: it ran on one core at twice the time).
TEST(AutoScheduledColumnScan, SplitsColumnTilesOverTheCoresAndIsNoSlowerThanTheHandSchedule) {
    for (ScanShape s : {ScanShape{200, 45, 4}, ScanShape{2048, 256, 32}}) {
        AutoOptions ao;
        ao.max_evaluations = 16;
        ao.progress = false;
        CompileOptions o;
        o.inputs = {TensorSpec{{s.cols, s.rows}, {}}};
        o.output = TensorSpec{{s.cols, s.rows}, {}};
        AutoResult chosen;
        DiffResult a = run_differential(
            column_scan(s.rows), [&](Kernel &k) { chosen = auto_schedule(k.output, k.inputs, o, ao); },
            {{s.cols, s.rows}}, {s.cols, s.rows}, -1, 1);
        EXPECT_EQ(a.cmp.max_ulp, 0) << a.cmp.first_mismatch << "\n" << chosen.cpp;
        DiffResult hand = run_differential(column_scan(s.rows), column_tiles(s.cols, s.cores), {{s.cols, s.rows}},
                                           {s.cols, s.rows}, -1, 1);
        EXPECT_EQ(chosen.family, "column_tiles") << chosen.summary;
        EXPECT_GT(a.program.num_cores, 1) << chosen.summary;
        EXPECT_LE(a.stats.us, hand.stats.us) << chosen.summary;
    }
}

// The autoscheduler's schedule of the same scan (its candidates go through the same passes).
TEST(AutoScheduledColumnScan, MatchesCpu) {
    AutoOptions ao;
    ao.max_evaluations = 12;
    ao.progress = false;
    CompileOptions o;
    o.inputs = {TensorSpec{{100, 37}, {}}};
    o.output = TensorSpec{{100, 37}, {}};
    DiffResult r = run_differential(
        column_scan(37), [&](Kernel &k) { auto_schedule(k.output, k.inputs, o, ao); }, {{100, 37}}, {100, 37}, -1, 1);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
}

// Two running values that feed each other (a Tuple state): row r of each reads row r - 1 of the
// other, so the two elements' loops over r cannot run one after the other.
Algorithm coupled_scan(int rows) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y");
        RDom r(1, rows - 1, "r");
        Func acc("acc"), out("out");
        acc(x, y) = Tuple(in(x, y), in(x, y));
        Expr a = acc(x, r - 1)[0], b = acc(x, r - 1)[1];
        acc(x, r) = Tuple(a + b, b + in(x, r));
        out(x, y) = acc(x, y)[0];
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"acc", acc}};
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

TEST(CoupledScan, TupleElementsReadingEachOthersRunningValuesMatchCpu) {
    for (ScanShape s : {ScanShape{64, 64, 1}, ScanShape{100, 37, 32}}) {
        DiffResult r = run_differential(coupled_scan(s.rows), column_tiles(s.cols, s.cores), {{s.cols, s.rows}},
                                        {s.cols, s.rows}, -0.25f, 0.25f);
        EXPECT_EQ(r.cmp.max_ulp, 0) << s.cols << "x" << s.rows << ": " << r.cmp.first_mismatch;
    }
}

// The accumulator in device memory: its rows are staged as one box, copied into LX before the
// scan and back after, when they fit (infer_dma.h), and the scan matches the CPU bit for bit.
// Rows that do not fit LX are staged in pieces, which would not hold the running value: refused,
// naming the Func and the loop.
TEST(ColumnScan, AccumulatorInDeviceMemoryMatchesCpuOrIsRefusedNamingFuncAndLoop) {
    auto schedule = [](Kernel &k) {
        Var x = k.vars.at("x");
        spyre::schedule(k.output).stick_vectorize(x);
        spyre::schedule(k.funcs.at("acc")).device_root().stick_vectorize(x);
    };
    DiffResult r = run_differential(column_scan(37), schedule, {{100, 37}}, {100, 37}, -0.25f, 0.25f);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    Kernel k = column_scan(4096)();
    schedule(k);
    CompileOptions o;
    o.inputs = {TensorSpec{{512, 4096}, {}}};
    o.output = TensorSpec{{512, 4096}, {}};
    std::string msg = error_of([&] { compile_for_spyre(k.output, k.inputs, o); });
    EXPECT_NE(msg.find("Func acc"), std::string::npos) << msg;
    EXPECT_NE(msg.find("earlier iterations of loop r.x"), std::string::npos) << msg;
    EXPECT_NE(msg.find("keep acc in LX"), std::string::npos) << msg;
}

// A scan along each row, the stick dimension: acc(x, y) = in(x, y), then acc(r, y) = update(acc,
// in, r, y) over RDom r(first, count); out = acc.
using ScanUpdate = std::function<Expr(Func acc, ImageParam in, RVar r, Var y)>;
Algorithm row_scan_of(Type t, int first, int count, ScanUpdate update) {
    return [=] {
        Kernel k;
        ImageParam in(t, 2, "in");
        Var x("x"), y("y");
        RDom r(first, count, "r");
        Func acc("acc"), out("out");
        acc(x, y) = in(x, y);
        acc(r, y) = update(acc, in, r.x, y);
        out(x, y) = acc(x, y);
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"acc", acc}};
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

// acc(r, y) = op(acc(r - 1, y), in(r, y)) over the row from its second element, op a sum, a product,
// a maximum or a linear recurrence (acc(r - 1, y) * 0.5 + in(r, y)).
enum class ScanOp { Sum, Product, Max, Linear };
Algorithm row_scan(int cols, Type t = Float(16), ScanOp op = ScanOp::Sum) {
    return row_scan_of(t, 1, cols - 1, [=](Func acc, ImageParam in, RVar r, Var y) {
        Expr prev = acc(r - 1, y), cur = in(r, y);
        return op == ScanOp::Sum       ? prev + cur
               : op == ScanOp::Product ? prev * cur
               : op == ScanOp::Max     ? max(prev, cur)
                                       : prev * cast(in.type(), 0.5f) + cur;
    });
}

// The accumulator in LX next to the output's rows, the rows split over the cores.
Schedule row_scan_rows(int rows, int cores) {
    return [=](Kernel &k) {
        Var x = k.vars.at("x"), y = k.vars.at("y");
        spyre::schedule(k.output).ring_split(y, cores, rows).stick_vectorize(x);
        spyre::stage_all_in_lx(k.inputs[0], k.output, y);
        spyre::schedule(k.funcs.at("acc")).scratchpad_store_at(k.output, y).stick_vectorize(x);
    };
}

struct RowScanCase {
    std::string type;  // "f16", "f32", "i32"
    int cols, rows, cores;
    bool lx_root = false;  // acc scratchpad_root, the input staged by the back end (read from element 1)
};
void PrintTo(const RowScanCase &c, std::ostream *os) {
    *os << c.type << "_" << c.cols << "x" << c.rows << "c" << c.cores << (c.lx_root ? "_lx_root" : "");
}

class RowScan : public ::testing::TestWithParam<RowScanCase> {};

// One VSCANSUM per step of rows (the running sum's first element kept, as the pure definition
// wrote it); each step rounds as Halide's does (fp16 adds round to fp16 after every element): bit for bit.
TEST_P(RowScan, RunningSumAlongTheStickDimensionMatchesCpu) {
    const RowScanCase c = GetParam();
    const Type t = c.type == "f16" ? Float(16) : c.type == "f32" ? Float(32) : Int(32);
    Schedule lx_root = [](Kernel &k) {
        spyre::schedule(k.output).stick_vectorize(k.vars.at("x"));
        spyre::schedule(k.funcs.at("acc")).scratchpad_root().stick_vectorize(k.vars.at("x"));
    };
    DiffResult r = run_differential(row_scan(c.cols, t), c.lx_root ? lx_root : row_scan_rows(c.rows, c.cores), {{c.cols, c.rows}}, {c.cols, c.rows}, -4, 4);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Shapes, RowScan,
                         ::testing::Values(RowScanCase{"f16", 100, 37, 1}, RowScanCase{"f16", 100, 37, 32},
                                           RowScanCase{"f16", 64, 16, 1}, RowScanCase{"f32", 4096, 8, 1},
                                           RowScanCase{"f32", 300, 5, 4}, RowScanCase{"i32", 65, 3, 1},
                                           RowScanCase{"f16", 64, 16, 1, true}, RowScanCase{"f32", 300, 5, 1, true}),
                         [](const auto &info) {
                             std::ostringstream os;
                             PrintTo(info.param, &os);
                             return os.str();
                         });

struct LaneScanCase {
    std::string type;  // "f16", "f32", "i32"
    ScanOp op;
    int cols, rows, cores;
};
void PrintTo(const LaneScanCase &c, std::ostream *os) {
    const char *ops[] = {"sum", "product", "max", "linear"};
    *os << ops[int(c.op)] << "_" << c.type << "_" << c.cols << "x" << c.rows << "c" << c.cores;
}

class LaneScan : public ::testing::TestWithParam<LaneScanCase> {};

// A scan along the stick other than a running sum has no instruction of its own: each step of the
// loop computes the update over the sticks around the element it writes (the previous element by a
// shifted read) and keeps that one element, so every element is rounded as Halide's sequential
// update rounds it: bit for bit, at rows of one, two and many sticks, on one core and several.
TEST_P(LaneScan, ScanAlongTheStickDimensionMatchesCpu) {
    const LaneScanCase c = GetParam();
    const Type t = c.type == "f16" ? Float(16) : c.type == "f32" ? Float(32) : Int(32);
    const float range = c.op == ScanOp::Product ? 1.f : 4.f;
    DiffResult r = run_differential(row_scan(c.cols, t, c.op), row_scan_rows(c.rows, c.cores), {{c.cols, c.rows}},
                                    {c.cols, c.rows}, -range, range);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Ops, LaneScan,
                         ::testing::Values(LaneScanCase{"f16", ScanOp::Max, 100, 37, 1},
                                           LaneScanCase{"f16", ScanOp::Max, 300, 5, 4},
                                           LaneScanCase{"i32", ScanOp::Max, 65, 3, 1},
                                           LaneScanCase{"f32", ScanOp::Product, 100, 9, 1},
                                           LaneScanCase{"f16", ScanOp::Linear, 64, 16, 1},
                                           LaneScanCase{"f32", ScanOp::Linear, 300, 5, 32},
                                           LaneScanCase{"f16", ScanOp::Linear, 20, 7, 2}),
                         [](const auto &info) {
                             std::ostringstream os;
                             PrintTo(info.param, &os);
                             return os.str();
                         });

// A scan over the first part of each row: the elements after its last keep what the pure
// definition wrote (each iteration puts back every element but the one it writes), with the row
// one instruction's sticks (100 columns) and in two-stick windows (300).
TEST(LaneScan, AScanOverPartOfTheRowLeavesTheRestOfTheRowAsThePureDefinitionWroteIt) {
    for (int cols : {100, 300}) {
        Algorithm alg = row_scan_of(Float(16), 1, cols / 2 - 1, [](Func acc, ImageParam in, RVar r, Var y) {
            return max(acc(r - 1, y), in(r, y));
        });
        DiffResult r = run_differential(alg, row_scan_rows(9, 1), {{cols, 9}}, {cols, 9}, -4, 4);
        EXPECT_EQ(r.cmp.max_ulp, 0) << cols << " columns: " << r.cmp.first_mismatch;
    }
}

// auto_schedule finds a schedule for a running maximum along the rows (it found none while such
// scans were refused), and it matches the CPU bit for bit.
TEST(LaneScan, AutoScheduledRunningMaxAlongTheStickMatchesCpu) {
    AutoOptions ao;
    ao.max_evaluations = 8;
    ao.progress = false;
    CompileOptions o;
    o.inputs = {TensorSpec{{100, 37}, {}}};
    o.output = TensorSpec{{100, 37}, {}};
    AutoResult chosen;
    DiffResult r = run_differential(
        row_scan(100, Float(16), ScanOp::Max), [&](Kernel &k) { chosen = auto_schedule(k.output, k.inputs, o, ao); },
        {{100, 37}}, {100, 37}, -4, 4);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch << "\n" << chosen.cpp;
    EXPECT_GT(r.program.num_cores, 1) << chosen.summary;
}

// A running sum whose first element is not a stick's first (an RDom from 2), and one that adds a
// value constant along the row: no VSCANSUM takes them, and they run one element per step.
TEST(LaneScan, ASumStartingInsideAStickOrAddingAConstantMatchesCpu) {
    for (bool from_two : {true, false}) {
        Algorithm alg = row_scan_of(Float(32), from_two ? 2 : 1, from_two ? 98 : 99,
                                    [=](Func acc, ImageParam in, RVar r, Var y) {
                                        return acc(r - 1, y) + (from_two ? in(r, y) : in(0, y));
                                    });
        DiffResult r = run_differential(alg, row_scan_rows(37, 1), {{100, 37}}, {100, 37}, -4, 4);
        EXPECT_EQ(r.cmp.max_ulp, 0) << (from_two ? "from 2: " : "constant: ") << r.cmp.first_mismatch;
    }
}

// Rows of 7 elements back to back in a one-dimensional Func, each scanned from its second element:
// the rows start at a different place in a stick each, so no window of whole sticks fits them all,
// and each element is computed on a stick of its own.
TEST(SingleElements, ScansOfRowsThatStartAnywhereInAStickMatchCpu) {
    Algorithm alg = [] {
        Kernel k;
        ImageParam in(Float(32), 1, "in");
        Var x("x");
        RDom r(1, 6, 0, 5, "r");
        Func p("p"), acc("acc"), out("out");
        p(x) = in(x);
        acc(x) = p(x);
        acc(r.x + r.y * 7) = max(acc(r.x + r.y * 7 - 1), p(r.x + r.y * 7));
        out(x) = acc(x);
        k.inputs = {in};
        k.output = out;
        k.funcs = {{"p", p}, {"acc", acc}};
        k.vars = {{"x", x}};
        return k;
    };
    DiffResult r = run_differential(alg, [](Kernel &k) {
        spyre::schedule(k.output).stick_vectorize(k.vars.at("x"));
        spyre::schedule(k.funcs.at("p")).scratchpad_root().stick_vectorize(k.vars.at("x"));
        spyre::schedule(k.funcs.at("acc")).scratchpad_root().stick_vectorize(k.vars.at("x"));
    }, {{35}}, {35}, -4, 4);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
}

// An update reading the element two before the one it writes, and a scan whose loop over the rows
// runs inside its loop along the row (no loop runs along a stick): each element is computed on a
// stick of its own, in Halide's loop order.
TEST(SingleElements, AScanReadingTwoElementsBackOrWithItsRowLoopInsideMatchesCpu) {
    for (bool two_back : {true, false}) {
        Algorithm alg = row_scan_of(Float(32), 2, 98, [=](Func acc, ImageParam in, RVar r, Var y) {
            return max(acc(r - (two_back ? 2 : 1), y), in(r, y)) * 0.75f;
        });
        Schedule sched = [=](Kernel &k) {
            row_scan_rows(37, 1)(k);
            // RDom r of the algorithm: its dimension is r.x, which Halide names "r$x".
            if (!two_back) k.funcs.at("acc").update().reorder(k.vars.at("y"), RVar("r$x"));
        };
        DiffResult r = run_differential(alg, sched, {{100, 37}}, {100, 37}, -4, 4);
        EXPECT_EQ(r.cmp.max_ulp, 0) << (two_back ? "two back: " : "rows inside: ") << r.cmp.first_mismatch;
    }
}

// A schedule of the scan's pure definition alone (its update left to the back end) lowers without
// Halide's "has not been scheduled" warning, which named the Func as Halide renamed it (acc$21).
TEST(RowScan, AScheduleOfThePureDefinitionAloneLowersWithoutHalidesWarning) {
    Kernel k = row_scan(100, Float(16), ScanOp::Max)();
    row_scan_rows(37, 1)(k);
    CompileOptions o;
    o.inputs = {TensorSpec{{100, 37}, {}}};
    o.output = TensorSpec{{100, 37}, {}};
    ::testing::internal::CaptureStderr();
    compile_for_spyre(k.output, k.inputs, o);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.find("has not been scheduled"), std::string::npos) << err;
}

// The running sum with no schedule at all: Halide computes acc inside out's innermost loop, the
// whole row again for every element out reads. The refusal says so and what to write instead.
TEST(RowScanErrors, AnUnscheduledRunningSumSaysWhereHalideComputesIt) {
    const std::string msg = error_of([&] { run_differential(row_scan(100), [](Kernel &) {}, {{100, 37}}, {100, 37}); });
    EXPECT_NE(msg.find("Func acc"), std::string::npos) << msg;
    EXPECT_NE(msg.find("acc has an update definition and no schedule"), std::string::npos) << msg;
    EXPECT_NE(msg.find("scratchpad_store_at(consumer, loop)"), std::string::npos) << msg;
    EXPECT_EQ(generated_name_in(msg), "") << msg;
}

}  // namespace
}  // namespace spyre::testing
