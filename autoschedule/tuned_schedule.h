// A search's result as the tuning database stores it (tuning_db.h): the chosen directives with
// canonical names (auto_fingerprint.h), the layouts chosen for the arguments, and the figures the
// search reported, as JSON text. Decoding checks every field, since a database file is input from
// outside: a malformed entry is a spyre::Error naming the field, never a crash.
#pragma once

#include <string>
#include <vector>

#include "directive.h"
#include "device/layout.h"

namespace spyre::autosched {

struct TunedSchedule {
    std::vector<Directive> directives;     // canonical names
    std::vector<DeviceLayout> layouts;     // per input, then the output
    double us = 0;
    bool exact = false;
    std::vector<std::string> validity;  // the model's validity note keys (an entry without them: unknown)
    bool validity_known = false;
    std::string family, summary;
    int64_t candidates = 0, timed = 0, failed = 0;
    double search_seconds = 0;
};

std::string encode_tuned_schedule(const TunedSchedule &t);
// Throws spyre::Error ("tuning database entry: <field> ...") on anything malformed.
TunedSchedule decode_tuned_schedule(const std::string &json_text);

}  // namespace spyre::autosched
