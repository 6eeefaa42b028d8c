// Every app of schedules/ with its Spyre schedules, as spyre-bench and spyre-report see them: the
// shapes of its buffers, its device program for a schedule (compiled from schedules/, the same
// kernels and schedules the Generators of apps/<name>/ apply), random inputs and Halide's CPU
// reference (the generators' `schedule=cpu`), and a ULP comparison.
//
// Apps and shapes:
//   softmax, layernorm, rmsnorm, gelu: {rows, cols}, an fp16 input of {cols, rows} (Halide order);
//                                      the norms also take gamma (and beta) of {cols}.
//   bmm: {B, M, K, N}, A {K, M, B} x W {N, K} -> {N, M, B}, split over `bmm_cores` cores.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"
#include "device/program.h"

namespace spyre::report {

// softmax, layernorm, rmsnorm, gelu, bmm.
const std::vector<std::string> &app_names();
// The app's Spyre schedules, in the order of schedules/ (the first is the report's baseline).
std::vector<std::string> app_schedules(const std::string &app);
// The spyre-gen generator of the app ("" for bmm, which has none).
std::string app_generator(const std::string &app);
// "rows x cols" or "B x M x K x N".
std::string shape_doc(const std::string &app);

struct Shape {
    std::vector<int> dims;  // {rows, cols} or {B, M, K, N}
    int bmm_cores = 32;     // bmm only
    std::string text() const;  // "512x1024", "4x128x512x1024"
};
// Parses "512x1024" (rows x cols) or "4x128x512x1024"; throws spyre::Error on a bad one.
Shape parse_shape(const std::string &app, const std::string &text);

// Buffer shapes in Halide order.
std::vector<std::vector<int>> input_shapes(const std::string &app, const Shape &s);
std::vector<int> output_shape(const std::string &app, const Shape &s);

// The device program of `app` with `schedule` (throws spyre::Error or Halide::CompileError).
DeviceProgram compile_kernel(const std::string &app, const std::string &schedule, const Shape &s,
                             const MachineDesc &machine = {}, const std::string &kernel_name = "");

// Seeded random inputs (fp16, uniform in [-4, 4]; [-2, 2] for bmm).
std::vector<Halide::Runtime::Buffer<>> random_inputs(const std::string &app, const Shape &s, uint32_t seed = 1234);
// Halide's CPU realisation of the app on `inputs` (spyre::cpu_reference_target()).
Halide::Runtime::Buffer<> cpu_reference(const std::string &app, const Shape &s,
                                        const std::vector<Halide::Runtime::Buffer<>> &inputs);
// ULPs the device may differ from the CPU by (as the compiler tests check): 2 for softmax (exp),
// 0 otherwise.
int64_t ulp_tolerance(const std::string &app);

// The largest distance between `got` and `want` in representable values of their (fp16 or fp32)
// type; INT64_MAX when one is NaN and the other is not. Shapes must match.
int64_t max_ulp(const Halide::Runtime::Buffer<> &got, const Halide::Runtime::Buffer<> &want);

}  // namespace spyre::report
