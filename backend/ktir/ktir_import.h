// Lowers one KTIR function (a ktir::Module from ktir_reader) to a spyre::DeviceProgram, so that a
// kernel written for IBM's tools runs on our simulator. The mapping (docs/ktir.md):
//   - HBM memory views on the function's index arguments (or on constant addresses) are the
//     program's buffers: shape and element type from the view, device layout from its strides,
//     outputs are the buffers the kernel stores to; `grid` gives the core count.
//   - ktdp.load / ktdp.store between an HBM access tile and LX become DMA_LD / DMA_ST; tensors get
//     LX allocations (or live where an LX view puts them); arith / math / linalg ops on tensors
//     become vector-unit and PE instructions; scf.for / scf.if become LOOP / IF; index arithmetic
//     becomes scalar instructions; ktdp.get_compute_tile_id is CORE_ID.
//   - Synchronisation: KTIR is sequential, the device is not. By default the importer inserts the
//     WAITs that the LX ranges and buffers each pending instruction touches require. A function
//     with `spyre.sync = "explicit"` (what our exporter writes) instead carries the device
//     program's own completion tags (`spyre.tag` on stores) and waits (`spyre.wait` ops).
// Errors throw spyre::Error naming the op and its line. The result passes verify_program.
#pragma once

#include <map>
#include <string>

#include "device/machine_desc.h"
#include "device/program.h"
#include "ktir_ast.h"

namespace spyre::ktir {

struct ImportOptions {
    std::string func;                         // function to lower; empty: the module's only function
    std::map<std::string, std::string> args;  // scalar arguments by name (no %): index, integers, f16/f32
    MachineDesc machine;
};

DeviceProgram import_ktir(const Module &module, const ImportOptions &options);
// Reads and lowers a .ktir file.
DeviceProgram import_ktir_file(const std::string &path, const ImportOptions &options);

}  // namespace spyre::ktir
