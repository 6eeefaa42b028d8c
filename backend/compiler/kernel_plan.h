// What the Spyre passes learn about a kernel's buffers, shared from pass to pass: where each
// Halide buffer lives (a device-memory argument or temporary, or LX), its element type and size,
// and which Func it belongs to (for error messages). Passes add to it in the order of the flow.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "device/dtype.h"
#include "device/layout.h"
#include "device/machine_desc.h"
#include "schedule_record.h"

namespace spyre {

enum class Place { DeviceInput, DeviceOutput, DeviceTemp, LX };
const char *place_name(Place p);

struct BufferInfo {
    std::string name;  // the Halide buffer (allocation) name
    std::string func;  // the Func or input it holds, for messages
    DType type = DType::F16;
    Place place = Place::LX;
    int64_t elems = 0;                // flat size in elements
    std::vector<int64_t> shape;       // device buffers: logical shape (Halide order)
    // Device temps: elements allocated past the end. A vector wider than the Func's rows (an int8
    // consumer's 128 lanes over fp16 rows of 64) reads whole sticks past the last row; only its
    // masked lanes see them (Halide keeps valid reads in range), but the transfer must stay inside
    // the buffer.
    int64_t slack_elems = 0;
    DeviceLayout layout;              // device buffers
    int program_buffer = -1;          // device buffers: index in the program's buffer table
    int32_t lx_offset = -1;           // LX buffers: assigned by allocate_lx
    int32_t copies = 1;               // LX staging buffers double-buffered by the pipeline: 2
    bool staging = false;             // an LX copy of device memory made by infer_dma: its padding
                                      // lanes map to the device image's padding, free to overwrite

    bool in_device_memory() const { return place != Place::LX; }
    int64_t bytes() const { return elems * dtype_bytes(type); }
    // The shape the device buffer is allocated with: `shape`, its last row followed by the slack.
    std::vector<int64_t> allocated_shape() const {
        std::vector<int64_t> s = shape;
        if (slack_elems > 0 && s.size() == 1) s[0] += slack_elems;
        return s;
    }
};

struct KernelPlan {
    std::string kernel_name;
    MachineDesc machine;
    int num_cores = 1;
    std::map<std::string, BufferInfo> buffers;
    int64_t lx_peak_bytes = 0;  // per core, set by allocate_lx
    // Loops whose DMA is double-buffered (set by plan_pipelines): the loop's For node -> LX buffers
    // that get two copies, one per iteration parity. Keyed by node: fission can repeat loop names.
    std::map<const void *, std::vector<std::string>> pipelines;
    // Of those buffers, the ones allocated outside their loop and loaded in place, a region per
    // iteration (a sliding window's new rows): prefetched without a second copy.
    std::set<std::string> in_place_tiles;
    bool extended_pipelines = true;  // plan_pipelines' mode (plan_pipelines.h)
    // Pipelined loops whose tiles travel over the ring (set by plan_ring_shares): the loop's For
    // node -> the run length G and the LX tiles that the first core of each run loads and forwards.
    struct RingShare {
        int group = 1;
        std::set<std::string> tiles;
    };
    std::map<const void *, RingShare> ring_shares;
    // Loads outside any pipeline that are shared the same way: the DMA statement's node -> the run
    // length G (set by plan_ring_shares when the marked loop is not double-buffered).
    std::map<const void *, int> ring_shared_loads;

    // The loops the schedule's directives gave a role (PE, ring share, DMA phases; set by
    // capture_stmt from the Funcs' records, schedule_record.h), by their names in the statement.
    LoopDirectives loops;

    // Funcs with an update definition and no compute level of their own (set by capture_stmt):
    // Halide computes each inside the innermost loop of its consumer, once per element read.
    std::set<std::string> per_element_updates;

    // Intermediates in device memory whose layout puts the stick count outside one of their other
    // dimensions (device_layout with a stick-count dimension; set by capture_stmt).
    struct StickCountPlace {
        int outside = 0;                 // the storage dim (innermost first) it goes just outside of
        std::vector<int> storage_dims;   // the Func's dim stored at each storage position
    };
    std::map<std::string, StickCountPlace> stick_count_outside;

    BufferInfo &buffer(const std::string &name);  // throws spyre::Error if unknown
    const BufferInfo &buffer(const std::string &name) const;
    bool has(const std::string &name) const { return buffers.count(name) != 0; }
    int64_t lanes(DType t) const { return machine.stick_bytes / dtype_bytes(t); }
};

}  // namespace spyre
