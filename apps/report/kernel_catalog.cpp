#include "kernel_catalog.h"

#include <algorithm>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

#include "auto_schedule.h"
#include "compile.h"
#include "cpu_reference.h"
#include "device/error.h"
#include "device/half.h"
#include "attention.h"
#include "flash_attention.h"
#include "transpose.h"
#include "gated_mlp.h"
#include "matmul.h"
#include "mlp.h"
#include "norms.h"
#include "pointwise.h"
#include "qlinear.h"
#include "softmax.h"
#include "stencil.h"
#include "conv1d.h"
#include "rope.h"

namespace spyre::report {

using namespace Halide;

const std::vector<std::string> &app_names() {
    static const std::vector<std::string> names = {"softmax", "layernorm", "rmsnorm",   "gelu",      "bmm",
                                                    "linear",  "mlp",       "gated_mlp", "attention", "flash_attention",
                                                    "causal_attention", "transpose", "qlinear", "stencil", "conv1d", "rope", "rope_interleaved"};
    return names;
}

namespace {
void check_app(const std::string &app) {
    for (const std::string &a : app_names())
        if (a == app) return;
    throw_error("unknown app '", app,
                "' (known: softmax, layernorm, rmsnorm, gelu, bmm, linear, mlp, gated_mlp, attention, flash_attention, causal_attention, "
                "transpose, "
                "qlinear, stencil, conv1d, rope, rope_interleaved)");
}
bool is_norm(const std::string &app) { return app == "layernorm" || app == "rmsnorm"; }
bool is_rope(const std::string &app) { return app == "rope" || app == "rope_interleaved"; }
// flash_attention and causal_attention: one algorithm (schedules/flash_attention.h), the second
// with its causal mask.
bool is_flash(const std::string &app) { return app == "flash_attention" || app == "causal_attention"; }
// The catalogue's flash attention: {dim, seq, heads} with the default tiles.
FlashAttentionKernel make_flash_attention_for(const std::string &app, const std::vector<int> &dims) {
    const bool causal = app == "causal_attention";
    const FlashTiles t = flash_attention_tiles(dims[1], causal);
    return make_flash_attention(dims[0], dims[1], dims[2], t.q_tile, t.k_tile, causal);
}
RopeStyle rope_style(const std::string &app) {
    return app == "rope_interleaved" ? RopeStyle::Interleaved : RopeStyle::RotateHalf;
}
// The Spyre schedules of `all` (every schedule but the CPU reference's).
std::vector<std::string> without_cpu(const std::vector<std::string> &all) {
    std::vector<std::string> s;
    for (const std::string &n : all)
        if (n != "cpu") s.push_back(n);
    return s;
}
size_t shape_rank(const std::string &app) {
    if (app == "bmm") return 4;
    if (app == "mlp" || app == "gated_mlp" || app == "linear" || app == "qlinear" || is_flash(app)) return 3;
    return 2;
}
}  // namespace

namespace {
std::vector<std::string> named_schedules(const std::string &app) {
    if (app == "softmax") return softmax_schedules();
    if (is_norm(app)) return norm_schedules();
    if (app == "gelu") return pointwise_schedules();
    if (app == "mlp") return without_cpu(mlp_schedules());
    if (app == "gated_mlp") return without_cpu(gated_mlp_schedules());
    if (app == "attention") return without_cpu(attention_schedules());
    if (is_flash(app)) {
        // kv_chunked loads key tiles as causal query tiles reach them: without the mask it has none.
        std::vector<std::string> s = without_cpu(flash_attention_schedules());
        if (app != "causal_attention") s.erase(std::remove(s.begin(), s.end(), "kv_chunked"), s.end());
        return s;
    }
    if (app == "transpose") return transpose_schedules();
    if (app == "qlinear") return without_cpu(qlinear_schedules());
    if (app == "stencil") return stencil_schedules();
    if (app == "conv1d") return conv1d_schedules();
    if (is_rope(app)) return rope_schedules();
    return without_cpu(bmm_schedules());
}
}  // namespace

std::vector<std::string> app_schedules(const std::string &app) {
    check_app(app);
    std::vector<std::string> s = named_schedules(app);
    // The autoscheduler (schedules/auto_schedule.h), for every app (flash attention's Tuple state by
    // its fold family, auto_fold.h).
    s.push_back("auto");
    return s;
}

std::string app_generator(const std::string &app) {
    check_app(app);
    if (app == "causal_attention") return "flash_attention";  // with mask=causal
    return app;
}

std::vector<std::string> generator_params(const std::string &app, const Shape &s) {
    check_app(app);
    auto kv = [](const char *k, int v) { return std::string(k) + "=" + std::to_string(v); };
    if (app == "bmm")
        return {kv("batch", s.dims[0]), kv("rows", s.dims[1]), kv("inner", s.dims[2]), kv("cols", s.dims[3]),
                kv("cores", s.cores)};
    if (app == "linear" || app == "qlinear")
        return {kv("rows", s.dims[0]), kv("inner", s.dims[1]), kv("cols", s.dims[2]), kv("cores", s.cores)};
    if (app == "mlp" || app == "gated_mlp")
        return {kv("dim", s.dims[0]), kv("hidden", s.dims[1]), kv("rows", s.dims[2]), kv("cores", s.cores)};
    if (app == "attention") return {kv("dim", s.dims[0]), kv("seq", s.dims[1])};
    if (is_flash(app))
        return {kv("dim", s.dims[0]), kv("seq", s.dims[1]), kv("heads", s.dims[2]), kv("cores", s.cores),
                std::string("mask=") + (app == "causal_attention" ? "causal" : "none")};
    if (app == "conv1d") return {kv("cols", s.dims[1]), kv("rows", s.dims[0]), kv("taps", kConv1dTaps), "padding=causal"};
    if (is_rope(app)) return {kv("cols", s.dims[1]), kv("rows", s.dims[0]), kv("head_dim", kRopeHeadDim)};
    return {kv("cols", s.dims[1]), kv("rows", s.dims[0])};
}

std::string shape_doc(const std::string &app) {
    check_app(app);
    if (app == "bmm") return "B x M x K x N";
    if (app == "linear" || app == "qlinear") return "M x K x N";
    if (app == "mlp" || app == "gated_mlp") return "dim x hidden x rows";
    if (app == "attention") return "dim x seq";
    if (is_flash(app)) return "dim x seq x heads";
    return "rows x cols";
}

bool app_takes_cores(const std::string &app) {
    check_app(app);
    return app == "bmm" || app == "linear" || app == "qlinear" || app == "mlp" || app == "gated_mlp" ||
           is_flash(app);
}

std::string Shape::text() const {
    std::string t;
    for (size_t i = 0; i < dims.size(); i++) t += (i ? "x" : "") + std::to_string(dims[i]);
    return t;
}

Shape parse_shape(const std::string &app, const std::string &text) {
    check_app(app);
    Shape s;
    std::stringstream ss(text);
    std::string part;
    while (std::getline(ss, part, 'x')) {
        size_t pos = 0;
        int v = 0;
        try {
            v = std::stoi(part, &pos);
        } catch (const std::exception &) {
            pos = 0;
        }
        if (part.empty() || pos != part.size() || v < 1) throw_error(app, ": bad shape '", text, "' (", shape_doc(app), ")");
        s.dims.push_back(v);
    }
    if (s.dims.size() != shape_rank(app)) throw_error(app, ": bad shape '", text, "' (", shape_doc(app), ")");
    return s;
}

std::vector<std::vector<int>> input_shapes(const std::string &app, const Shape &s) {
    check_app(app);
    if (app == "bmm") {
        const int b = s.dims[0], m = s.dims[1], k = s.dims[2], n = s.dims[3];
        return {{k, m, b}, {n, k}};
    }
    if (app == "linear") {
        const int m = s.dims[0], k = s.dims[1], n = s.dims[2];
        return {{k, m, 1}, {n, k}, {n}};
    }
    if (app == "qlinear") {
        const int m = s.dims[0], k = s.dims[1], n = s.dims[2];
        return {{k, m}, {n, k}, {n}};
    }
    if (app == "mlp") {
        const int d = s.dims[0], h = s.dims[1], m = s.dims[2];
        return {{d, m}, {h, d}, {h}, {d, h}, {d}};
    }
    if (app == "gated_mlp") {
        const int d = s.dims[0], h = s.dims[1], m = s.dims[2];
        return {{d, m}, {h, d}, {h, d}, {d, h}};
    }
    if (app == "attention") return {{s.dims[0], s.dims[1]}, {s.dims[0], s.dims[1]}, {s.dims[0], s.dims[1]}};
    if (is_flash(app)) return {s.dims, s.dims, s.dims};
    const int rows = s.dims[0], cols = s.dims[1];
    if (app == "layernorm") return {{cols, rows}, {cols}, {cols}};
    if (app == "rmsnorm") return {{cols, rows}, {cols}};
    if (app == "conv1d") return {{cols, rows}, {rows, kConv1dTaps}};
    if (is_rope(app)) return {{cols, rows}, {kRopeHeadDim, rows}, {kRopeHeadDim, rows}};
    return {{cols, rows}};
}

std::vector<int> output_shape(const std::string &app, const Shape &s) {
    check_app(app);
    if (app == "bmm") return {s.dims[3], s.dims[1], s.dims[0]};
    if (app == "linear") return {s.dims[2], s.dims[0], 1};
    if (app == "qlinear") return {s.dims[2], s.dims[0]};
    if (app == "mlp" || app == "gated_mlp") return {s.dims[0], s.dims[2]};
    if (app == "attention") return {s.dims[0], s.dims[1]};
    if (is_flash(app)) return s.dims;
    if (app == "transpose") return {s.dims[0], s.dims[1]};  // {rows, cols}: the input's rows become sticks
    return {s.dims[1], s.dims[0]};
}

DeviceProgram compile_kernel(const std::string &app, const std::string &schedule, const Shape &s,
                             const MachineDesc &machine, const std::string &kernel_name, AutoResult *search) {
    check_app(app);
    CompileOptions opt;
    opt.kernel_name = kernel_name.empty() ? app + "_" + schedule : kernel_name;
    opt.machine = machine;
    for (const std::vector<int> &shape : input_shapes(app, s))
        opt.inputs.push_back(TensorSpec{std::vector<int64_t>(shape.begin(), shape.end()), {}});
    std::vector<int> out = output_shape(app, s);
    opt.output = TensorSpec{std::vector<int64_t>(out.begin(), out.end()), {}};
    // "auto": the autoscheduler (schedules/auto_schedule.h) instead of a named schedule, with at most
    // the shape's cores where the app takes a core count.
    auto finish = [&](Func output, const std::vector<ImageParam> &in, const std::function<void()> &named) {
        if (schedule == "auto") {
            AutoOptions ao;
            if (app_takes_cores(app)) ao.max_cores = s.cores;
            AutoResult r = auto_schedule(output, in, opt, ao);
            if (search) *search = r;
        } else {
            named();
        }
        return compile_for_spyre(output, in, opt);
    };
    if (app == "softmax") {
        SoftmaxKernel k = make_softmax(s.dims[1], s.dims[0]);
        return finish(k.out, {k.in}, [&] { schedule_softmax(k, schedule, machine); });
    }
    if (is_norm(app)) {
        NormKernel k = make_norm(app, s.dims[1], s.dims[0]);
        return finish(k.out, k.inputs, [&] { schedule_norm(k, schedule, machine); });
    }
    if (app == "gelu") {
        PointwiseKernel k = make_pointwise("gelu", Float(16), s.dims[1], s.dims[0]);
        return finish(k.out, k.inputs, [&] { schedule_pointwise(k, schedule, machine); });
    }
    if (app == "mlp") {
        MlpKernel k = make_mlp(s.dims[0], s.dims[1], s.dims[2]);
        return finish(k.out, {k.x, k.w1, k.b1, k.w2, k.b2}, [&] { schedule_mlp(k, schedule, s.cores, machine); });
    }
    if (app == "gated_mlp") {
        GatedMlpKernel k = make_gated_mlp(s.dims[0], s.dims[1], s.dims[2]);
        return finish(k.out, {k.x, k.w1, k.w3, k.w2}, [&] { schedule_gated_mlp(k, schedule, s.cores, machine); });
    }
    if (app == "attention") {
        AttentionKernel k = make_attention(s.dims[0], s.dims[1]);
        return finish(k.out, {k.q, k.k, k.v}, [&] { schedule_attention(k, schedule, machine); });
    }
    if (is_flash(app)) {
        FlashAttentionKernel k = make_flash_attention_for(app, s.dims);
        return finish(k.out, {k.q, k.k, k.v}, [&] { schedule_flash_attention(k, schedule, s.cores, machine); });
    }
    if (app == "transpose") {
        TransposeKernel k = make_transpose(s.dims[1], s.dims[0]);
        return finish(k.out, {k.in}, [&] { schedule_transpose(k, schedule, machine); });
    }
    if (app == "qlinear") {
        QLinearKernel k = make_qlinear(s.dims[0], s.dims[1], s.dims[2]);
        return finish(k.out, {k.a, k.w, k.scale}, [&] { schedule_qlinear(k, schedule, s.cores, machine); });
    }
    if (app == "stencil") {
        StencilKernel k = make_stencil(s.dims[1], s.dims[0]);
        return finish(k.out, {k.in}, [&] { schedule_stencil(k, schedule, machine); });
    }
    if (app == "conv1d") {
        Conv1dKernel k = make_conv1d(s.dims[1], s.dims[0], kConv1dTaps, true);
        return finish(k.out, {k.in, k.w}, [&] { schedule_conv1d(k, schedule, machine); });
    }
    if (is_rope(app)) {
        RopeKernel k = make_rope(s.dims[1], s.dims[0], kRopeHeadDim, rope_style(app));
        return finish(k.out, {k.in, k.cos, k.sin}, [&] { schedule_rope(k, schedule, machine); });
    }
    if (app == "linear") {
        MatmulKernel k = make_linear(s.dims[0], s.dims[1], s.dims[2]);
        return finish(k.out, {k.a, k.w, k.bias}, [&] { schedule_bmm(k, schedule, s.cores, machine); });
    }
    MatmulKernel k = make_bmm(s.dims[0], s.dims[1], s.dims[2], s.dims[3]);
    return finish(k.out, {k.a, k.w}, [&] { schedule_bmm(k, schedule, s.cores, machine); });
}

float input_range(const std::string &app) {
    check_app(app);
    return app == "bmm" || app == "linear" || app == "qlinear" ? 2.0f
           : app == "mlp" || app == "gated_mlp"               ? 0.25f
           : app == "attention" || is_flash(app)              ? 1.0f
                                                              : 4.0f;
}

std::vector<Runtime::Buffer<>> random_inputs(const std::string &app, const Shape &s, uint32_t seed) {
    const float range = input_range(app);
    std::vector<Runtime::Buffer<>> ins;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-range, range);
    const std::vector<std::vector<int>> shapes = input_shapes(app, s);
    for (size_t i = 0; i < shapes.size(); i++) {
        const std::vector<int> &shape = shapes[i];
        if (app == "qlinear" && i == 1) {  // the int8 weights: every code
            Runtime::Buffer<> b(halide_type_t(halide_type_int, 8), shape);
            auto *p = static_cast<uint8_t *>(b.data());
            for (size_t j = 0; j < b.number_of_elements(); j++) p[j] = uint8_t(rng());
            ins.push_back(std::move(b));
            continue;
        }
        Runtime::Buffer<> b(halide_type_t(halide_type_float, 16), shape);
        auto *p = static_cast<uint16_t *>(b.data());
        for (size_t i = 0; i < b.number_of_elements(); i++) p[i] = float_to_half(dist(rng));
        ins.push_back(std::move(b));
    }
    return ins;
}

