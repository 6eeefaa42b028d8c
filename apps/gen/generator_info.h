// What spyre-gen knows about each Spyre generator besides Halide's GeneratorRegistry entry: its
// Spyre schedules and the shapes of its buffers for given GeneratorParams. Each generator's
// translation unit registers one entry next to HALIDE_REGISTER_GENERATOR:
//
//   static spyre::gen::Registrar reg({"softmax", "softmax over rows", {"in"}, softmax_schedules, shapes});
//
// No Halide.h here: spyre-gen's argument checks and `-l` use this table only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace spyre::gen {

struct BufferShape {
    std::string name;
    std::vector<int64_t> shape;  // Halide order: dim 0 innermost
};

struct GeneratorInfo {
    std::string name;         // as registered with HALIDE_REGISTER_GENERATOR
    std::string description;  // one line, for `spyre-gen -l`
    // The Spyre schedule names (`schedule=` also accepts "cpu", the CPU reference schedule).
    std::function<std::vector<std::string>()> schedules;
    // The generator's own GeneratorParams besides cols, rows, schedule and machine: name -> default.
    std::map<std::string, std::string> extra_params;
    // Input buffers (in argument order) and the output, for cols x rows.
    std::function<std::vector<BufferShape>(int64_t cols, int64_t rows)> inputs;
    std::function<BufferShape(int64_t cols, int64_t rows)> output;
};

// Every registered generator, by name.
const std::map<std::string, GeneratorInfo> &generator_infos();
// nullptr when `name` is not registered.
const GeneratorInfo *find_generator_info(const std::string &name);

struct Registrar {
    explicit Registrar(GeneratorInfo info);
};

// The GeneratorParams every Spyre generator has, with their defaults.
inline const std::map<std::string, std::string> &common_params() {
    static const std::map<std::string, std::string> p = {
        {"cols", "1024"}, {"rows", "512"}, {"schedule", "cpu"}, {"machine", ""}};
    return p;
}

}  // namespace spyre::gen
