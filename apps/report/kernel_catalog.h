// Every app of schedules/ with its Spyre schedules, as spyre-bench and spyre-report see them: the
// shapes of its buffers, its device program for a schedule (compiled from schedules/, the same
// kernels and schedules the Generators of apps/<name>/ apply), random inputs and Halide's CPU
// reference (the generators' `schedule=cpu`), and the comparison with its tolerance (ULPs, or an
// absolute bound for mlp and attention). Each app is one AppInfo entry, in its own folder
// (apps/<folder>/<folder>_app.cpp, catalogue_app.h); the
// functions below by app name read it, and the tests loop over app_infos() and its shapes.
//
// Apps and shapes:
//   softmax, layernorm, rmsnorm, gelu: {rows, cols}, an fp16 input of {cols, rows} (Halide order);
//                                      the norms also take gamma (and beta) of {cols}.
//   bmm: {B, M, K, N}, A {K, M, B} x W {N, K} -> {N, M, B}, split over `cores` cores.
//   linear: {M, K, N}, x {K, M, 1} x W {N, K} + bias {N} -> {N, M, 1}, split over `cores` cores.
//   mlp: {D, H, M} (dim x hidden x rows), x {D, M}, W1 {H, D}, b1 {H}, W2 {D, H}, b2 {D} -> {D, M},
//        split over `cores` cores (schedules/mlp.h).
//   gated_mlp: {D, H, M}, x {D, M}, W1 and W3 {H, D}, W2 {D, H} -> {D, M}, split over `cores` cores
//        (schedules/gated_mlp.h).
//   attention: {D, S} (head dim x sequence), Q, K, V {D, S} -> {D, S}, one core
//              (schedules/attention.h).
//   flash_attention: {D, S, H} (head dim x sequence x heads), Q, K, V {D, S, H} -> {D, S, H}, heads
//              over `cores` cores, the default tiles of flash_attention_tiles
//              (schedules/flash_attention.h). causal_attention: the same with the causal mask
//              (spyre-gen: flash_attention mask=causal).
//   transpose: {rows, cols}, an fp16 input of {cols, rows} -> {rows, cols}; rows whole sticks
//              (schedules/transpose.h).
//   qlinear: {M, K, N}, a {K, M} fp16 x w {N, K} int8 with scales {N} fp16 -> {N, M}, split over
//            `cores` cores (schedules/qlinear.h); random weights take every int8 code.
//   stencil: {rows, cols}, an fp16 input of {cols, rows} -> {cols, rows}, a 3-tap filter along the
//            rows with repeat_edge (schedules/stencil.h).
//   conv1d: {rows, cols} (channels x sequence), in {cols, rows} and w {rows, kConv1dTaps} ->
//           {cols, rows}, the causal depthwise convolution (schedules/conv1d.h).
//   rope: {rows, cols} (positions x heads * kRopeHeadDim), in {cols, rows}, cos and sin
//         {kRopeHeadDim, rows} -> {cols, rows}; cols whole heads (schedules/rope.h). rope_interleaved:
//         the same with pairs (2k, 2k + 1) instead of rotate half.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"
#include "device/program.h"
#include "auto_schedule.h"

