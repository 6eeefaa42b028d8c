#include "safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "device/error.h"
#include "device/half.h"
#include "json_object.h"

namespace spyre::llama {

namespace {

using nlohmann::json;

// The safetensors library's own cap on the header (100 MB): a larger length is a broken file.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

int64_t dtype_bytes(const std::string &dtype) {
    static const std::map<std::string, int64_t> sizes = {
        {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2},  {"U16", 2}, {"F16", 2},
        {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8},  {"U64", 8}};
    auto it = sizes.find(dtype);
    return it == sizes.end() ? 0 : it->second;
}

const char *json_kind(const json &v) {
    if (v.is_number_float()) return "a non-integer number";
    if (v.is_number_unsigned() || v.is_number_integer()) return "an integer";
    return v.type_name();
}

// A non-negative integer that fits int64, or an Error naming `what`.
int64_t non_negative(const json &v, const std::string &what) {
    if (v.is_number_unsigned()) {
        const uint64_t u = v.get<uint64_t>();
        if (u <= uint64_t(std::numeric_limits<int64_t>::max())) return int64_t(u);
        throw_error(what, " is ", v.dump(), ", too large");
    }
    if (v.is_number_integer()) {
        const int64_t x = v.get<int64_t>();
        if (x >= 0) return x;
        throw_error(what, " is ", x, ", negative");
    }
    throw_error(what, " must be a non-negative integer, got ", json_kind(v), " ", v.dump().substr(0, 40));
}

std::string shape_text(const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

}  // namespace

int64_t SafetensorsEntry::elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;  // checked against overflow when the header is read
    return n;
}

// Where a file's bytes are: on disk (read at an offset) or in memory.
struct SafetensorsFile::Source {
    std::string path;   // empty: in memory
    std::string bytes;  // in memory
    int64_t size = 0;
    // `n` bytes at `offset`, or an Error naming the file.
    std::string read(int64_t offset, int64_t n, const std::string &name) const {
        if (offset < 0 || n < 0 || offset > size || n > size - offset)
            throw_error(name, ": bytes ", offset, "..", offset + n, " past the end of the file (", size,
                        " bytes): is it truncated?");
        if (path.empty()) return bytes.substr(size_t(offset), size_t(n));
        std::ifstream f(path, std::ios::binary);
        std::string out(size_t(n), '\0');
        if (!f || !f.seekg(offset) || !f.read(out.data(), std::streamsize(n)))
            throw_error(name, ": cannot read bytes ", offset, "..", offset + n, " (the file changed or is unreadable)");
        return out;
    }
};

SafetensorsFile SafetensorsFile::open(const std::string &path) {
    auto s = std::make_shared<Source>();
    s->path = path;
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw_error(path, ": cannot open: ", ec.message());
    if (std::filesystem::is_directory(path)) throw_error(path, ": a directory, not a safetensors file");
    s->size = int64_t(size);
    std::ifstream f(path, std::ios::binary);
    if (!f) throw_error(path, ": cannot open for reading");
    return parse(std::move(s), path);
}

SafetensorsFile SafetensorsFile::from_bytes(std::string bytes, const std::string &name) {
    auto s = std::make_shared<Source>();
    s->size = int64_t(bytes.size());
    s->bytes = std::move(bytes);
    return parse(std::move(s), name);
}

SafetensorsFile SafetensorsFile::parse(std::shared_ptr<Source> source, const std::string &name) {
    SafetensorsFile f;
    f.name_ = name;
    f.source_ = source;
    if (source->size < 8)
        throw_error(name, ": ", source->size, " bytes, shorter than the 8-byte header length a safetensors file starts with");
    const std::string len_bytes = source->read(0, 8, name);
    uint64_t n = 0;
    for (int i = 0; i < 8; i++) n |= uint64_t(uint8_t(len_bytes[size_t(i)])) << (8 * i);
    if (n > uint64_t(source->size - 8))
        throw_error(name, ": header length ", n, " reaches past the end of the file (", source->size,
                    " bytes): truncated, or not a safetensors file");
    if (n > kMaxHeaderBytes) throw_error(name, ": header length ", n, " over the format's limit of ", kMaxHeaderBytes);
    f.data_start_ = 8 + int64_t(n);
    const int64_t data_bytes = source->size - f.data_start_;
    json h;
    try {
        h = json::parse(source->read(8, int64_t(n), name));
    } catch (const json::exception &e) {
        throw_error(name, ": the header is not valid JSON: ", e.what());
    }
    if (!h.is_object()) throw_error(name, ": the header must be a JSON object of tensors, got ", h.type_name());
    for (auto it = h.begin(); it != h.end(); ++it) {
        const std::string &t = it.key();
        const json &v = it.value();
        const std::string where = name + ": tensor '" + t + "'";
        if (t == "__metadata__") {
            if (!v.is_object()) throw_error(name, ": __metadata__ must be an object of strings, got ", v.type_name());
            for (auto m = v.begin(); m != v.end(); ++m)
                if (!m.value().is_string())
                    throw_error(name, ": __metadata__ '", m.key(), "' must be a string, got ", json_kind(m.value()));
            continue;
        }
        if (!v.is_object()) throw_error(where, ": must be an object (dtype, shape, data_offsets), got ", v.type_name());
        for (const char *field : {"dtype", "shape", "data_offsets"})
            if (!v.contains(field)) throw_error(where, ": field ", field, " missing");
        SafetensorsEntry e;
        e.file = name;
        if (!v["dtype"].is_string()) throw_error(where, ": dtype must be a string, got ", json_kind(v["dtype"]));
        e.dtype = v["dtype"].get<std::string>();
        const int64_t width = dtype_bytes(e.dtype);
        if (!width) throw_error(where, ": dtype '", e.dtype.substr(0, 40), "' is not a safetensors dtype");
        if (!v["shape"].is_array()) throw_error(where, ": shape must be an array, got ", json_kind(v["shape"]));
        int64_t elements = 1;
        for (const json &d : v["shape"]) {
            e.shape.push_back(non_negative(d, where + ": shape entry"));
            if (e.shape.back() && elements > std::numeric_limits<int64_t>::max() / width / e.shape.back())
                throw_error(where, ": shape ", v["shape"].dump().substr(0, 80), " has more bytes than a file can hold");
            elements *= e.shape.back();
        }
        const json &off = v["data_offsets"];
        if (!off.is_array() || off.size() != 2)
            throw_error(where, ": data_offsets must be an array [begin, end], got ", off.dump().substr(0, 60));
        e.begin = non_negative(off[0], where + ": data_offsets begin");
        e.end = non_negative(off[1], where + ": data_offsets end");
        if (e.end < e.begin) throw_error(where, ": data_offsets [", e.begin, ", ", e.end, "] end before they begin");
        if (e.end > data_bytes)
            throw_error(where, ": data_offsets [", e.begin, ", ", e.end, "] reach past the end of the data (", data_bytes,
                        " bytes after the header): is the file truncated?");
        if (e.end - e.begin != elements * width)
            throw_error(where, ": ", e.dtype, " of shape ", shape_text(e.shape), " is ", elements * width,
                        " bytes, but data_offsets [", e.begin, ", ", e.end, "] hold ", e.end - e.begin);
        f.tensors_.emplace(t, std::move(e));
    }
    // No two tensors share bytes (empty tensors take none).
    std::vector<const std::pair<const std::string, SafetensorsEntry> *> by_begin;
    for (const auto &kv : f.tensors_)
        if (kv.second.end > kv.second.begin) by_begin.push_back(&kv);
    std::sort(by_begin.begin(), by_begin.end(), [](auto *a, auto *b) {
        return a->second.begin != b->second.begin ? a->second.begin < b->second.begin : a->first < b->first;
    });
    for (size_t i = 1; i < by_begin.size(); i++)
        if (by_begin[i]->second.begin < by_begin[i - 1]->second.end)
            throw_error(name, ": tensors '", by_begin[i - 1]->first, "' (data_offsets [", by_begin[i - 1]->second.begin,
                        ", ", by_begin[i - 1]->second.end, "]) and '", by_begin[i]->first, "' ([",
                        by_begin[i]->second.begin, ", ", by_begin[i]->second.end, "]) overlap");
    return f;
}

std::vector<float> SafetensorsFile::read_floats(const std::string &tensor) const {
    auto it = tensors_.find(tensor);
    if (it == tensors_.end()) throw_error(name_, ": no tensor '", tensor, "'");
    const SafetensorsEntry &e = it->second;
    if (e.dtype != "F16" && e.dtype != "BF16" && e.dtype != "F32")
        throw_error(name_, ": tensor '", tensor, "' is ", e.dtype, "; the model reads F16, BF16 or F32");
    const std::string bytes = source_->read(data_start_ + e.begin, e.end - e.begin, name_);
    const size_t width = size_t(dtype_bytes(e.dtype)), n = bytes.size() / width;
    std::vector<float> out(n);
    const auto *b = reinterpret_cast<const uint8_t *>(bytes.data());
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = b + i * width;
        if (e.dtype == "F32") {
            const uint32_t u = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
            std::memcpy(&out[i], &u, 4);
        } else {
            const uint16_t h = uint16_t(p[0] | p[1] << 8);
            if (e.dtype == "F16") {
                out[i] = half_to_float(h);
            } else {
                const uint32_t u = uint32_t(h) << 16;  // bfloat16: the top half of an fp32
                std::memcpy(&out[i], &u, 4);
            }
        }
    }
    return out;
}

