// Loops in imported KTIR: registers that every iteration reads (a loop's lower bound, values
// defined before a loop and used in its body, through nested loops) must survive the whole loop,
// and index / tensor iter_args carry their values. Kernels in tests/ktir/kernels; expected values
// computed here in plain C++ from the kernels' semantics.
#include <gtest/gtest.h>

#include "ktir_import.h"
#include "run_halves.h"
#include "test_paths.h"
#include "ktir_test_util.h"

namespace {

using namespace spyre;
using namespace spyre::ktir_testing;

using ktir_testing::kDir;

TEST(KtirLoops, LowerBoundFromTheTileIdSurvivesEveryIteration) {
    // The lower bound's register was once reused for the row address inside the body, so from the
    // second iteration on the rows addressed lay far outside x.
    DeviceProgram p = ktir::import_ktir_file(kDir + "/loop_rows.ktir", {});
    Halves x = random_halves(8 * 64, 1);
    std::map<std::string, Halves> out = run(p, {{"x", x}});
    const Halves &y = out.at("y");
    for (size_t i = 0; i < x.size(); i++) ASSERT_EQ(y[i], add_f16(x[i], x[i])) << "row " << i / 64 << " col " << i % 64;
}

TEST(KtirLoops, NestedLoopsWithOuterValuesAndIterArgsComputeTheirRows) {
    DeviceProgram p = ktir::import_ktir_file(kDir + "/nested_loops.ktir", {});
    Halves x = random_halves(8 * 128, 2);
    std::map<std::string, Halves> out = run(p, {{"x", x}});
    const Halves &y = out.at("y"), &z = out.at("z");
    for (int r = 0; r < 8; r++) {
        int c = r / 4, t = r % 4, yr = 4 * c + 3 - t;
        for (int j = 0; j < 128; j++) {
            uint16_t v = x[size_t(r * 128 + j)];
            ASSERT_EQ(y[size_t(yr * 128 + j)], add_f16(v, v)) << "y row " << yr << " col " << j;
        }
        for (int j = 0; j < 64; j++) {
            uint16_t want = add_f16(add_f16(0, x[size_t(r * 128 + j)]), x[size_t(r * 128 + 64 + j)]);
            ASSERT_EQ(z[size_t(r * 64 + j)], want) << "z row " << r << " col " << j;
        }
    }
}

}  // namespace
