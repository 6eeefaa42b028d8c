// IBM's published cost formula (backend/sim/ibm_formula.h) beside a kernel's simulated time, shared
// by spyre-bench (counters formula_us, sim_vs_formula, faster_than_formula) and spyre-report
// (columns "formula us", "sim/formula"). No Halide.h.
//
//   formula_us     = ibm_formula(program) / 1000, from the program's static traffic and work
//   sim_vs_formula = sim_us / formula_us
//   flagged        when sim_vs_formula < kFasterThanFormula: the simulator is more than 25% faster
//                  (in rate) than IBM's formula. Each flagged catalogue kernel needs a mechanism
//                  the formula lacks, or it is a model bug (docs/device_model.md, "IBM's formula
//                  beside the simulator").
#pragma once

#include <cstdio>
#include <string>

#include "device/machine_desc.h"
#include "device/program.h"
#include "sim/ibm_kernel.h"
#include "sim/sim_stats.h"

namespace spyre::report {

// A rate 1.25x the formula's is a time 0.8x.
constexpr double kFasterThanFormula = 1.0 / 1.25;

struct FormulaCheck {
    IbmFormula formula;
    double formula_us = 0;
    double sim_vs_formula = 0;  // 0 when the formula prices nothing
    bool flagged = false;
    std::string terms;  // the formula's terms, e.g. "memory 20.0 us (channel 20.0, underfill 0.60) | pe 0.0 us"
};

inline std::string formula_terms(const IbmFormula &f) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "memory %.1f us (channel %.1f, underfill x%.2f, ws x%.2f, reread %.1f, replicated %.1f) | pe %.1f us",
                  f.memory_ns / 1000, f.channel_ns / 1000, f.underfill_eff, f.working_set_factor, f.reread_ns / 1000,
                  f.replicated_ns / 1000, f.compute_ns / 1000);
    return buf;
}

inline FormulaCheck formula_check(const DeviceProgram &p, const SimStats &st, const MachineDesc &m) {
    FormulaCheck c;
    c.formula = ibm_formula(p, m);
    c.formula_us = c.formula.total_ns / 1000.0;
    if (c.formula_us > 0) c.sim_vs_formula = st.us / c.formula_us;
    c.flagged = c.formula_us > 0 && c.sim_vs_formula < kFasterThanFormula;
    c.terms = formula_terms(c.formula);
    return c;
}

}  // namespace spyre::report
