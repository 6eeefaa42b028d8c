// Listings of small kernels are golden files: a change in generated code shows up in review.
// Regenerate them with SPYRE_UPDATE_GOLDEN=1 build/bin/compiler_tests --gtest_filter='Golden*'
// after checking that the new code is what you meant. A run in that mode compares nothing, so it
// fails each test on purpose (after checking that the file was written and reads back as the
// listing): it cannot pass for a comparison it did not make. Run again without the variable.
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

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

void check_golden(const DeviceProgram &p, const std::string &name) {
    std::string path = std::string(SPYRE_SOURCE_DIR) + "/tests/compiler/golden/" + name + ".s";
    std::string got = disassemble(p);
    ASSERT_FALSE(got.empty()) << "empty listing for " << name;
    if (std::getenv("SPYRE_UPDATE_GOLDEN")) {
        {
            std::ofstream out(path);
            out << got;
            out.close();
            ASSERT_TRUE(out) << "could not write " << path;
        }
        ASSERT_EQ(read_file(path), got) << path << " does not read back as the listing written";
        ADD_FAILURE() << "SPYRE_UPDATE_GOLDEN is set: rewrote " << path << " (" << got.size()
                      << " bytes) and compared nothing; review the diff, then run again without it";
        return;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in) << "missing golden file " << path << " (run with SPYRE_UPDATE_GOLDEN=1 to create it)";
    EXPECT_EQ(got, read_file(path)) << "generated code for " << name << " changed; if intended, regenerate " << path;
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
