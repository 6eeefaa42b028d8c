// Registers that a loop carries across its back edge. A register read in a loop's body before the
// same iteration has surely written it holds, from the second iteration on, what the previous
// iteration left in it: either a value the loop means to carry (an induction or accumulator
// register) or a value from before the loop that must survive every iteration. Writing the
// latter inside the body is a register-allocation error that no verifier of single instructions
// sees; a code generator that knows which registers it carries checks its loops with this.
#pragma once

#include <cstddef>
#include <vector>

#include "isa.h"

namespace spyre {

// A write, inside a loop's body, to a register that is live at the head of the body.
struct LoopHeadWrite {
    int reg = 0;
    size_t pc = 0;  // the writing instruction
};

// The writes in the body of the LOOP at `loop_pc` (up to its matching ENDLOOP, which must exist)
// to registers that the body reads before writing them in the same iteration. The loop's own
// induction register is written by the loop at the start of each iteration and is not reported.
// A nested LOOP's body or one branch of an IF may not run, so writes there do not count as sure.
std::vector<LoopHeadWrite> loop_head_writes(const std::vector<Instr> &code, size_t loop_pc);

}  // namespace spyre
