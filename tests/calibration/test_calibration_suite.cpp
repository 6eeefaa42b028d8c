// The calibration suite on the default machine description: every fitted point within its
// tolerance, the suite's RMS error within IBM's own overall figure, at least 15 fitted points, and
// the JSON form that spyre-calibrate --json prints.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "calibration_fit.h"
#include "calibration_points.h"
#include "test_paths.h"

namespace spyre {
namespace {

const std::vector<PointResult> &default_results() {
    static const CalibrationSuite suite;
    static const std::vector<PointResult> results = suite.run(MachineDesc{});
    return results;
}

TEST(CalibrationSuite, EveryFittedPointWithinTolerance) {
    const auto &r = default_results();
    std::string table = points_table(r);
    for (const PointResult &p : r)
        if (p.point->fitted) {
            EXPECT_LE(std::fabs(p.rel_error()), p.point->tolerance) << p.point->name << "\n" << table;
        }
}

// IBM's own model is about 7% RMS overall.
TEST(CalibrationSuite, RmsErrorWithinSevenPercentOverAtLeastFifteenPoints) {
    SuiteError e = suite_error(default_results());
    EXPECT_GE(e.fitted, 15);
    EXPECT_LE(e.rms, 0.07) << points_table(default_results());
}

TEST(CalibrationSuite, PointsHaveNamesSourcesAndPositiveFigures) {
    std::set<std::string> names;
    for (const PointResult &p : default_results()) {
        EXPECT_TRUE(names.insert(p.point->name).second) << "duplicate point " << p.point->name;
        EXPECT_FALSE(p.point->source.empty()) << p.point->name;
        EXPECT_GT(p.point->measured, 0) << p.point->name;
        EXPECT_GT(p.modelled, 0) << p.point->name;
    }
}

TEST(CalibrationSuite, JsonListsEveryPointWithItsFields) {
    nlohmann::json j = nlohmann::json::parse(points_json(default_results()));
    ASSERT_EQ(j["points"].size(), default_results().size());
    for (const auto &p : j["points"])
        for (const char *key : {"name", "source", "measured", "modelled", "unit"}) EXPECT_TRUE(p.contains(key)) << key;
    EXPECT_DOUBLE_EQ(j["rms"].get<double>(), suite_error(default_results()).rms);
}

// The report's list of what the model misses names every unfitted point (IBM's softmax table among
// them) and no fitted point within its tolerance.
TEST(CalibrationSuite, MissedPointsListNamesEveryUnfittedPointAndNoPointWithinTolerance) {
    const std::string md = missed_points_markdown(default_results());
    for (const PointResult &p : default_results()) {
        const bool listed = md.find("`" + p.point->name + "`") != std::string::npos;
        EXPECT_EQ(listed, !p.point->fitted || std::fabs(p.rel_error()) > p.point->tolerance) << p.point->name;
    }
    EXPECT_NE(md.find("`softmax_table/1c/512x1024/stage3` | 23.93 |"), std::string::npos) << md;
    EXPECT_EQ(md.find("`softmax_table/1c/512x1024/stage4`"), std::string::npos) << "stage 4 is fitted: " << md;
}

// The fit only ever improves the objective, and moves calibrated constants only.
TEST(CalibrationSuite, FitDoesNotWorsenTheObjectiveAndKeepsMeasuredFigures) {
    CalibrationSuite suite;
    MachineDesc start;
    start.dram_write_run_overhead_bytes *= 2;  // start away from the fit
    MachineDesc fitted = fit_machine(suite, start, 2);
    EXPECT_LE(fit_objective(suite.run(fitted)), fit_objective(suite.run(start)));
    EXPECT_EQ(fitted.dram_bytes_per_ns, start.dram_bytes_per_ns);
    EXPECT_EQ(fitted.dram_turnaround_ns_per_byte, start.dram_turnaround_ns_per_byte);
}

// docs/device_model.md carries the table spyre-calibrate prints; regenerate it after a model change.
TEST(CalibrationSuite, DeviceModelDocShowsTheCurrentTable) {
    std::ifstream in(std::string(SPYRE_SOURCE_DIR) + "/docs/device_model.md");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string doc = ss.str();
    const std::string begin = "<!-- BEGIN POINTS -->\n", end = "<!-- END POINTS -->";
    size_t a = doc.find(begin), b = doc.find(end);
    ASSERT_NE(a, std::string::npos);
    ASSERT_NE(b, std::string::npos);
    EXPECT_EQ(doc.substr(a + begin.size(), b - a - begin.size()), "```\n" + points_table(default_results()) + "```\n")
        << "paste the suite table that build/bin/spyre-calibrate prints into docs/device_model.md";
}

}  // namespace
}  // namespace spyre
