// A JSON object read from a file's text (a checkpoint's config.json, a shard index), for the
// checkpoint readers: malformed JSON and any other top-level value are spyre::Errors naming the
// file.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "device/error.h"

namespace spyre::llama {

inline nlohmann::json parse_json_object(const std::string &text, const std::string &origin) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception &e) {
        throw_error(origin, ": not valid JSON: ", e.what());
    }
    if (!j.is_object()) throw_error(origin, ": must be a JSON object, got ", j.type_name());
    return j;
}

}  // namespace spyre::llama
