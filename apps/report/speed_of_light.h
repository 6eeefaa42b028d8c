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

#include "device/machine_desc.h"
#include "device/program.h"
#include "roofline.h"
#include "sim/sim_stats.h"

namespace spyre::report {

// The same three terms as the roofline (bound_ns is the speed of light, limiter the binding term).
using SpeedOfLight = Roofline;

inline SpeedOfLight speed_of_light(const DeviceProgram &p, const SimStats &st, const MachineDesc &m) {
    double compulsory = 0;  // every input read once, every output written once (an in-out buffer both)
    for (size_t i = 0; i < p.buffers.size(); i++)
        if (p.buffers[i].kind != BufferKind::Temp)
            compulsory += double(p.buffer_bytes(i, m.stick_bytes)) * (p.buffers[i].kind == BufferKind::InOut ? 2 : 1);
    return bound(compulsory, double(st.vector_sticks), double(st.pe_macs), m.cores, m, st.us);
}

}  // namespace spyre::report
