#include "calibration_fit.h"

#include <cmath>
#include <sstream>

#include "device/error.h"

namespace spyre {

double fit_objective(const std::vector<PointResult> &r) {
    // Squared log errors, and a steep wall near the tolerance so that no point is traded away for
    // a smaller sum elsewhere. The wall is on the relative error the tolerance is checked with
    // (PointResult::rel_error), which is not symmetric in log space: a point 15% slow is 16.3%
    // away in log terms, one 15% fast 14.0%.
    double sum = 0;
    for (const PointResult &p : r) {
        if (!p.point->fitted) continue;
        const double wall = p.point->tolerance * 0.97;
        double e = std::fabs(std::log(p.modelled / p.point->measured));
        double over = std::fabs(p.rel_error()) - wall;
        sum += e * e + (over > 0 ? 10 * over * over : 0.0);
    }
    return sum;
}

MachineDesc fit_machine(const CalibrationSuite &suite, const MachineDesc &start, int rounds,
                        std::vector<std::string> *log) {
    MachineDesc best = start;
    double best_obj = fit_objective(suite.run(best));
    std::vector<const MachineParam *> params;
    for (const MachineParam &p : machine_params())
        if (p.source == ParamSource::Calibrated && !p.is_integer) params.push_back(&p);
    double step = 0.25;
    for (int round = 0; round < rounds && step >= 0.005; round++) {
        bool improved = false;
        for (const MachineParam *p : params) {
            for (double f : {1 + step, 1 / (1 + step)}) {
                MachineDesc trial = best;
                trial.*(p->real_field) *= f;
                double obj;
                try {
                    trial.validate();
                    obj = fit_objective(suite.run(trial));
                } catch (const Error &e) {
                    if (e.kind() == ErrorKind::Internal) throw;  // a bug, not a bad candidate
                    continue;  // an invalid description is not a candidate
                }
                if (obj < best_obj - 1e-12) {
                    best = trial, best_obj = obj, improved = true;
                    if (log) {
                        std::ostringstream os;
                        os << "round " << round << ": " << p->key << " = " << best.*(p->real_field) << " -> objective "
                           << obj;
                        log->push_back(os.str());
                    }
                    break;
                }
            }
        }
        if (!improved) step /= 2;
    }
    return best;
}

}  // namespace spyre
