// Structural validation of a device program, independent of any machine: opcodes and operand
// kinds (register numbers, tags, counts, descriptor and buffer indices), balanced LOOP/IF blocks,
// buffer declarations and layouts, descriptor sanity. verify_for_machine adds the checks that need
// a machine: core count, LX ranges of constant addresses, static device-memory extents of DMAs.
// Errors name the instruction index and opcode (or the buffer / descriptor) that is wrong.
#pragma once

#include "machine_desc.h"
#include "program.h"

namespace spyre {

void verify_program(const DeviceProgram &program);
void verify_for_machine(const DeviceProgram &program, const MachineDesc &machine);

}  // namespace spyre
