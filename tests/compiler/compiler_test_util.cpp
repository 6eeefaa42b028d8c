#include "compiler_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>

#include "auto_schedule.h"
#include "device/error.h"
#include "device/half.h"
#include "user_terms.h"

namespace spyre::testing {

using namespace Halide;

CompileOptions kernel_options(const std::vector<std::vector<int64_t>> &inputs, const std::vector<int64_t> &output) {
    CompileOptions o;
    o.kernel_name = "k";
    for (const auto &shape : inputs) o.inputs.push_back(TensorSpec{shape, {}});
    o.output = TensorSpec{output, {}};
    return o;
}

std::string error_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const spyre::Error &e) {
        // Every error a test provokes must speak the user's terms (user_terms.h).
        const std::string generated = generated_name_in(e.what());
        if (!generated.empty()) ADD_FAILURE() << "the error names '" << generated << "', which the user never wrote: " << e.what();
        return e.what();
    }
    return "(no error)";
}

void RefusalLog::add(const std::exception &x, const std::string &candidate) {
    count_++;
    const auto *e = dynamic_cast<const spyre::Error *>(&x);
    if (!e) {
        ADD_FAILURE() << candidate << ": not a refusal of the back end (an exception other than spyre::Error): " << x.what();
        return;
    }
    if (e->kind() == ErrorKind::Internal) {
        ADD_FAILURE() << candidate << ": an internal error, not a refusal: " << x.what();
        return;
    }
    const std::string msg = x.what();
    for (const std::string &part : expected_)
        if (msg.find(part) != std::string::npos) return;
    std::string known;
    for (const std::string &part : expected_) known += "\n  '" + part + "'";
    ADD_FAILURE() << candidate << ": refused with a message the test does not expect: " << msg
                  << "\nexpected one holding:" << (known.empty() ? std::string(" (none: every candidate must compile)") : known);
}

Runtime::Buffer<> random_buffer(halide_type_t t, const std::vector<int> &shape, float lo, float hi, uint32_t seed) {
    Runtime::Buffer<> b(t, shape);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    if (t.code == halide_type_float && t.bits == 16) {
        auto *p = static_cast<uint16_t *>(b.data());
        for (size_t i = 0; i < b.number_of_elements(); i++) p[i] = float_to_half(dist(rng));
    } else if (t.code == halide_type_float && t.bits == 32) {
        auto *p = static_cast<float *>(b.data());
        for (size_t i = 0; i < b.number_of_elements(); i++) p[i] = dist(rng);
    } else if (t.code == halide_type_int && t.bits == 32) {
        std::uniform_int_distribution<int32_t> idist{int32_t(lo), int32_t(hi)};
        auto *p = static_cast<int32_t *>(b.data());
        for (size_t i = 0; i < b.number_of_elements(); i++) p[i] = idist(rng);
    } else if (t.bits == 8) {  // int8 / uint8: whole numbers in [lo, hi] clamped to the type's range
        const int lo8 = t.code == halide_type_int ? -128 : 0, hi8 = t.code == halide_type_int ? 127 : 255;
        std::uniform_int_distribution<int> idist{std::clamp(int(lo), lo8, hi8), std::clamp(int(hi), lo8, hi8)};
        auto *p = static_cast<uint8_t *>(b.data());
        for (size_t i = 0; i < b.number_of_elements(); i++) p[i] = uint8_t(idist(rng));
    }
    return b;
}

