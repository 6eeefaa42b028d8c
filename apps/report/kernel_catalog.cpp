#include "kernel_catalog.h"

#include <algorithm>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "auto_schedule.h"
#include "compile.h"
#include "cpu_reference.h"
#include "directives.h"
#include "device/error.h"
#include "device/half.h"

namespace spyre::report {

using namespace Halide;

const std::vector<std::string> &app_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const AppInfo &a : app_infos()) n.push_back(a.name);
        return n;
    }();
    return names;
}

const AppInfo &app_info(const std::string &app) {
    std::string known;
    for (const AppInfo &a : app_infos()) {
        if (a.name == app) return a;
        known += (known.empty() ? "" : ", ") + a.name;
    }
    throw_error("unknown app '", app, "' (known: ", known, ")");
}

std::string AppInfo::shape_doc() const {
    std::string d;
    for (const std::string &n : dims) d += (d.empty() ? "" : " x ") + n;
    return d;
}

std::vector<std::string> app_schedules(const std::string &app) {
    std::vector<std::string> s = app_info(app).schedules();
    // The autoscheduler (auto_schedule.h), for every app (flash attention's Tuple state by its fold
    // family, auto_fold.h).
    s.push_back("auto");
    return s;
}

std::string app_generator(const std::string &app) { return app_info(app).generator; }

std::vector<std::string> generator_params(const std::string &app, const Shape &s) {
    return app_info(app).generator_params(s);
}

std::string shape_doc(const std::string &app) { return app_info(app).shape_doc(); }

bool app_takes_cores(const std::string &app) { return app_info(app).takes_cores; }

std::string Shape::text() const {
    std::string t;
    for (size_t i = 0; i < dims.size(); i++) t += (i ? "x" : "") + std::to_string(dims[i]);
    return t;
}

Shape parse_shape(const std::string &app, const std::string &text) {
    const AppInfo &info = app_info(app);
    Shape s;
    std::stringstream ss(text);
    std::string part;
    while (std::getline(ss, part, 'x')) {
        size_t pos = 0;
        int v = 0;
        try {
            v = std::stoi(part, &pos);
        } catch (const std::invalid_argument &) {
            pos = 0;
        } catch (const std::out_of_range &) {
            pos = 0;
        }
        if (part.empty() || pos != part.size() || v < 1) throw_error(app, ": bad shape '", text, "' (", info.shape_doc(), ")");
        s.dims.push_back(v);
    }
    if (s.dims.size() != info.dims.size()) throw_error(app, ": bad shape '", text, "' (", info.shape_doc(), ")");
    return s;
}

std::vector<std::vector<int>> input_shapes(const std::string &app, const Shape &s) { return app_info(app).inputs(s); }

std::vector<int> output_shape(const std::string &app, const Shape &s) { return app_info(app).output(s); }

namespace {

// Every Func `out` reads that its schedule keeps in device memory, of two dims or more, stored with
// its stick count outermost (its storage order kept).
void stick_count_outermost_in_device_memory(const Func &out) {
    for (const auto &[name, fn] : Internal::find_transitive_calls(out.function())) {
        if (name == out.name() || fn.dimensions() < 2) continue;
        LoopLevel at = fn.schedule().compute_level();
        at.lock();
        if (!at.is_root() || fn.schedule().memory_type() == MemoryType::VTCM) continue;
        std::vector<Var> order;
        for (const Internal::StorageDim &d : fn.schedule().storage_dims()) order.push_back(Var(d.var));
        if (order.empty() || order[0].name() != fn.args()[0]) continue;
        spyre::schedule(Func(fn)).device_layout(order, order.back());
    }
}

// The first input of two dims or more read through a copy in device memory: its wrapper Func (the
// ImageParam's own, inlined by every schedule) placed with device_root in whole sticks. Whatever a
// schedule keeps where, the app then has an intermediate in device memory to lay out.
void copy_first_input_to_device_memory(const std::vector<ImageParam> &inputs) {
    for (const ImageParam &in : inputs) {
        if (in.dimensions() < 2) continue;
        Func copy(in);
        spyre::schedule(copy).device_root().stick_vectorize(copy.args()[0]);
        return;
    }
}

// Every Func `out` reads that its schedule keeps in LX, of three dims or more, stored with its
// dims after the stick dimension in the reverse order.
void reverse_outer_dims_in_lx(const Func &out) {
    for (const auto &[name, fn] : Internal::find_transitive_calls(out.function())) {
        if (name == out.name() || fn.dimensions() < 3) continue;
        LoopLevel at = fn.schedule().compute_level();
        at.lock();
        if (at.is_inlined() || (at.is_root() && fn.schedule().memory_type() != MemoryType::VTCM)) continue;
        std::vector<Var> order;
        for (const Internal::StorageDim &d : fn.schedule().storage_dims()) order.push_back(Var(d.var));
        if (order.empty() || order[0].name() != fn.args()[0]) continue;
        std::reverse(order.begin() + 1, order.end());
        spyre::schedule(Func(fn)).device_layout(order);
    }
}

}  // namespace

