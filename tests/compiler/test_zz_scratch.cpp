#include <gtest/gtest.h>
#include <iostream>
#include "compiler_test_util.h"
#include "device/disassembler.h"
#include "directives.h"
namespace spyre::testing {
using namespace Halide;
TEST(Scratch, Dump) {
    ImageParam in1(Int(32), 2, "in1");
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func p("p"), out("out");
    p(x, y) = (cast(Float(16), in1(x, y)) - min(cast(Float(16), 0.5f), cast(Float(16), in1(x, y))));
    out(x, y) = cast(Int(8), clamp(round(cast(Float(16), abs(p(x, y)))), -128, 127));
    schedule(out).split(x, xo, xi, 256).stick_vectorize(xi);
    schedule(out).ring_split(y, 3, 2);
    schedule(p).device_root().stick_vectorize(x);
    CompileOptions o = kernel_options({{64, 2}}, {64, 2});
    auto d = spyre_pass_dumps(out, {in1}, o);
    for (auto &p : d) std::cout << "=== " << p.first << "\n" << p.second << "\n";
}
}
