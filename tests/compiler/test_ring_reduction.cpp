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

}  // namespace
}  // namespace spyre::testing
