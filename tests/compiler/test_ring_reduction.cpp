// A reduction split over the cores of the ring (ring_split_reduction) keeps each core's partials
// in its LX and combines them with one RING_REDUCE: no partial crosses device memory, and the
// result matches Halide's CPU realisation.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"

namespace spyre::testing {
namespace {

using namespace Halide;

Algorithm rowsum(int cols) {
    return [=] {
        Kernel k;
        ImageParam in(Float(16), 2, "in");
        Var y("y");
        RDom r(0, cols, "r");
        Func f("rowsum");
        f(y) = 0.0f;
        f(y) += cast<float>(in(r, y));
        k.inputs = {in};
        k.output = f;
        k.vars = {{"y", y}};
        return k;
    };
}

int ring_reduction_count_op(const DeviceProgram &p, Opcode op) {
    int n = 0;
    for (const Instr &in : p.code) n += in.op == op;
    return n;
}

TEST(RingReduction, RowSumOver32Cores) {
    const int cols = 4096, rows = 64;
    RDom r(0, cols, "r");
    DiffResult res = run_differential(
        rowsum(cols),
        [&](Kernel &k) {
            RVar rx(k.output.update(0).get_schedule().rvars()[0].var);
            spyre::schedule(k.output).ring_split_reduction(rx, 32, cols);
        },
        {{cols, rows}}, {rows}, -1, 1);
    // Partial sums are combined in core order, not in the CPU's left-to-right order: fp32 rounding
    // differs by a few ULPs on a 4096-term sum.
    EXPECT_LE(res.cmp.max_ulp, 16) << res.cmp.first_mismatch;
    EXPECT_EQ(res.program.num_cores, 32);
    EXPECT_EQ(ring_reduction_count_op(res.program, Opcode::RING_REDUCE), 1);
    EXPECT_GT(res.stats.ring_bytes, 0);
    // Device memory sees the input and the result (written once by its init, read back and written
    // by the merge), never the 32 x 64 partial sums.
    int64_t result = int64_t(rows) * 4;
    EXPECT_EQ(res.stats.dram_read_bytes, int64_t(cols) * rows * 2 + result);
    EXPECT_EQ(res.stats.dram_write_bytes, 2 * result);
}

TEST(RingReduction, PartialsNotWholeSticksIsAnError) {
    ImageParam in(Float(16), 2, "in");
    Var y("y");
    RDom r(0, 1024, "r");
    Func f("tiny_rowsum");
    f(y) = 0.0f;
    f(y) += cast<float>(in(r, y));
    try {
        spyre::schedule(f).ring_split_reduction(r.x, 32, 1024);  // 32 values per core: half a stick
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("Func tiny_rowsum: ring_split_reduction(r.x, 32)"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("not whole sticks"), std::string::npos) << e.what();
    }
}

TEST(RingReduction, NeedsAnUpdateDefinition) {
    ImageParam in(Float(16), 2, "in");
    Var y("y");
    RDom r(0, 4096, "r");
    Func f("inline_sum");
    f(y) = sum(cast<float>(in(r, y)));
    try {
        spyre::schedule(f).ring_split_reduction(r.x, 32, 4096);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("needs an update definition"), std::string::npos) << e.what();
    }
}

// A split-K matmul of one row (a decode step's projection): each core multiplies its K share of
// x by its K rows of W on the PE array and the ring adds the partials; with a K panel the share is
// streamed in double-buffered panels (a W share wider than LX), and the result is the same.
struct SplitKCase {
    int rows, inner, cols, cores, panel, n_tile = 0;
};

class SplitKMatmul : public ::testing::TestWithParam<SplitKCase> {};

TEST_P(SplitKMatmul, MatchesCpu) {
    const SplitKCase c = GetParam();
    DiffResult res = run_differential(
        [=] {
            Kernel k;
            ImageParam a(Float(16), 2, "a"), w(Float(16), 2, "w");
            Var n("n"), m("m");
            RDom r(0, c.inner, "r");
            Func acc("acc"), out("out");
            acc(n, m) = 0.0f;
            acc(n, m) += cast<float>(a(r, m)) * cast<float>(w(n, r));
            out(n, m) = cast<float16_t>(acc(n, m));
            k.inputs = {a, w};
            k.output = out;
            k.funcs = {{"acc", acc}};
            k.vars = {{"n", n}};
            return k;
        },
        [=](Kernel &k) {
            Func acc = k.funcs.at("acc");
            spyre::schedule(acc).scratchpad_root();
            RVar r(acc.update(0).get_schedule().rvars()[0].var);
            spyre::schedule(acc).ring_split_reduction(r, c.cores, c.inner, true, c.panel, c.n_tile);
            spyre::schedule(k.output).stick_vectorize(k.vars.at("n"));
        },
        {{c.inner, c.rows}, {c.cols, c.inner}}, {c.cols, c.rows}, -1, 1);
    // The partials are added in core order, not the CPU's: the fp32 sums differ by rounding (about
    // 1e-5 on these sums of up to 2048 products), which an fp16 result near zero shows as several of
    // its ULPs, and a larger one as at most one.
    EXPECT_TRUE(res.cmp.max_ulp <= 1 || res.cmp.max_abs_error <= 2e-4)
        << res.cmp.max_ulp << " ULP, " << res.cmp.max_abs_error << " " << res.cmp.first_mismatch;
    EXPECT_EQ(res.program.num_cores, c.cores);
    EXPECT_EQ(ring_reduction_count_op(res.program, Opcode::RING_REDUCE), 1);
    // Panels: each core loads its share of W a panel at a time.
    int w_loads = 0, w_index = -1;
    for (size_t b = 0; b < res.program.buffers.size(); b++)
        if (res.program.buffers[b].name == "w") w_index = int(b);
    for (const Instr &in : res.program.code) w_loads += in.op == Opcode::DMA_LD && in.a[1] == w_index;
    EXPECT_GE(w_loads, 1);
    EXPECT_GE(res.stats.dram_read_bytes - int64_t(c.inner) * c.rows * 2, int64_t(c.inner) * c.cols * 2);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SplitKMatmul,
                         ::testing::Values(SplitKCase{1, 2048, 256, 32, 0},     // the share whole
                                           SplitKCase{1, 2048, 192, 8, 64},     // panels of a stick
                                           SplitKCase{3, 1024, 320, 4, 128},    // rows, two panels
                                           SplitKCase{2, 2048, 512, 8, 256, 128},  // N in tiles
                                           SplitKCase{2, 1024, 384, 4, 64, 192}),  // tiles and panels
                         [](const ::testing::TestParamInfo<SplitKCase> &i) {
                             const SplitKCase &c = i.param;
                             return std::to_string(c.rows) + "x" + std::to_string(c.inner) + "x" +
                                    std::to_string(c.cols) + "_cores" + std::to_string(c.cores) + "_panel" +
                                    std::to_string(c.panel) + (c.n_tile ? "_tile" + std::to_string(c.n_tile) : "");
                         });

TEST(RingReduction, AKPanelMustBeWholeSticksOfTheShareOnThePe) {
    ImageParam a(Float(16), 2, "a"), w(Float(16), 2, "w");
    Var n("n"), m("m");
    RDom r(0, 2048, "r");
    Func acc("panel_acc");
    acc(n, m) = 0.0f;
    acc(n, m) += cast<float>(a(r, m)) * cast<float>(w(n, r));
    auto msg = [&](bool pe, int panel) {
        try {
            Func f = acc;
            spyre::schedule(f).ring_split_reduction(r.x, 8, 2048, pe, panel);
        } catch (const spyre::Error &e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    EXPECT_NE(msg(true, 96).find("a K panel of 96 needs the PE array (on_pe) and whole sticks of 64 that divide each core's 256"),
              std::string::npos) << msg(true, 96);
    EXPECT_NE(msg(false, 64).find("a K panel of 64 needs the PE array"), std::string::npos);
    const std::string tile = [&] {
        try {
            Func f = acc;
            spyre::schedule(f).ring_split_reduction(r.x, 8, 2048, true, 64, 100);
        } catch (const spyre::Error &e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    }();
    EXPECT_NE(tile.find("an N tile of 100 needs a K panel and whole sticks of 64"), std::string::npos) << tile;
}

}  // namespace
}  // namespace spyre::testing
