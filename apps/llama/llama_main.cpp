// spyre-llama: runs a Llama decoder on the simulated device, kernel by kernel, and prints what
// each kernel and each step took.
//   spyre-llama --config tiny --prompt 64 --steps 8         numerics: greedy tokens, checked
//                                                           against Halide's CPU realisation
//   spyre-llama --config 8b --timing-only --phase decode --context 2048 --batch 1
//   spyre-llama --config 8b --timing-only --phase prefill --prompt 2048
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <map>

#include "device/error.h"
#include "llama_figures.h"
#include "llama_model.h"

namespace {

using namespace spyre::llama;

void print_figures(const StepFigures &f, int layers, const std::string &phase, int batch, const spyre::MachineDesc &m) {
    std::printf("  %-14s %10s %10s %6s %10s  %-7s %-30s %s\n", "stage", "us", "sol_us", "sol", "formula_us", "bound",
                "schedule", "model validity");
    auto row = [](const Figure &g) {
        std::string sched = g.schedule;
        if (g.launches > 1) sched += (sched.empty() ? "(" : " (") + std::to_string(g.launches) + " launches)";
        std::printf("  %-14s %10.1f %10.1f %6.2f %9.1f%s  %-7s %-30s %s\n", g.name.c_str(), g.us, g.sol_us, g.sol_frac(),
                    g.formula_us, g.faster_than_formula() ? "!" : " ", g.bound.c_str(), sched.c_str(),
                    g.validity.empty() ? "within the calibrated range" : g.validity.c_str());
    };
    for (const Figure &g : f.layer_stages) row(g);
    row(f.layer);
    for (const Figure &g : f.outside) row(g);
    std::printf("  model (%d layers, embedding and head): %.1f us on the device + %d launches x %.0f us on the host "
                "(host_launch_ns, an assumption) = %.1f us",
                layers, f.model_us, f.launches, m.host_launch_ns / 1000.0, f.model_with_host_us());
    if (phase == "decode")
        std::printf(" = %.1f tokens/s (batch %d; %.1f on the device alone)\n", batch / (f.model_with_host_us() * 1e-6),
                    batch, batch / (f.model_us * 1e-6));
    else
        std::printf(" to the first token\n");
    std::printf("  IBM's formula for the same kernels: %.1f us on the device (formula_us; '!': more than 25%% faster "
                "than it)\n",
                f.model_formula_us);
    for (const std::vector<Figure> *list : {&f.layer_stages, &f.outside})
        for (const Figure &g : *list)
            if (g.faster_than_formula()) {
                auto leans_on = [&](const char *key) {
                    return (',' + g.validity + ',').find(std::string(",") + key + ",") != std::string::npos;
                };
                std::printf("    %s at %.2f of the formula: %s\n", g.name.c_str(), g.us / g.formula_us,
                            leans_on("ring") ? "its operands shared over the ring, which IBM's compiler does not do "
                                               "(the formula prices them as replicated reads: docs/device_model.md)"
                            : leans_on("short_tiles")
                                ? "short tiles, whose underfill the formula prices and the model does not reproduce: "
                                  "the formula is likely the nearer (docs/device_model.md, \"What the model does not "
                                  "reproduce\")"
                                : "no mechanism named for it: read it with care");
            }
    if (phase == "decode")
        std::printf("  public figure to hold it against: Granite-3.3-8B (40 layers, a smaller vocabulary) on "
                    "torch-spyre's Inductor stack, about 190 ms per token at batch 1, host time included "
                    "(torch-spyre PR #4391)\n");
    if (!f.layer.validity.empty())
        std::printf("  model validity: the layer's kernels lean on %s, outside the calibrated range "
                    "(docs/device_model.md, \"Where the model is validated\")\n",
                    f.layer.validity.c_str());
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"Run a Llama decoder on the simulated Spyre device."};
    std::string config = "tiny", phase = "both";
    int prompt = 64, steps = 8, context = 2048, batch = 1, layers = 0;
    bool timing_only = false, check_cpu = false, exact_timing = false;
    std::string trace;
    app.add_option("--config", config, "model: tiny or 8b")->capture_default_str();
    app.add_option("--phase", phase, "prefill, decode or both (a prefill then decode steps)")->capture_default_str();
    app.add_option("--prompt", prompt, "prompt tokens of the prefill")->capture_default_str();
    app.add_option("--steps", steps, "decode steps")->capture_default_str();
    app.add_option("--context", context, "timing-only decode: positions already in the cache")->capture_default_str();
    app.add_option("--batch", batch, "sequences decoded together")->capture_default_str();
    app.add_option("--layers", layers, "layers run (0: all)")->capture_default_str();
    app.add_flag("--timing-only", timing_only, "modelled time only (no weights, no numerics)");
    app.add_flag("--exact-timing", exact_timing,
                 "with --timing-only: run every loop iteration instead of summarising steady loops (slower; "
                 "checks a summarised figure)");
    app.add_flag("--check-cpu", check_cpu, "also run Halide's CPU realisation of the same kernels and compare");
    std::string schedules = "fastest";
    app.add_option("--schedules", schedules,
                   "named (the stages' named schedules), auto (spyre::auto_schedule's) or fastest (of both, "
                   "by modelled time)")
        ->capture_default_str();
    std::string tuning_db;
    app.add_option("--tuning-db", tuning_db,
                   "with --schedules auto or fastest: read each kernel's search from this SQLite file, and store "
                   "new searches there (spyre-tune's database)");
    int auto_evaluations = 32;
    app.add_option("--auto-evaluations", auto_evaluations, "candidates each kernel's search times")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--trace", trace, "write the last step's timeline (Chrome trace events, for Perfetto) here");
    CLI11_PARSE(app, argc, argv);
    try {
        const LlamaConfig c = llama_config(config);
        ModelOptions o;
        o.timing_only = timing_only;
        o.summarize_loops = !exact_timing;
        o.batch = batch;
        o.layers = layers;
        o.max_context = std::max(prompt + steps, context + steps);
        o.trace_path = trace;
        o.schedules = ModelOptions::schedules_by_name(schedules);
        o.tuning_db = tuning_db;
        o.auto_evaluations = auto_evaluations;
        LlamaModel model(c, o);
        if (timing_only) {
            if (phase == "prefill" || phase == "both") {
                StepResult r = model.prefill(std::vector<int>(size_t(prompt), 0));
                std::printf("prefill of %d tokens:\n", prompt);
                print_figures(step_figures(c, {prompt, 1, prompt}, r, o.machine), c.layers, "prefill", 1, o.machine);
            }
            if (phase == "decode" || phase == "both") {
                model.set_context(context);
                StepResult r = model.decode(std::vector<int>(size_t(batch), 0));
                std::printf("decode step, batch %d, context %d:\n", batch, context + 1);
                print_figures(step_figures(c, {1, batch, context + 1}, r, o.machine), c.layers, "decode", batch, o.machine);
            }
            return 0;
        }
        // Numerics: a prompt of pseudo-random ids, then greedy decoding.
        std::vector<int> ids(static_cast<size_t>(prompt));
        for (int i = 0; i < prompt; i++) ids[size_t(i)] = int((uint32_t(i) * 2654435761u >> 7) % uint32_t(c.vocab));
        std::unique_ptr<LlamaModel> cpu;
        if (check_cpu) {
            ModelOptions oc = o;
            oc.cpu = true;
            cpu = std::make_unique<LlamaModel>(c, oc);
        }
        std::vector<int> next = model.prefill(ids).tokens, cpu_next;
        if (cpu) cpu_next = cpu->prefill(ids).tokens;
        for (int s = 0; s <= steps; s++) {
            std::printf("step %d: token %d", s, next[0]);
            if (cpu) {
                const std::vector<float> a = model.logits(0), b = cpu->logits(0);
                double worst = 0;
                for (size_t i = 0; i < a.size(); i++) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
                double largest = 0;
                for (float v : a) largest = std::max(largest, double(std::fabs(v)));
                std::printf(" (CPU: %d; logits up to %.3g in size, differ by at most %.3g)", cpu_next[0], largest, worst);
            }
            std::printf("\n");
            if (s == steps) break;
            next = model.decode(next).tokens;
            if (cpu) cpu_next = cpu->decode(cpu_next).tokens;
        }
        return 0;
    } catch (const spyre::Error &e) {
        std::fprintf(stderr, "spyre-llama: error: %s\n", e.what());
        return 1;
    }
}
