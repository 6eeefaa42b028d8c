// libFuzzer: a tuning database's stored result (autoschedule/tuned_schedule.h), which comes from a
// file outside the program. decode_tuned_schedule must reject a malformed one with a spyre::Error;
// a good one must encode and decode to the same records.
#include <cstdint>
#include <string>

#include "device/error.h"
#include "tuned_schedule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace spyre::autosched;
    TunedSchedule t;
    try {
        t = decode_tuned_schedule(std::string(reinterpret_cast<const char *>(data), size));
    } catch (const spyre::Error &) {
        return 0;
    }
    const std::string again = encode_tuned_schedule(t);
    if (encode_tuned_schedule(decode_tuned_schedule(again)) != again) __builtin_trap();
    return 0;
}
