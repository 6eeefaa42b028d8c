// A kernel's speed of light (SOL) on the whole chip under the machine description, and its
// fraction of it: the figure of merit of a schedule (docs/design.md, "The figure of merit"). Shared by
// spyre-bench (counters sol_us, sol_frac) and spyre-report (column "SOL"). No Halide.h.
//
// With all of the machine's cores (not only the program's) and its figures:
//
//   mem_ns = (R + W) / dram_bytes_per_ns + dram_turnaround_ns_per_byte x min(R, W)
//            IBM's measured channel law (backend/sim/ibm_formula.h) for the compulsory traffic:
//            R = every input buffer read once, W = every output written once, at their device
//            sizes. A read+write kernel at IBM's measured copy rate (~105 GB/s) is at SOL 1.0:
//            no measurement shows a kernel that reads and writes moving faster;
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
#include "sim/ibm_formula.h"
#include "sim/sim_stats.h"

namespace spyre::report {

// The same three terms as the roofline (bound_ns is the speed of light, limiter the binding term).
using SpeedOfLight = Roofline;

inline SpeedOfLight speed_of_light(const DeviceProgram &p, const SimStats &st, const MachineDesc &m) {
    double r = 0, w = 0;  // every input read once, every output written once (an in-out buffer both)
    for (size_t i = 0; i < p.buffers.size(); i++) {
        const BufferKind k = p.buffers[i].kind;
        const double bytes = double(p.buffer_bytes(i, m.stick_bytes));
        if (k == BufferKind::Input || k == BufferKind::InOut) r += bytes;
        if (k == BufferKind::Output || k == BufferKind::InOut) w += bytes;
    }
    return bound(ibm_channel_ns(r, w, m), double(st.vector_sticks), double(st.pe_macs), m.cores, m, st.us);
}

}  // namespace spyre::report
