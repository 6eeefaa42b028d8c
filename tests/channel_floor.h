// A lower bound on a kernel's modelled time that the tests work out from the machine description
// alone, rather than take from the simulator: every byte a kernel reads or writes in device memory
// crosses the one channel the cores share, at its peak, and each byte of the smaller direction pays
// the read/write turnaround besides (docs/device_model.md, "How time is counted"). Run overheads,
// descriptor latency, per-core caps and compute only add to it. Tests put it where `us > 0` stood:
// a model that forgot to time its DMAs, or moved fewer bytes than the tensors hold, fails it.
#pragma once

#include <algorithm>
#include <cstdint>

#include "device/machine_desc.h"

namespace spyre::testing_floor {

// The least time, in us, that reading `read_bytes` and writing `write_bytes` of device memory takes on `m`.
inline double channel_floor_us(int64_t read_bytes, int64_t write_bytes, const MachineDesc &m = {}) {
    const double ns = double(read_bytes + write_bytes) / m.dram_bytes_per_ns +
                      double(std::min(read_bytes, write_bytes)) * m.dram_turnaround_ns_per_byte;
    return ns / 1000.0;
}

}  // namespace spyre::testing_floor
