// Arguments whose stick dimension is not dim 0: a PyTorch linear's weight [N, K] as torch-spyre
// stores it, sticked on K, for a kernel that reads it sticked on N (the PE array's B operand, and
// every stick-vectorized loop over dim 0). The kernel is compiled for the argument sticked on dim
// 0 (kernel_options), and a restickify is put before it (an input) or after it (an output) on the
// same cores: each core transposes its share of the tensor in tiles of whole sticks (DMA in,
// VTRANSPOSE at the machine's restickify rate, DMA out) between the argument and a device-memory
// copy in the kernel's layout. Its time is the program's, so a layout that needs a relayout pays
// for it wherever the program is timed. Rank 2, fp16, both dims whole sticks; errors say which.
#pragma once

#include "compile.h"

namespace spyre {

// Whether any argument of `options` is sticked on another dim than dim 0.
bool needs_restickify(const CompileOptions &options);

// `options` with each such argument in the default layout (what the kernel is compiled for).
CompileOptions kernel_options(const CompileOptions &options);

// The program that restickifies the arguments `options` gives in another stick dim around
// `kernel` (compiled with kernel_options(options)): its buffers are the kernel's, in order, in the
// layouts `options` gives, and a device-memory copy of each restickified argument after them.
DeviceProgram restickify_arguments(const DeviceProgram &kernel, const CompileOptions &options);

}  // namespace spyre
