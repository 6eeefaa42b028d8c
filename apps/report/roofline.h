// A modelled roofline bound for one simulated run, shared by spyre-bench (counter roofline_frac)
// and spyre-report (column "roofline"). No Halide.h.
//
// For a program running on `cores` cores (DeviceProgram::num_cores), with the machine's figures:
//
//   mem_ns = (dram_read_bytes + dram_write_bytes) / dram_bytes_per_ns
//            device-memory traffic at the shared channel's one-way peak (no turnaround penalty,
//            no DMA setup latency);
//   vec_ns = vector_sticks / (cores * vec_add_sticks_per_cycle * clock_ghz)
//            every vector stick at the add/mul rate, the fastest vector class: a crude compute
//            bound (transcendentals, reductions and conversions are slower, so it is optimistic);
//   pe_ns  = pe_macs / (cores * pe_macs_per_ns)
//            every MAC at the PE array's sustained rate on every core;
//   bound_ns = max(mem_ns, vec_ns, pe_ns)
//   roofline_frac = bound_ns / modelled_ns,   modelled_ns = SimStats::us * 1000.
//
// Each term is a lower bound on the modelled time under the timing model (ops have overheads on
// top, DMA has setup and turnaround, cores may be imbalanced), so roofline_frac is in (0, 1]: 1
// means the kernel runs at the modelled limit of its busiest resource (`limiter`); 0.3 means it
// takes 3.3x longer than that limit. It is a property of the model, not of a real card.
#pragma once

#include <algorithm>
#include <cstdint>

#include "device/machine_desc.h"
#include "sim/sim_stats.h"

namespace spyre::report {

struct Roofline {
    double mem_ns = 0, vec_ns = 0, pe_ns = 0;
    double bound_ns = 0;  // max of the three
    double frac = 0;      // bound_ns / modelled ns (0 when nothing ran)
    const char *limiter = "-";  // "memory", "vector" or "pe": the term that sets bound_ns
};

// The largest of three lower bounds: `mem_ns` of device-memory time, streaming `sticks` vector
// sticks and doing `macs` MACs on `cores` cores; and its fraction of `us` of modelled time.
// roofline() feeds it what a run did; speed_of_light.h what a kernel must do, on the whole chip.
inline Roofline bound(double mem_ns, double sticks, double macs, int64_t cores, const MachineDesc &m, double us) {
    Roofline r;
    const double c = double(std::max<int64_t>(cores, 1));
    r.mem_ns = mem_ns;
    r.vec_ns = sticks / (c * m.vec_add_sticks_per_cycle * m.clock_ghz);
    r.pe_ns = macs / (c * m.pe_macs_per_ns);
    r.bound_ns = r.mem_ns, r.limiter = "memory";
    if (r.vec_ns > r.bound_ns) r.bound_ns = r.vec_ns, r.limiter = "vector";
    if (r.pe_ns > r.bound_ns) r.bound_ns = r.pe_ns, r.limiter = "pe";
    const double modelled_ns = us * 1000.0;
    r.frac = modelled_ns > 0 ? r.bound_ns / modelled_ns : 0.0;
    return r;
}

inline Roofline roofline(const SimStats &st, const MachineDesc &m, int64_t cores) {
    return bound(double(st.dram_read_bytes + st.dram_write_bytes) / m.dram_bytes_per_ns, double(st.vector_sticks),
                 double(st.pe_macs), cores, m, st.us);
}

}  // namespace spyre::report
