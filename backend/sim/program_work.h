// Static work of a device program: what a run asks of the simulator, computed before it runs.
// Scalar registers are folded where their values are constants (immediates, NUM_CORES and
// arithmetic on those), so loop trip counts multiply out; every IF is assumed to take its costlier
// branch. A loop whose count depends on a value only known at run time (CORE_ID, a loop variable)
// is counted once and marks the result not `counts_known`: the simulator's run-time budgets
// (SimOptions::max_work, max_instructions) bound such programs as they run.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

// One core's device-memory traffic and work, by buffer: what IBM's cost formula reads about a
// kernel (backend/sim/ibm_formula.h). Counted like program_work (loop counts multiplied out; an IF
// of unknown condition takes the branch that moves more device bytes), with CORE_ID folded.
struct CoreTraffic {
    std::vector<int64_t> load_bytes, store_bytes;  // DMA bytes, indexed by buffer
    std::vector<int64_t> loads;                    // DMA_LD instructions issued, by buffer
    // Loads whose device address does not depend on the core id: every core that issues them
    // reads the same bytes. Plain loads are a replicated operand (each core loads it itself);
    // shared ones (kDmaShared) cross device memory once for all of them.
    std::vector<int64_t> replicated_load_bytes, shared_load_bytes;
    int64_t ring_recv_bytes = 0;   // received from a neighbour (RING_RECV)
    int64_t reduce_sticks = 0;     // VREDSUM / VREDMAX / VREDMIN
    int64_t transpose_sticks = 0;  // VTRANSPOSE
    std::map<std::array<int32_t, 3>, int64_t> matmuls;  // MATMUL {m, n, k} -> times issued
    // Device-memory transfers (DMA_LD and DMA_ST) by size: bytes one transfer moves -> times issued.
    std::map<int64_t, int64_t> transfers;

    void add(const CoreTraffic &o);
    CoreTraffic times(int64_t n) const;
    static int64_t total(const std::vector<int64_t> &per_buffer);
};

// program.num_cores entries, core 0 first. A shared load (kDmaShared) whose address depends on the
// core counts this core's part of its group's bytes: the group is the cores whose address for it
// is the same in the first iteration of every loop (a batch's cores, a column of a core grid).
std::vector<CoreTraffic> program_traffic(const DeviceProgram &program, const MachineDesc &machine);

// For each core and instruction, how many cores (itself included) load the same bytes at a shared
// load, read off the loops' first iterations; 1 elsewhere and where the address is not known.
std::vector<std::vector<int>> shared_load_groups(const DeviceProgram &program, const MachineDesc &machine);

// One entry per instruction: 1 for a DMA_LD whose device address no CORE_ID went into (a register
// never derived from the core id, or none), so every core that issues it reads the same bytes: a
// replicated operand (IBM's compiler has each consumer core load it itself). All 0 on one core.
std::vector<char> core_independent_loads(const DeviceProgram &program, const MachineDesc &machine);

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
