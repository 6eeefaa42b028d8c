// Where the timing model is validated, and whether a run stayed there. The calibration suite
// (apps/calibration/calibration_points.cpp) pins each mechanism of the model over a range of
// shapes and core counts; a kernel that leans on a mechanism outside that range, or on one no
// device measurement calibrates, gets a note naming the mechanism, the kernel's figure, the range
// and the points behind it. Times with no note are predictions; times with notes are
// extrapolations. spyre-run, spyre-bench, spyre-report and auto_schedule's printed C++ give the
// notes; docs/device_model.md
// ("Where the model is validated") lists every bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device/machine_desc.h"
#include "device/program.h"
#include "sim_stats.h"

namespace spyre {

struct ValidityNote {
    std::string key;      // short and stable, e.g. "short_tiles"
    std::string message;  // one line, with the kernel's figure, the validated range and its points
};

// One row of the envelope. Every figure the notes test lives in a row, once.
struct ValidityBound {
    const char *key;
    double threshold;  // the bound, in the row's unit (bytes, cores, rows or a share of the run)
    // The share of the run (on the busiest core) from which the mechanism counts: below it the
    // kernel's time hardly depends on it. 0: any use counts.
    double material;
    const char *validated;  // what the suite validates, in the user's terms; "{}" is the threshold
    std::vector<std::string> points;          // fitted calibration points that establish the bound
    std::vector<std::string> not_reproduced;  // unfitted points beyond it, which the note explains
    const char *beyond;  // what happens outside the range, or ""
};

// The envelope, one row per note key, in the order notes are reported.
const std::vector<ValidityBound> &validity_bounds();
const ValidityBound &validity_bound(const std::string &key);  // throws spyre::Error for an unknown key

// The notes for one run of `program` (its SimStats `stats`) on `machine`; empty when the kernel is
// inside the calibrated range. Computed from the program's static traffic (program_traffic) and the
// run's per-core engine time.
std::vector<ValidityNote> model_validity(const DeviceProgram &program, const SimStats &stats,
                                         const MachineDesc &machine);

// The transfer size of the kernel's streaming path (what short_tiles and short_transfers test): the
// size at most which half of its device-memory bytes move in, over every core's DMA_LD and DMA_ST
// (the bytes-weighted median), so that a few one-off loads (a broadcast operand, a bias) or a
// reduction's small result writes do not move it. 0 when the program moves nothing.
int64_t streaming_transfer_bytes(const DeviceProgram &program, const MachineDesc &machine);

// The notes' keys joined by `sep` ("short_tiles,ring"); "" when there are none.
std::string validity_keys(const std::vector<ValidityNote> &notes, const char *sep = ",");

// The notes as a bit per row of validity_bounds() (what a search worker sends its parent), and the
// keys of a mask's rows in the envelope's order.
uint32_t validity_mask(const std::vector<ValidityNote> &notes);
std::vector<std::string> validity_mask_keys(uint32_t mask);

}  // namespace spyre
