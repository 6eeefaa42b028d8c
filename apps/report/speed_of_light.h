// A kernel's speed of light (SOL) on the whole chip under the machine description, and its
// fraction of it: the figure of merit of a schedule (DESIGN.md, "How fast is fast"). Shared by
// spyre-bench (counters sol_us, sol_frac) and spyre-report (column "SOL"). No Halide.h.
//
// With all of the machine's cores (not only the program's) and its figures:
//
//   mem_ns = (R + W) / dram_bytes_per_ns
//            compulsory traffic: R = every input buffer read once, W = every output written once,
//            at their device sizes, at the one-way peak. No turnaround: the channel pays it only
//            while reads and writes overlap, so a kernel that keeps them apart need not;
//   pe_ns  = pe_macs / (cores * pe_macs_per_ns)        every MAC at the PE array's rate;
//   vec_ns = vector_sticks / (cores * vec_add_sticks_per_cycle * clock_ghz)
//            the program's vector work at the fastest vector rate;
//   sol_ns = max(mem_ns, pe_ns, vec_ns),  sol_frac = sol_ns / modelled ns.
//
// Unlike roofline.h, which bounds the traffic a program happens to make, re-reading operands,
// spilling intermediates or leaving cores idle lowers sol_frac.
#pragma once

#include <algorithm>

#include "device/machine_desc.h"
#include "device/program.h"
#include "sim/sim_stats.h"

namespace spyre::report {

struct SpeedOfLight {
    double mem_ns = 0, pe_ns = 0, vec_ns = 0;
    double sol_ns = 0;          // max of the three
    double frac = 0;            // sol_ns / modelled ns (0 when nothing ran)
    const char *binding = "-";  // "memory", "pe" or "vector": the term that sets sol_ns
};

inline SpeedOfLight speed_of_light(const DeviceProgram &p, const SimStats &st, const MachineDesc &m) {
    double r = 0, w = 0;
    for (size_t i = 0; i < p.buffers.size(); i++) {
        double bytes = double(p.buffer_bytes(i, m.stick_bytes));
        if (p.buffers[i].kind == BufferKind::Input) r += bytes;
        else if (p.buffers[i].kind == BufferKind::Output) w += bytes;
    }
    const double cores = double(std::max<int64_t>(m.cores, 1));
    SpeedOfLight s;
    s.mem_ns = (r + w) / m.dram_bytes_per_ns;
    s.pe_ns = double(st.pe_macs) / (cores * m.pe_macs_per_ns);
    s.vec_ns = double(st.vector_sticks) / (cores * m.vec_add_sticks_per_cycle * m.clock_ghz);
    s.sol_ns = s.mem_ns, s.binding = "memory";
    if (s.pe_ns > s.sol_ns) s.sol_ns = s.pe_ns, s.binding = "pe";
    if (s.vec_ns > s.sol_ns) s.sol_ns = s.vec_ns, s.binding = "vector";
    const double modelled_ns = st.us * 1000.0;
    s.frac = modelled_ns > 0 ? s.sol_ns / modelled_ns : 0.0;
    return s;
}

}  // namespace spyre::report
