// One fit for every calibrated constant of the machine description: a coordinate search in log
// space that minimises the sum of squared log errors over the suite's fitted points, with a wall at
// the tolerance
// (calibration_points.h). A new measurement added to the suite re-fits everything with
// `spyre-calibrate --fit`; only machine-wide constants move, never a per-kernel factor.
#pragma once

#include <string>
#include <vector>

#include "calibration_points.h"

namespace spyre {

// Sum over fitted points of log(modelled / measured)^2, plus a steep penalty on any point within
// 5% of the tolerance.
double fit_objective(const std::vector<PointResult> &r);

// Searches the parameters marked Calibrated in machine_params(), starting from `start`. Each round
// tries every parameter multiplied and divided by (1 + step); the step halves when no move helps.
// `log` receives one line per accepted move when non-null.
MachineDesc fit_machine(const CalibrationSuite &suite, const MachineDesc &start, int rounds,
                        std::vector<std::string> *log = nullptr);

}  // namespace spyre