Runtime::Buffer<> cpu_reference(const std::string &app, const Shape &s, const std::vector<Runtime::Buffer<>> &inputs) {
    check_app(app);
    auto wrap = [](const Runtime::Buffer<> &b) { return Halide::Buffer<>(*b.raw_buffer()); };
    Runtime::Buffer<> want(halide_type_t(halide_type_float, 16), output_shape(app, s));
    Func out;
    if (app == "softmax") {
        SoftmaxKernel k = make_softmax(s.dims[1], s.dims[0]);
        schedule_softmax_cpu(k);
        k.in.set(wrap(inputs[0]));
        out = k.out;
    } else if (is_norm(app)) {
        NormKernel k = make_norm(app, s.dims[1], s.dims[0]);
        for (auto &stat : k.stats) stat.second.compute_root();
        for (size_t i = 0; i < k.inputs.size(); i++) k.inputs[i].set(wrap(inputs[i]));
        out = k.out;
    } else if (app == "gelu") {
        PointwiseKernel k = make_pointwise("gelu", Float(16), s.dims[1], s.dims[0]);
        k.inputs[0].set(wrap(inputs[0]));
        out = k.out;
    } else if (app == "mlp") {
        MlpKernel k = make_mlp(s.dims[0], s.dims[1], s.dims[2]);
        schedule_mlp(k, "cpu");
        ImageParam params[] = {k.x, k.w1, k.b1, k.w2, k.b2};
        for (size_t i = 0; i < 5; i++) params[i].set(wrap(inputs[i]));
        out = k.out;
    } else if (app == "gated_mlp") {
        GatedMlpKernel k = make_gated_mlp(s.dims[0], s.dims[1], s.dims[2]);
        schedule_gated_mlp(k, "cpu");
        ImageParam params[] = {k.x, k.w1, k.w3, k.w2};
        for (size_t i = 0; i < 4; i++) params[i].set(wrap(inputs[i]));
        out = k.out;
    } else if (app == "attention") {
        AttentionKernel k = make_attention(s.dims[0], s.dims[1]);
        schedule_attention(k, "cpu");
        k.q.set(wrap(inputs[0]));
        k.k.set(wrap(inputs[1]));
        k.v.set(wrap(inputs[2]));
        out = k.out;
    } else if (is_flash(app)) {
        FlashAttentionKernel k = make_flash_attention_for(app, s.dims);
        schedule_flash_attention(k, "cpu", 1);
        k.q.set(wrap(inputs[0]));
        k.k.set(wrap(inputs[1]));
        k.v.set(wrap(inputs[2]));
        out = k.out;
    } else if (app == "transpose") {
        TransposeKernel k = make_transpose(s.dims[1], s.dims[0]);
        k.in.set(wrap(inputs[0]));
        out = k.out;
    } else if (app == "qlinear") {
        QLinearKernel k = make_qlinear(s.dims[0], s.dims[1], s.dims[2]);
        schedule_qlinear(k, "cpu");
        k.a.set(wrap(inputs[0]));
        k.w.set(wrap(inputs[1]));
        k.scale.set(wrap(inputs[2]));
        out = k.out;
    } else if (app == "stencil") {
        StencilKernel k = make_stencil(s.dims[1], s.dims[0]);
        k.in.set(wrap(inputs[0]));
        out = k.out;
    } else if (app == "conv1d") {
        Conv1dKernel k = make_conv1d(s.dims[1], s.dims[0], kConv1dTaps, true);
        k.in.set(wrap(inputs[0]));
        k.w.set(wrap(inputs[1]));
        out = k.out;
    } else if (is_rope(app)) {
        RopeKernel k = make_rope(s.dims[1], s.dims[0], kRopeHeadDim, rope_style(app));
        k.in.set(wrap(inputs[0]));
        k.cos.set(wrap(inputs[1]));
        k.sin.set(wrap(inputs[2]));
        out = k.out;
    } else if (app == "linear") {
        MatmulKernel k = make_linear(s.dims[0], s.dims[1], s.dims[2]);
        schedule_bmm(k, "cpu");
        k.a.set(wrap(inputs[0]));
        k.w.set(wrap(inputs[1]));
        k.bias.set(wrap(inputs[2]));
        out = k.out;
    } else {
        MatmulKernel k = make_bmm(s.dims[0], s.dims[1], s.dims[2], s.dims[3]);
        schedule_bmm(k, "cpu");
        k.a.set(wrap(inputs[0]));
        k.w.set(wrap(inputs[1]));
        out = k.out;
    }
    out.realize(Pipeline::RealizationArg(want), cpu_reference_target());
    return want;
}

std::string Tolerance::text() const {
    if (!absolute()) return std::to_string(ulp) + " ULP";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0e abs", abs);
    return buf;
}

Tolerance tolerance(const std::string &app) {
    check_app(app);
    Tolerance t;
    if (app == "softmax") t.ulp = 2;
    if (app == "mlp" || app == "gated_mlp") t.abs = 1e-3;
    if (app == "attention") t.abs = 1e-4;
    if (is_flash(app)) t.abs = 2.5e-4;  // also the running maxima's rescaling
    return t;
}

ErrorCheck check_error(const std::string &app, const Runtime::Buffer<> &got, const Runtime::Buffer<> &want) {
    const Tolerance tol = tolerance(app);
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
