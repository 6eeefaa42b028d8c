// The autoscheduler's analytical pre-filter: a quick estimate of a candidate's time and LX use from
// the pipeline's structure and the machine description alone, used to rank candidates before the
// simulator times the promising ones, and to drop those that cannot fit LX. Every figure comes from
// MachineDesc; the estimate only has to order candidates roughly, the simulator decides.
#pragma once

#include <cstdint>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre::autosched {

// Vector-unit cycles per stick of result for one evaluation of `e` (each op at its op class's rate
// from the machine description, plus the per-instruction overhead).
double vector_cycles_per_stick(const Halide::Expr &e, const MachineDesc &m);

struct RowsWork {
    double dram_bytes = 0;         // device-memory traffic
    double dram_write_bytes = 0;   // of which writes
    bool phased = false;           // dma_phases at the tile loop: reads and writes never mix
    double vector_sticks_cycles = 0;  // sum over stages of sticks x cycles per stick (whole kernel)
    double pe_macs = 0;            // matmul MACs on the PE array
    double vector_macs = 0;        // matmul MACs on the vector unit
    int64_t tiles_per_core = 1;    // tile iterations of one core
    int stages_per_tile = 1;       // vector instructions issued per tile (roughly: one per stage)
    int roots = 1;                 // stages computed in full one after another (each a barrier)
};

// The estimated time of work spread over `cores` cores.
double estimate_ns(const RowsWork &w, int cores, const MachineDesc &m);

}  // namespace spyre::autosched
