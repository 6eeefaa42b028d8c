// Reads a device program the way IBM's cost formula (ibm_formula.h) sees a kernel: its device
// traffic, its kind and its tile structure, all from the program's static work (program_traffic),
// never from a simulated run. Used by spyre-bench (counter formula_us) and spyre-report (column
// "formula").
//
// How each feature is read (docs/device_model.md, "IBM's formula beside the simulator"):
//   R, W       the program's DMA loads and stores (device-memory temporaries included, as IBM
//              counts spilled intermediates), except replicated operand reads, which count once
//   replicated a load whose device address no CORE_ID went into, issued by two or more cores,
//              reads the same bytes on each; in a matmul kernel those loads and the bytes a core
//              receives over the ring (IBM's compiler shares no operand over the ring: each core
//              loads what it consumes) are the per-core replicated reads
//   kind       MATMULs: matmul; VTRANSPOSE: restickify; an output smaller than the main input (the
//              largest) that reads more than 1.5x the elements it writes: a row or column
//              reduction (by whether the innermost dimension survives; a kernel reading a window
//              of a wider input, or gathering rows of a table, reads what it writes: pointwise);
//              lane reductions with an output as large: a fused reduction; an input smaller than
//              the output beside a full one: broadcast (a row operand if it spans the output's
//              innermost dimension); otherwise pointwise
//   rows, cols the main input's outer and innermost logical extents
//   tiles      a core that loads the main input in more than one DMA is row-tiled: h is the rows
//              of one load (rows as wide as the kernel reads them), the working set two such tiles
//   matmul     each core's MATMULs; A + B = the input buffers' bytes; the per-core output tile =
//              the largest output's elements over the cores; the program's own re-reads = R
//              beyond the inputs' bytes
#pragma once

#include "device/machine_desc.h"
#include "device/program.h"
#include "ibm_formula.h"

namespace spyre {

IbmKernel ibm_kernel(const DeviceProgram &program, const MachineDesc &machine);

// ibm_formula(ibm_kernel(program, machine), machine).
IbmFormula ibm_formula(const DeviceProgram &program, const MachineDesc &machine);

}  // namespace spyre
