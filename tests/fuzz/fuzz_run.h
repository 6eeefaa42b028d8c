// What the program harnesses do with a program that verified: run it on the simulator, with
// numerics (inputs of 0x3c bytes, when its images are small enough) and timing-only, within work
// budgets that keep one run short. The simulator's errors are expected; a crash is a finding.
#pragma once

#include <cstdint>
#include <vector>

#include "device/error.h"
#include "device/machine_desc.h"
#include "device/program.h"
#include "sim/simulator.h"

namespace spyre::fuzz {

inline void run_both_modes(const DeviceProgram &p, const MachineDesc &m, int64_t max_image_bytes, int64_t max_work) {
    SimOptions opt;
    opt.max_instructions = 200000;
    opt.max_work = max_work;
    opt.max_trace_events = 1000;
    int64_t total = 0;
    for (size_t i = 0; i < p.buffers.size(); i++) total += p.buffer_bytes(i, m.stick_bytes);
    if (total <= max_image_bytes) {
        std::vector<std::vector<uint8_t>> images(p.buffers.size());
        for (size_t i = 0; i < p.buffers.size(); i++)
            if (p.buffers[i].kind == BufferKind::Input || p.buffers[i].kind == BufferKind::InOut) images[i].assign(size_t(p.buffer_bytes(i, m.stick_bytes)), 0x3c);
        try {
            simulate(p, m, images, opt);
        } catch (const Error &) {
        }
    }
    opt.timing_only = true;
    try {
        simulate(p, m, {}, opt);
    } catch (const Error &) {
    }
}

}  // namespace spyre::fuzz
