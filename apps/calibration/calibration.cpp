#include "calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "sim/simulator.h"

namespace spyre {

double CalibrationReport::max_abs_rel_error() const {
    double e = 0;
    for (const StageTiming &s : stages) e = std::max(e, std::fabs(s.rel_error()));
    return e;
}

bool CalibrationReport::order_preserved() const {
    for (int i = 1; i < kNumSoftmaxStages; i++)
        if (!(stages[i].modelled_us < stages[i - 1].modelled_us)) return false;
    return true;
}

std::string CalibrationReport::table() const {
    std::ostringstream os;
    char line[256];
    std::snprintf(line, sizeof line, "%-8s %-38s %12s %12s %8s\n", "stage", "placement", "measured us", "modelled us",
                  "error");
    os << line;
    for (int i = 0; i < kNumSoftmaxStages; i++) {
        const SoftmaxStageInfo &info = softmax_stage_info()[i];
        std::snprintf(line, sizeof line, "%-8s %-38s %12.2f %12.2f %+7.1f%%\n", info.name, info.what,
                      stages[i].measured_us, stages[i].modelled_us, 100 * stages[i].rel_error());
        os << line;
    }
    std::snprintf(line, sizeof line, "largest error %.1f%%, stage order %s\n", 100 * max_abs_rel_error(),
                  order_preserved() ? "preserved" : "NOT preserved");
    os << line;
    return os.str();
}

CalibrationReport run_calibration(const MachineDesc &machine, const SoftmaxShape &shape) {
    CalibrationReport r;
    SimOptions opt;
    opt.timing_only = true;
    opt.summarize_loops = false;  // calibration wants the exact model
    for (int i = 0; i < kNumSoftmaxStages; i++) {
        DeviceProgram p = build_softmax_stage(i + 1, shape);
        SimResult res = simulate(p, machine, {}, opt);
        r.stages[i].modelled_us = res.stats.us;
        r.stages[i].measured_us = softmax_stage_info()[i].measured_us;
    }
    return r;
}

namespace {

double objective(const CalibrationReport &r) {
    double e = r.max_abs_rel_error();
    // Order matters as much as magnitude: a reversed pair costs its relative inversion, doubled.
    for (int i = 1; i < kNumSoftmaxStages; i++) {
        double a = r.stages[i - 1].modelled_us, b = r.stages[i].modelled_us;
        if (b >= a) e += 2 * (b - a) / a + 0.01;
    }
    return e;
}

}  // namespace

MachineDesc fit_machine(const MachineDesc &start, int rounds, std::vector<std::string> *log) {
    MachineDesc best = start;
    double best_obj = objective(run_calibration(best));
    std::vector<const MachineParam *> params;
    for (const MachineParam &p : machine_params())
        if (p.source == ParamSource::Calibrated && !p.is_integer) params.push_back(&p);
    double step = 0.25;
    for (int round = 0; round < rounds; round++) {
        bool improved = false;
        for (const MachineParam *p : params) {
            for (double f : {1 + step, 1 / (1 + step)}) {
                MachineDesc trial = best;
                trial.*(p->real_field) *= f;
                // One core cannot tell its own DMA limit from the shared channel's: keep them equal.
                if (p->real_field == &MachineDesc::dram_bytes_per_ns) trial.dma_core_bytes_per_ns = trial.dram_bytes_per_ns;
                double obj;
                try {
                    trial.validate();
                    obj = objective(run_calibration(trial));
                } catch (const std::exception &) {
                    continue;
                }
                if (obj < best_obj - 1e-9) {
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
        if (!improved) {
            step /= 2;
            if (step < 0.005) break;
        }
    }
    return best;
}

}  // namespace spyre
