// How one fuzz input stands for a Llama checkpoint (fuzz_llama_checkpoint and its seeds): a 2-byte
// little-endian length and config.json's text, a 2-byte length and the index's text (0: none, and
// the rest is model.safetensors), then, with an index, a 4-byte length and the first shard, and
// the rest as the second (model-00001-of-00002.safetensors, model-00002-of-00002.safetensors).
// Lengths past the end are cut to what is there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace spyre::fuzz {

struct CheckpointInput {
    std::string config, index;
    std::vector<std::pair<std::string, std::string>> files;
};

inline const char *kShard1 = "model-00001-of-00002.safetensors";
inline const char *kShard2 = "model-00002-of-00002.safetensors";

inline CheckpointInput decode_checkpoint_input(const uint8_t *data, size_t size) {
    size_t at = 0;
    auto take = [&](int bytes) {
        size_t n = 0;
        for (int i = 0; i < bytes && at < size; i++) n |= size_t(data[at++]) << (8 * i);
        n = std::min(n, size - at);
        std::string s(reinterpret_cast<const char *>(data) + at, n);
        at += n;
        return s;
    };
    auto rest = [&] { return std::string(reinterpret_cast<const char *>(data) + at, size - at); };
    CheckpointInput in;
    in.config = take(2);
    in.index = take(2);
    if (in.index.empty()) {
        in.files.push_back({"model.safetensors", rest()});
    } else {
        std::string first = take(4);
        in.files.push_back({kShard1, first});
        in.files.push_back({kShard2, rest()});
    }
    return in;
}

inline std::string encode_checkpoint_input(const CheckpointInput &in) {
    auto len = [](size_t n, int bytes) {
        std::string s;
        for (int i = 0; i < bytes; i++) s.push_back(char((n >> (8 * i)) & 0xff));
        return s;
    };
    std::string out = len(in.config.size(), 2) + in.config + len(in.index.size(), 2) + in.index;
    if (in.index.empty()) return out + in.files.at(0).second;
    return out + len(in.files.at(0).second.size(), 4) + in.files.at(0).second + in.files.at(1).second;
}

}  // namespace spyre::fuzz
