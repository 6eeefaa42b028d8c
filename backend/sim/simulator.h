// The Spyre simulator: runs a device program on every core it names, computing real results
// (IEEE fp16/fp32) and a modelled time from the machine description alone. Knows nothing of Halide.
//
// Timing: each core's control unit issues in order; vector, PE, DMA (a load and a store queue) and
// ring engines run concurrently and are ordered only by WAIT and BARRIER. Device-memory bandwidth is
// one resource shared by every core's DMA flows, with the read/write turnaround penalty. Timing-only
// runs skip the numerics and summarise repeated loop iterations (see docs/device_model.md).
// The cores' steps that touch shared state (DMA, ring, WAIT, BARRIER) run in time order across cores
// and events; the steps in between, which touch only the core's own registers and engines, run
// ahead without changing any result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device/machine_desc.h"
#include "device/program.h"
#include "sim_stats.h"

namespace spyre {

struct SimOptions {
    bool timing_only = false;        // no numerics, no memory images; loops are summarised
    bool summarize_loops = true;     // only takes effect with timing_only
    bool check_races = true;         // reject LX/device-memory races between engines of one core
    std::string trace_path;          // write a Chrome trace event file here when non-empty
    int64_t max_trace_events = 2000000;
    // Budgets that bound the host time of any run to seconds, however small the file that asks for
    // more. A functional run checks both before it starts, on the program's static work
    // (program_work.h), and both again as it runs (loop counts only known at run time); a
    // timing-only run, which summarises loops and does no data work, checks the steps as it runs.
    // Instructions stepped over all cores:
    int64_t max_instructions = int64_t(1) << 26;
    // Functional mode only: DMA bytes + vector bytes (sticks x stick size) + MACs + ring bytes.
    int64_t max_work = int64_t(1) << 32;
    // Timing-only mode: stop once the simulated clock passes this many microseconds (0: run to the
    // end). A search that only needs to know a candidate is slower than its best so far stops
    // there instead of simulating the rest (SimResult::stopped).
    double stop_after_us = 0;
};

struct SimResult {
    SimStats stats;
    // Device images of every buffer after the run (index = buffer table index); empty in timing-only mode.
    std::vector<std::vector<uint8_t>> buffers;
    // The run stopped at SimOptions::stop_after_us: stats.us is that bound (the program takes at
    // least as long), the other stats cover the part simulated.
    bool stopped = false;
};

// `images` holds one device image per buffer (see layout.h: stickify). Input buffers must be given
// at their exact device size; outputs and temporaries may be empty (they start zeroed). In timing-only
// mode `images` may be empty. Pass the images with std::move to spare a copy of each. Throws spyre::Error on a bad image size, a runtime fault (out-of-range
// access, race, ring mismatch, deadlock), naming the core, instruction and opcode.
SimResult simulate(const DeviceProgram &program, const MachineDesc &machine, std::vector<std::vector<uint8_t>> images,
                   const SimOptions &options = {});

}  // namespace spyre
