// Attention for one head, fused in LX and unfused through device memory, matches Halide's CPU
// realisation. The matmuls are exact (fp16 products, fp32 sums in k order); exp differs by a few
// fp32 ULPs between Halide's CPU code and the device, which can flip the fp16 rounding of a
// probability by one ULP. Summed against V over the keys, that moves an output by a few 1e-5 in
// absolute terms, which near zero is many ULPs, so the bound is absolute: 1e-4 for values in
// [-1, 1] (fp16 resolves about 5e-4 there).
#include <gtest/gtest.h>

#include "attention.h"
#include "compiler_test_util.h"
#include "device/error.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct AttentionCase {
    std::string schedule;
    int dim, seq;
};

class Attention : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(Attention, MatchesCpu) {
    AttentionCase c = GetParam();
    auto to_kernel = [](const AttentionKernel &a) {
        Kernel k;
        k.inputs = {a.q, a.k, a.v};
        k.output = a.out;
        k.funcs = {{"scores", a.scores}, {"mx", a.mx}, {"e", a.e}, {"sum", a.sum}, {"probs", a.probs}, {"acc", a.acc}};
        return k;
    };
    std::shared_ptr<AttentionKernel> spyre_instance;
    DiffResult r = run_differential(
        [&] {
            auto a = std::make_shared<AttentionKernel>(make_attention(c.dim, c.seq));
            spyre_instance = a;  // the last instance built is the one the schedule gets
            return to_kernel(*a);
        },
        [&](Kernel &) { schedule_attention(*spyre_instance, c.schedule); },
        {{c.dim, c.seq}, {c.dim, c.seq}, {c.dim, c.seq}}, {c.dim, c.seq}, -1, 1);
    EXPECT_LE(r.cmp.max_abs_error, 1e-4) << r.cmp.first_mismatch;
    int matmuls = 0;
    for (const Instr &in : r.program.code) matmuls += in.op == Opcode::MATMUL;
    EXPECT_GE(matmuls, 2);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Attention,
                         // 1024 keys: K, V and K's restickified copy take half of LX beside the
                         // scores, and the query tile (40 rows, not dividing 1024) is sized for it.
                         ::testing::Values(AttentionCase{"fused", 64, 128}, AttentionCase{"unfused", 64, 128}, AttentionCase{"fused", 128, 256},
                                           AttentionCase{"fused", 128, 1024}),
                         [](const auto &info) {
                             return info.param.schedule + "_" + std::to_string(info.param.dim) + "x" +
                                    std::to_string(info.param.seq);
                         });

// At 2048 keys K, V and K's restickified copy leave no room for even one PE pass of query rows'
// scores: the schedule says the sequence needs tiling over keys.
TEST(AttentionErrors, SequenceTooLongForOneQueryTileSaysSo) {
    AttentionKernel a = make_attention(128, 2048);
    try {
        schedule_attention(a, "fused");
        FAIL() << "expected an error";
    } catch (const spyre::Error &e) {
        EXPECT_NE(std::string(e.what()).find("the sequence needs tiling over keys"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace spyre::testing
