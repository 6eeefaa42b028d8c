// Differential testing of compiled kernels: the same algorithm is realised by Halide on the CPU
// (the reference) and compiled for Spyre and run on the simulator; results are compared exactly or
// within a stated number of ULPs.
#pragma once

#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../channel_floor.h"
#include "spyre.h"

namespace spyre::testing {

// An algorithm: builds fresh Funcs from fresh ImageParams (so two instances never share schedules).
struct Kernel {
    std::vector<Halide::ImageParam> inputs;
    Halide::Func output;
    std::map<std::string, Halide::Func> funcs;  // named stages: for schedules; computed at root on the CPU
    std::map<std::string, Halide::Var> vars;
};
using Algorithm = std::function<Kernel()>;
using Schedule = std::function<void(Kernel &)>;

// Random input of the given shape and type with values in [lo, hi] (whole numbers for int32).
Halide::Runtime::Buffer<> random_buffer(halide_type_t t, const std::vector<int> &shape, float lo, float hi, uint32_t seed);

struct Comparison {
    double max_abs_error = 0;
    int64_t max_ulp = 0;  // in the output type (for int32, the difference in value)
    int64_t mismatches = 0;
    std::string first_mismatch;
};
Comparison compare(const Halide::Runtime::Buffer<> &got, const Halide::Runtime::Buffer<> &want);

// Options for a kernel named "k" with these argument shapes (row-major layouts).
CompileOptions kernel_options(const std::vector<std::vector<int64_t>> &inputs, const std::vector<int64_t> &output);

// The message of the spyre::Error `f` throws, or "(no error)" when it throws none.
std::string error_of(const std::function<void()> &f);

// The refusals a test that walks a space of candidate schedules expects. Some candidates of a space
// are refused by the back end, and a test that compiles many of them must go past those; each
// refusal it meets is given to add(), which records a failure unless the exception is a
// spyre::Error of kind Refused or LxOverflow whose message holds one of `expected` (the kinds of
// refusal the test knows of). So an internal error, an exception from outside the back end, or a
// refusal of a new kind fails the test instead of being skipped. A test whose candidates must all
// compile expects none.
class RefusalLog {
public:
    explicit RefusalLog(std::vector<std::string> expected) : expected_(std::move(expected)) {}
    void add(const std::exception &x, const std::string &candidate);
    int count() const { return count_; }

private:
    std::vector<std::string> expected_;
    int count_ = 0;
};

struct DiffResult {
    Comparison cmp;
    SimStats stats;
    DeviceProgram program;
    Halide::Runtime::Buffer<> got, want;  // the device's output and the CPU's
    int64_t input_bytes = 0;              // the host inputs' bytes (dense, as the CPU holds them)
    MachineDesc machine;                  // the machine the program ran on
};

using testing_floor::channel_floor_us;  // ../channel_floor.h

// Checks a differential run's modelled time and traffic against what its tensors alone demand:
// at least every input byte read and every output byte written, and at least channel_floor_us of
// those bytes. A model that forgot to time its DMAs, or moved fewer bytes than the kernel needs,
// fails it (where `us > 0` did not).
::testing::AssertionResult meets_channel_floor(const DiffResult &r);

// The schedule spyre::auto_schedule chooses for the given argument shapes, `evaluations` of its
// candidates timed on the simulator.
Schedule auto_scheduled(const std::vector<std::vector<int64_t>> &inputs, const std::vector<int64_t> &output,
                        int evaluations = 32);

// Realises `alg` on the CPU (default Halide schedule: everything inline or as the algorithm says,
// serial) and the Spyre-scheduled instance on the simulator, on the same random inputs.
DiffResult run_differential(const Algorithm &alg, const Schedule &spyre_schedule,
                            const std::vector<std::vector<int>> &input_shapes, const std::vector<int> &output_shape,
                            float lo = -4, float hi = 4, const MachineDesc &machine = {});
// The same on given inputs (shapes and types as the algorithm's arguments).
DiffResult run_differential_on(const Algorithm &alg, const Schedule &spyre_schedule,
                               const std::vector<Halide::Runtime::Buffer<>> &inputs, const std::vector<int> &output_shape,
                               const MachineDesc &machine = {});
// The same, compiled with the options `spyre_schedule` returns, given the default ones (row-major
// layouts): a schedule that chooses its arguments' layouts. The inputs are stickified into them.
DiffResult run_differential_with_options(const Algorithm &alg,
                                         const std::function<CompileOptions(Kernel &, const CompileOptions &)> &spyre_schedule,
                                         const std::vector<Halide::Runtime::Buffer<>> &inputs,
                                         const std::vector<int> &output_shape, const MachineDesc &machine = {});

// A 3x3 box blur of an fp16 input through BoundaryConditions::repeat_edge, as a user writes it:
// the pipeline whose Halide-made Funcs (lambda_<n>, repeat_edge) messages must not name.
struct BorderedBlur {
    Halide::ImageParam in{Halide::Float(16), 2, "in"};
    Halide::Var x{"x"}, y{"y"};
    Halide::Func edge, blur{"blur"};
    BorderedBlur() {
        edge = Halide::BoundaryConditions::repeat_edge(in);
        Halide::Expr s = Halide::cast<Halide::float16_t>(0.0f);
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) s = s + edge(x + dx, y + dy);
        blur(x, y) = s;
    }
    // What the user wrote (and a Var `k` the tests may add): the rest are Halide's.
    std::set<std::string> declared() const { return {"in", "x", "y", "blur", "k"}; }
};

}  // namespace spyre::testing
