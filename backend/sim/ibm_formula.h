// IBM's published cost formula for a Spyre kernel, as a second instrument beside the simulator.
//
// torch-spyre's analytical cost model (_inductor/cost_model.py, docs/source/compiler/cost_model.md)
// prices one fused kernel from its device-memory traffic and work, fitted to hundreds of
// whole-kernel device timings. Where the simulator is much faster than this formula on a kernel
// structure IBM measured, the difference needs a mechanism the formula lacks (ring sharing of
// operands, which IBM's compiler does not use, is one) or it is a model bug (docs/device_model.md,
// "IBM's formula beside the simulator"). Nothing here feeds the simulator's timing.
//
// The rows of SPYRE_FACTS.md it implements, every constant from MachineDesc (docs/machine.md):
//   channel law      (R + W) / dram_bytes_per_ns + dram_turnaround_ns_per_byte x min(R, W)
//   row reduction    (R + W) / min(peak, 114 + 61 exp(-rows / 3700)) GB/s, times the fewer-core
//                    fraction (1: 0.11 ... 16: 0.54, 32: 1)
//   column reduction (R + W) / 113 GB/s;   restickify (R + W) / 116 GB/s
//   broadcast operand (R + W) / 118 GB/s; from 1024 rows 183.5 - 2.8 log2(cols) - 2.6 log2(rows)
//                    (row operand) or 162 - 1.8 log2(cols) - 2.2 log2(rows) (scalar or column)
//   underfill        a row-tiled kernel's memory term / min(1.08, (h / 7.9)^0.50 (cols / 2048)^0.38),
//                    h = rows per core per tile (below IBM's smallest fitted value 0.248 the
//                    efficiency decays as 0.248 (eff / 0.248)^0.1, as cost_model.py does)
//   working set      and / (512 KB / ws)^0.06 when the per-core working set ws (two live tiles)
//                    exceeds 512 KB
//   PE array         per MATMUL of m rows: round_up(m, 8) n k / (1140 MAC/ns x min(1, (m / 64)^0.35))
//   matmul re-read   extra (A + B bytes) x min(1.5, 0.45 log2(area / 65536)) at the one-way peak,
//                    area = the per-core output tile
//   replicated reads operand bytes each consumer core loads itself, at 2.3 GB/s per core
//   overlap          a matmul takes between max(compute, memory) and compute + memory; the point
//                    reported is max + ibm_mm_overlap_exposed x min (the midpoint)
// Not implemented: the stick-plane transports, the written-run penalty, the LX-to-LX relayout and
// the matmul split-shape term (our programs state their blocking; see ibm_kernel.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "device/machine_desc.h"

namespace spyre {

// Which of IBM's rates prices the kernel's device-memory traffic.
enum class IbmKernelKind {
    Pointwise,        // the channel law
    FusedReduction,   // reductions inside a kernel whose output is as large as its input (softmax, norms): the channel law
    RowReduction,     // standalone reduction along the row (the stick dimension)
    ColumnReduction,  // standalone reduction over rows
    Broadcast,        // a full input plus a smaller operand broadcast over it
    Restickify,       // a transpose between stick layouts
    Matmul,           // PE work: compute and memory, partly overlapped
};
const char *ibm_kernel_kind_name(IbmKernelKind k);

// What the formula reads about a kernel: its traffic and work, statically known.
struct IbmKernel {
    IbmKernelKind kind = IbmKernelKind::Pointwise;
    int64_t cores = 1;        // cores the kernel runs on
    double read_bytes = 0;    // R: device-memory reads, replicated operand reads excluded
    double write_bytes = 0;   // W: device-memory writes
    double rows = 0, cols = 0;  // the main tensor: rows (outer dimensions) x cols (innermost)
    bool row_operand = false;   // Broadcast: the small operand is a row (else a scalar or column)
    double tile_rows = 0;        // h, rows per core per tile of a row-tiled kernel; 0 = not tiled
    double working_set_bytes = 0;  // per core, two live tiles; 0 = not tiled
    // Matmul: MATMULs each core issues ({m, n, k} -> count), the operands' compulsory bytes
    // (A + B, each read once), the per-core output tile (elements) and the reads the program
    // already makes beyond the compulsory ones (its own blocking's re-reads).
    std::vector<std::map<std::array<int32_t, 3>, int64_t>> core_matmuls;
    double operand_bytes = 0;
    double output_tile_elems = 0;
    double program_reread_bytes = 0;
    double replicated_bytes_per_core = 0;  // the most any core loads of operands other cores also load
};

// Every term, in ns, and the total.
struct IbmFormula {
    double rate_bytes_per_ns = 0;  // the kind's flat rate (0: the channel law prices the traffic)
    double channel_ns = 0;         // R and W at that rate, or under the channel law
    double underfill_eff = 1, working_set_factor = 1;  // memory is channel / eff / factor
    double reread_ns = 0;          // matmul operand re-read beyond the program's own
    double replicated_ns = 0;      // replicated operand reads
    double memory_ns = 0;          // channel / eff / factor + reread + replicated
    double compute_ns = 0;         // PE array, the busiest core
    double overlap_lo_ns = 0, overlap_hi_ns = 0;  // max(compute, memory) .. compute + memory
    double total_ns = 0;           // the reported point in that range (memory_ns when no compute)
};

IbmFormula ibm_formula(const IbmKernel &k, const MachineDesc &m);

// The terms one by one (ibm_formula composes them).
double ibm_channel_ns(double read_bytes, double write_bytes, const MachineDesc &m);
double ibm_row_reduction_rate(double rows, int64_t cores, const MachineDesc &m);  // bytes/ns
double ibm_broadcast_rate(double rows, double cols, bool row_operand, const MachineDesc &m);  // bytes/ns
double ibm_underfill_eff(double tile_rows, double cols, const MachineDesc &m);
double ibm_working_set_factor(double working_set_bytes, const MachineDesc &m);  // <= 1
double ibm_matmul_ns(int64_t rows, int64_t n, int64_t k, const MachineDesc &m);  // one MATMUL
double ibm_reread_fraction(double output_tile_elems, const MachineDesc &m);

}  // namespace spyre
