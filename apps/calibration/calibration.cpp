#include "calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "compile.h"
#include "device/layout.h"
#include "sim/simulator.h"
#include "softmax.h"

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

CalibrationCase hand_built_case(const SoftmaxShape &shape) {
    CalibrationCase c;
    c.source = "hand-built dim 1";
    for (int i = 0; i < kNumSoftmaxStages; i++) c.programs[i] = build_softmax_stage(i + 1, shape);
    return c;
}

CalibrationCase compiled_case(const SoftmaxShape &shape, const MachineDesc &machine) {
    CalibrationCase c;
    c.source = "compiled dim 0";
    for (int i = 0; i < kNumSoftmaxStages; i++) {
        SoftmaxKernel k = make_softmax(shape.cols, shape.rows, /*dim=*/0);
        schedule_softmax(k, "stage" + std::to_string(i + 1), machine);
        CompileOptions opt;
        opt.kernel_name = "softmax_stage" + std::to_string(i + 1);
        opt.machine = machine;
        // IBM ran it on tensors in torch-spyre's default device layout, (N/64, M, 64).
        opt.inputs = {TensorSpec{{shape.cols, shape.rows}, torch_spyre_default_layout(2)}};
        opt.output = TensorSpec{{shape.cols, shape.rows}, torch_spyre_default_layout(2)};
        c.programs[i] = compile_for_spyre(k.out, {k.in}, opt);
    }
    return c;
}

CalibrationReport run_calibration(const CalibrationCase &c, const MachineDesc &machine) {
    CalibrationReport r;
    SimOptions opt;
    opt.timing_only = true;
    opt.summarize_loops = false;  // calibration wants the exact model
    for (int i = 0; i < kNumSoftmaxStages; i++) {
        SimResult res = simulate(c.programs[i], machine, {}, opt);
        r.stages[i].modelled_us = res.stats.us;
        r.stages[i].measured_us = softmax_stage_info()[i].measured_us;
    }
    return r;
}

std::string calibration_table(const std::vector<CalibrationCase> &cases, const std::vector<CalibrationReport> &reports) {
    std::ostringstream os;
    char cell[128];
    std::snprintf(cell, sizeof cell, "%-7s %-37s %9s", "stage", "placement", "measured");
    os << cell;
    for (const CalibrationCase &c : cases) {
        std::snprintf(cell, sizeof cell, " %18s", (c.source + " us").c_str());
        os << cell;
    }
    os << "\n";
    for (int i = 0; i < kNumSoftmaxStages; i++) {
        const SoftmaxStageInfo &info = softmax_stage_info()[i];
        std::snprintf(cell, sizeof cell, "%-7s %-37s %9.2f", info.name, info.what, info.measured_us);
        os << cell;
        for (const CalibrationReport &r : reports) {
            std::snprintf(cell, sizeof cell, " %9.2f (%+5.1f%%)", r.stages[i].modelled_us, 100 * r.stages[i].rel_error());
            os << cell;
        }
        os << "\n";
    }
    for (size_t k = 0; k < cases.size(); k++) {
        std::snprintf(cell, sizeof cell, "%s: largest error %.1f%%, stage order %s\n", cases[k].source.c_str(),
                      100 * reports[k].max_abs_rel_error(), reports[k].order_preserved() ? "preserved" : "NOT preserved");
        os << cell;
    }
    return os.str();
}

}  // namespace spyre