std::map<std::string, std::string> read_safetensors_index(const std::string &text, const std::string &origin) {
    json j = parse_json_object(text, origin);
    if (!j.contains("weight_map")) throw_error(origin, ": field weight_map missing");
    const json &m = j["weight_map"];
    if (!m.is_object()) throw_error(origin, ": weight_map must be an object of tensor: file, got ", m.type_name());
    std::map<std::string, std::string> out;
    for (auto it = m.begin(); it != m.end(); ++it) {
        if (!it.value().is_string())
            throw_error(origin, ": weight_map '", it.key(), "' must be a file name string, got ", json_kind(it.value()));
        const std::string file = it.value().get<std::string>();
        // A shard lies beside the index: a plain file name, no directories.
        if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos ||
            file.find('\\') != std::string::npos || file.find('\0') != std::string::npos)
            throw_error(origin, ": weight_map '", it.key(), "' names '", file.substr(0, 80),
                        "', not a file name in the checkpoint's directory");
        out[it.key()] = file;
    }
    return out;
}

void SafetensorsSet::add(SafetensorsFile f, const std::map<std::string, std::string> *weight_map) {
    const size_t index = files_.size();
    for (const auto &kv : f.tensors()) {
        // With an index, a tensor is read from the shard the index names for it (others are ignored).
        if (weight_map) {
            auto w = weight_map->find(kv.first);
            if (w == weight_map->end() || w->second != f.name().substr(f.name().find_last_of('/') + 1)) continue;
        }
        where_[kv.first] = index;
    }
    files_.push_back(std::move(f));
}

