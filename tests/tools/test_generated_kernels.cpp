// Kernels built by add_spyre_kernel (tests/CMakeLists.txt), called through the headers spyre-gen
// wrote, against Halide's CPU AOT library of the same generator with schedule=cpu. Tolerances as
// in tests/compiler: softmax within 2 fp16 ULPs (exp), layernorm exact, the fused residual add and
// RMSNorm (two outputs) exact on the sum and within 1 ULP on the norm (its sum of squares in another
// order).
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "../channel_floor.h"
#include "HalideBuffer.h"
#include "device/half.h"
#include "fused_add_rmsnorm_cores32.h"
#include "fused_add_rmsnorm_cores32_cpu.h"
#include "layernorm_tiles.h"
#include "layernorm_tiles_cpu.h"
#include "softmax_stage4.h"
#include "softmax_stage4_cpu.h"

namespace {

using Buf = Halide::Runtime::Buffer<>;
const halide_type_t kF16(halide_type_float, 16);

Buf random_f16(std::vector<int> shape, float lo, float hi, uint32_t seed) {
    Buf b(kF16, shape);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    uint16_t *p = static_cast<uint16_t *>(b.data());
    for (size_t i = 0; i < b.number_of_elements(); i++) p[i] = spyre::float_to_half(dist(rng));
    return b;
}

// fp16 bits to a monotonic integer: ULP distance is the difference.
int64_t ordered(uint16_t h) { return (h & 0x8000) ? -int64_t(h & 0x7fff) : int64_t(h); }

int64_t max_ulp(const Buf &got, const Buf &want) {
    EXPECT_EQ(got.number_of_elements(), want.number_of_elements());
    const uint16_t *g = static_cast<const uint16_t *>(got.data()), *w = static_cast<const uint16_t *>(want.data());
    int64_t m = 0;
    for (size_t i = 0; i < got.number_of_elements(); i++) m = std::max(m, std::abs(ordered(g[i]) - ordered(w[i])));
    return m;
}

TEST(GeneratedKernel, SoftmaxStage4MatchesCpuAot) {
    Buf in = random_f16({256, 64}, -4, 4, 7);
    Buf dev(kF16, {256, 64}), ref(kF16, {256, 64});
    spyre::SimStats stats;
    ASSERT_EQ(softmax_stage4(in, dev, &stats), 0);
    ASSERT_EQ(softmax_stage4_cpu(in, ref), 0);
    EXPECT_LE(max_ulp(dev, ref), 2);
    // At least the channel's time for reading the input and writing the output once.
    const int64_t bytes = int64_t(in.size_in_bytes());
    EXPECT_GE(stats.dram_read_bytes, bytes);
    EXPECT_GE(stats.dram_write_bytes, bytes);
    EXPECT_GE(stats.us, spyre::testing_floor::channel_floor_us(bytes, bytes));
}

TEST(GeneratedKernel, LayernormMatchesCpuAotExactly) {
    Buf in = random_f16({320, 100}, -4, 4, 11), gamma = random_f16({320}, 0.5f, 1.5f, 12),
        beta = random_f16({320}, -1, 1, 13);
    Buf dev(kF16, {320, 100}), ref(kF16, {320, 100});
    ASSERT_EQ(layernorm_tiles(in, gamma, beta, dev), 0);
    ASSERT_EQ(layernorm_tiles_cpu(in, gamma, beta, ref), 0);
    EXPECT_EQ(max_ulp(dev, ref), 0);
}

TEST(GeneratedKernel, TwoOutputKernelMatchesCpuAotOnBothOutputs) {
    Buf in = random_f16({1000, 70}, -2, 2, 31), res = random_f16({1000, 70}, -2, 2, 32),
        gamma = random_f16({1000}, 0.5f, 1.5f, 33);
    Buf added(kF16, {1000, 70}), norm(kF16, {1000, 70}), want_added(kF16, {1000, 70}), want_norm(kF16, {1000, 70});
    spyre::SimStats stats;
    ASSERT_EQ(fused_add_rmsnorm_cores32(in, res, gamma, added, norm, &stats), 0);
    ASSERT_EQ(fused_add_rmsnorm_cores32_cpu(in, res, gamma, want_added, want_norm), 0);
    EXPECT_EQ(max_ulp(added, want_added), 0);
    EXPECT_LE(max_ulp(norm, want_norm), 1);
    // At least the channel's time for reading the three inputs and writing the two outputs once.
    const int64_t read = int64_t(in.size_in_bytes() + res.size_in_bytes() + gamma.size_in_bytes()),
                  written = int64_t(added.size_in_bytes() + norm.size_in_bytes());
    EXPECT_GE(stats.dram_read_bytes, read);
    EXPECT_GE(stats.dram_write_bytes, written);
    EXPECT_GE(stats.us, spyre::testing_floor::channel_floor_us(read, written));
}

TEST(GeneratedKernel, TwoOutputKernelNamesAWrongSecondOutput) {
    Buf in = random_f16({1000, 70}, -2, 2, 31), res = random_f16({1000, 70}, -2, 2, 32),
        gamma = random_f16({1000}, 0.5f, 1.5f, 33);
    Buf added(kF16, {1000, 70}), norm(kF16, {1000, 69});
    testing::internal::CaptureStderr();
    EXPECT_EQ(fused_add_rmsnorm_cores32(in, res, gamma, added, norm), -1);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("output 'norm': dim 1 has extent 69, the kernel writes 70"), std::string::npos) << err;
}

TEST(GeneratedKernel, TwoOutputKernelGivenThreeOutputsSaysHowManyItWrites) {
    Buf in = random_f16({1000, 70}, -2, 2, 31), res = random_f16({1000, 70}, -2, 2, 32),
        gamma = random_f16({1000}, 0.5f, 1.5f, 33);
    Buf a(kF16, {1000, 70}), b(kF16, {1000, 70}), c(kF16, {1000, 70});
    testing::internal::CaptureStderr();
    EXPECT_EQ(spyre::host::run_kernel_file(fused_add_rmsnorm_cores32_program_path(), "", {in, res, gamma}, {a, b, c}), -1);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("3 output buffers given, the kernel writes 2"), std::string::npos) << err;
}

TEST(GeneratedKernel, CroppedInputViewIsAccepted) {
    // Any strides: a crop of a larger buffer is copied dense before stickifying.
    Buf big = random_f16({300, 80}, -4, 4, 21);
    Buf in = big.cropped(0, 10, 256).cropped(1, 5, 64);
    in.set_min(0, 0);  // the CPU library reads coordinates [0, 256) x [0, 64)
    Buf dev(kF16, {256, 64}), ref(kF16, {256, 64});
    ASSERT_EQ(softmax_stage4(in, dev), 0);
    ASSERT_EQ(softmax_stage4_cpu(in, ref), 0);
    EXPECT_LE(max_ulp(dev, ref), 2);
}

TEST(GeneratedKernel, WrongShapeIsAnErrorNotACrash) {
    Buf in = random_f16({128, 64}, -4, 4, 1);
    Buf out(kF16, {256, 64});
    testing::internal::CaptureStderr();
    EXPECT_EQ(softmax_stage4(in, out), -1);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("input 'in': dim 0 has extent 128, the kernel expects 256"), std::string::npos) << err;
}

}  // namespace
