// The model's validity envelope (backend/sim/model_validity.h) against the calibration suite, so
// that the two cannot drift: every point a bound names is a point of the suite (fitted where it
// establishes the bound, unfitted where the note explains it), every fitted point's program is
// inside the envelope, every unfitted point a bound names gets that bound's note, and the
// thresholds are the extremes of the shapes the suite measures.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "calibration_points.h"
#include "sim/model_validity.h"
#include "sim/simulator.h"
#include "test_paths.h"

namespace spyre {
namespace {

struct PointRun {
    const CalibrationPoint *point = nullptr;
    DeviceProgram program;
    std::vector<ValidityNote> notes;
};

// Every point of the suite, run as the suite runs it (timing-only, no loop summaries).
const std::map<std::string, PointRun> &point_runs() {
    static const std::vector<CalibrationPoint> points = calibration_points();
    static const std::map<std::string, PointRun> runs = [] {
        std::map<std::string, PointRun> out;
        SimOptions opt;
        opt.timing_only = true;
        opt.summarize_loops = false;
        for (const CalibrationPoint &pt : points) {
            PointRun r;
            r.point = &pt;
            r.program = pt.build();
            r.notes = model_validity(r.program, simulate(r.program, MachineDesc{}, {}, opt).stats, MachineDesc{});
            out[pt.name] = std::move(r);
        }
        return out;
    }();
    return runs;
}

std::string messages(const std::vector<ValidityNote> &notes) {
    std::string s;
    for (const ValidityNote &n : notes) s += "\n  " + n.key + ": " + n.message;
    return s;
}

TEST(ModelValidityPoints, EveryBoundNamesPointsOfTheSuite) {
    for (const ValidityBound &b : validity_bounds()) {
        for (const std::string &name : b.points) {
            auto it = point_runs().find(name);
            ASSERT_NE(it, point_runs().end()) << b.key << " names " << name << ", not a calibration point";
            EXPECT_TRUE(it->second.point->fitted)
                << b.key << ": " << name << " establishes the bound, so it must be fitted";
        }
        for (const std::string &name : b.not_reproduced) {
            auto it = point_runs().find(name);
            ASSERT_NE(it, point_runs().end()) << b.key << " names " << name << ", not a calibration point";
            EXPECT_FALSE(it->second.point->fitted) << b.key << ": " << name << " is fitted, so it is reproduced";
        }
    }
}

TEST(ModelValidityPoints, EveryFittedPointIsInsideTheEnvelope) {
    for (const auto &[name, r] : point_runs()) {
        if (!r.point->fitted) continue;
        EXPECT_TRUE(r.notes.empty()) << name << " is fitted but gets:" << messages(r.notes);
    }
}

TEST(ModelValidityPoints, EveryUnreproducedPointGetsItsBoundsNote) {
    for (const ValidityBound &b : validity_bounds())
        for (const std::string &name : b.not_reproduced) {
            const PointRun &r = point_runs().at(name);
            EXPECT_NE(validity_keys(r.notes).find(b.key), std::string::npos)
                << name << " should get " << b.key << ", gets:" << messages(r.notes);
        }
}

// The short-tile bounds are the smallest streaming transfer the fitted points establishing them
// move, and the unreproduced tiled softmax points lie below it.
TEST(ModelValidityPoints, ShortTileThresholdsAreTheSmallestFittedTransfers) {
    for (const char *key : {"short_tiles", "short_transfers"}) {
        const ValidityBound &b = validity_bound(key);
        int64_t smallest = 0;
        for (const std::string &name : b.points) {
            const int64_t t = streaming_transfer_bytes(point_runs().at(name).program, MachineDesc{});
            smallest = smallest ? std::min(smallest, t) : t;
        }
        EXPECT_EQ(double(smallest), b.threshold) << key;
        for (const std::string &name : b.not_reproduced)
            EXPECT_LT(double(streaming_transfer_bytes(point_runs().at(name).program, MachineDesc{})), b.threshold)
                << name;
    }
}

TEST(ModelValidityPoints, CoreBoundsAreTheSuitesCoreCounts) {
    int most_cores = 0;
    for (const auto &[name, r] : point_runs()) most_cores = std::max(most_cores, int(r.program.num_cores));
    EXPECT_EQ(double(most_cores), validity_bound("cores").threshold);
    int few = 0;
    for (const std::string &name : validity_bound("lane_reduce_cores").points) {
        const int n = int(point_runs().at(name).program.num_cores);
        if (n < most_cores) few = std::max(few, n);
    }
    EXPECT_EQ(double(few), validity_bound("lane_reduce_cores").threshold);
}

TEST(ModelValidityPoints, PeFillThresholdIsTheShortestFittedMatmul) {
    int fewest = 1 << 30;
    for (const std::string &name : validity_bound("pe_short_rows").points)
        for (const MatmulDesc &d : point_runs().at(name).program.mm) fewest = std::min(fewest, int(d.m));
    EXPECT_EQ(double(fewest), validity_bound("pe_short_rows").threshold);
}

// docs/device_model.md's section "Where the model is validated" has a row for every bound, and no
// row for a bound the code does not have.
TEST(ModelValidityPoints, DocsListEveryBound) {
    std::ifstream in(std::string(SPYRE_SOURCE_DIR) + "/docs/device_model.md");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str();
    const size_t from = doc.find("## Where the model is validated"), to = doc.find("\n## ", from + 1);
    ASSERT_NE(from, std::string::npos);
    const std::string section = doc.substr(from, to - from);
    int rows = 0;
    for (size_t at = section.find("\n| `"); at != std::string::npos; at = section.find("\n| `", at + 1)) rows++;
    for (const ValidityBound &b : validity_bounds())
        EXPECT_NE(section.find("\n| `" + std::string(b.key) + "` |"), std::string::npos) << b.key;
    EXPECT_EQ(rows, int(validity_bounds().size())) << section;
}

}  // namespace
}  // namespace spyre
