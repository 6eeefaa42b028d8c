// Output-stationary matmul tiles (schedules/matmul_tiles.h): whole sticks, dividing the core's
// share, within the usable LX with double-buffered panels, shrinking with the LX budget; and the
// full-size bmm they give moves a small multiple of its compulsory bytes.
#include <gtest/gtest.h>

#include "device/error.h"
#include "compile.h"
#include "matmul.h"
#include "matmul_tiles.h"
#include "sim/simulator.h"

namespace spyre::testing {
namespace {

struct Share {
    int m, n, k;
};

int64_t lx_of(const MatmulTiles &t, const MachineDesc &m) {
    auto sticks = [&](int64_t b) { return (b + m.stick_bytes - 1) / m.stick_bytes * m.stick_bytes; };
    return int64_t(t.m) * sticks(int64_t(t.n) * 4) + 2 * (int64_t(t.m) * sticks(int64_t(t.k) * 2) +
                                                           int64_t(t.k) * sticks(int64_t(t.n) * 2));
}

TEST(MatmulTiles, TilesDivideTheShareInWholeSticksAndFitTheLx) {
    const MachineDesc m;
    for (Share s : {Share{512, 3200, 4096}, Share{64, 2752, 4096}, Share{256, 1600, 4096}, Share{16, 64, 256},
                    Share{1, 64, 64}, Share{512, 128, 4096}}) {
        MatmulTiles t = choose_matmul_tiles("bmm", s.m, s.n, s.k, 32, m);
        std::string what = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
        EXPECT_EQ(s.m % t.m, 0) << what;
        EXPECT_EQ(s.n % t.n, 0) << what;
        EXPECT_EQ(s.k % t.k, 0) << what;
        EXPECT_EQ(t.n % 64, 0) << what;
        EXPECT_EQ(t.k % 64, 0) << what;
        EXPECT_LE(lx_of(t, m), m.lx_usable_bytes) << what;
        EXPECT_GT(t.est_ns, 0) << what;
    }
}

TEST(MatmulTiles, ASmallerLxBudgetGivesSmallerTiles) {
    MachineDesc big, small;
    small.lx_usable_bytes = 400 * 1024;
    MatmulTiles a = choose_matmul_tiles("bmm", 512, 3200, 4096, 32, big);
    MatmulTiles b = choose_matmul_tiles("bmm", 512, 3200, 4096, 32, small);
    EXPECT_LT(int64_t(b.m) * b.n, int64_t(a.m) * a.n);
    EXPECT_LE(lx_of(b, small), small.lx_usable_bytes);
    EXPECT_GT(b.est_ns, a.est_ns) << "less LX means more traffic";
}

TEST(MatmulTiles, NoTileThatFitsIsAnErrorNamingTheKernel) {
    MachineDesc m;
    m.lx_usable_bytes = 4096;
    try {
        choose_matmul_tiles("bmm", 512, 3200, 4096, 32, m);
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("bmm: no output tile of whole sticks fits the usable LX (4096 bytes)"),
                  std::string::npos)
            << e.what();
    }
}

// IBM's bmm at model size: the old fixed 128 x 320 tiles re-read the operands about 20 times.
TEST(MatmulTiles, FullSizeBmmMovesUnderSevenTimesItsCompulsoryBytes) {
    const int B = 8, M = 512, K = 4096, N = 12800;
    MatmulKernel k = make_bmm(B, M, K, N);
    schedule_bmm(k, "pe", 32);
    CompileOptions opt;
    opt.kernel_name = "bmm";
    opt.inputs = {TensorSpec{{K, M, B}, {}}, TensorSpec{{N, K}, {}}};
    opt.output = TensorSpec{{N, M, B}, {}};
    DeviceProgram p = compile_for_spyre(k.out, {k.a, k.w}, opt);
    SimOptions o;
    o.timing_only = true;
    SimStats st = simulate(p, MachineDesc{}, {}, o).stats;
    const int64_t compulsory = 2 * (int64_t(B) * M * K + int64_t(K) * N + int64_t(B) * M * N);
    EXPECT_LE(st.lx_peak_bytes, MachineDesc{}.lx_usable_bytes);
    EXPECT_LT(st.dram_read_bytes + st.dram_write_bytes, 7 * compulsory);
    EXPECT_EQ(st.pe_macs, int64_t(B) * M * K * N);
}

}  // namespace
}  // namespace spyre::testing
