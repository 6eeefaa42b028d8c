// device_layout: the storage order of an intermediate in device memory. It must compute the same
// numbers in either order, change the modelled time where the accesses' runs change, and refuse a
// malformed order with a message naming the Func and the directive.
#include <gtest/gtest.h>

#include "compiler_test_util.h"

using namespace Halide;
using namespace spyre;
using namespace spyre::testing;

namespace {

// p is read by the output with its two outer dimensions swapped: stored in the output's order, the
// output reads whole runs.
Kernel swapped_reader() {
    Kernel k;
    ImageParam in(Float(16), 3, "in");
    Var x("x"), y("y"), z("z");
    Func p("p"), out("out");
    p(x, y, z) = in(x, y, z) * 2;
    out(x, y, z) = p(x, z, y) + p(x, z, y) * p(x, z, y);
    k.inputs = {in};
    k.output = out;
    k.funcs["p"] = p;
    k.vars = {{"x", x}, {"y", y}, {"z", z}};
    return k;
}

DiffResult run_swapped(bool reader_order) {
    return run_differential(swapped_reader, [&](Kernel &k) {
        Var x = k.vars["x"], y = k.vars["y"], z = k.vars["z"];
        SpyreSchedule p = spyre::schedule(k.funcs["p"]);
        p.device_root().stick_vectorize(x);
        if (reader_order) p.device_layout({x, z, y});
        spyre::schedule(k.output).stick_vectorize(x);
    }, {{128, 64, 16}}, {128, 16, 64});
}

std::string layout_error(const std::function<void(Func &, Var, Var, Var)> &schedule) {
    Kernel k = swapped_reader();
    return error_of([&] { schedule(k.funcs["p"], k.vars["x"], k.vars["y"], k.vars["z"]); });
}

}  // namespace

TEST(DeviceLayout, EitherOrderComputesTheSameAndTheReadersOrderIsFaster) {
    const DiffResult plain = run_swapped(false), ordered = run_swapped(true);
    EXPECT_EQ(plain.cmp.mismatches, 0) << plain.cmp.first_mismatch;
    EXPECT_EQ(ordered.cmp.mismatches, 0) << ordered.cmp.first_mismatch;
    // One core: the reader's long runs outweigh the producer's short writes.
    EXPECT_LT(ordered.stats.us, plain.stats.us);
}

TEST(DeviceLayout, MalformedOrdersAreRefusedByName) {
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) { spyre::schedule(p).device_root().device_layout({x, z}); }),
              "Func p: device_layout(x, z): names 2 of its 3 dimensions; a layout orders them all");
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) { spyre::schedule(p).device_root().device_layout({x, z, z}); }),
              "Func p: device_layout(x, z, z): z is named twice");
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) {
                  spyre::schedule(p).device_root().device_layout({x, z, Var("w")});
              }),
              "Func p: device_layout(x, z, w): w is not one of its dimensions");
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) { spyre::schedule(p).device_root().device_layout({z, x, y}); }),
              "Func p: device_layout(z, x, y): the stick dimension x (the Func's first) must come first, innermost");
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) { spyre::schedule(p).device_layout({x, z, y}); }),
              "Func p: device_layout(x, z, y): a layout is for a Func in device memory; call device_root() first");
    EXPECT_EQ(layout_error([](Func &p, Var x, Var y, Var z) {
                  spyre::schedule(p).scratchpad_root().device_layout({x, z, y});
              }),
              "Func p: device_layout(x, z, y): a layout is for a Func in device memory; call device_root() first");
}
