// The calibration suite: one device program per device measurement listed in SPYRE_FACTS.md,
// each timed on the simulator and compared with the measured figure. The suite is what the
// machine description's calibrated constants are fitted to (calibration_fit.h), and what a test
// holds within tolerance, so that the timing model stays an instrument and not a guess.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "device/machine_desc.h"
#include "device/program.h"
#include "sim/sim_stats.h"

namespace spyre {

// How a point's figure is read off a simulated run.
enum class PointUnit {
    GBps,         // device-memory bytes (read + write, device layout) per ns
    ReadGBps,     // device-memory bytes read per ns (IBM's figure for reductions: a read rate)
    ReadGBpsCore, // device-memory bytes read per ns per core
    MacPerNsCore, // MACs per ns per core
    Us,           // modelled time
};
const char *point_unit_name(PointUnit u);

// The relative tolerance a fitted point is held to by default.
constexpr double kPointTolerance = 0.15;

struct CalibrationPoint {
    std::string name;    // what and at which shape, e.g. "copy/32c/4096x4096"
    std::string source;  // the SPYRE_FACTS.md row, and how the figure was derived from it
    PointUnit unit = PointUnit::GBps;
    double measured = 0;  // IBM's figure for this configuration
    // Fitted points calibrate the machine and are held within tolerance; the others are shown with
    // the residual that docs/device_model.md explains.
    bool fitted = true;
    std::function<DeviceProgram()> build;
    // The relative error a fitted point is held to: kPointTolerance unless IBM states its own
    // model is coarser on that sweep.
    double tolerance = kPointTolerance;
    // For a figure IBM states relative to a kernel's own traffic (e.g. "1.22-1.31 x max(compute,
    // memory)"): computes `measured` from a timing-only run's byte and MAC counts, which do not
    // depend on the machine description. The suite sets `measured` from it once.
    std::function<double(const DeviceProgram &, const SimStats &)> measured_from_counts;
};

// Every point of the suite, in SPYRE_FACTS.md order: the cost-model sweeps, then the softmax table.
std::vector<CalibrationPoint> calibration_points();

struct PointResult {
    const CalibrationPoint *point = nullptr;
    double modelled = 0;
    double rel_error() const { return (modelled - point->measured) / point->measured; }
};

// The suite with its programs built once, to be timed on many machine descriptions.
class CalibrationSuite {
public:
    explicit CalibrationSuite(std::vector<CalibrationPoint> points = calibration_points());
    const std::vector<CalibrationPoint> &points() const { return points_; }
    // Times every point (timing-only, exact: no loop summaries) on `m`.
    std::vector<PointResult> run(const MachineDesc &m) const;

private:
    std::vector<CalibrationPoint> points_;
    std::vector<DeviceProgram> programs_;
};

// The figure a point's unit reads from a run of `p`.
double point_value(PointUnit u, const DeviceProgram &p, const SimStats &st);

// Root mean square and largest absolute relative error over the fitted points.
struct SuiteError {
    double rms = 0, max_abs = 0;
    int fitted = 0;
};
SuiteError suite_error(const std::vector<PointResult> &r);

// A fixed-width table: name, measured, modelled, error, unit, source; then the RMS line.
std::string points_table(const std::vector<PointResult> &r);
// The published measurements the model misses, as a Markdown table: every point it does not fit and
// every fitted point outside its tolerance, with IBM's figure, the model's and the source; "" when
// there are none. spyre-report lists them so that no figure it prints hides what the model gets wrong.
std::string missed_points_markdown(const std::vector<PointResult> &r);
// {"points": [{"name", "source", "measured", "modelled", "unit", "error", "fitted"}, ...], "rms", "max_abs"}
std::string points_json(const std::vector<PointResult> &r);

}  // namespace spyre
