// Helpers shared by the KTIR tests: a KTIR text read and imported into a device program, and the
// folder of the hand-written kernels (tests/ktir/kernels).
#pragma once

#include <map>
#include <string>

#include "device/program.h"
#include "ktir_import.h"
#include "ktir_reader.h"
#include "test_paths.h"  // this test binary's paths (tests/CMakeLists.txt)

namespace spyre::ktir_testing {

inline DeviceProgram lower(const std::string &text, std::map<std::string, std::string> args = {}) {
    ktir::ImportOptions o;
    o.args = std::move(args);
    return ktir::import_ktir(ktir::read_ktir(text), o);
}

#ifdef KTIR_KERNELS
inline const std::string kDir = KTIR_KERNELS;
#endif

}  // namespace spyre::ktir_testing