namespace {
bool is_int(const Runtime::Buffer<> &b) { return b.type().code == halide_type_int || b.type().code == halide_type_uint; }
double value(const Runtime::Buffer<> &b, size_t i) {
    if (b.type().bits == 8)
        return b.type().code == halide_type_int ? double(static_cast<const int8_t *>(b.data())[i])
                                                : double(static_cast<const uint8_t *>(b.data())[i]);
    if (is_int(b)) return static_cast<const int32_t *>(b.data())[i];
    if (b.type().bits == 16) return half_to_float(static_cast<const uint16_t *>(b.data())[i]);
    return static_cast<const float *>(b.data())[i];
}
// Distance in representable values (ordered bit patterns).
int64_t ulps(const Runtime::Buffer<> &b, size_t i, const Runtime::Buffer<> &c) {
    auto ord = [](int64_t bits, int width) {
        int64_t sign = int64_t(1) << (width - 1);
        return (bits & sign) ? -(bits & (sign - 1)) : bits;
    };
    if (is_int(b) && b.type().bits == 8) return std::llabs(int64_t(value(b, i)) - int64_t(value(c, i)));
    if (is_int(b))  // integers: the distance in values
        return std::llabs(int64_t(static_cast<const int32_t *>(b.data())[i]) - static_cast<const int32_t *>(c.data())[i]);
    if (b.type().bits == 16) {
        int64_t x = static_cast<const uint16_t *>(b.data())[i], y = static_cast<const uint16_t *>(c.data())[i];
        return std::llabs(ord(x, 16) - ord(y, 16));
    }
    uint32_t x, y;
    std::memcpy(&x, static_cast<const float *>(b.data()) + i, 4);
    std::memcpy(&y, static_cast<const float *>(c.data()) + i, 4);
    return std::llabs(ord(x, 32) - ord(y, 32));
}
}  // namespace

Comparison compare(const Runtime::Buffer<> &got, const Runtime::Buffer<> &want) {
    Comparison c;
    Runtime::Buffer<> g = got.copy(), w = want.copy();
    size_t n = w.number_of_elements();
    for (size_t i = 0; i < n; i++) {
        double a = value(g, i), b = value(w, i);
        int64_t u = ulps(g, i, w);
        if (std::isnan(a) != std::isnan(b)) u = INT64_MAX;
        if (u > 0) {
            if (c.mismatches == 0) {
                std::ostringstream os;
                os << "element " << i << ": got " << a << ", want " << b;
                c.first_mismatch = os.str();
            }
            c.mismatches++;
        }
        c.max_ulp = std::max(c.max_ulp, u);
        if (!std::isnan(a) && !std::isnan(b)) c.max_abs_error = std::max(c.max_abs_error, std::fabs(a - b));
    }
    return c;
}

DiffResult run_differential(const Algorithm &alg, const Schedule &spyre_schedule,
                            const std::vector<std::vector<int>> &input_shapes, const std::vector<int> &output_shape,
                            float lo, float hi, const MachineDesc &machine) {
    const Kernel types = alg();
    std::vector<Runtime::Buffer<>> inputs;
    for (size_t i = 0; i < types.inputs.size(); i++)
        inputs.push_back(random_buffer(types.inputs[i].type(), input_shapes[i], lo, hi, uint32_t(1234 + i)));
    return run_differential_on(alg, spyre_schedule, inputs, output_shape, machine);
}

DiffResult run_differential_on(const Algorithm &alg, const Schedule &spyre_schedule,
                               const std::vector<Runtime::Buffer<>> &inputs, const std::vector<int> &output_shape,
                            const MachineDesc &machine) {
    return run_differential_with_options(
        alg,
        [&](Kernel &k, const CompileOptions &opt) {
            spyre_schedule(k);
            return opt;
        },
        inputs, output_shape, machine);
}

namespace {

// Halide's JIT compile of a CPU reference (LLVM, about 0.3 s) was most of a differential test's
// time, and 58% of the compiler tests' references repeat one seen before in the same process (the
// same algorithm at another shape or under another Spyre schedule). A reference is kept by the text
// of its lowered module, with the names Halide numbers per process ($N suffixes, tN lets) and the
// module's own name left out, and realised again with the new inputs bound to its ImageParams. A
// pipeline with scalar Params is not kept: their values are not in the text.
void realize_reference(Kernel &ref, Runtime::Buffer<> &out) {
    static std::map<std::string, Kernel> cache;
    const Target target = cpu_reference_target();
    keep_fp16_nans(ref.output);
    const std::vector<Argument> args = ref.output.infer_arguments();
    bool keep = true;
    for (const Argument &a : args) keep = keep && a.is_buffer();
    std::string key;
    if (keep) {
        std::ostringstream text;
        text << ref.output.compile_to_module(args, "reference", target);
        key = std::regex_replace(text.str(), std::regex("(\\$[0-9]+|\\bt[0-9]+\\b)"), "");
        auto it = cache.find(key);
        if (it != cache.end() && it->second.inputs.size() == ref.inputs.size()) {
            for (size_t i = 0; i < ref.inputs.size(); i++) it->second.inputs[i].set(ref.inputs[i].get());
            it->second.output.realize(Pipeline::RealizationArg(out), target);
            return;
        }
    }
    ref.output.realize(Pipeline::RealizationArg(out), target);
    if (keep) cache.emplace(key, ref);
}

}  // namespace

