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
#include "llama_model.h"

namespace {

using namespace spyre::llama;

void print_runs(const StepResult &r, int layers_in_model, int layers_run) {
    // Per stage: the time of one layer's launches (layer 0) or of the launches outside the layers.
    std::map<std::string, double> stage_us, stage_mb;
    std::map<std::string, std::string> waits;
    std::vector<std::string> order;
    for (const KernelRun &k : r.runs) {
        if (k.layer > 0) continue;
        const std::string key = (k.layer < 0 ? "" : "layer.") + k.stage;
        if (!stage_us.count(key)) order.push_back(key);
        stage_us[key] += k.stats.us;
        stage_mb[key] += double(k.stats.dram_read_bytes + k.stats.dram_write_bytes) / 1e6;
        waits[key] = k.stats.top_waits(2) + "  [" + k.schedule + "]";
    }
    double layer = 0, outside = 0;
    for (const std::string &s : order) {
        std::printf("  %-22s %12.1f us %10.1f MB   waits: %s\n", s.c_str(), stage_us[s], stage_mb[s], waits[s].c_str());
        (s.rfind("layer.", 0) == 0 ? layer : outside) += stage_us[s];
    }
    std::printf("  one layer %.1f us; embedding and head %.1f us; the step as run (%d layers) %.1f us; "
                "with all %d layers %.1f us\n",
                layer, outside, layers_run, r.us, layers_in_model, outside + layer * layers_in_model);
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"Run a Llama decoder on the simulated Spyre device."};
    std::string config = "tiny", phase = "both";
    int prompt = 64, steps = 8, context = 2048, batch = 1, layers = 0;
    bool timing_only = false, check_cpu = false;
    app.add_option("--config", config, "model: tiny or 8b")->capture_default_str();
    app.add_option("--phase", phase, "prefill, decode or both (a prefill then decode steps)")->capture_default_str();
    app.add_option("--prompt", prompt, "prompt tokens of the prefill")->capture_default_str();
    app.add_option("--steps", steps, "decode steps")->capture_default_str();
    app.add_option("--context", context, "timing-only decode: positions already in the cache")->capture_default_str();
    app.add_option("--batch", batch, "sequences decoded together")->capture_default_str();
    app.add_option("--layers", layers, "layers run (0: all)")->capture_default_str();
    app.add_flag("--timing-only", timing_only, "modelled time only (no weights, no numerics)");
    app.add_flag("--check-cpu", check_cpu, "also run Halide's CPU realisation of the same kernels and compare");
    CLI11_PARSE(app, argc, argv);
    try {
        const LlamaConfig c = llama_config(config);
        ModelOptions o;
        o.timing_only = timing_only;
        o.batch = batch;
        o.layers = layers;
        o.max_context = std::max(prompt + steps, context + steps);
        LlamaModel model(c, o);
        const int layers_run = layers ? layers : c.layers;
        if (timing_only) {
            if (phase == "prefill" || phase == "both") {
                StepResult r = model.prefill(std::vector<int>(size_t(prompt), 0));
                std::printf("prefill of %d tokens:\n", prompt);
                print_runs(r, c.layers, layers_run);
            }
            if (phase == "decode" || phase == "both") {
                model.set_context(context);
                StepResult r = model.decode(std::vector<int>(size_t(batch), 0));
                std::printf("decode step, batch %d, context %d:\n", batch, context + 1);
                print_runs(r, c.layers, layers_run);
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
