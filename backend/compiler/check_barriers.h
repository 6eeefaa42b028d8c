// Barrier agreement: every core runs the same program, but IFs on the core index (the last core of
// an uneven split takes fewer rows) send cores down different paths. A BARRIER waits for every
// core, so each path must meet the same number of them, or the cores that meet more wait forever.
// This check counts the barriers on each path of the selected program, statically (loops by their
// constant counts), and refuses a kernel whose paths disagree, naming the IF.
#pragma once

#include <string>

#include "device/program.h"

namespace spyre {

// Throws spyre::Error naming `kernel` and the first IF whose branches meet different numbers of
// barriers. A loop counted by a register that holds a barrier cannot be counted and is refused too.
void check_barriers(const DeviceProgram &program, const std::string &kernel);

}  // namespace spyre
