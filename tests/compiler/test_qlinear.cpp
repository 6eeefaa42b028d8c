// The quantized linear layer (schedules/qlinear.h: fp16 x, int8 W, fp16 per-output-channel scales)
// on the PE array, with the int8 panels shared over the ring, and on the vector unit, matches
// Halide's CPU realisation exactly (int8 -> fp16 is exact, fp16 products are exact in fp32 and both
// sides add in k order), at shapes whose N, K or M are not whole sticks too. W moves at one byte
// per element.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "device/error.h"
#include "qlinear.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct QlinearCase {
    std::string schedule;
    int rows, inner, cols, cores;
};

class QLinear : public ::testing::TestWithParam<QlinearCase> {};

TEST_P(QLinear, MatchesCpuExactly) {
    const QlinearCase c = GetParam();
    std::shared_ptr<QLinearKernel> inst;
    DiffResult r = run_differential(
        [&] {
            inst = std::make_shared<QLinearKernel>(make_qlinear(c.rows, c.inner, c.cols));
            Kernel k;
            k.inputs = {inst->a, inst->w, inst->scale};
            k.output = inst->out;
            k.funcs = {{"acc", inst->acc}, {"wd", inst->wd}};
            return k;
        },
        [&](Kernel &) { schedule_qlinear(*inst, c.schedule, c.cores); },
        {{c.inner, c.rows}, {c.cols, c.inner}, {c.cols}}, {c.cols, c.rows}, -6, 6);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    // The PE array does every product (K rounded up to whole sticks, which the layouts pad with zeros).
    const int64_t k_padded = (c.inner + 63) / 64 * 64;
    if (c.schedule != "vector") {
        EXPECT_EQ(r.stats.pe_macs, int64_t(c.rows) * k_padded * c.cols);
    } else {
        EXPECT_EQ(r.stats.pe_macs, 0);
    }
    if (c.schedule == "pe_ring") {
        EXPECT_GT(r.stats.ring_bytes, 0);  // the int8 panels go round the ring
    }
    // Every weight byte is read at least once, at one byte each.
    EXPECT_GE(r.stats.dram_read_bytes, int64_t(c.inner) * c.cols);
}

INSTANTIATE_TEST_SUITE_P(Shapes, QLinear,
                         ::testing::Values(QlinearCase{"pe", 64, 256, 256, 4}, QlinearCase{"pe_ring", 64, 4096, 512, 8},
                                           QlinearCase{"vector", 32, 128, 256, 4}, QlinearCase{"pe", 7, 100, 200, 3},
                                           QlinearCase{"vector", 5, 130, 128, 1}, QlinearCase{"pe", 1, 64, 128, 1}),
                         [](const auto &info) {
                             const QlinearCase &c = info.param;
                             return c.schedule + "_" + std::to_string(c.rows) + "x" + std::to_string(c.inner) + "x" +
                                    std::to_string(c.cols) + "_" + std::to_string(c.cores) + "c";
                         });

TEST(QLinearErrors, AnUnknownScheduleListsTheKnownOnes) {
    QLinearKernel k = make_qlinear(64, 128, 128);
    try {
        schedule_qlinear(k, "int4", 4);
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("qlinear"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("pe_ring"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace spyre::testing
