// Producer rotation (rotate_producers.h): flash attention's key-tile loop runs in pairs of tiles,
// with a copy of the scores per tile of the pair, and computes the next tile's scores right after
// this tile's last read of its own (the softmax), before this tile's P V and state update. A
// matmul whose producer streams its operands from device memory keeps its own double buffering and
// is not rotated. Numerics: test_flash_attention.cpp.
#include <gtest/gtest.h>

#include "compile.h"
#include "compiler_test_util.h"
#include "flash_attention.h"
#include "matmul.h"

namespace spyre::testing {
namespace {

std::string pass_dump(Halide::Func out, const std::vector<Halide::ImageParam> &in, CompileOptions opt,
                      const std::string &pass) {
    for (auto &kv : spyre_pass_dumps(out, in, opt))
        if (kv.first == pass) return kv.second;
    return "";
}

TEST(RotateProducers, TheNextKeyTilesScoresComeRightAfterThisTilesSoftmax) {
    FlashAttentionKernel a = make_flash_attention(64, 256, 1, 64, 64, false);
    schedule_flash_attention(a, "kv_resident", 1);
    CompileOptions opt;
    opt.kernel_name = "fa";
    for (int i = 0; i < 3; i++) opt.inputs.push_back(TensorSpec{{64, 256, 1}, {}});
    opt.output.shape = {64, 256, 1};
    const std::string s = pass_dump(a.out, {a.q, a.k, a.v}, opt, "rotate_producers");
    ASSERT_FALSE(s.empty());
    const std::string scores = a.scores.name(), odd = scores + ".odd";
    // Both copies live across the loop over pairs of key tiles.
    const size_t alloc_odd = s.find("allocate " + odd), pairs = s.find(".pair, 0, 2)");
    ASSERT_NE(alloc_odd, std::string::npos) << s;
    ASSERT_NE(pairs, std::string::npos) << s;
    EXPECT_LT(alloc_odd, pairs);
    // The first tile's scores before the loop; in the loop, the odd tile's after the even tile's
    // last read (Halide's free), before the even tile's P V.
    EXPECT_LT(s.find("produce " + scores), pairs);
    const size_t freed = s.find("free " + scores, pairs), next = s.find("produce " + odd, pairs),
                 pv = s.find("produce " + a.pv.name(), pairs);
    ASSERT_NE(next, std::string::npos) << s;
    EXPECT_LT(freed, next);
    EXPECT_LT(next, pv);
}

TEST(RotateProducers, AMatmulThatStreamsItsOperandsIsNotRotated) {
    MatmulKernel mk = make_bmm(2, 64, 256, 512);
    schedule_bmm(mk, "pe", 4);
    CompileOptions opt;
    opt.kernel_name = "bmm";
    opt.inputs = {TensorSpec{{256, 64, 2}, {}}, TensorSpec{{512, 256}, {}}};
    opt.output.shape = {512, 64, 2};
    const std::string s = pass_dump(mk.out, {mk.a, mk.w}, opt, "rotate_producers");
    ASSERT_FALSE(s.empty());
    EXPECT_EQ(s.find(".odd"), std::string::npos) << s;
}

}  // namespace
}  // namespace spyre::testing
