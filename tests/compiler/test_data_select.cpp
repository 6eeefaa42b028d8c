// select() on data, as users write it from Halide's docs: a leaky ReLU, a NaN scrub, a choice
// between inputs by their comparison, and top-k over a row (argmax passes over masked rows). Each
// select is a mask (VCMPLT/VCMPLE/VCMPEQ, && and || of masks) and one VSELM, and matches Halide's
// CPU realisation exactly; a condition that also compares the element index is refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compiler_test_util.h"
#include "user_terms.h"

namespace spyre::testing {
namespace {

using namespace Halide;

int count_op(const DeviceProgram &p, Opcode op) {
    int n = 0;
    for (const Instr &in : p.code) n += in.op == op;
    return n;
}

Schedule rows_sched(int cores) {
    return [=](Kernel &k) {
        spyre::schedule(k.output).stick_vectorize(k.vars.at("x"));
        if (cores > 1) spyre::schedule(k.output).ring_split(k.vars.at("y"), cores);
    };
}

TEST(DataSelect, LeakyReluMatchesCpu) {
    DiffResult r = run_differential(
        [] {
            Kernel k;
            ImageParam in(Float(16), 2, "in");
            Var x("x"), y("y");
            Func out("leaky_relu");
            out(x, y) = select(in(x, y) > 0, in(x, y), in(x, y) * float16_t(0.125f));
            k.inputs = {in};
            k.output = out;
            k.vars = {{"x", x}, {"y", y}};
            return k;
        },
        rows_sched(4), {{200, 16}}, {200, 16});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    EXPECT_GE(count_op(r.program, Opcode::VCMPLT), 1);
    EXPECT_GE(count_op(r.program, Opcode::VSELM), 1);
}

// Of two inputs, where they are equal a third, elsewhere the smaller, in fp32 and int32, with ==,
// <= and !=.
TEST(DataSelect, ComparisonsOfInputsMatchCpu) {
    for (Type type : {Float(32), Int(32)}) {
        DiffResult r = run_differential(
            [=] {
                Kernel k;
                ImageParam a(type, 2, "a"), b(type, 2, "b"), c(type, 2, "c");
                Var x("x"), y("y");
                Func out("pick");
                Expr av = a(x, y), bv = b(x, y);
                out(x, y) = select(av == bv, c(x, y), select(av <= bv, av, bv)) + select(av != bv, av, cast(type, 0));
                k.inputs = {a, b, c};
                k.output = out;
                k.vars = {{"x", x}, {"y", y}};
                return k;
            },
            rows_sched(1), {{96, 5}, {96, 5}, {96, 5}}, {96, 5}, -2, 2);
        EXPECT_EQ(r.cmp.mismatches, 0) << type << " " << r.cmp.first_mismatch;
    }
}

// A condition of the values and of the element index together (an index used as a value) has no
// vector form: refused by name, never computed wrong.
TEST(DataSelect, AnIndexComparedWithValuesIsRefusedByName) {
    const std::string e = error_of([&] {
        run_differential(
            [] {
                Kernel k;
                ImageParam in(Float(16), 2, "in");
                Var x("x"), y("y");
                Func out("masked");
                out(x, y) = select(in(x, y) > 0 || x < 8, in(x, y), float16_t(0));
                k.inputs = {in};
                k.output = out;
                k.vars = {{"x", x}, {"y", y}};
                return k;
            },
            rows_sched(1), {{200, 4}}, {200, 4});
    });
    EXPECT_NE(e.find("Func masked"), std::string::npos) << e;
    EXPECT_NE(e.find("an index used as a value"), std::string::npos) << e;
}

// A condition that is not a comparison (a call such as is_nan) is refused, naming the construct.
TEST(DataSelect, AConditionThatIsNotAComparisonIsRefusedByName) {
    const std::string e = error_of([&] {
        run_differential(
            [] {
                Kernel k;
                ImageParam in(Float(32), 2, "in");
                Var x("x"), y("y");
                Func out("nan_to_zero");
                out(x, y) = select(is_nan(in(x, y)), 0.0f, in(x, y));
                k.inputs = {in};
                k.output = out;
                k.vars = {{"x", x}, {"y", y}};
                return k;
            },
            rows_sched(1), {{64, 2}}, {64, 2});
    });
    EXPECT_NE(e.find("Func nan_to_zero"), std::string::npos) << e;
    EXPECT_NE(e.find("is not a comparison of values"), std::string::npos) << e;
    EXPECT_EQ(generated_name_in(e), "") << e;
}

// NaN compares false, as on the CPU: a scrub of NaN (x != x) to 0 keeps every other value.
TEST(DataSelect, NaNScrubMatchesCpu) {
    Runtime::Buffer<> in(halide_type_t(halide_type_float, 32), 64, 3);
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 64; x++) in.as<float>()(x, y) = (x + y) % 7 == 0 ? std::nanf("") : float(x - y);
    DiffResult r = run_differential_on(
        [] {
            Kernel k;
            ImageParam v(Float(32), 2, "v");
            Var x("x"), y("y");
            Func out("scrub");
            out(x, y) = select(v(x, y) != v(x, y), 0.0f, v(x, y));
            k.inputs = {v};
            k.output = out;
            k.vars = {{"x", x}, {"y", y}};
            return k;
        },
        rows_sched(1), {in}, {64, 3});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// Top-k of each row (values and indices, largest first, the first index among equal values), as
// k argmax passes: pass j takes the largest element after pass j - 1's pick (value pv) in (value
// descending, index ascending) order: those below pv, and those equal to pv past the c-th
// occurrence of pv, c the picks so far of that value. The occurrences are counted by a running
// sum along the row of the mask x == pv (a scan), so no condition compares the index with data.
Algorithm topk(int cols, int k, bool values) {
    return [=] {
        Kernel kk;
        ImageParam in(Float(16), 2, "in");
        Var x("x"), y("y"), i("i");
        RDom r(0, cols, "r"), rs(1, cols - 1, "rs");
        std::vector<Func> picks;
        for (int j = 0; j < k; j++) {
            Func p("pick" + std::to_string(j));
            if (j == 0) {
                p(y) = argmax(in(r, y));
            } else {
                Expr pv = picks.back()(y)[1];
                Func seen("seen" + std::to_string(j));  // occurrences of pv up to each element
                seen(x, y) = select(in(x, y) == pv, 1.0f, 0.0f);
                seen(rs, y) = seen(rs - 1, y) + select(in(rs, y) == pv, 1.0f, 0.0f);
                Expr taken = 0.0f;  // picks so far of the value pv
                for (int q = 0; q < j; q++) taken = taken + select(picks[size_t(q)](y)[1] == pv, 1.0f, 0.0f);
                Expr v = in(r, y);
                p(y) = argmax(select(v < pv || (v == pv && seen(r, y) > taken), v, Float(16).min()));
                kk.funcs[seen.name()] = seen;
            }
            picks.push_back(p);
            kk.funcs[p.name()] = p;
        }
        Func out("topk");
        auto take = [&](int j) {
            return values ? Expr(cast<float>(picks[size_t(j)](y)[1])) : Expr(cast<float>(picks[size_t(j)](y)[0]));
        };
        Expr e = take(k - 1);
        for (int j = k - 2; j >= 0; j--) e = select(i <= j, take(j), e);  // i <= j: a lane mask
        out(i, y) = e;
        kk.inputs = {in};
        kk.output = out;
        kk.vars = {{"x", x}, {"y", y}, {"i", i}};
        return kk;
    };
}

// Rows of many ties (64 levels: the top value some 15 times, so the first picks are its first
// occurrences in order) and of few (4096 levels), an odd row length.
TEST(DataSelect, TopKIndicesAndValuesMatchCpuWithTies) {
    const int cols = 1000, rows = 6, k = 5;
    Runtime::Buffer<> in(halide_type_t(halide_type_float, 16), cols, rows);
    uint32_t s = 99;
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            s = s * 1664525u + 1013904223u;
            const int levels = y < 3 ? 64 : 4096;
            in.as<float16_t>()(x, y) = float16_t(float(int((s >> 8) % levels) - levels / 2) * 8.0f / levels);
        }
    for (bool values : {false, true}) {
        DiffResult r = run_differential_on(topk(cols, k, values), [](Kernel &kk) {
            for (auto &f : kk.funcs) {
                spyre::SpyreSchedule sch = spyre::schedule(f.second);
                sch.scratchpad_root();
                if (f.first.rfind("seen", 0) == 0) sch.stick_vectorize(kk.vars.at("x"));
            }
        }, {in}, {k, rows});
        EXPECT_EQ(r.cmp.mismatches, 0) << (values ? "values " : "indices ") << r.cmp.first_mismatch;
        // And what top-k is: a stable sort of each row by value, descending.
        for (int y = 0; y < rows; y++) {
            std::vector<int> order(cols);
            for (int x = 0; x < cols; x++) order[size_t(x)] = x;
            auto v = [&](int x) { return float(in.as<float16_t>()(x, y)); };
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return v(a) > v(b); });
            for (int j = 0; j < k; j++)
                EXPECT_EQ(r.got.as<float>()(j, y), values ? v(order[size_t(j)]) : float(order[size_t(j)]))
                    << "row " << y << " pick " << j;
        }
    }
}

}  // namespace
}  // namespace spyre::testing
