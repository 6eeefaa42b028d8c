// Timing-only runs summarise loops that reached a steady state; the summary must not change what the
// model says. For every catalogue app x hand schedule at the report's shapes (and one auto schedule), the summarised time is
// within 1% of the exact timing (the same program with every iteration run; on 2026-12-06 every
// case agreed to 1e-4). The autoscheduler and spyre-bench rank schedules by summarised time, so a
// summary error reorders their choices.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_catalog.h"
#include "sim/simulator.h"

namespace spyre::report {
namespace {

struct SummaryCase {
    std::string app, schedule, shape;
};
void PrintTo(const SummaryCase &c, std::ostream *os) { *os << c.app << "/" << c.schedule << "/" << c.shape; }

std::vector<SummaryCase> summary_cases() {
    std::vector<SummaryCase> v;
    for (const std::string &app : app_names())
        for (const std::string &sched : app_schedules(app))
            if (sched != "auto") v.push_back({app, sched, app_info(app).shapes.report});
    // The autoscheduler's layernorm: each core prefetches its next tile while a loop of vector
    // work runs, which a summary once paused (18% slower than exact timing).
    v.push_back({"layernorm", "auto", "512x1024"});
    return v;
}

std::string summary_case_name(const ::testing::TestParamInfo<SummaryCase> &info) {
    return info.param.app + "_" + info.param.schedule;
}

SimStats time_program(const DeviceProgram &p, bool summarize) {
    SimOptions o;
    o.timing_only = true;
    o.summarize_loops = summarize;
    return simulate(p, MachineDesc{}, {}, o).stats;
}

class TimingSummary : public ::testing::TestWithParam<SummaryCase> {};

TEST_P(TimingSummary, AgreesWithExactTiming) {
    const SummaryCase &c = GetParam();
    const DeviceProgram p = compile_kernel(c.app, c.schedule, parse_shape(c.app, c.shape));
    const SimStats exact = time_program(p, false), summ = time_program(p, true);
    EXPECT_NEAR(summ.cycles / exact.cycles, 1.0, 0.01) << "summarised " << summ.us << " us, exact " << exact.us << " us";
    EXPECT_EQ(summ.instructions, exact.instructions);
    EXPECT_EQ(summ.dram_read_bytes, exact.dram_read_bytes);
    EXPECT_EQ(summ.dram_write_bytes, exact.dram_write_bytes);
    for (int e : {kEngVector, kEngPE, kEngDMA})
        EXPECT_NEAR(summ.mean_busy_fraction(e), exact.mean_busy_fraction(e), 0.03) << "engine " << e;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, TimingSummary, ::testing::ValuesIn(summary_cases()), summary_case_name);

}  // namespace
}  // namespace spyre::report