DeviceProgram compile_kernel(const std::string &app, const std::string &schedule, const Shape &s,
                             const MachineDesc &machine, const std::string &kernel_name, AutoResult *search,
                             ArgumentLayouts layouts) {
    const AppInfo &info = app_info(app);
    CompileOptions opt;
    opt.kernel_name = kernel_name.empty() ? app + "_" + schedule : kernel_name;
    opt.machine = machine;
    auto spec = [&](const std::vector<int> &shape) {
        TensorSpec t{std::vector<int64_t>(shape.begin(), shape.end()), {}};
        if (layouts != ArgumentLayouts::RowMajor && shape.size() > 1)
            t.layout = torch_spyre_default_layout(int(shape.size()));
        return t;
    };
    for (const std::vector<int> &shape : info.inputs(s)) opt.inputs.push_back(spec(shape));
    opt.output = spec(info.output(s));
    AppKernel k = info.kernel(s);
    if (schedule == "auto") {
        // The autoscheduler (auto_schedule.h) instead of a named schedule, with at most the shape's
        // cores where the app takes a core count.
        AutoOptions ao;
        if (info.takes_cores) ao.max_cores = s.cores;
        AutoResult r = auto_schedule(k.out, k.inputs, opt, ao);
        if (search) *search = r;
    } else {
        k.schedule(schedule, machine);
    }
    if (layouts == ArgumentLayouts::TorchSpyreEverywhere) {
        copy_first_input_to_device_memory(k.inputs);
        reverse_outer_dims_in_lx(k.out);
    }
    if (layouts == ArgumentLayouts::TorchSpyreWithIntermediates || layouts == ArgumentLayouts::TorchSpyreEverywhere)
        stick_count_outermost_in_device_memory(k.out);
    return compile_for_spyre(k.out, k.inputs, opt);
}

float input_range(const std::string &app) { return app_info(app).input_range; }

std::vector<Runtime::Buffer<>> random_inputs(const std::string &app, const Shape &s, uint32_t seed) {
    const AppInfo &info = app_info(app);
    std::vector<Runtime::Buffer<>> ins;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-info.input_range, info.input_range);
    const std::vector<std::vector<int>> shapes = info.inputs(s);
    for (size_t i = 0; i < shapes.size(); i++) {
        const std::vector<int> &shape = shapes[i];
        if (std::count(info.int8_inputs.begin(), info.int8_inputs.end(), i)) {  // every code
            Runtime::Buffer<> b(halide_type_t(halide_type_int, 8), shape);
            auto *p = static_cast<uint8_t *>(b.data());
            for (size_t j = 0; j < b.number_of_elements(); j++) p[j] = uint8_t(rng());
            ins.push_back(std::move(b));
            continue;
        }
        Runtime::Buffer<> b(halide_type_t(halide_type_float, 16), shape);
        auto *p = static_cast<uint16_t *>(b.data());
        for (size_t j = 0; j < b.number_of_elements(); j++) p[j] = float_to_half(dist(rng));
        ins.push_back(std::move(b));
    }
    return ins;
}

Runtime::Buffer<> cpu_reference(const std::string &app, const Shape &s, const std::vector<Runtime::Buffer<>> &inputs) {
    const AppInfo &info = app_info(app);
    Runtime::Buffer<> want(halide_type_t(halide_type_float, 16), info.output(s));
    AppKernel k = info.kernel(s);
    if (inputs.size() != k.inputs.size())
        throw_error(app, ": ", inputs.size(), " inputs given for the CPU reference, it takes ", k.inputs.size());
    k.schedule_cpu();
    for (size_t i = 0; i < inputs.size(); i++) k.inputs[i].set(Halide::Buffer<>(*inputs[i].raw_buffer()));
    k.out.realize(Pipeline::RealizationArg(want), cpu_reference_target());
    return want;
}

