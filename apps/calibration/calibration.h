// IBM's single-core softmax table (four placements of one softmax) on the simulator: IBM's kernel,
// torch.softmax(x, dim=0), compiled from the Halide softmax with its stage schedules (the table's
// points in calibration_points.h), beside the hand-built stage programs of a softmax over the other
// dim (a lane reduction per row; a different kernel, kept to show how much the dim changes). What
// this checks is that the model orders the placements as the device did.
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
// Compiles schedules/softmax's "stage1".."stage4" of the dim-0 softmax (IBM's table's kernel) for
// (cols, rows) = (shape.cols, shape.rows).
CalibrationCase compiled_case(const SoftmaxShape &shape = {}, const MachineDesc &machine = {});

// Times a case (exact timing, no loop summaries) on `machine`.
CalibrationReport run_calibration(const CalibrationCase &c, const MachineDesc &machine);

// One table with a row per stage and a column per case.
std::string calibration_table(const std::vector<CalibrationCase> &cases, const std::vector<CalibrationReport> &reports);

}  // namespace spyre
