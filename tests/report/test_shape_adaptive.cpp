// Every catalogue app x schedule compiles at shapes that are not whole sticks, not whole core
// shares and not whole tiles (1 row, 7 and 1151 rows, 33, 100 and 130 columns), because the named
// schedules derive their core splits and tiles from the shape and the LX budget. Small shapes run
// on the simulator and match Halide's CPU reference within the app's tolerance; the large ones
// (1151 and 4096 rows of 8192 columns) are compiled only, which is where fixed tiles overflowed LX.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_catalog.h"
#include "spyre.h"

namespace spyre::report {
namespace {

struct OddCase {
    std::string app, schedule, shape;
};
void PrintTo(const OddCase &c, std::ostream *os) { *os << c.app << "/" << c.schedule << "/" << c.shape; }

// `make test` runs one of each app x schedule's odd shapes, the last but one (for the row apps
// 100x130: rows and columns that are not whole sticks, and core shares that are not whole); CI runs
// the others too (sweep = true: the `sweep` label, `make sweep`).
std::vector<OddCase> odd_cases(bool large, bool sweep) {
    std::vector<OddCase> v;
    for (const std::string &app : app_names())
        for (const std::string &sched : app_schedules(app)) {
            if (sched == "auto") continue;  // the autoscheduler's own tests cover it (its search is slow here)
            const std::vector<std::string> &shapes = large ? app_info(app).shapes.odd_large : app_info(app).shapes.odd;
            const size_t n = shapes.size();
            for (size_t i = 0; i < n; i++) {
                // Compiling only is cheap: `make test` compiles two of the large shapes.
                const bool in_make_test = n == 1 || i + 2 == n || (large && (n == 2 || i == 1));
                if (sweep != in_make_test) v.push_back({app, sched, shapes[i]});
            }
        }
    return v;
}

std::string odd_case_name(const ::testing::TestParamInfo<OddCase> &info) {
    return info.param.app + "_" + info.param.schedule + "_" + info.param.shape;
}

// Runs `p`, the app compiled at `s`, on random inputs and checks it against the CPU reference.
void expect_matches_cpu(const OddCase &c, const Shape &s, const DeviceProgram &p) {
    const std::vector<Halide::Runtime::Buffer<>> inputs = random_inputs(c.app, s);
    const SpyreRun run = run_on_spyre(p, inputs);
    const ErrorCheck e = check_error(c.app, run.output, cpu_reference(c.app, s, inputs));
    EXPECT_TRUE(e.ok) << c.app << "/" << c.schedule << "/" << c.shape << ": " << e.text << " (tolerance "
                      << tolerance(c.app).text() << ")";
}

class OddShapeRuns : public ::testing::TestWithParam<OddCase> {};

TEST_P(OddShapeRuns, CompilesAndMatchesCpu) {
    const OddCase &c = GetParam();
    const Shape s = parse_shape(c.app, c.shape);
    const DeviceProgram p = compile_kernel(c.app, c.schedule, s);
    EXPECT_GE(p.num_cores, 1);
    EXPECT_LE(p.num_cores, MachineDesc{}.cores);
    expect_matches_cpu(c, s, p);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, OddShapeRuns, ::testing::ValuesIn(odd_cases(false, false)), odd_case_name);
INSTANTIATE_TEST_SUITE_P(Sweep, OddShapeRuns, ::testing::ValuesIn(odd_cases(false, true)), odd_case_name);

// The same with every argument of two dims or more in torch-spyre's default layout (the stick count
// outermost): each transfer is carried over to the layout (backend/compiler/layout_dma.h).
class TorchSpyreLayoutRuns : public ::testing::TestWithParam<OddCase> {};

TEST_P(TorchSpyreLayoutRuns, CompilesAndMatchesCpu) {
    const OddCase &c = GetParam();
    const Shape s = parse_shape(c.app, c.shape);
    const DeviceProgram p = compile_kernel(c.app, c.schedule, s, {}, "", nullptr, ArgumentLayouts::TorchSpyre);
    bool placed = false;
    for (const BufferDecl &b : p.buffers)
        placed |= b.shape.size() > 1 && !stick_count_innermost(b.layout, int(b.shape.size()));
    EXPECT_TRUE(placed) << "no argument in a layout with the stick count outside";
    expect_matches_cpu(c, s, p);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, TorchSpyreLayoutRuns, ::testing::ValuesIn(odd_cases(false, false)), odd_case_name);
INSTANTIATE_TEST_SUITE_P(Sweep, TorchSpyreLayoutRuns, ::testing::ValuesIn(odd_cases(false, true)), odd_case_name);

class OddShapeCompiles : public ::testing::TestWithParam<OddCase> {};

TEST_P(OddShapeCompiles, FitsLxAndTheCores) {
    const OddCase &c = GetParam();
    const DeviceProgram p = compile_kernel(c.app, c.schedule, parse_shape(c.app, c.shape));
    EXPECT_GE(p.num_cores, 1);
    EXPECT_LE(p.num_cores, MachineDesc{}.cores);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, OddShapeCompiles, ::testing::ValuesIn(odd_cases(true, false)), odd_case_name);
INSTANTIATE_TEST_SUITE_P(Sweep, OddShapeCompiles, ::testing::ValuesIn(odd_cases(true, true)), odd_case_name);

}  // namespace
}  // namespace spyre::report