std::string Tolerance::text() const {
    if (!absolute()) return std::to_string(ulp) + " ULP";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0e abs", abs);
    return buf;
}

Tolerance tolerance(const std::string &app) { return app_info(app).tolerance; }

ErrorCheck check_error(const std::string &app, const Runtime::Buffer<> &got, const Runtime::Buffer<> &want) {
    return check_error(tolerance(app), got, want);
}

ErrorCheck check_error(const Tolerance &tol, const Runtime::Buffer<> &got, const Runtime::Buffer<> &want) {
    ErrorCheck c;
    c.ulp = max_ulp(got, want);
    c.abs = max_abs_error(got, want);
    if (c.ulp == INT64_MAX) {  // a NaN where the other has a number
        c.text = "NaN";
        return c;
    }
    char buf[32];
    if (tol.absolute()) {
        if (c.abs == 0)
            std::snprintf(buf, sizeof buf, "0 abs");
        else
            std::snprintf(buf, sizeof buf, "%.1e abs", c.abs);
        c.ok = c.abs <= tol.abs;
    } else {
        std::snprintf(buf, sizeof buf, "%lld ULP", static_cast<long long>(c.ulp));
        c.ok = c.ulp <= tol.ulp;
    }
    c.text = buf;
    return c;
}

namespace {
// Bit patterns as ordered integers (so adjacent representable values differ by one).
int64_t ordered(int64_t bits, int width) {
    const int64_t sign = int64_t(1) << (width - 1);
    return (bits & sign) ? -(bits & (sign - 1)) : bits;
}
}  // namespace

int64_t max_ulp(const Runtime::Buffer<> &got, const Runtime::Buffer<> &want) {
    Runtime::Buffer<> g = got.copy(), w = want.copy();  // dense
    if (g.number_of_elements() != w.number_of_elements() || g.type() != w.type())
        throw_error("max_ulp: the buffers differ in type or size");
    const bool half = w.type().bits == 16;
    int64_t worst = 0;
    for (size_t i = 0; i < w.number_of_elements(); i++) {
        int64_t a, b;
        bool nan_a, nan_b;
        if (half) {
            uint16_t x = static_cast<const uint16_t *>(g.data())[i], y = static_cast<const uint16_t *>(w.data())[i];
            nan_a = std::isnan(half_to_float(x)), nan_b = std::isnan(half_to_float(y));
            a = ordered(x, 16), b = ordered(y, 16);
        } else {
            uint32_t x, y;
            std::memcpy(&x, static_cast<const float *>(g.data()) + i, 4);
            std::memcpy(&y, static_cast<const float *>(w.data()) + i, 4);
            nan_a = std::isnan(bits_to_float(x)), nan_b = std::isnan(bits_to_float(y));
            a = ordered(x, 32), b = ordered(y, 32);
        }
        if (nan_a != nan_b) return INT64_MAX;
        if (nan_a) continue;
        worst = std::max<int64_t>(worst, std::llabs(a - b));
    }
    return worst;
}

double max_abs_error(const Runtime::Buffer<> &got, const Runtime::Buffer<> &want) {
    Runtime::Buffer<> g = got.copy(), w = want.copy();  // dense
    if (g.number_of_elements() != w.number_of_elements() || g.type() != w.type())
        throw_error("max_abs_error: the buffers differ in type or size");
    const bool half = w.type().bits == 16;
    double worst = 0;
    for (size_t i = 0; i < w.number_of_elements(); i++) {
        double a, b;
        if (half) {
            a = half_to_float(static_cast<const uint16_t *>(g.data())[i]);
            b = half_to_float(static_cast<const uint16_t *>(w.data())[i]);
        } else {
            a = static_cast<const float *>(g.data())[i];
            b = static_cast<const float *>(w.data())[i];
        }
        if (std::isnan(a) != std::isnan(b)) return std::numeric_limits<double>::infinity();
        if (std::isnan(a)) continue;
        worst = std::max(worst, std::fabs(a - b));
    }
    return worst;
}

}  // namespace spyre::report
