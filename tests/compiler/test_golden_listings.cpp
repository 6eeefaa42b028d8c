// Listings of small kernels are golden files: a change in generated code shows up in review.
// Regenerate them with SPYRE_UPDATE_GOLDEN=1 build/bin/compiler_tests --gtest_filter='Golden*'
// after checking that the new code is what you meant.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "compiler_test_util.h"
#include "device/disassembler.h"
#include "softmax.h"
#include "test_paths.h"

namespace spyre::testing {
namespace {

using namespace Halide;

void check_golden(const DeviceProgram &p, const std::string &name) {
    std::string path = std::string(SPYRE_SOURCE_DIR) + "/tests/compiler/golden/" + name + ".s";
    std::string got = disassemble(p);
    if (std::getenv("SPYRE_UPDATE_GOLDEN")) {
        std::ofstream(path) << got;
        return;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in) << "missing golden file " << path << " (run with SPYRE_UPDATE_GOLDEN=1 to create it)";
    std::stringstream want;
    want << in.rdbuf();
    EXPECT_EQ(got, want.str()) << "generated code for " << name << " changed; if intended, regenerate " << path;
}

CompileOptions shapes(const std::string &name, std::vector<int64_t> in, std::vector<int64_t> out) {
    CompileOptions o;
    o.kernel_name = name;
    o.inputs = {TensorSpec{in, {}}};
    o.output = TensorSpec{out, {}};
    return o;
}

TEST(Golden, ReluF16) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y");
    Func relu("relu");
    relu(x, y) = max(in(x, y), cast<float16_t>(0.0f));
    spyre::schedule(relu).stick_vectorize(x);
    check_golden(compile_for_spyre(relu, {in}, shapes("relu", {128, 4}, {128, 4})), "relu_f16_128x4");
}

TEST(Golden, RowSumF16ToF32) {
    ImageParam in(Float(16), 2, "in");
    Var y("y");
    RDom r(0, 100, "r");
    Func rowsum("rowsum");
    rowsum(y) = sum(cast<float>(in(r, y)));
    check_golden(compile_for_spyre(rowsum, {in}, shapes("rowsum", {100, 64}, {64})), "rowsum_f16_100x64");
}

TEST(Golden, SoftmaxStage4) {
    SoftmaxKernel k = make_softmax(128, 128);
    schedule_softmax(k, "stage4");
    check_golden(compile_for_spyre(k.out, {k.in}, shapes("softmax", {128, 128}, {128, 128})),
                 "softmax_stage4_128x128");
}

}  // namespace
}  // namespace spyre::testing
