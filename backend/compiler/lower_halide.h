// Halide's lowering of a pipeline, down to the Stmt the Spyre back end starts from. It runs the
// passes of Halide 14's own lowering (Internal::lower), in the same order, but not those whose
// work only a CPU build uses: the buffer checks (the argument shapes are fixed, so their
// constraints are substituted instead), atomic mutexes where no Func asks for them, the bounding
// of small realizations before flattening where no Func is stored in registers, AMX tile
// operations, and everything after the last simplification (argument inference, parallel tasks,
// the Module). Leaving them out saves work: lowering is most of the autoscheduler's time
// (docs/auto_schedule.md, "How it searches"). It also leaves out Halide's search for vector
// intrinsics (find_intrinsics), which rewrites some wrapping integer arithmetic into a form that
// computes other numbers than the scalar code the reference runs. With find_intrinsics applied,
// the Stmt is the one Pipeline::compile_to_module hands a custom lowering pass
// (tests/compiler/test_lower_halide.cpp checks).
#pragma once

#include <string>
#include <vector>

#include "Halide.h"

namespace spyre {

// The target the back end lowers for: one fixed target (64-bit x86 Linux, no CPU features), so
// that the device program does not depend on the machine that compiles it; without asserts or
// bounds queries, and with StrictFloat: the device computes op by op as written (IEEE), so Halide
// must not reassociate or rewrite float arithmetic (x*x + 2x into (x+2)*x, s/1000 into s*0.001) on
// its way down.
Halide::Target spyre_lowering_target();

// Lowers `pipeline` for `target`; `args` are every input (buffers, and scalar Params the schedule
// uses). Throws Halide's CompileError or InternalError as compile_to_module would, and
// spyre::Error when the pipeline reads a parameter that is not in `args`. With `lowered`, also
// gives every Function the statement was lowered from (the pipeline's copy, wrappers included).
Halide::Internal::Stmt lower_halide(const Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                                    const std::string &name, const Halide::Target &target,
                                    std::map<std::string, Halide::Internal::Function> *lowered = nullptr);

}  // namespace spyre