namespace spyre::report {

// The catalogue's conv1d: causal, this many taps (the generator takes any).
constexpr int kConv1dTaps = 4;
// The catalogue's RoPE head size: half a head is half a stick, so the rotation is shifted reads.
constexpr int kRopeHeadDim = 64;

// softmax, layernorm, rmsnorm, gelu, bmm, linear, mlp, gated_mlp, attention, flash_attention,
// causal_attention, transpose, qlinear, stencil, conv1d, rope, rope_interleaved.
const std::vector<std::string> &app_names();
// The app's Spyre schedules, in the order of schedules/ (the first is the report's baseline), then
// "auto" (spyre::auto_schedule, autoschedule/auto_schedule.h) for every app but flash_attention and causal_attention (a
// Tuple stage, which the autoscheduler refuses).
std::vector<std::string> app_schedules(const std::string &app);
// The spyre-gen generator of the app (apps/<app>/: every app has one, of the app's name, but
// causal_attention, which is flash_attention with mask=causal; "" would mean none, and the report
// compiles such an app in process).
std::string app_generator(const std::string &app);
// "rows x cols", "B x M x K x N", "dim x hidden x rows" or "dim x seq".
std::string shape_doc(const std::string &app);
// Whether the app is split over Shape::cores (bmm, linear, mlp, gated_mlp); the others' core counts come from their
// schedules.
bool app_takes_cores(const std::string &app);

struct Shape {
    std::vector<int> dims;  // {rows, cols}, {B, M, K, N}, {D, H, M} or {D, S}
    int cores = 32;         // bmm and mlp only (app_takes_cores)
    std::string text() const;  // "512x1024", "4x128x512x1024"
};

// How far the device may be from the CPU (as the compiler tests check). Either in ULPs of the
// output type (abs == 0): 2 for softmax (exp), 0 for layernorm, rmsnorm, gelu and bmm; or, when
// abs > 0, in absolute value (ulp unused): 1e-3 for mlp and gated_mlp (tanh, exp), 1e-4
// for attention (exp moving a probability by one fp16 ULP), 2.5e-4 for flash_attention and causal_attention (the same,
// and the rescaling by the running maxima: one fp16 ULP below 0.5), where outputs near zero make ULPs
// meaningless.
struct Tolerance {
    int64_t ulp = 0;
    double abs = 0;
    bool absolute() const { return abs > 0; }
    std::string text() const;  // "2 ULP", "1e-03 abs"
};

// An app's algorithm at one shape: its output, its inputs in argument order, and how to schedule it
// (a named Spyre schedule over Shape::cores, or the CPU reference schedule). Halide's handles are
// shared, so the functions may outlive the call that built them.
struct AppKernel {
    Halide::Func out;
    std::vector<Halide::ImageParam> inputs;
    std::function<void(const std::string &schedule, const MachineDesc &machine)> schedule;
    std::function<void()> schedule_cpu = [] {};
};

// The shapes the report and the tests use for an app, in its dims order (Shape::text form).
struct AppShapes {
    std::string report;  // spyre-report's default and the timing-summary test's shape
    int report_cores = 32;
    std::string small;  // a quick one: the KTIR round trips
    int small_cores = 32;
    std::vector<std::string> odd;        // not whole sticks, core shares or tiles: run and checked
    std::vector<std::string> odd_large;  // model widths, odd too: compiled only
};

// Everything the catalogue knows of one app: the one place an app is described (its
// apps/<folder>/<folder>_app.cpp, catalogue_app.h).
// spyre-report, spyre-bench, the tests and the KTIR round trips loop over app_infos().
struct AppInfo {
    std::string name;
    int order = 0;                         // its place in app_infos() (and so in reports and benches)
    std::string generator;                 // spyre-gen's generator of the app (apps/<generator>/)
    std::vector<std::string> dims;         // the shape's dims in order: {"rows", "cols"}, {"B", "M", "K", "N"}
    bool takes_cores = false;              // split over Shape::cores (else its schedules choose)
    std::string report_shape_option;       // spyre-report's option for its shape ("shape", "bmm-shape", ...)
    std::string report_cores_option;       // and for its cores ("" when fixed at shapes.report_cores)
    std::function<std::vector<std::string>()> schedules;  // named Spyre schedules, the baseline first
    std::function<std::vector<std::string>(const Shape &)> generator_params;  // spyre-gen key=value
    std::function<std::vector<std::vector<int>>(const Shape &)> inputs;       // Halide order
    std::function<std::vector<int>(const Shape &)> output;
    float input_range = 4;            // random float inputs are uniform in [-r, r]
    std::vector<size_t> int8_inputs;  // inputs that are int8 (random ones take every code)
    Tolerance tolerance;
    std::function<AppKernel(const Shape &)> kernel;
    AppShapes shapes;
    // The most cores a shape can use (flash attention: its heads); Shape::cores beyond it idle.
    std::function<int(const Shape &)> max_cores = [](const Shape &) { return 1 << 20; };

