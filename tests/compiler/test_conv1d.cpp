// The depthwise 1-D convolution of schedules/conv1d.h (causal and centred, K taps along the
// sequence, the stick dimension) under each of its schedules, against Halide's CPU realization at
// sequences that are and are not whole sticks: bit-exact (the taps are summed in the same order).
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "conv1d.h"
#include "device/error.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct ConvCase {
    std::string schedule;
    int seq, channels, taps;
    bool causal;
};
std::string conv_name(const ConvCase &c) {
    return c.schedule + "_" + (c.causal ? "causal" : "centred") + "_k" + std::to_string(c.taps) + "_" +
           std::to_string(c.seq) + "x" + std::to_string(c.channels);
}
void PrintTo(const ConvCase &c, std::ostream *os) { *os << conv_name(c); }

class Conv1d : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv1d, MatchesCpuBitExactly) {
    const ConvCase &c = GetParam();
    auto alg = [&] {
        Conv1dKernel ck = make_conv1d(c.seq, c.channels, c.taps, c.causal);
        Kernel k;
        k.inputs = {ck.in, ck.w};
        k.output = ck.out;
        k.vars = {{"t", ck.t}, {"c", ck.c}};
        return k;
    };
    auto sched = [&](Kernel &k) {
        Conv1dKernel ck;
        ck.in = k.inputs[0], ck.w = k.inputs[1], ck.out = k.output, ck.t = k.vars.at("t"), ck.c = k.vars.at("c");
        ck.seq = c.seq, ck.channels = c.channels, ck.taps = c.taps, ck.causal = c.causal;
        schedule_conv1d(ck, c.schedule);
    };
    DiffResult r = run_differential(alg, sched, {{c.seq, c.channels}, {c.channels, c.taps}}, {c.seq, c.channels}, -2, 2);
    EXPECT_EQ(r.cmp.mismatches, 0) << r.cmp.first_mismatch;
    int shifts = 0;
    for (const Instr &in : r.program.code) shifts += in.op == Opcode::VSHIFT;
    if (c.taps > 1) {
        EXPECT_GE(shifts, 1);
    }
}

// `make test` runs the first three shapes (rows and channels not whole sticks, one tap); the
// sweep (`make sweep`) the others.
std::vector<ConvCase> conv1d_cases(bool sweep) {
    std::vector<ConvCase> v;
    const std::vector<std::tuple<int, int, int>> shapes = {{100, 7, 4}, {130, 3, 3}, {256, 5, 1},
                                                           {64, 33, 7}, {1000, 2, 4}, {16, 1, 2}};
    for (const char *s : {"root", "tiles", "cores32"})
        for (bool causal : {true, false})
            for (size_t i = 0; i < shapes.size(); i++)
                if (sweep == (i >= 3)) {
                    const auto [seq, ch, k] = shapes[i];
                    v.push_back({s, seq, ch, k, causal});
                }
    return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv1d, ::testing::ValuesIn(conv1d_cases(false)),
                         [](const ::testing::TestParamInfo<ConvCase> &i) { return conv_name(i.param); });
INSTANTIATE_TEST_SUITE_P(Sweep, Conv1d, ::testing::ValuesIn(conv1d_cases(true)),
                         [](const ::testing::TestParamInfo<ConvCase> &i) { return conv_name(i.param); });

TEST(Conv1dErrors, TapsOutOfRangeNameTheParameter) {
    try {
        make_conv1d(100, 4, 17, true);
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_STREQ(e.what(), "conv1d: taps=17 is outside 1..16");
    }
}

}  // namespace
}  // namespace spyre::testing
