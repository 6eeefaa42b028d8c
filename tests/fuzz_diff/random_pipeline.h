// Random Halide algorithms for the differential fuzzer (spyre-fuzz-diff): one call builds one
// pipeline of a randomly chosen family (pointwise chains of mixed types, scans along x or y,
// reductions into 1-D outputs and reductions of reductions, a producer with several consumers,
// several outputs, selects on coordinates, concatenation, gathers, stencils under every boundary
// condition or none, down- and upsampling), as fresh Halide objects and as C++ text. The same seed builds the same
// pipeline again, which is how the CPU reference and the scheduled instance are made.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "Halide.h"
#include "device/layout.h"

namespace spyre::fuzzdiff {

// An argument of the pipeline, with the values its random data takes.
struct InputSpec {
    std::string name;
    Halide::Type type;
    std::vector<int> shape;  // Halide order
    int lo = -3, hi = 3;     // value range (whole numbers for integer types)
};

// A Func a schedule may place (everything but the outputs and the boundary-condition wrappers).
struct Stage {
    Halide::Func f;
    std::vector<Halide::Var> vars;  // its pure variables, innermost first
    bool has_update = false;        // scans and explicit accumulators
};

struct Pipe {
    std::string family;  // the case's category (fuzz_diff_main.cpp counts per family)
    std::vector<InputSpec> specs;
    std::vector<Halide::ImageParam> inputs;
    std::vector<Halide::Func> outputs;  // one, or two for the several-outputs family
    std::vector<Halide::Var> out_vars;  // the outputs' pure variables, innermost first
    std::vector<int> out_shape;         // shape of every output
    std::vector<Stage> stages;          // in producer-to-consumer order
    bool transcendental = false;        // reaches the output through exp or tanh (compared with a tolerance)
    bool expect_refusal = false;        // reads outside its input without a boundary condition
    std::string cpp;                    // the algorithm as C++
    // Device layouts, per input then one for every output (empty: all row-major); random_layouts.
    std::vector<spyre::DeviceLayout> layouts;
};

// The pipeline of one case: `rng` is the case's own generator (fuzz_case.h).
Pipe random_pipeline(std::mt19937 &rng);

// The families random_pipeline picks from, for the summary's order.
const std::vector<std::string> &pipeline_families();

}  // namespace spyre::fuzzdiff
