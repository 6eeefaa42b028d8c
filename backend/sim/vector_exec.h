// Functional units: the numerics of vector-unit and PE-array instructions on one core's LX, with
// IEEE fp16 (round-to-nearest-even after each op, computed through fp32) and fp32 semantics, and the
// element-wise combine used by ring reductions. Bounds are checked beforehand by lx_access().
#pragma once

#include <cstdint>

#include "device/machine_desc.h"
#include "device/program.h"
#include "device/program_builder.h"

namespace spyre {

// Executes a vector instruction (VADD ... VTRANSPOSE).
void exec_vector(const Instr &in, const int64_t *regs, uint8_t *lx, const MachineDesc &machine);

// Executes MATMUL with descriptor `d`: C (fp32) (+)= A (fp16) x B (fp16), fp32 accumulation in k order;
// with the instruction's type int8, C (int32) (+)= A (int8) x B (int8), summed exactly, wrapping.
void exec_matmul(const Instr &in, const MatmulDesc &d, const int64_t *regs, uint8_t *lx);

// acc[i] = op(acc[i], src[i]) over `bytes` bytes of elements of type t (fp16 rounded per step).
void combine_elements(RedOp op, DType t, uint8_t *acc, const uint8_t *src, int64_t bytes);

}  // namespace spyre
