// libFuzzer: a .spyre file from outside. The reader and verifier must reject anything bad with a
// spyre::Error; a file they accept must run in the simulator (functional and timing-only) to a
// result or a spyre::Error, within bounded work: never a crash, a sanitizer report or a hang. The
// static work analysis and time bound (program_work.h) must likewise accept or refuse any verified
// program.
#include <cstdint>
#include <vector>

#include "fuzz_run.h"
#include "device/error.h"
#include "device/program_io.h"
#include "device/program_verify.h"
#include "sim/program_work.h"
#include "sim/simulator.h"

namespace {

constexpr int64_t kMaxImageBytes = int64_t(16) << 20;  // skip functional runs of huge buffers

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace spyre;
    DeviceProgram p;
    try {
        p = parse_program(data, size);
    } catch (const Error &) {
        return 0;
    }
    const MachineDesc m;
    // The static work analysis on its own, for every program the verifier accepts (the
    // simulator computes it only before functional runs, which large buffers skip here).
    try {
        verify_for_machine(p, m);
        (void)program_work(p, m);
        (void)time_lower_bound_us(p, m);
    } catch (const Error &) {
    }
    fuzz::run_both_modes(p, m, kMaxImageBytes, int64_t(1) << 26);
    return 0;
}
