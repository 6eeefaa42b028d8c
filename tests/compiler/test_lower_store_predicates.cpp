// lower_store_predicates: the last, partial tile of an output's columns, vectorized in whole sticks,
// must write no stick past its row. 200 int32 columns in tiles of 64 (two sticks): the last tile's
// second stick (columns 224..255) lies past the row's padding (224), in the next row or past the
// buffer; spyre-fuzz-diff --seed 79 --case 157 wrote it there. Each case runs on the simulator (which
// refuses a DMA past a buffer) and matches the CPU.
#include <gtest/gtest.h>

#include "compiler_test_util.h"

using namespace Halide;
using namespace spyre;
using namespace spyre::testing;

namespace {

Kernel doubled_through_a_tile() {
    Kernel k;
    ImageParam in(Int(32), 2, "in0");
    Var x("x"), y("y");
    Func s("s"), out("out");
    s(x, y) = in(x, y) + in(x, y);
    out(x, y) = s(x, y);
    k.inputs = {in};
    k.output = out;
    k.funcs["s"] = s;
    k.vars = {{"x", x}, {"y", y}};
    return k;
}

struct TileCase {
    int rows, cores, row_tile;
};
void PrintTo(const TileCase &c, std::ostream *os) { *os << c.rows << " rows, " << c.cores << " cores, tiles of " << c.row_tile; }

class PartialColumnTiles : public ::testing::TestWithParam<TileCase> {};

TEST_P(PartialColumnTiles, WriteNoStickPastTheirRowsAndMatchCpu) {
    const TileCase c = GetParam();
    DiffResult r = run_differential(doubled_through_a_tile, [&](Kernel &k) {
        Var x = k.vars["x"], y = k.vars["y"], xo("xo"), xi("xi"), yo("yo"), yi("yi");
        SpyreSchedule out = spyre::schedule(k.output);
        out.split(x, xo, xi, 64).stick_vectorize(xi);
        if (c.cores > 1) out.ring_split(y, c.cores, c.rows);
        out.split(y, yo, yi, c.row_tile);
        spyre::schedule(k.funcs["s"]).scratchpad_store_at(k.output, yo).stick_vectorize(x);
    }, {{200, c.rows}}, {200, c.rows});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

INSTANTIATE_TEST_SUITE_P(Tiles, PartialColumnTiles,
                         ::testing::Values(TileCase{7, 1, 4}, TileCase{7, 2, 4}, TileCase{13, 3, 4}),
                         [](const ::testing::TestParamInfo<TileCase> &i) {
                             return std::to_string(i.param.rows) + "rows_" + std::to_string(i.param.cores) + "cores_tile" +
                                    std::to_string(i.param.row_tile);
                         });

// Two inputs side by side, the second read through max(x - 50, 0), in tiles of 64 columns: the last
// tile's lanes 96..99 read in1's columns 46..49 shifted from the stick at 32, and lanes past 99 would
// need the next stick, past in1's last row (spyre-fuzz-diff --seed 81 --case 173: a DMA past the
// buffer). Clamped at the last lane in range, the shift needs no halo.
TEST(PartialColumnTiles, AShiftedReadInTheLastTileLoadsNothingPastItsInput) {
    auto concat = [] {
        Kernel k;
        ImageParam in0(Float(32), 2, "in0"), in1(Float(32), 2, "in1");
        Var x("x"), y("y");
        Func out("out");
        out(x, y) = select(x < 50, in0(min(x, 49), y), in1(max(x - 50, 0), y));
        k.inputs = {in0, in1};
        k.output = out;
        k.vars = {{"x", x}, {"y", y}};
        return k;
    };
    DiffResult r = run_differential(concat, [](Kernel &k) {
        Var xo("xo"), xi("xi");
        spyre::schedule(k.output).split(k.vars["x"], xo, xi, 64).stick_vectorize(xi);
    }, {{50, 2}, {50, 2}}, {100, 2});
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
}

// A column sum kept in LX per tile (acc inline in out), its columns vectorized in tiles wider than
// the row: the tiles' LX stores carry the split's predicate too. Each tile's stick runs when its
// first column is in range (the second stick of a 128-wide tile of 7 or 100 columns is past the
// row: run, it read the input's rows past its end); the lanes past the end keep what the stick
// held (spyre-fuzz-diff --seed 4 --case 26 was refused).
TEST(PartialColumnTiles, AColumnSumInLxVectorizedWiderThanTheRowMatchesCpu) {
    for (int cols : {7, 100}) {
        auto alg = [=] {
            Kernel k;
            ImageParam in0(Float(16), 2, "in0");
            Var x("x");
            RDom r(0, 16, "r");
            Func acc("acc"), out("out");
            acc(x) = cast(Float(16), 0);
            acc(x) += in0(x, r);
            out(x) = acc(x);
            k.inputs = {in0};
            k.output = out;
            k.funcs = {{"acc", acc}};
            k.vars = {{"x", x}};
            return k;
        };
        DiffResult r = run_differential(alg, [](Kernel &k) {
            Var xo("xo"), xi("xi");
            spyre::schedule(k.output).split(k.vars["x"], xo, xi, 128).stick_vectorize(xi);
        }, {{cols, 16}}, {cols}, -2, 2);
        EXPECT_EQ(r.cmp.max_ulp, 0) << cols << " columns: " << r.cmp.first_mismatch;
    }
}

// A vectorize wider than a core's share (7 int32 elements, a ring split over 3 cores, vectors of
// 32): Halide guards the lanes past the end; the sum kept in LX stores under that guard as a
// select, and the program matches the CPU (it was refused, spyre-fuzz-diff seed 1 case 81).
TEST(PartialColumnTiles, AVectorWiderThanTheElementsSplitOverTheCoresMatchesCpu) {
    auto alg = [] {
        Kernel k;
        ImageParam in(Int(32), 2, "in");
        Var x("x");
        RDom r(0, 3, "r");
        Func out("out");
        out(x) = sum(in(x, r));
        k.inputs = {in};
        k.output = out;
        k.vars = {{"x", x}};
        return k;
    };
    DiffResult d = run_differential(alg, [](Kernel &k) {
        Var xo("xo"), xi("xi");
        spyre::schedule(k.output).ring_split(k.vars["x"], 3, 7);
        spyre::schedule(k.output).split(k.vars["x"], xo, xi, 32).stick_vectorize(xi);
    }, {{7, 3}}, {7}, -100, 100);
    EXPECT_EQ(d.cmp.mismatches, 0) << d.cmp.first_mismatch;
}

}  // namespace