    std::string shape_doc() const;  // dims joined by " x "
};

// Every app, in the order of app_names().
const std::vector<AppInfo> &app_infos();
// The app's entry; throws spyre::Error naming the known apps when there is none.
const AppInfo &app_info(const std::string &app);
// The generator's shape (and cores) parameters for `s`, as spyre-gen key=value arguments:
// cols=, rows= for softmax, the norms and gelu; batch=, rows=, inner=, cols=, cores= for bmm;
// dim=, hidden=, rows=, cores= for mlp; dim=, seq= for attention.
std::vector<std::string> generator_params(const std::string &app, const Shape &s);
// Parses a shape in the app's shape_doc order ("512x1024", "4x128x512x1024", ...); throws
// spyre::Error on a bad one.
Shape parse_shape(const std::string &app, const std::string &text);

// Buffer shapes in Halide order.
std::vector<std::vector<int>> input_shapes(const std::string &app, const Shape &s);
std::vector<int> output_shape(const std::string &app, const Shape &s);

// The device layouts of an app's arguments: ours (row-major, the stick count innermost), or
// torch-spyre's default for every argument of two dims or more (the stick count outside a dim,
// device/layout.h: torch_spyre_default_layout); with TorchSpyreWithIntermediates also every
// intermediate of two dims or more the schedule keeps in device memory (device_layout with its
// stick count outermost; its rows must be whole sticks). TorchSpyreEverywhere adds an intermediate to
// every app: the first input of two dims or more is read through a copy in device memory (its
// wrapper Func placed with device_root, in that layout too), and every LX intermediate of three dims
// or more is stored with its dims after the stick dimension reversed.
enum class ArgumentLayouts { RowMajor, TorchSpyre, TorchSpyreWithIntermediates, TorchSpyreEverywhere };

// The device program of `app` with `schedule` (throws spyre::Error or Halide::CompileError). With
// schedule "auto" and `search`, the autoscheduler's figures go there.
DeviceProgram compile_kernel(const std::string &app, const std::string &schedule, const Shape &s,
                             const MachineDesc &machine = {}, const std::string &kernel_name = "",
                             AutoResult *search = nullptr, ArgumentLayouts layouts = ArgumentLayouts::RowMajor);

// Seeded random inputs (fp16, uniform in [-4, 4]; [-2, 2] for bmm, [-0.25, 0.25] for mlp,
// [-1, 1] for attention, [-0.25, 0.25] for gated_mlp: the ranges the compiler tests use).
std::vector<Halide::Runtime::Buffer<>> random_inputs(const std::string &app, const Shape &s, uint32_t seed = 1234);
// The float inputs of random_inputs are uniform in [-r, r], r = input_range(app): the range its
// tolerance is stated for (2 for the matmuls, 0.25 for the MLPs, 1 for attention, 4 otherwise).
float input_range(const std::string &app);
// Halide's CPU realisation of the app on `inputs` (its `cpu` schedule, spyre::cpu_reference_target()).
Halide::Runtime::Buffer<> cpu_reference(const std::string &app, const Shape &s,
                                        const std::vector<Halide::Runtime::Buffer<>> &inputs);

Tolerance tolerance(const std::string &app);

// The device's error against the CPU, in the tolerance's kind.
struct ErrorCheck {
    bool ok = false;        // within the tolerance (false on a NaN mismatch)
    int64_t ulp = 0;        // max_ulp(got, want)
    double abs = 0;         // max_abs_error(got, want)
    std::string text;       // the figure the tolerance bounds: "0 ULP", "3.1e-05 abs", "NaN"
};
ErrorCheck check_error(const std::string &app, const Halide::Runtime::Buffer<> &got,
                       const Halide::Runtime::Buffer<> &want);
// The same against a tolerance given by the caller.
ErrorCheck check_error(const Tolerance &tol, const Halide::Runtime::Buffer<> &got, const Halide::Runtime::Buffer<> &want);

// The largest distance between `got` and `want` in representable values of their (fp16 or fp32)
// type; INT64_MAX when one is NaN and the other is not. Shapes must match.
int64_t max_ulp(const Halide::Runtime::Buffer<> &got, const Halide::Runtime::Buffer<> &want);
// The largest |got - want| (NaN pairs skipped); infinity when one is NaN and the other is not.
double max_abs_error(const Halide::Runtime::Buffer<> &got, const Halide::Runtime::Buffer<> &want);

}  // namespace spyre::report
