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

// The odd shapes of each app, in its shape_doc order.
std::vector<std::string> small_shapes(const std::string &app) {
    if (app == "bmm") return {"1x1x100x100", "1x7x64x100", "3x33x130x70", "2x1x64x8192"};
    if (app == "linear") return {"1x100x100", "7x64x100", "33x130x70"};
    if (app == "qlinear") return {"1x100x100", "7x64x100", "33x130x70", "5x200x300"};
    if (app == "mlp" || app == "gated_mlp") return {"100x200x1", "64x100x33", "130x64x7"};
    if (app == "attention") return {"64x100", "100x33", "128x1"};
    // 40 heads on 32 cores; the compiler tests run more shapes of both (test_flash_attention.cpp)
    if (app == "flash_attention" || app == "causal_attention") return {"100x33x2", "128x1x1", "64x96x40"};
    if (app == "transpose") return {"64x100", "128x33", "64x1", "192x8192"};  // rows whole sticks
    if (app == "rope" || app == "rope_interleaved") return {"1x64", "7x128", "33x192", "100x640"};  // whole heads
    return {"1x100", "7x33", "1x8192", "33x100", "100x130", "70x64"};
}

std::vector<std::string> large_shapes(const std::string &app) {
    if (app == "bmm") return {"2x1151x100x8192"};
    if (app == "linear" || app == "qlinear") return {"1151x100x8192"};
    if (app == "mlp" || app == "gated_mlp") return {"64x100x1151"};
    if (app == "attention") return {"128x1151"};
    if (app == "flash_attention" || app == "causal_attention") return {"128x2048x32", "128x1152x7"};
    if (app == "transpose") return {"1152x8192", "4096x8192"};
    if (app == "rope" || app == "rope_interleaved") return {"1151x4096", "4096x4096"};
    return {"1151x8192", "4096x8192", "1151x100"};
}

std::vector<OddCase> odd_cases(bool large) {
    std::vector<OddCase> v;
    for (const std::string &app : app_names())
        for (const std::string &sched : app_schedules(app))
            if (sched != "auto")  // the autoscheduler's own tests cover it (its search is slow here)
                for (const std::string &shape : large ? large_shapes(app) : small_shapes(app))
                    v.push_back({app, sched, shape});
    return v;
}

std::string odd_case_name(const ::testing::TestParamInfo<OddCase> &info) {
    return info.param.app + "_" + info.param.schedule + "_" + info.param.shape;
}

class OddShapeRuns : public ::testing::TestWithParam<OddCase> {};

TEST_P(OddShapeRuns, CompilesAndMatchesCpu) {
    const OddCase &c = GetParam();
    const Shape s = parse_shape(c.app, c.shape);
    const DeviceProgram p = compile_kernel(c.app, c.schedule, s);
    EXPECT_GE(p.num_cores, 1);
    EXPECT_LE(p.num_cores, MachineDesc{}.cores);
    const std::vector<Halide::Runtime::Buffer<>> inputs = random_inputs(c.app, s);
    const SpyreRun run = run_on_spyre(p, inputs);
    const ErrorCheck e = check_error(c.app, run.output, cpu_reference(c.app, s, inputs));
    EXPECT_TRUE(e.ok) << c.app << "/" << c.schedule << "/" << c.shape << ": " << e.text << " (tolerance "
                      << tolerance(c.app).text() << ")";
}

INSTANTIATE_TEST_SUITE_P(Catalogue, OddShapeRuns, ::testing::ValuesIn(odd_cases(false)), odd_case_name);

class OddShapeCompiles : public ::testing::TestWithParam<OddCase> {};

TEST_P(OddShapeCompiles, FitsLxAndTheCores) {
    const OddCase &c = GetParam();
    const DeviceProgram p = compile_kernel(c.app, c.schedule, parse_shape(c.app, c.shape));
    EXPECT_GE(p.num_cores, 1);
    EXPECT_LE(p.num_cores, MachineDesc{}.cores);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, OddShapeCompiles, ::testing::ValuesIn(odd_cases(true)), odd_case_name);

}  // namespace
}  // namespace spyre::report
