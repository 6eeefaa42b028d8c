// What an app's catalogue entry is built from. Each app describes itself once, in its own folder,
// next to its generator: apps/<folder>/<folder>_app.cpp defines `std::vector<AppInfo>
// catalogue_<folder>()` (an AppInfo per app the folder holds), and CMake (apps/report) collects
// every such file into the catalogue, which app_infos() gives in the entries' `order`. The helpers
// here build the shared parts of the row apps, the matmuls and the MLPs.
#pragma once

#include <string>
#include <vector>

#include "kernel_catalog.h"
#include "norms.h"

namespace spyre::report {

inline std::string kv(const char *k, int v) { return std::string(k) + "=" + std::to_string(v); }

// The Spyre schedules of a schedules/ list (every schedule but the CPU reference's).
inline std::vector<std::string> without_cpu(const std::vector<std::string> &all) {
    std::vector<std::string> s;
    for (const std::string &n : all)
        if (n != "cpu") s.push_back(n);
    return s;
}

// Odd shapes of the row apps (rows x cols): not whole sticks (33, 100, 130 columns), not whole core
// shares (1, 7, 33 rows), and model widths where fixed tiles once overflowed LX.
inline const std::vector<std::string> kOddRows = {"1x100", "7x33", "1x8192", "33x100", "100x130", "70x64"};
inline const std::vector<std::string> kOddRowsLarge = {"1151x8192", "4096x8192", "1151x100"};

// An app over rows of an fp16 {cols, rows} tensor (shape rows x cols): softmax, the norms, gelu,
// stencil, transpose, conv1d, rope. Its inputs default to the one {cols, rows} tensor and its output
// to {cols, rows}; the spyre-gen parameters are cols= and rows=.
inline AppInfo row_app(const std::string &name, std::function<std::vector<std::string>()> schedules,
                       std::function<AppKernel(const Shape &)> kernel) {
    AppInfo a;
    a.name = name;
    a.generator = name;
    a.dims = {"rows", "cols"};
    a.report_shape_option = "shape";
    a.report_cores_option = "";
    a.schedules = std::move(schedules);
    a.generator_params = [](const Shape &s) { return std::vector<std::string>{kv("cols", s.dims[1]), kv("rows", s.dims[0])}; };
    a.inputs = [](const Shape &s) { return std::vector<std::vector<int>>{{s.dims[1], s.dims[0]}}; };
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[1], s.dims[0]}; };
    a.kernel = std::move(kernel);
    a.shapes = {"512x1024", 32, "64x128", 32, kOddRows, kOddRowsLarge};
    return a;
}

// layernorm and rmsnorm (`op`): rows x cols; the inputs are set by each (gamma, and beta).
inline AppInfo norm_app(const std::string &op) {
    return row_app(op, [] { return norm_schedules(); }, [op](const Shape &s) {
        NormKernel k = make_norm(op, s.dims[1], s.dims[0]);
        return AppKernel{k.out, k.inputs, [k](const std::string &n, const MachineDesc &m) mutable { schedule_norm(k, n, m); },
                         [k]() mutable {
                             for (auto &stat : k.stats) stat.second.compute_root();
                         }};
    });
}

// linear and qlinear: {M, K, N} (rows x inner x cols), split over Shape::cores, checked in ULP of
// inputs in [-2, 2]; bmm sets its own dims.
inline AppInfo matmul_app_base(const std::string &name) {
    AppInfo a;
    a.name = name;
    a.generator = name;
    a.takes_cores = true;
    a.input_range = 2;
    a.dims = {"M", "K", "N"};
    a.report_shape_option = name + "-shape";
    a.generator_params = [](const Shape &s) {
        return std::vector<std::string>{kv("rows", s.dims[0]), kv("inner", s.dims[1]), kv("cols", s.dims[2]), kv("cores", s.cores)};
    };
    a.shapes.odd = {"1x100x100", "7x64x100", "33x130x70"};
    a.shapes.odd_large = {"1151x100x8192"};
    return a;
}

// mlp and gated_mlp: dim x hidden x rows, split over Shape::cores, checked in absolute error of
// inputs in [-0.25, 0.25] (tanh, exp).
inline AppInfo mlp_app_base(bool gated) {
    AppInfo a;
    a.name = gated ? "gated_mlp" : "mlp";
    a.generator = a.name;
    a.dims = {"dim", "hidden", "rows"};
    a.takes_cores = true;
    a.report_shape_option = gated ? "gated-mlp-shape" : "mlp-shape";
    a.report_cores_option = "mlp-cores";
    a.generator_params = [](const Shape &s) {
        return std::vector<std::string>{kv("dim", s.dims[0]), kv("hidden", s.dims[1]), kv("rows", s.dims[2]), kv("cores", s.cores)};
    };
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[0], s.dims[2]}; };
    a.input_range = 0.25f;
    a.tolerance.abs = 1e-3;
    a.shapes = {gated ? "256x1024x256" : "256x2048x256", 32, "64x256x64", 2, {"100x200x1", "64x100x33", "130x64x7"},
                {"64x100x1151"}};
    return a;
}

}  // namespace spyre::report
