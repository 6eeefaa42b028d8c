// The "phased" schedules (dma_phases at the tile loop, dsl/directives.h) of softmax, layernorm and
// rmsnorm: at a shape where every core runs several whole tiles, the tile loop has barriers and
// the result matches Halide's CPU reference; at model width the modelled time is well below
// cores32's, since device memory no longer mixes reads and writes (no turnaround).
#include <gtest/gtest.h>

#include <algorithm>
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

// Rows split over 32 cores unevenly, the last core one row short (447 rows: 14 each, the last 13;
// 1151: 36 and 35), in single-row tiles at these widths: the last core's copy of the tile loop
// runs its final pair of tiles half empty but meets as many barriers as the others, so the phased
// schedule still applies, matches the CPU and avoids the turnaround.
TEST_P(PhasedSchedule, AnUnevenSplitOneTileShortStillRunsInPhases) {
    const std::string app = GetParam();
    const Shape small = parse_shape(app, "447x8192");
    const DeviceProgram p = compile_kernel(app, "phased", small);
    EXPECT_GE(std::count_if(p.code.begin(), p.code.end(), [](const Instr &in) { return in.op == Opcode::BARRIER; }), 4);
    const std::vector<Halide::Runtime::Buffer<>> inputs = random_inputs(app, small);
    const SpyreRun run = run_on_spyre(p, inputs);
    const ErrorCheck e = check_error(app, run.output, cpu_reference(app, small, inputs));
    EXPECT_TRUE(e.ok) << e.text << " (tolerance " << tolerance(app).text() << ")";
    const Shape wide = parse_shape(app, "1151x8192");
    const double phased = modelled_us(compile_kernel(app, "phased", wide));
    const double cores32 = modelled_us(compile_kernel(app, "cores32", wide));
    EXPECT_LT(phased, cores32 * 0.9) << "phased " << phased << " us, cores32 " << cores32 << " us";
}

INSTANTIATE_TEST_SUITE_P(Apps, PhasedSchedule, ::testing::Values("softmax", "layernorm", "rmsnorm"),
                         [](const auto &info) { return info.param; });

}  // namespace
}  // namespace spyre::report
