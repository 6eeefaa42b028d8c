// The "phased" schedules (dma_phases at the tile loop, dsl/directives.h) of softmax, layernorm and
// rmsnorm: at a shape where every core runs several whole tiles, the tile loop has barriers and
// the result matches Halide's CPU reference; at model width the modelled time is well below
// cores32's, since device memory no longer mixes reads and writes (no turnaround).
#include <gtest/gtest.h>

#include <string>

#include "kernel_catalog.h"
#include "sim/simulator.h"
#include "spyre.h"

namespace spyre::report {
namespace {

class PhasedSchedule : public ::testing::TestWithParam<std::string> {};

double modelled_us(const DeviceProgram &p) {
    SimOptions o;
    o.timing_only = true;
    return simulate(p, MachineDesc{}, {}, o).stats.us;
}

TEST_P(PhasedSchedule, BarrierPerTileAndMatchesCpu) {
    const std::string app = GetParam();
    const Shape s = parse_shape(app, "4096x1024");  // 128 rows per core, several tiles each
    const DeviceProgram p = compile_kernel(app, "phased", s);
    int depth = 0, barriers_in_loops = 0;
    for (const Instr &in : p.code) {
        if (in.op == Opcode::LOOP) depth++;
        if (in.op == Opcode::ENDLOOP) depth--;
        if (in.op == Opcode::BARRIER && depth > 0) barriers_in_loops++;
    }
    EXPECT_GE(barriers_in_loops, 1) << "a barrier ends each tile iteration";
    const std::vector<Halide::Runtime::Buffer<>> inputs = random_inputs(app, s);
    const SpyreRun run = run_on_spyre(p, inputs);
    const ErrorCheck e = check_error(app, run.output, cpu_reference(app, s, inputs));
    EXPECT_TRUE(e.ok) << e.text << " (tolerance " << tolerance(app).text() << ")";
}

// At model width each core runs many tiles, and the double-buffered cores32 mixes one tile's stores
// with the next tiles' loads (the channel pays the turnaround); the phased schedule does not.
TEST_P(PhasedSchedule, FasterThanCores32AtModelWidth) {
    const std::string app = GetParam();
    const Shape s = parse_shape(app, "4096x8192");
    const double phased = modelled_us(compile_kernel(app, "phased", s));
    const double cores32 = modelled_us(compile_kernel(app, "cores32", s));
    EXPECT_LT(phased, cores32 * 0.9) << "phased " << phased << " us, cores32 " << cores32 << " us";
}

INSTANTIATE_TEST_SUITE_P(Apps, PhasedSchedule, ::testing::Values("softmax", "layernorm", "rmsnorm"),
                         [](const auto &info) { return info.param; });

}  // namespace
}  // namespace spyre::report
