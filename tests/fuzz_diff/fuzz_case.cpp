#include "fuzz_case.h"

#include <algorithm>
#include <cctype>
#include <random>
#include <set>
#include <stdexcept>

#include "device/error.h"
#include "device/half.h"
#include "fuzz_case_check.h"
#include "leaked_names.h"
#include "random_pipeline.h"
#include "random_schedule.h"
#include "spyre.h"

namespace spyre::fuzzdiff {

using namespace Halide;

const char *verdict_name(Verdict v) {
    switch (v) {
    case Verdict::Match: return "match";
    case Verdict::Refused: return "refused";
    case Verdict::InvalidSchedule: return "refused (Halide refuses the schedule too)";
    case Verdict::LeakedName: return "leaked name";
    case Verdict::Mismatch: return "mismatch";
    case Verdict::Internal: return "internal error";
    case Verdict::Crash: return "crash";
    case Verdict::Timeout: return "timeout";
    case Verdict::FuzzerBug: return "fuzzer bug";
    }
    return "?";
}

namespace {

// The case's own random stream `stream`: 0 the pipeline, 1 the schedule, 2 the input data.
std::mt19937 stream(uint32_t seed, int index, uint32_t which) {
    std::seed_seq seq{seed, uint32_t(index), which};
    return std::mt19937(seq);
}

// Runs `step`, turning what it throws into a verdict: a spyre::Error or Halide's error about the
// user's schedule is a refusal unless its kind is Internal; Halide's internal errors and anything
// else thrown are internal errors. A refusal that names what the user never wrote (r.cpp, the
// pipeline and its schedule so far, declares the names they did) is a leaked name.
template <typename F>
bool guarded(CaseResult &r, const std::string &what, F &&step) {
    bool internal = false;  // the error's kind, chosen where it was thrown
    try {
        step();
        return true;
    } catch (const Error &e) {
        r.message = e.what();
        internal = e.kind() == ErrorKind::Internal;
    } catch (const Halide::CompileError &e) {
        r.message = std::string("Halide: ") + e.what();
    } catch (const Halide::InternalError &e) {
        r.message = std::string("Halide internal error: ") + e.what();
        r.verdict = Verdict::Internal;
        return false;
    } catch (const std::exception &e) {
        r.message = what + ": internal: uncaught " + e.what();
        r.verdict = Verdict::Internal;
        return false;
    }
    r.verdict = internal ? Verdict::Internal : Verdict::Refused;
    // An error must speak in the names the user wrote (docs/directives.md, "Compile-time errors").
    if (std::string g = leaked_name(r.message, declared_names(r.cpp)); r.verdict == Verdict::Refused && !g.empty()) {
        r.message = "the error names '" + g + "', which the user never wrote: " + r.message;
        r.verdict = Verdict::LeakedName;
    }
    return false;
}

Runtime::Buffer<> random_input(const InputSpec &s, std::mt19937 &rng) {
    Runtime::Buffer<> b(s.type, s.shape);
    std::uniform_int_distribution<int> whole(s.lo, s.hi);
    std::uniform_real_distribution<float> real(float(s.lo), float(s.hi));
    for (size_t i = 0; i < b.number_of_elements(); i++) {
        void *d = b.data();
        if (s.type == Float(16)) static_cast<uint16_t *>(d)[i] = float_to_half(real(rng));
        else if (s.type == Float(32)) static_cast<float *>(d)[i] = real(rng);
        else if (s.type == Int(32)) static_cast<int32_t *>(d)[i] = whole(rng);
        else static_cast<int8_t *>(d)[i] = int8_t(whole(rng));
    }
    return b;
}

// About one argument in three of two dims or more in another layout sticked on dim 0: its other
// dims and its stick count in a random order (backend/compiler/layout_dma.h).
void random_layouts(Pipe &p, std::mt19937 &rng) {
    std::vector<std::vector<int>> shapes;
    for (const InputSpec &s : p.specs) shapes.push_back(s.shape);
    shapes.push_back(p.out_shape);
    p.layouts.assign(shapes.size(), DeviceLayout{});
    for (size_t i = 0; i < shapes.size(); i++) {
        const int rank = int(shapes[i].size());
        if (rank < 2 || std::uniform_int_distribution<int>(0, 2)(rng) != 0) continue;
        std::vector<int> order(static_cast<size_t>(rank));
        for (int d = 0; d < rank; d++) order[size_t(d)] = rank - 1 - d;
        std::shuffle(order.begin(), order.end(), rng);
        p.layouts[i] = DeviceLayout{0, order};
    }
}

// The pipeline's outputs realised by Halide on the host, its inputs bound: the reference target,
// fp16 NaNs kept (dsl/cpu_reference.h).
std::vector<Buffer<>> realize_on_cpu(Pipe &p) {
    std::vector<Buffer<>> outs;
    for (const Func &o : p.outputs) outs.emplace_back(o.output_types()[0], p.out_shape);
    Pipeline pipeline(p.outputs);
    keep_fp16_nans(pipeline);
    pipeline.realize(Realization(outs), cpu_reference_target());
    return outs;
}

// Halide's own answer to case `index`'s hand schedule (or, for an autoscheduled case, to the bare
// algorithm, every Func inlined as Halide's default): the pipeline rebuilt and realised on the
// host with the case's inputs. Empty when Halide runs it; otherwise Halide's error (a bounds check
// failing on an input or output buffer, an invalid compute_at).
// `case_cpp` is the case's C++ as run: the rebuilt schedule must print the same (a fuzzer bug
// otherwise, thrown as std::logic_error).
std::string halide_error_of_schedule(uint32_t seed, int index, bool autoscheduled, const std::string &case_cpp) {
    std::mt19937 prng = stream(seed, index, 0);
    Pipe p = random_pipeline(prng);
    std::mt19937 srng = stream(seed, index, 1);
    // The draw run_steps makes for auto_schedule before a hand schedule (single outputs only).
    if (p.outputs.size() == 1) (void)std::uniform_int_distribution<int>(0, 7)(srng);
    std::mt19937 drng = stream(seed, index, 2);
    std::vector<Runtime::Buffer<>> inputs;
    try {
        std::string cpp;
        if (!autoscheduled) {
            random_schedule(p, srng, cpp);
            if (case_cpp.find("// schedule\n" + cpp) == std::string::npos)
                throw std::logic_error("the rebuilt schedule differs from the case's:\n" + cpp);
        }
        for (size_t i = 0; i < p.specs.size(); i++) {
            inputs.push_back(random_input(p.specs[i], drng));
            p.inputs[i].set(Buffer<>(*inputs.back().raw_buffer()));
        }
        (void)realize_on_cpu(p);
    } catch (const Halide::InternalError &) {
        return "";  // not the schedule's fault: the device's refusal stands as a refusal
    } catch (const Error &) {
        return "";  // a directive refused by the back end's own rules, not Halide's
    } catch (const Halide::Error &e) {
        std::string m = e.what();
        if (m.rfind("Error: ", 0) == 0) m.erase(0, 7);
        while (!m.empty() && std::isspace(static_cast<unsigned char>(m.back()))) m.pop_back();
        return m.empty() ? "(no message)" : m;
    }
    return "";
}

// The steps of run_case; `summary` receives the autoscheduler's summary of its choice.
CaseResult run_steps(uint32_t seed, int index, const std::function<void(const CaseResult &)> &progress,
                     std::string &summary) {
    CaseResult r;
    auto report = [&] {
        if (progress) progress(r);
    };
    std::mt19937 prng = stream(seed, index, 0);
    Pipe dev = random_pipeline(prng);
    std::mt19937 lrng = stream(seed, index, 3);
    random_layouts(dev, lrng);
    r.family = dev.family;
    r.cpp = dev.cpp;
    for (size_t i = 0; i < dev.layouts.size(); i++)
        if (!dev.layouts[i].order.empty() && dev.layouts[i] != default_layout(int(dev.layouts[i].order.size())))
            r.cpp += "// layout of " + (i < dev.specs.size() ? "input " + dev.specs[i].name : std::string("the outputs")) +
                     ": " + layout_to_string(dev.layouts[i]) + "\n";
    std::mt19937 srng = stream(seed, index, 1);
    // The autoscheduler on about one case in eight (it takes single-output pipelines).
    r.autoscheduled = dev.outputs.size() == 1 && std::uniform_int_distribution<int>(0, 7)(srng) == 0;
    report();

    r.cpp += "// schedule\n";
    bool ok = guarded(r, "schedule", [&] {
        if (r.autoscheduled) r.cpp += auto_schedule_case(dev, seed * 7919u + uint32_t(index), summary);
        else random_schedule(dev, srng, r.cpp);
    });
    report();
    if (!ok) return r;

    DeviceProgram program;
    const CompileOptions opt = compile_options(dev);
    ok = guarded(r, "compile", [&] {
        if (dev.outputs.size() == 1) program = compile_for_spyre(dev.outputs[0], dev.inputs, opt);
        else program = compile_for_spyre(Pipeline(dev.outputs), dev.inputs, opt);
    });
    if (!ok) return r;
    if (dev.expect_refusal) {
        r.verdict = Verdict::Mismatch;
        r.message = "a stencil that reads outside its input (no boundary condition) compiled instead of being refused";
        return r;
    }

    std::mt19937 drng = stream(seed, index, 2);
    std::vector<Runtime::Buffer<>> inputs;
    for (const InputSpec &s : dev.specs) inputs.push_back(random_input(s, drng));
    SpyreRun run;
    try {
        run = run_on_spyre(program, inputs);
    } catch (const Error &e) {  // a program the compiler accepted must run
        r.verdict = e.kind() == ErrorKind::Internal ? Verdict::Internal : Verdict::Mismatch;
        r.message = std::string("the compiled program fails on the simulator: ") + e.what();
        return r;
    }

    // The CPU reference: the same algorithm, every stage at root, strict floats (op by op, as the
    // device computes).
    std::mt19937 prng2 = stream(seed, index, 0);
    Pipe ref = random_pipeline(prng2);
    std::vector<Runtime::Buffer<>> want;
    try {
        for (Stage &s : ref.stages) s.f.compute_root();
        for (size_t i = 0; i < inputs.size(); i++) ref.inputs[i].set(Buffer<>(*inputs[i].raw_buffer()));
        for (Buffer<> &b : realize_on_cpu(ref)) want.push_back(*b.get());
    } catch (const Halide::Error &e) {
        r.verdict = Verdict::FuzzerBug;
        r.message = std::string("the CPU reference fails: ") + e.what();
        return r;
    }
    // Every output, in the pipeline's order (the program's outputs come in that order).
    if (run.outputs.size() != want.size()) {
        r.verdict = Verdict::Mismatch;
        r.message = "the program gives " + std::to_string(run.outputs.size()) + " outputs, the pipeline has " +
                    std::to_string(want.size());
        return r;
    }
    for (size_t i = 0; i < want.size(); i++) {
        std::string diff = compare_outputs(run.outputs[i], want[i], ref.transcendental ? kTranscendentalUlp : 0);
        if (!diff.empty()) {
            r.verdict = Verdict::Mismatch;
            r.message = (want.size() > 1 ? "output " + std::to_string(i) + ": " : std::string()) + diff;
            return r;
        }
    }
    return r;
}

}  // namespace

std::string case_family(uint32_t seed, int index) {
    std::mt19937 prng = stream(seed, index, 0);
    return random_pipeline(prng).family;
}

CaseResult run_case(uint32_t seed, int index, const std::function<void(const CaseResult &)> &progress) {
    std::string summary;
    CaseResult r = run_steps(seed, index, progress, summary);
    // The summary is what auto_schedule reports of its choice: in the user's names too.
    const std::string g = leaked_name(summary, declared_names(r.cpp));
    if (!g.empty() && (r.verdict == Verdict::Match || r.verdict == Verdict::Refused)) {
        r.message = "the auto_schedule summary names '" + g + "', which the user never wrote: " + summary +
                    (r.message.empty() ? "" : "; then: " + r.message);
        r.verdict = Verdict::LeakedName;
    }
    // A refusal is a refusal of a valid program only if Halide runs the same thing: a split that
    // rounds reads past an input, or a compute_at Halide rejects, is refused on the CPU as well
    // (for auto_schedule, the algorithm itself: a stencil reading outside its input).
    if (r.verdict == Verdict::Refused) {
        try {
            r.halide_error = halide_error_of_schedule(seed, index, r.autoscheduled, r.cpp);
            if (!r.halide_error.empty()) r.verdict = Verdict::InvalidSchedule;
        } catch (const std::logic_error &e) {
            r.verdict = Verdict::FuzzerBug;
            r.message = e.what();
        }
    }
    return r;
}

}  // namespace spyre::fuzzdiff
