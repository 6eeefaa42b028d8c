// Instruction selection: turns the Spyre-ready Stmt (device memory reached only through DMA
// intrinsics, LX buffers placed, cores mapped) into the device program. Loop nests over whole
// sticks collapse into counted vector instructions (sticks x groups); a reduction over a row
// becomes a lane reduction; scalar loops over consecutive elements run as element vectors;
// pipelined loops are double-buffered with their DMA issued one iteration ahead; WAITs are placed
// from the buffers each engine is still using. Errors name the Func and what has no Spyre form.
#pragma once

#include "Halide.h"
#include "device/program.h"
#include "kernel_plan.h"

namespace spyre {

// Device buffer table order: the plan's inputs (in `input_order`), the outputs (in the pipeline's
// order), then temporaries.
DeviceProgram select_instructions(const Halide::Internal::Stmt &s, KernelPlan &plan,
                                  const std::vector<std::string> &input_order, const std::vector<std::string> &outputs);

}  // namespace spyre
