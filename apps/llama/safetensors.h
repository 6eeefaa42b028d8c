// Hugging Face's safetensors format, read: one file, or a checkpoint's shards named by its
// model.safetensors.index.json. A file is an 8-byte little-endian header length N, N bytes of JSON
// ({"<tensor>": {"dtype": "F16", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
// offsets relative to the data after the header), then the data. The header is read and checked
// when a file is opened (every entry's fields and types, dtype, shape, offsets inside the data and
// not overlapping, the byte count the shape and dtype make); a tensor's bytes are read when asked
// for, as floats (F16, BF16 and F32; other dtypes are listed but refused when read). Every refusal
// is a spyre::Error naming the file, the tensor and the field. No Halide, no device.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace spyre::llama {

struct SafetensorsEntry {
    std::string file;            // the file that holds it (its name as given)
    std::string dtype;           // "F16", "BF16", "F32", ...
    std::vector<int64_t> shape;  // outermost first (PyTorch order)
    int64_t begin = 0, end = 0;  // bytes, from the start of the file's data
    int64_t elements() const;
};

// One safetensors file: its header read and checked; its data read on demand.
class SafetensorsFile {
public:
    // Reads and checks the header of the file at `path`.
    static SafetensorsFile open(const std::string &path);
    // The same over bytes in memory (`name` stands for the file in messages).
    static SafetensorsFile from_bytes(std::string bytes, const std::string &name);

    const std::string &name() const { return name_; }
    const std::map<std::string, SafetensorsEntry> &tensors() const { return tensors_; }
    // The tensor's values as floats; spyre::Error if the file has no such tensor, its dtype is not
    // F16, BF16 or F32, or its bytes cannot be read.
    std::vector<float> read_floats(const std::string &tensor) const;

private:
    struct Source;
    static SafetensorsFile parse(std::shared_ptr<Source> source, const std::string &name);
    std::string name_;
    std::shared_ptr<Source> source_;
    int64_t data_start_ = 0;
    std::map<std::string, SafetensorsEntry> tensors_;
};

// The tensors of a checkpoint directory: model.safetensors, or the shards that
// model.safetensors.index.json's "weight_map" names (each tensor looked up in its shard).
class SafetensorsSet {
public:
    // `dir` holds model.safetensors.index.json (then the shards it names) or model.safetensors.
    static SafetensorsSet open_dir(const std::string &dir);
    // In memory: shards by file name and, if there are several, the index's text ("" for one file).
    static SafetensorsSet from_memory(const std::vector<std::pair<std::string, std::string>> &files,
                                      const std::string &index_json);

    // The entry of `tensor`, or nullptr if no file has it.
    const SafetensorsEntry *find(const std::string &tensor) const;
    std::vector<float> read_floats(const std::string &tensor) const;
    // Where the tensors come from, for messages: "model.safetensors" or the index's name.
    const std::string &origin() const { return origin_; }

private:
    void add(SafetensorsFile f, const std::map<std::string, std::string> *weight_map);
    std::string origin_;
    std::vector<SafetensorsFile> files_;
    std::map<std::string, size_t> where_;  // tensor -> files_ index
};

// The "weight_map" of a model.safetensors.index.json (tensor -> shard file name), checked: an
// object of strings, each a plain file name in the same directory. `origin` names it in messages.
std::map<std::string, std::string> read_safetensors_index(const std::string &text, const std::string &origin);

}  // namespace spyre::llama
