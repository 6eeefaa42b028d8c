// Random differential testing of the compiler, in the spirit of Csmith: a seed picks a random Halide
// pipeline (pointwise chains over the supported ops and types, a row or column reduction or a
// second pointwise stage, odd shapes) and a random valid Spyre schedule for it (stick widths, LX
// or device-memory placement of the intermediate, ring splits). Each case is compiled, run on the
// simulator and compared with Halide's CPU realisation; a failing case shrinks to a smaller one
// that still fails and prints as C++ a person can paste into a test.
#pragma once

#include <cstdint>
#include <string>

namespace spyre::fuzzdiff {

// Every choice a case makes, so that it can be rebuilt, shrunk and printed.
struct Case {
    uint32_t seed = 0;
    int cols = 64, rows = 1;
    int bits = 16;          // element type: float16 or float32
    int inputs = 1;         // 1 or 2 full-size inputs
    std::string expr;       // the first stage, p(x, y), in a small prefix language (see .cpp)
    enum class Tail { None, Pointwise, RowSum, RowMax, ColSum, ColMax } tail = Tail::None;
    enum class Place { Inline, LxAtOutput, DeviceRoot } place = Place::Inline;  // of p, when there is a tail
    int cores = 1;          // ring split of the output's outer dimension
};

Case random_case(uint32_t seed);

struct Outcome {
    enum class Kind { Match, Mismatch, Rejected } kind = Kind::Match;
    std::string detail;  // the mismatch or the compile error
};

// Compiles and runs `c` on the simulator and compares it with the CPU. A schedule the back end
// rejects with a clear error is Rejected, not a failure.
Outcome run_case(const Case &c);

// Simplifies a failing case while it still fails: fewer stages, simpler schedule, smaller shape.
Case shrink(const Case &c);

// The case as a self-contained C++ snippet (algorithm, schedule, compile options).
std::string reproducer(const Case &c);

std::string describe(const Case &c);

}  // namespace spyre::fuzzdiff
