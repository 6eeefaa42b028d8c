// The target for CPU reference realisations: the host (on x86, its SSE4.1 and F16C only, which
// LLVM compiles faster; HL_JIT_TARGET, when set, is taken as it is), with StrictFloat so that Halide
// computes float expressions op by op as written (no fused multiply-add, no reassociated
// reductions) like the device does, and without Sapphire Rapids' AVX512-FP16 on CPUs that lack it (Halide 14
// mistakes AMD Zen 4 for Sapphire Rapids, and its fp16 code would then die with SIGILL). And the
// lowering pass that keeps a NaN a NaN in a reference's fp16 arithmetic.
#pragma once

#include "Halide.h"

namespace spyre {

// all_host_features: keep the host's whole ISA (for references compiled ahead of time, once, like
// spyre-gen's gengen `target=host`, whose code users may also run for speed).
Halide::Target cpu_reference_target(bool all_host_features = false);

// Halide 14 computes fp16 arithmetic in fp32 and narrows it with bit arithmetic that turns a NaN
// into an infinity of its sign (-inf - -inf gives -inf, not NaN), where IEEE arithmetic, and the
// device, give NaN. These add to f's (or p's) lowering a pass that narrows every fp16 operation's
// fp32 result to an fp16 NaN where it is one, else as Halide does. Reference realisations use it.
void keep_fp16_nans(Halide::Func &f);
void keep_fp16_nans(Halide::Pipeline &p);

}  // namespace spyre
