// Bulk fp16 <-> fp32 conversion (half_bulk.h) gives the same bits as the scalar conversions of
// half.h, whichever path (F16C or scalar) the CPU takes, at any length and alignment.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "device/half.h"
#include "device/half_bulk.h"

namespace spyre {
namespace {

TEST(HalfBulk, HalvesToFloatsMatchesScalarOnEveryHalf) {
    std::vector<uint16_t> h(65536);
    for (uint32_t i = 0; i < 65536; i++) h[i] = uint16_t(i);
    std::vector<float> f(65536);
    halves_to_floats(h.data(), f.data(), 65536);
    int mismatches = 0;
    for (uint32_t i = 0; i < 65536; i++) mismatches += float_to_bits(f[i]) != float_to_bits(half_to_float(uint16_t(i)));
    EXPECT_EQ(mismatches, 0);
}

TEST(HalfBulk, FloatsToHalvesMatchesScalarOnRandomBitPatterns) {
    std::mt19937 rng(7);
    std::vector<float> f(1 << 18);
    for (float &v : f) v = bits_to_float(uint32_t(rng()));
    // Halfway cases, subnormal boundaries and overflow edges that random bits rarely hit.
    const uint32_t edges[] = {0x33000000, 0x33000001, 0x387fe000, 0x387ff000, 0x38800000, 0x477fefff,
                              0x477ff000, 0x7f800000, 0x7f800001, 0xff800000, 0x3f801000, 0x3f803000};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) f[i] = bits_to_float(edges[i]);
    std::vector<uint16_t> h(f.size());
    floats_to_halves(f.data(), h.data(), int64_t(f.size()));
    int mismatches = 0;
    for (size_t i = 0; i < f.size(); i++) mismatches += h[i] != float_to_half(f[i]);
    EXPECT_EQ(mismatches, 0);
}

TEST(HalfBulk, OddLengthsAndUnalignedPointersConvertEveryElement) {
    for (int64_t n : {0, 1, 7, 8, 9, 31}) {
        std::vector<uint8_t> src(2 * size_t(n) + 1), dst(4 * size_t(n) + 3), back(2 * size_t(n) + 1);
        for (int64_t i = 0; i < n; i++) {
            uint16_t v = float_to_half(float(i) - 3.5f);
            std::memcpy(&src[1 + 2 * size_t(i)], &v, 2);
        }
        halves_to_floats(src.data() + 1, dst.data() + 3, n);
        floats_to_halves(dst.data() + 3, back.data() + 1, n);
        for (int64_t i = 0; i < n; i++) {
            float v;
            std::memcpy(&v, &dst[3 + 4 * size_t(i)], 4);
            EXPECT_EQ(v, float(i) - 3.5f) << "n " << n << " element " << i;
        }
        EXPECT_EQ(std::memcmp(src.data() + 1, back.data() + 1, 2 * size_t(n)), 0) << "n " << n;
    }
}

TEST(HalfBulk, RoundFloatsToHalfMatchesScalar) {
    std::mt19937 rng(3);
    std::vector<float> v(1001);
    for (float &x : v) x = std::uniform_real_distribution<float>(-70000.0f, 70000.0f)(rng);
    std::vector<float> expected(v.size());
    for (size_t i = 0; i < v.size(); i++) expected[i] = round_to_half(v[i]);
    round_floats_to_half(v.data(), int64_t(v.size()));
    for (size_t i = 0; i < v.size(); i++) EXPECT_EQ(float_to_bits(v[i]), float_to_bits(expected[i])) << i;
}

TEST(HalfBulk, SignalingNanHalvesBecomeQuietFloats) {
    float f = half_to_float(0x7c01);
    EXPECT_TRUE(std::isnan(f));
    EXPECT_EQ(float_to_bits(f), 0x7fc02000u);
}

}  // namespace
}  // namespace spyre
