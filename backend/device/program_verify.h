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

// The parts verify_program checks, in its order: a file reader checks them one by one to name the
// section of the file that is wrong (program_io.cpp), never by reading the message.
enum class VerifiedPart { Head, Buffers, DmaDescriptors, MatmulDescriptors, Code };
inline constexpr VerifiedPart kVerifiedParts[] = {VerifiedPart::Head, VerifiedPart::Buffers, VerifiedPart::DmaDescriptors,
                                                VerifiedPart::MatmulDescriptors, VerifiedPart::Code};
void verify_program_part(const DeviceProgram &program, VerifiedPart part);
void verify_for_machine(const DeviceProgram &program, const MachineDesc &machine);

}  // namespace spyre
