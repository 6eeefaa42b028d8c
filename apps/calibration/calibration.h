// Runs the softmax calibration case on the simulator and fits the machine description's
// calibrated constants to IBM's measurements. Only machine-wide constants move; every stage is
// timed with the same description, so there is no per-kernel factor to fit.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "device/machine_desc.h"
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
    std::string table() const;     // a readable table, one line per stage
};

// Times the four stage programs (exact timing, no loop summaries) on `machine`.
CalibrationReport run_calibration(const MachineDesc &machine, const SoftmaxShape &shape = {});

// Coordinate search over the calibrated parameters (see machine_params(): source Calibrated),
// minimising the largest relative error with a penalty when the stage order breaks. Returns the
// best description found; `log` receives one line per improvement when non-null.
MachineDesc fit_machine(const MachineDesc &start, int rounds, std::vector<std::string> *log = nullptr);

}  // namespace spyre
