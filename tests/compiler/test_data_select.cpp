// select() on data, as users write it from Halide's docs: a leaky ReLU, a NaN scrub, a choice
// between inputs by their comparison. Each is a mask (VCMPLT/VCMPLE/VCMPEQ, && and || of masks)
// and one VSELM, and matches Halide's CPU realisation exactly; a condition that also compares the
// element index is refused by name.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler_test_util.h"

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

}  // namespace
}  // namespace spyre::testing