Schedule auto_scheduled(const std::vector<std::vector<int64_t>> &inputs, const std::vector<int64_t> &output,
                        int evaluations) {
    return [=](Kernel &k) {
        AutoOptions ao;
        ao.max_evaluations = evaluations;
        ao.progress = false;
        auto_schedule(k.output, k.inputs, kernel_options(inputs, output), ao);
    };
}

DiffResult run_differential_with_options(const Algorithm &alg,
                                         const std::function<CompileOptions(Kernel &, const CompileOptions &)> &spyre_schedule,
                                         const std::vector<Runtime::Buffer<>> &inputs,
                                         const std::vector<int> &output_shape, const MachineDesc &machine) {
    DiffResult r;
    Kernel ref = alg();
    // The CPU reference: every named stage at root, realised with strict floats (op by op, no
    // reassociated reductions), as the device computes.
    for (auto &kv : ref.funcs) kv.second.compute_root();
    std::vector<std::vector<int>> input_shapes;
    for (size_t i = 0; i < ref.inputs.size(); i++) {
        ref.inputs[i].set(Halide::Buffer<>(*inputs.at(i).raw_buffer()));
        std::vector<int> shape;
        for (int d = 0; d < inputs[i].dimensions(); d++) shape.push_back(inputs[i].dim(d).extent());
        input_shapes.push_back(shape);
    }
    Runtime::Buffer<> want(ref.output.output_types()[0], output_shape);
    realize_reference(ref, want);

    Kernel k = alg();
    CompileOptions opt;
    opt.kernel_name = "test";
    opt.machine = machine;
    for (auto &s : input_shapes) opt.inputs.push_back(TensorSpec{std::vector<int64_t>(s.begin(), s.end()), {}});
    opt.output.shape = std::vector<int64_t>(output_shape.begin(), output_shape.end());
    opt = spyre_schedule(k, opt);
    r.program = compile_for_spyre(k.output, k.inputs, opt);
    SpyreRun run = run_on_spyre(r.program, inputs, machine);
    r.stats = run.stats;
    r.cmp = compare(run.output, want);
    r.got = run.output;
    r.want = want;
    for (const Runtime::Buffer<> &in : inputs) r.input_bytes += int64_t(in.size_in_bytes());
    r.machine = machine;
    return r;
}

::testing::AssertionResult meets_channel_floor(const DiffResult &r) {
    const int64_t out_bytes = int64_t(r.want.size_in_bytes());
    const double floor = channel_floor_us(r.input_bytes, out_bytes, r.machine);
    if (r.stats.dram_read_bytes < r.input_bytes)
        return ::testing::AssertionFailure() << "read " << r.stats.dram_read_bytes << " bytes of device memory, fewer than the "
                                             << r.input_bytes << " bytes of its inputs";
    if (r.stats.dram_write_bytes < out_bytes)
        return ::testing::AssertionFailure() << "wrote " << r.stats.dram_write_bytes << " bytes of device memory, fewer than the "
                                             << out_bytes << " bytes of its output";
    if (!(r.stats.us >= floor))
        return ::testing::AssertionFailure() << "modelled " << r.stats.us << " us, under the " << floor
                                             << " us the channel needs to read " << r.input_bytes << " bytes and write "
                                             << out_bytes;
    return ::testing::AssertionSuccess() << r.stats.us << " us >= channel floor " << floor << " us";
}

}  // namespace spyre::testing
