// The hand-built batched matmul computes A x W on several cores (checked against a C++ matmul
// with the same fp32 accumulation and fp16 rounding), and its timing-only run summarises loops.
#include <gtest/gtest.h>

#include <random>

#include "../channel_floor.h"
#include "bmm_program.h"
#include "device/error.h"
#include "device/half.h"
#include "device/layout.h"
#include "sim/simulator.h"

namespace spyre {
namespace {

TEST(BmmProgram, MatchesReferenceOnFourCores) {
    BmmShape s;
    s.batch = 2, s.m = 128, s.k = 1024, s.n = 1280, s.cores = 4;
    s.tile_m = 64, s.tile_n = 320, s.tile_k = 256;
    DeviceProgram p = build_bmm(s);
    const MachineDesc m;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> small(-3, 3);  // exact in fp16 products and fp32 sums
    std::vector<uint16_t> A(size_t(s.batch) * s.m * s.k), W(size_t(s.k) * s.n);
    for (auto &v : A) v = float_to_half(float(small(rng)) * 0.5f);
    for (auto &v : W) v = float_to_half(float(small(rng)) * 0.25f);
    std::vector<std::vector<uint8_t>> images(3);
    images[0] = stickify(A.data(), p.buffers[0].shape, DType::F16, p.buffers[0].layout, m.stick_bytes);
    images[1] = stickify(W.data(), p.buffers[1].shape, DType::F16, p.buffers[1].layout, m.stick_bytes);
    SimResult r = simulate(p, m, images);
    std::vector<uint16_t> C(size_t(s.batch) * s.m * s.n);
    unstickify(r.buffers[2], C.data(), p.buffers[2].shape, DType::F16, p.buffers[2].layout, m.stick_bytes);
    std::vector<float> Af(A.size()), Wf(W.size());
    for (size_t i = 0; i < A.size(); i++) Af[i] = half_to_float(A[i]);
    for (size_t i = 0; i < W.size(); i++) Wf[i] = half_to_float(W[i]);
    std::vector<float> acc(size_t(s.n));
    for (int b = 0; b < s.batch; b++)
        for (int i = 0; i < s.m; i++) {
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (int k = 0; k < s.k; k++) {
                float av = Af[(size_t(b) * s.m + i) * s.k + k];
                for (int j = 0; j < s.n; j++) acc[j] += av * Wf[size_t(k) * s.n + j];
            }
            for (int j = 0; j < s.n; j++)
                ASSERT_EQ(C[(size_t(b) * s.m + i) * s.n + j], float_to_half(acc[j])) << b << "," << i << "," << j;
        }
    EXPECT_EQ(r.stats.pe_macs, int64_t(s.batch) * s.m * s.n * s.k);
    EXPECT_LE(r.stats.lx_peak_bytes, m.lx_usable_bytes);
}

TEST(BmmProgram, FullSizeTimingOnlyIsSummarised) {
    const BmmShape s;
    DeviceProgram p = build_bmm(s);
    const MachineDesc m;
    SimOptions o;
    o.timing_only = true;
    SimResult r = simulate(p, m, {}, o);
    EXPECT_GT(r.stats.summarised_iterations, 0);
    const int64_t macs = int64_t(8) * 512 * 4096 * 12800;
    EXPECT_EQ(r.stats.pe_macs, macs);
    // The summarised time is at least what the machine description allows: the MACs at the PE
    // arrays' steady rate on every core, and A and W read and C written once over the channel.
    const double pe_floor_us = double(macs) / (m.pe_macs_per_ns * s.cores) / 1000.0;
    const int64_t a = int64_t(s.batch) * s.m * s.k * 2, w = int64_t(s.k) * s.n * 2, c = int64_t(s.batch) * s.m * s.n * 2;
    EXPECT_GE(r.stats.us, pe_floor_us);
    EXPECT_GE(r.stats.us, testing_floor::channel_floor_us(a + w, c, m));
}

TEST(BmmProgram, RejectsTilesThatDoNotDivide) {
    BmmShape s;
    s.tile_n = 300;
    try {
        build_bmm(s);
        FAIL();
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("tile_n (300)"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace spyre
