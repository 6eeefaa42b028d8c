// RoPE (schedules/rope.h) under each of its schedules, against Halide's CPU realization, bit for
// bit. Rotate-half: at head_dim 64 the rotation is two VSHIFTs by half a stick, at 128 and 192
// whole or half sticks. Interleaved pairs: the partners are VSHIFTs by one and the even and odd
// lanes come together in a VLSEL. Positions that are not whole tiles or core shares.
#include <gtest/gtest.h>

#include "auto_schedule.h"
#include "compiler_test_util.h"
#include "device/error.h"
#include "rope.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct RopeCase {
    std::string schedule;
    int heads, head_dim, seq;
    RopeStyle style = RopeStyle::RotateHalf;
};
std::string rope_name(const RopeCase &c) {
    return std::string(c.style == RopeStyle::Interleaved ? "interleaved_" : "") + c.schedule + "_d" +
           std::to_string(c.head_dim) + "_h" + std::to_string(c.heads) + "_s" + std::to_string(c.seq);
}
void PrintTo(const RopeCase &c, std::ostream *os) { *os << rope_name(c); }

// The case's RoPE as a test Kernel, and its schedule `name` from schedules/rope.h.
Algorithm rope_algorithm(const RopeCase &c) {
    return [c] {
        RopeKernel rk = make_rope(c.heads * c.head_dim, c.seq, c.head_dim, c.style);
        Kernel k;
        k.inputs = {rk.in, rk.cos, rk.sin};
        k.output = rk.out;
        k.vars = {{"x", rk.x}, {"p", rk.p}};
        return k;
    };
}
Schedule rope_schedule(const RopeCase &c, const std::string &name) {
    return [c, name](Kernel &k) {
        RopeKernel rk;
        rk.in = k.inputs[0], rk.cos = k.inputs[1], rk.sin = k.inputs[2], rk.out = k.output;
        rk.x = k.vars.at("x"), rk.p = k.vars.at("p");
        rk.heads = c.heads, rk.head_dim = c.head_dim, rk.seq = c.seq;
        schedule_rope(rk, name);
    };
}

class Rope : public ::testing::TestWithParam<RopeCase> {};

TEST_P(Rope, MatchesCpuBitExactly) {
    const RopeCase &c = GetParam();
    const int cols = c.heads * c.head_dim;
    DiffResult r = run_differential(rope_algorithm(c), rope_schedule(c, c.schedule),
                                    {{cols, c.seq}, {c.head_dim, c.seq}, {c.head_dim, c.seq}}, {cols, c.seq}, -2, 2);
    EXPECT_EQ(r.cmp.max_ulp, 0) << r.cmp.first_mismatch;
    int shifts = 0, selects = 0;
    for (const Instr &in : r.program.code) shifts += in.op == Opcode::VSHIFT, selects += in.op == Opcode::VLSEL;
    EXPECT_GE(shifts, 1);
    if (c.style == RopeStyle::Interleaved) {
        EXPECT_GE(selects, 1);
    }
}

// `make test` runs the first three shapes (odd rows, one row, three-stick heads); the sweep
// (`make sweep`) the others.
std::vector<RopeCase> rope_cases(bool sweep) {
    std::vector<RopeCase> v;
    const std::vector<std::tuple<int, int, int>> shapes = {{2, 64, 7}, {1, 64, 1}, {3, 192, 5},
                                                           {4, 128, 33}, {8, 64, 100}, {16, 64, 8}};
    for (RopeStyle style : {RopeStyle::RotateHalf, RopeStyle::Interleaved})
        for (const char *s : {"root", "tiles", "cores32"})
            for (size_t i = 0; i < shapes.size(); i++)
                if (sweep == (i >= 3)) {
                    const auto [heads, d, seq] = shapes[i];
                    v.push_back({s, heads, d, seq, style});
                }
    return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Rope, ::testing::ValuesIn(rope_cases(false)),
                         [](const ::testing::TestParamInfo<RopeCase> &i) { return rope_name(i.param); });
INSTANTIATE_TEST_SUITE_P(Sweep, Rope, ::testing::ValuesIn(rope_cases(true)),
                         [](const ::testing::TestParamInfo<RopeCase> &i) { return rope_name(i.param); });

// spyre::auto_schedule on RoPE: it splits x by heads (the definition's x % head_dim), as the hand
// schedules do, so that the rotation's condition is a window of each head's lanes. Before, no
// candidate compiled at head_dim 128 (the unsplit vectors' other lanes read a stick past each row).
class RopeAuto : public ::testing::TestWithParam<RopeCase> {};

TEST_P(RopeAuto, MatchesCpuAndIsNoSlowerThanTheHandSchedules) {
    const RopeCase &c = GetParam();
    const int cols = c.heads * c.head_dim;
    const Algorithm alg = rope_algorithm(c);
    const std::vector<std::vector<int>> ins{{cols, c.seq}, {c.head_dim, c.seq}, {c.head_dim, c.seq}};
    double best_hand = 0;
    for (const std::string &name : rope_schedules()) {
        const DiffResult h = run_differential(alg, rope_schedule(c, name), ins, {cols, c.seq}, -2, 2);
        if (best_hand == 0 || h.stats.us < best_hand) best_hand = h.stats.us;
    }
    AutoResult chosen;
    const DiffResult a = run_differential(
        alg,
        [&](Kernel &k) {
            CompileOptions o;
            for (const auto &in : ins) o.inputs.push_back(TensorSpec{std::vector<int64_t>(in.begin(), in.end()), {}});
            o.output = TensorSpec{{cols, c.seq}, {}};
            AutoOptions ao;
            ao.max_evaluations = 32;
            ao.progress = false;
            chosen = auto_schedule(k.output, k.inputs, o, ao);
        },
        ins, {cols, c.seq}, -2, 2);
    EXPECT_EQ(a.cmp.max_ulp, 0) << a.cmp.first_mismatch << "\n" << chosen.cpp;
    EXPECT_LE(a.stats.us, best_hand) << chosen.summary;
}

INSTANTIATE_TEST_SUITE_P(Shapes, RopeAuto,
                         ::testing::Values(RopeCase{"auto", 4, 128, 33}, RopeCase{"auto", 3, 192, 5},
                                           RopeCase{"auto", 32, 128, 64}, RopeCase{"auto", 2, 64, 7},
                                           RopeCase{"auto", 4, 128, 33, RopeStyle::Interleaved}),
                         [](const ::testing::TestParamInfo<RopeCase> &i) { return rope_name(i.param); });

TEST(RopeErrors, HeadDimNotWholeSticksNamesTheParameter) {
    try {
        make_rope(96, 4, 48);
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_STREQ(e.what(), "rope: head_dim=48 is not a positive multiple of 64 (whole sticks)");
    }
}

TEST(RopeErrors, ColumnsNotWholeHeadsNamesBoth) {
    try {
        make_rope(200, 4, 64);
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_STREQ(e.what(), "rope: 200 columns are not whole heads of head_dim=64");
    }
}

}  // namespace
}  // namespace spyre::testing

namespace spyre::testing {
namespace {

TEST(RopeErrors, AWindowOfTheInputNotWholeHeadsIsRefused) {
    EXPECT_NE(error_of([] { make_rope(128, 4, 64, RopeStyle::RotateHalf, 192, 96); })
                  .find("columns 96 to 224 are not whole heads of an input of 192 columns"),
              std::string::npos);
}

}  // namespace
}  // namespace spyre::testing
