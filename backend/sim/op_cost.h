// Durations of vector-unit, PE-array and ring operations in cycles, from the machine description
// only. DMA time depends on the other cores' traffic (dram_model.h); what is here is a transfer's
// channel work, the share of it that depends on the descriptor alone.
#pragma once

#include "device/machine_desc.h"
#include "device/program.h"

namespace spyre {

// The throughput class of a vector opcode, as the machine description names them (OpInfo::rate).
inline VecClass vec_class(Opcode op) { return op_info(op).rate; }

// Sticks a vector instruction streams through the unit (the larger of input and output).
int64_t vector_sticks(const Instr &in, const MachineDesc &m);
double vector_cycles(const Instr &in, const MachineDesc &m);

// MACs the PE array performs for a matmul (n and k padded to whole sticks, as the array does).
// matmul_cycles adds the padding of m to whole passes and the pipeline fill (machine_desc.h).
// `t` is the MATMUL's element type: int8 operands pad to 128-element sticks and run at
// pe_int8_rate_factor times the fp16 rate.
int64_t matmul_padded_macs(const MatmulDesc &d, const MachineDesc &m, DType t = DType::F16);
double matmul_cycles(const MatmulDesc &d, const MachineDesc &m, DType t = DType::F16);

// Contiguous device-memory runs of one DMA: a dimension merges into the run below it while its
// stride equals that run's length.
int64_t dma_runs(const DmaDesc &d, const MachineDesc &m);
// Channel work of a DMA moving `bytes` in bytes at the peak: each run adds the read or write run
// overhead, and a core whose LX working set `lx_ws` exceeds lx_ws_knee_bytes pays
// (ws / knee)^lx_ws_exponent.
double dma_channel_work(const DmaDesc &d, int64_t bytes, bool store, int64_t lx_ws, const MachineDesc &m);

// One neighbour transfer of `bytes`, and a ring reduction of `bytes` per core over `cores` cores
// `hops_between` ring hops apart (a group of RING_REDUCE; 1: neighbours).
double ring_transfer_cycles(int64_t bytes, const MachineDesc &m);
double ring_reduce_cycles(int64_t bytes, int cores, const MachineDesc &m, int hops_between = 1);

}  // namespace spyre
