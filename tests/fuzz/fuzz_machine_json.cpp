// libFuzzer: a machine-description JSON file from outside. Anything but a valid description must
// be a spyre::Error naming the problem; a valid one must write and read back to the same values.
#include <cstdint>
#include <string>

#include "device/error.h"
#include "device/machine_desc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace spyre;
    MachineDesc m;
    try {
        m = MachineDesc::from_json_text(std::string(reinterpret_cast<const char *>(data), size), "fuzz.json");
    } catch (const Error &) {
        return 0;
    }
    MachineDesc back = MachineDesc::from_json_text(m.to_json_text(), "round trip");
    if (back.to_json_text() != m.to_json_text()) __builtin_trap();
    return 0;
}
