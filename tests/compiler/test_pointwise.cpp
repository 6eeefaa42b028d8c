// Pointwise chains compiled for Spyre match Halide's CPU realisation: exactly for add/mul/fma and
// relu, within a few ULPs for transcendental ops (exp, tanh) whose CPU code is Halide's own.
#include <gtest/gtest.h>

#include "compiler_test_util.h"

namespace spyre::testing {
namespace {

using namespace Halide;

Algorithm pointwise(Type t, std::function<Expr(Expr)> f) {
    return [=] {
        Kernel k;
        ImageParam in(t, 2, "in");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = cast(t, f(in(x, y)));
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
}

Schedule sticks = [](Kernel &k) { spyre::schedule(k.output).stick_vectorize(k.vars["x"]); };

TEST(Pointwise, AddMulF16) {
    auto r = run_differential(pointwise(Float(16), [](Expr v) { return v * v + v * 2.0f; }), sticks, {{128, 4}}, {128, 4});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

}  // namespace
}  // namespace spyre::testing
