// Writes a device program as KTIR text (IBM's ktdp MLIR dialect, RFC 0682) that import_ktir lowers
// back to the same program: the same buffers, core count, instructions, tags and waits, so the same
// numbers and (within a few scalar instructions) the same modelled time. The form (docs/ktir.md):
//   - each buffer is an index argument (its base address) with an HBM memory view of its logical
//     shape and stick-padded strides; `grid = [cores]`; CORE_ID is ktdp.get_compute_tile_id;
//   - scalar registers become index SSA values (LOOP -> scf.for, IF -> scf.if, with the registers a
//     block changes carried as iter_args / results);
//   - every LX operand is an LX memory view at its address (elements of its type, shifted by
//     spyre.lx_offset when ExportOptions asks) and an access tile;
//     DMAs load a tile of an HBM view at the transfer's address and store it to an LX tile (or back);
//     vector and PE instructions load LX tiles, compute with arith / math / linalg, and store the
//     result tile;
//   - the device's asynchrony is kept explicit: `spyre.sync = "explicit"` on the function, the
//     completion tag as `spyre.tag` on each store, and WAIT / BARRIER / ring transfers as generic
//     ops of our `spyre` namespace (docs/ktir.md). A reader that ignores them sees KTIR's sequential
//     semantics, which give the same results.
// Throws spyre::Error naming an instruction (index and opcode) that has no KTIR form.
#pragma once

#include <string>

#include "device/machine_desc.h"
#include "device/program.h"

namespace spyre::ktir {

struct ExportOptions {
    // The highest LX byte the program touches on any core (the simulator's lx_peak_bytes), or 0.
    // Given, the program's LX moves to the top of LX, [lx_bytes - high water rounded down to a
    // stick, lx_bytes), and the shift is written as the function's spyre.lx_offset (bytes), which
    // import_ktir subtracts. IBM's interpreter (ktir-cpu) keeps every loaded or computed tensor in
    // LX too, allocated from address 0 up; at the bottom, the program's own LX views would be
    // overwritten by them (docs/ktir.md, "LX placement").
    int64_t lx_high_water_bytes = 0;
};

std::string export_ktir(const DeviceProgram &program, const MachineDesc &machine = {},
                        const ExportOptions &options = {});

}  // namespace spyre::ktir
