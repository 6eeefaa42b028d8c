// The LX byte ranges an instruction reads and writes, resolved from its operands and the current
// register values. The simulator uses them for bounds and alignment checks, for race detection
// between engines and for the LX peak; the functional units assume they were checked.
#pragma once

#include <array>
#include <cstdint>

#include "device/machine_desc.h"
#include "device/program.h"

namespace spyre {

struct LxRange {
    int64_t begin = 0, end = 0;  // [begin, end) in bytes
    bool overlaps(const LxRange &o) const { return begin < o.end && o.begin < end; }
    bool empty() const { return end <= begin; }
};

struct LxAccess {
    std::array<LxRange, 3> reads{};
    int num_reads = 0;
    std::array<LxRange, 2> writes{};  // two for VREDARGMAX/VREDARGMIN (values and indices)
    int num_writes = 0;
};

// Ranges of a vector, MATMUL, DMA or ring instruction (empty for others). Throws spyre::Error naming
// the instruction index `pc`, the opcode and the operand if a range leaves [0, machine.lx_bytes) or
// a stick operand is not stick-aligned (element operands: element-aligned).
LxAccess lx_access(const DeviceProgram &program, const Instr &in, const int64_t *regs, const MachineDesc &machine,
                   size_t pc);

}  // namespace spyre
