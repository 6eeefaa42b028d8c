// Static work of a device program: what a run asks of the simulator, computed before it runs.
// Scalar registers are folded where their values are constants (immediates, NUM_CORES and
// arithmetic on those), so loop trip counts multiply out; every IF is assumed to take its costlier
// branch. A loop whose count depends on a value only known at run time (CORE_ID, a loop variable)
// is counted once and marks the result not `counts_known`: the simulator's run-time budgets
// (SimOptions::max_work, max_instructions) bound such programs as they run.
#pragma once

#include <cstdint>
#include <string>

#include "device/machine_desc.h"
#include "device/program.h"

namespace spyre {

struct ProgramWork {
    int64_t instructions = 0;  // issued, over all cores (LOOP once, ENDLOOP per iteration)
    int64_t dma_bytes = 0;     // loads and stores
    int64_t vector_bytes = 0;  // sticks through the vector unit x stick bytes
    int64_t macs = 0;          // PE multiply-accumulates, unpadded
    int64_t ring_bytes = 0;    // sent or reduced
    bool counts_known = true;  // every loop count was a constant
    // The functional simulator's work units: bytes it moves or computes on, plus MACs.
    int64_t data_work() const;
    std::string to_string() const;
};

ProgramWork program_work(const DeviceProgram &program, const MachineDesc &machine);

// A lower bound on the program's modelled time in a timing-only run, from its static work alone:
// the launch, then the busiest engine of the busiest core (each engine runs its operations one
// after another at their op_cost.h durations) or device memory at its peak, whichever is longer.
// Waits, contention and the LX working-set factor only add time, and what is not known statically
// counts as little as it can (CORE_ID is folded per core). The autoscheduler skips simulating a
// candidate whose bound already rules it out.
double time_lower_bound_us(const DeviceProgram &program, const MachineDesc &machine);

// Rejects a program whose static work exceeds the limits (a limit <= 0 is not checked), with an
// error that names the figure, the limit and the option that sets it.
void check_work_limits(const DeviceProgram &program, const ProgramWork &work, int64_t max_instructions,
                       int64_t max_data_work);

}  // namespace spyre
