// spyre-calibrate: the JSON form (every point with its fields), --out's files, and the error for a
// bad machine description.
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_paths.h"
#include "tool_test_util.h"

namespace fs = std::filesystem;
using namespace spyre::tools_testing;

namespace {

const std::string kCalibrate = SPYRE_CALIBRATE;

TEST(SpyreCalibrate, JsonHasEveryPointWithMeasuredAndModelled) {
    CommandResult r = run_command(quote(kCalibrate) + " --json 2>/dev/null");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    nlohmann::json j = nlohmann::json::parse(r.output);
    ASSERT_GE(j["points"].size(), 15u);
    for (const auto &p : j["points"])
        for (const char *key : {"name", "source", "measured", "modelled", "unit"}) EXPECT_TRUE(p.contains(key)) << p;
    EXPECT_LE(j["rms"].get<double>(), 0.07);
}

TEST(SpyreCalibrate, OutWritesTablePlotAndJson) {
    fs::path dir = fs::temp_directory_path() / ("spyre_calibrate_test_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    CommandResult r = run_command(quote(kCalibrate) + " --out " + quote(dir.string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("fitted points: RMS error"), std::string::npos) << r.output;
    for (const char *f : {"calibration.md", "calibration.svg", "calibration.json"})
        EXPECT_GT(fs::file_size(dir / f), 100u) << f;
    std::ifstream svg(dir / "calibration.svg");
    std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("<svg"), std::string::npos);
    EXPECT_NE(text.find("copy/32c/4096x4096"), std::string::npos);
    fs::remove_all(dir);
}

TEST(SpyreCalibrate, BadMachineDescriptionNamesTheKey) {
    fs::path f = fs::temp_directory_path() / ("spyre_calibrate_bad_" + std::to_string(::getpid()) + ".json");
    std::ofstream(f) << R"({"dram_read_run_overhead_bytes": -5})";
    CommandResult r = run_command(quote(kCalibrate) + " -m " + quote(f.string()));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("'dram_read_run_overhead_bytes' must be >= 0, got -5"), std::string::npos) << r.output;
    fs::remove(f);
}

}  // namespace
