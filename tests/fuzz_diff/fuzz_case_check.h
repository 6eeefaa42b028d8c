// The comparison of one fuzz case's device output with Halide's CPU realisation: bit for bit, or
// within a tolerance in ULPs for pipelines that go through a transcendental op.
#pragma once

#include <string>

#include "Halide.h"

namespace spyre::fuzzdiff {

// Tolerance for outputs computed through exp or tanh: 2 ULP of the output type, the tolerance the
// project states for exp (docs/tools.md: softmax's 2 ULP; README: "exp differs by at most 2 fp16
// ULPs between Halide's CPU code and the device"). The fuzzer puts exp and tanh only as the last
// op of an output's value, so that no later op widens their difference. Every other op is exact:
// 0 ULP (integers: equal values). NaN matches NaN.
constexpr int kTranscendentalUlp = 2;

// "" when `got` matches `want` (same type and shape) within `ulp` ULPs; else the first element
// that differs, with both values and the distance.
std::string compare_outputs(const Halide::Runtime::Buffer<> &got, const Halide::Runtime::Buffer<> &want, int ulp);

}  // namespace spyre::fuzzdiff
