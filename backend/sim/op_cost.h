// Durations of vector-unit, PE-array and ring operations in cycles, from the machine description
// only. DMA time is not here: it depends on the other cores' traffic (dram_model.h).
#pragma once

#include "device/machine_desc.h"
#include "device/program.h"

namespace spyre {

// The throughput class of a vector opcode, as the machine description names them.
enum class VecClass { AddMul, MinMax, Transcendental, Reduce, Convert, Restickify };
VecClass vec_class(Opcode op);

// Sticks a vector instruction streams through the unit (the larger of input and output).
int64_t vector_sticks(const Instr &in, const MachineDesc &m);
double vector_cycles(const Instr &in, const MachineDesc &m);

// MACs the PE array performs for a matmul (n and k padded to whole sticks, as the array does).
int64_t matmul_padded_macs(const MatmulDesc &d, const MachineDesc &m);
double matmul_cycles(const MatmulDesc &d, const MachineDesc &m);

// One neighbour transfer of `bytes`, and an all-core ring reduction of `bytes` per core.
double ring_transfer_cycles(int64_t bytes, const MachineDesc &m);
double ring_reduce_cycles(int64_t bytes, int cores, const MachineDesc &m);

}  // namespace spyre
