// A readable listing of a device program: buffers with shapes and layouts, descriptor tables, and
// the instruction stream indented by loop depth. Used for golden-file tests and by `spyre-run --dis`.
#pragma once

#include <string>

#include "program.h"

namespace spyre {

std::string disassemble(const DeviceProgram &program);

}  // namespace spyre