SafetensorsSet SafetensorsSet::open_dir(const std::string &dir) {
    namespace fs = std::filesystem;
    SafetensorsSet s;
    const fs::path index = fs::path(dir) / "model.safetensors.index.json", single = fs::path(dir) / "model.safetensors";
    std::error_code ec;
    if (fs::exists(index, ec)) {
        s.origin_ = index.string();
        std::ifstream f(index, std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        if (!f && !f.eof()) throw_error(index.string(), ": cannot read");
        const std::map<std::string, std::string> map = read_safetensors_index(text, index.string());
        std::vector<std::string> shards;
        for (const auto &kv : map)
            if (std::find(shards.begin(), shards.end(), kv.second) == shards.end()) shards.push_back(kv.second);
        for (const std::string &shard : shards) {
            const fs::path p = fs::path(dir) / shard;
            if (!fs::exists(p, ec))
                throw_error(index.string(), ": names shard ", shard, ", which is not in ", dir);
            s.add(SafetensorsFile::open(p.string()), &map);
        }
        for (const auto &kv : map)
            if (!s.where_.count(kv.first))
                throw_error(index.string(), ": tensor '", kv.first, "' is in shard ", kv.second, " by the index, but not in the shard");
        return s;
    }
    if (fs::exists(single, ec)) {
        s.origin_ = single.string();
        s.add(SafetensorsFile::open(single.string()), nullptr);
        return s;
    }
    throw_error(dir, ": neither model.safetensors nor model.safetensors.index.json (with its shards) is there");
}

SafetensorsSet SafetensorsSet::from_memory(const std::vector<std::pair<std::string, std::string>> &files,
                                           const std::string &index_json) {
    SafetensorsSet s;
    if (index_json.empty()) {
        if (files.size() != 1) throw_error("safetensors: ", files.size(), " files and no index to say which holds what");
        s.origin_ = files[0].first;
        s.add(SafetensorsFile::from_bytes(files[0].second, files[0].first), nullptr);
        return s;
    }
    s.origin_ = "model.safetensors.index.json";
    const std::map<std::string, std::string> map = read_safetensors_index(index_json, s.origin_);
    std::vector<std::string> shards;
    for (const auto &kv : map)
        if (std::find(shards.begin(), shards.end(), kv.second) == shards.end()) shards.push_back(kv.second);
    for (const std::string &shard : shards) {
        auto it = std::find_if(files.begin(), files.end(), [&](const auto &f) { return f.first == shard; });
        if (it == files.end()) throw_error(s.origin_, ": names shard ", shard, ", which is not given");
        s.add(SafetensorsFile::from_bytes(it->second, it->first), &map);
    }
    for (const auto &kv : map)
        if (!s.where_.count(kv.first))
            throw_error(s.origin_, ": tensor '", kv.first, "' is in shard ", kv.second, " by the index, but not in the shard");
    return s;
}

const SafetensorsEntry *SafetensorsSet::find(const std::string &tensor) const {
    auto it = where_.find(tensor);
    if (it == where_.end()) return nullptr;
    return &files_[it->second].tensors().at(tensor);
}

std::vector<float> SafetensorsSet::read_floats(const std::string &tensor) const {
    auto it = where_.find(tensor);
    if (it == where_.end()) throw_error(origin_, ": no tensor '", tensor, "'");
    return files_[it->second].read_floats(tensor);
}

}  // namespace spyre::llama
