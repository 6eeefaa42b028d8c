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

#include "device/layout.h"

namespace spyre::gen {

struct BufferShape {
    std::string name;
    std::vector<int64_t> shape;  // Halide order: dim 0 innermost
};

// The values of a generator's integer GeneratorParams, by name.
using ParamValues = std::map<std::string, int64_t>;

struct IntParam {
    std::string name;
    int64_t default_value;
};

struct GeneratorInfo {
    std::string name;         // as registered with HALIDE_REGISTER_GENERATOR
    std::string description;  // one line, for `spyre-gen -l`
    // The Spyre schedule names (`schedule=` also accepts "cpu", the CPU reference schedule).
    std::function<std::vector<std::string>()> schedules;
    // The generator's own string GeneratorParams besides schedule and machine (and its integer
    // ones): name -> default.
    std::map<std::string, std::string> extra_params;
    // Input buffers (in argument order) and the output, for cols x rows (generators without
    // int_params; unset otherwise).
    std::function<std::vector<BufferShape>(int64_t cols, int64_t rows)> inputs;
    std::function<BufferShape(int64_t cols, int64_t rows)> output;
    // The integer GeneratorParams (shape, cores), in the order `-l` lists them. Empty means
    // cols=1024, rows=512 and the (cols, rows) callbacks above.
    std::vector<IntParam> int_params = {};
    // Input buffers (in argument order) and the output for the values of int_params (every one
    // present in the map); set when int_params is not empty.
    std::function<std::vector<BufferShape>(const ParamValues &)> inputs_of = nullptr;
    std::function<BufferShape(const ParamValues &)> output_of = nullptr;
    // A generator with several outputs (a Pipeline({a, b}), several Output<Buffer<>>s) sets this
    // instead of output_of: its outputs in the pipeline's order.
    std::function<std::vector<BufferShape>(const ParamValues &)> outputs_of = nullptr;

    // For spyre-run's check against Halide's CPU reference of a generator the report catalogue does
    // not list: the ULPs each output may differ by (-1: none stated, no check).
    int64_t reference_ulp = -1;

    // int_params, or {cols=1024, rows=512} for a (cols, rows) generator.
    std::vector<IntParam> integer_params() const;
    // The buffers' shapes for `values` (missing params take their defaults).
    std::vector<BufferShape> input_shapes(const ParamValues &values) const;
    // Every output, in the pipeline's order (one unless outputs_of is set).
    std::vector<BufferShape> output_shapes(const ParamValues &values) const;
    // `values` completed with the defaults of the params it lacks.
    ParamValues with_defaults(const ParamValues &values) const;
};

// The info of a generator over rows of an fp16 {cols, rows} tensor (SpyreRowsGenerator): the input
// "in" of {cols, rows}, then `row_vectors` of {cols} each (a norm's gamma and beta), and the output
// `output_name` of {cols, rows}.
GeneratorInfo rows_generator_info(const std::string &name, const std::string &description,
                                  std::function<std::vector<std::string>()> schedules, const std::string &output_name,
                                  const std::vector<std::string> &row_vectors = {});

// Every registered generator, by name.
const std::map<std::string, GeneratorInfo> &generator_infos();
// nullptr when `name` is not registered.
const GeneratorInfo *find_generator_info(const std::string &name);

// Registers `info`; every generator's schedules gain "auto" (spyre::auto_schedule, applied by
// apply_schedule in spyre_generator.h).
struct Registrar {
    explicit Registrar(GeneratorInfo info);
};

// What a driver asks of a generator's `schedule=auto`, and what it chose, carried by the generator
// object itself (SpyreGenerator<T> in spyre_generator.h derives from it): build_generator() sets
// `auto_request` before it builds the pipeline and returns `auto_choice` with it.
struct AutoRequest {
    // The arguments whose device layouts the search may choose (AutoOptions::free_layouts; spyre-gen
    // --free-layouts).
    std::vector<std::string> free_layouts;
    // The tuning database the search reads first and stores its result in (AutoOptions::tuning_db;
    // spyre-gen --tuning-db); empty: none.
    std::string tuning_db;
    // Device layouts of arguments by name (spyre-gen --layout NAME=SPEC), for every schedule; the
    // others are row-major.
    std::map<std::string, DeviceLayout> layouts;
};
// The layout `request` gives argument `b` (row-major when it names none).
inline DeviceLayout layout_of(const BufferShape &b, const AutoRequest &request) {
    auto it = request.layouts.find(b.name);
    return it == request.layouts.end() ? DeviceLayout{} : it->second;
}
struct AutoChoice {
    std::string schedule_source;          // the C++ of the schedule it chose (NAME.schedule.cpp)
    std::vector<DeviceLayout> layouts;    // per input, then per output
    bool from_tuning_db = false;          // applied from the tuning database without a search
    std::string fingerprint;              // its key there
};
struct SpyreGeneratorState {
    AutoRequest auto_request;
    AutoChoice auto_choice;  // empty unless the build ran schedule=auto
    virtual ~SpyreGeneratorState() = default;
};

// The string GeneratorParams every Spyre generator has, with their defaults (the integer ones are
// GeneratorInfo::integer_params()).
inline const std::map<std::string, std::string> &common_params() {
    static const std::map<std::string, std::string> p = {{"schedule", "cpu"}, {"machine", ""}};
    return p;
}

// `all` without "cpu" (the CPU reference schedule): the Spyre schedules of a schedules/ list.
inline std::vector<std::string> spyre_schedules(const std::vector<std::string> &all) {
    std::vector<std::string> s;
    for (const std::string &n : all)
        if (n != "cpu") s.push_back(n);
    return s;
}

// Every GeneratorParam of `info` (common, integer and extra) with its default, as text.
std::map<std::string, std::string> param_defaults(const GeneratorInfo &info);

}  // namespace spyre::gen
