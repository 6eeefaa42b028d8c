// IBM's single-core softmax table (four placements of one softmax) on the simulator, twice: the
// hand-built stage programs and the same stages compiled from the Halide softmax with its stage
// schedules. The table is not fitted (docs/device_model.md explains why); what it checks is that
// the model orders the placements as the device did. The fitted suite is calibration_points.h.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "device/machine_desc.h"
#include "device/program.h"
#include "softmax_stages.h"

namespace spyre {

struct StageTiming {
    double modelled_us = 0;
    double measured_us = 0;
    double rel_error() const { return (modelled_us - measured_us) / measured_us; }
};

struct CalibrationReport {
    std::array<StageTiming, kNumSoftmaxStages> stages;
    double max_abs_rel_error() const;
    bool order_preserved() const;  // modelled times fall stage by stage, as the measured ones do
};

// The four stage programs of one source.
struct CalibrationCase {
    std::string source;  // "hand-built" or "compiled"
    std::array<DeviceProgram, kNumSoftmaxStages> programs;
};
CalibrationCase hand_built_case(const SoftmaxShape &shape = {});
// Compiles schedules/softmax's "stage1".."stage4" for (cols, rows) = (shape.cols, shape.rows).
CalibrationCase compiled_case(const SoftmaxShape &shape = {}, const MachineDesc &machine = {});

// Times a case (exact timing, no loop summaries) on `machine`.
CalibrationReport run_calibration(const CalibrationCase &c, const MachineDesc &machine);

// One table with a row per stage and a column per case.
std::string calibration_table(const std::vector<CalibrationCase> &cases, const std::vector<CalibrationReport> &reports);

}  // namespace spyre
