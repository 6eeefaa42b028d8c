// The .spyre file format: magic "SPYR", a format version, then tagged sections (HEAD, BUFS, DMAD,
// MMDS, CODE), all little-endian. The reader validates everything it reads and then the whole
// program (verify_program); a truncated, corrupt or hostile file is an Error naming the section and
// byte offset, never a crash, a hang or an unbounded allocation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "program.h"

namespace spyre {

std::vector<uint8_t> serialize_program(const DeviceProgram &program);
DeviceProgram parse_program(const uint8_t *data, size_t size);

void write_program_file(const DeviceProgram &program, const std::string &path);
DeviceProgram read_program_file(const std::string &path);

}  // namespace spyre
