// What a simulation reports besides the results: modelled time, traffic, per-core engine busy
// time, where each core's instruction stream waited (and for which engine) and LX peak. Exposed as
// a struct and as JSON (the same fields, see docs/device_model.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "device/isa.h"

namespace spyre {

// Indices of the per-core busy counters.
enum EngineIndex { kEngVector = 0, kEngPE = 1, kEngDMA = 2, kEngRing = 3 };
const char *engine_index_name(int e);

// What a core's instruction stream was blocked on: a WAIT is booked to the engine of the awaited
// work that finished last; a full DMA queue and a barrier are their own causes. Where the engine
// that bounds a kernel sits idle, these say what its core was waiting for instead.
enum WaitCause { kWaitVector = 0, kWaitPE, kWaitDmaLoad, kWaitDmaStore, kWaitRing, kWaitDmaQueue, kWaitBarrier, kNumWaitCauses };
const char *wait_cause_name(int w);

struct CoreStats {
    std::array<double, kNumAsyncEngines> busy_cycles{};  // time each engine had work in flight
    std::array<double, kNumWaitCauses> wait_cycles{};     // time the instruction stream was blocked, by cause
    int64_t instructions = 0;
    int64_t lx_peak_bytes = 0;  // highest LX byte address touched + 1
    int64_t dram_read_bytes = 0, dram_write_bytes = 0;
    int64_t ring_bytes_sent = 0;
    double finish_cycles = 0;   // when this core's last op completed
};

struct SimStats {
    double cycles = 0;  // makespan over all cores
    double us = 0;      // cycles at the machine clock
    double clock_ghz = 0;
    int64_t instructions = 0;
    int64_t dram_read_bytes = 0, dram_write_bytes = 0;
    int64_t ring_bytes = 0;
    int64_t vector_sticks = 0;
    int64_t pe_macs = 0;
    int64_t lx_peak_bytes = 0;  // max over cores
    int64_t summarised_iterations = 0;  // loop iterations timed by summary, not executed
    int64_t stepped_instructions = 0;   // instructions the simulator executed (host work), all cores
    std::vector<CoreStats> cores;

    double busy_fraction(int core, int engine) const;
    double mean_busy_fraction(int engine) const;  // over cores that ran the program
    double mean_wait_fraction(int cause) const;   // the same for the time blocked on `cause`
    // The causes waited on most, largest first, as "pe 87% dma_store 6%": at most `n` of them,
    // each at least 0.5% of the run; "none" when there are none.
    std::string top_waits(int n) const;
    std::string to_json_text() const;
};

}  // namespace spyre
