// The scalar instructions' semantics (LI .. NUM_CORES), in one place for the simulator and for the
// static work analysis that folds constant registers (program_work.h).
#pragma once

#include <cstdint>

#include "device/isa.h"

namespace spyre {

bool is_scalar_op(Opcode op);

// The value a scalar instruction writes to its destination register, given the register file.
// Registers wrap like 64-bit hardware registers. Returns false on a division by zero (DIV, REM).
bool eval_scalar(const Instr &in, const int64_t *regs, int64_t core_id, int64_t num_cores, int64_t *result);

}  // namespace spyre
