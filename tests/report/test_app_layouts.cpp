// Every catalogue app with every named schedule, at its small shape, in layouts other than ours: its
// arguments of two dims or more in torch-spyre's default layout (the stick count not innermost), every
// intermediate in device memory in that layout too (the schedule's own and a copy of the first
// input, so that every app has one), and its LX intermediates of three dims or more with their outer
// dims reversed (kernel_catalog.h: ArgumentLayouts::TorchSpyreEverywhere). Each runs on the
// simulator and matches Halide's CPU reference.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_catalog.h"
#include "spyre.h"

namespace spyre::report {
namespace {

struct LayoutCase {
    std::string app, schedule;
};
void PrintTo(const LayoutCase &c, std::ostream *os) { *os << c.app << "/" << c.schedule; }

std::vector<LayoutCase> every_named_schedule() {
    std::vector<LayoutCase> v;
    for (const std::string &app : app_names())
        for (const std::string &sched : app_schedules(app))
            if (sched != "auto") v.push_back({app, sched});
    return v;
}

class AppLayouts : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(AppLayouts, ArgumentsAndIntermediatesInTorchSpyreLayoutsMatchCpu) {
    const LayoutCase &c = GetParam();
    const AppInfo &info = app_info(c.app);
    Shape s = parse_shape(c.app, info.shapes.small);
    s.cores = info.shapes.small_cores;
    const DeviceProgram p = compile_kernel(c.app, c.schedule, s, {}, "", nullptr, ArgumentLayouts::TorchSpyreEverywhere);
    int arguments = 0, intermediates = 0;
    for (const BufferDecl &b : p.buffers) {
        if (b.shape.size() < 2) continue;
        const bool placed = !stick_count_innermost(b.layout, int(b.shape.size()));
        if (b.kind == BufferKind::Temp) {
            EXPECT_TRUE(placed) << b.name << " is in " << layout_to_string(b.layout);
            intermediates += placed;
        } else {
            arguments += placed;
        }
    }
    EXPECT_GE(arguments, 1) << "no argument with its stick count outside";
    EXPECT_GE(intermediates, 1) << "no intermediate with its stick count outside";

    const std::vector<Halide::Runtime::Buffer<>> inputs = random_inputs(c.app, s);
    const SpyreRun run = run_on_spyre(p, inputs);
    const ErrorCheck e = check_error(c.app, run.output, cpu_reference(c.app, s, inputs));
    EXPECT_TRUE(e.ok) << e.text << " (tolerance " << tolerance(c.app).text() << ")";
}

INSTANTIATE_TEST_SUITE_P(Catalogue, AppLayouts, ::testing::ValuesIn(every_named_schedule()),
                         [](const ::testing::TestParamInfo<LayoutCase> &i) {
                             return i.param.app + "_" + i.param.schedule;
                         });

}  // namespace
}  // namespace spyre::report
