// spyre-llama: runs a Llama decoder on the simulated device, kernel by kernel, and prints what
// each kernel and each step took.
//   spyre-llama --config tiny --prompt 64 --steps 8         numerics: greedy tokens, checked
//                                                           against Halide's CPU realisation
//   spyre-llama --config 8b --timing-only --phase decode --context 2048 --batch 1
//   spyre-llama --config 8b --timing-only --phase prefill --prompt 2048
//   spyre-llama generate --checkpoint DIR --prompt-ids 128000,791,6864 --max-new-tokens 16
//                                                           a Hugging Face checkpoint's weights;
//                                                           token ids in and out (no tokenizer)
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <map>

#include "device/error.h"
#include "llama_checkpoint.h"
#include "llama_figures.h"
#include "llama_generate.h"
#include "llama_model.h"

namespace {

using namespace spyre::llama;

void print_figures(const StepFigures &f, int layers, const std::string &phase, int batch, const spyre::MachineDesc &m,
                   int cards = 1) {
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
        std::printf(" = %.1f tokens/s on %d card%s (batch %d; %.1f on the device alone)\n",
                    batch / (f.model_with_host_us() * 1e-6), cards, cards == 1 ? "" : "s", batch,
                    batch / (f.model_us * 1e-6));
    else
        std::printf(" to the first token on %d card%s\n", cards, cards == 1 ? "" : "s");
    if (cards > 1)
        std::printf("  %d cards, tensor parallel: the layers' shapes are one card's; all-reduce %.1f us of the model's "
                    "time (2 a layer, after o_proj and down_proj: a ring over PCIe at link_bytes_per_ns %g with "
                    "link_latency_ns %g a step, assumptions)\n",
                    cards, f.allreduce_us, m.link_bytes_per_ns, m.link_latency_ns);
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

struct GenerateArgs {
    std::string checkpoint, prompt_ids, stop_ids;
    int max_new_tokens = 16;
    double temperature = 0, top_p = 1;
    int top_k = 0;
    uint64_t seed = 0;
    bool no_eos = false;
    int prefill_chunk = 0;
};

// ", in chunks of N" when a prefill of `tokens` runs in more than one chunk.
std::string chunked(int chunk, int tokens) {
    return chunk > 0 && chunk < tokens ? ", in chunks of " + std::to_string(chunk) : "";
}

// `spyre-llama generate`: the checkpoint's weights on the device, new ids drawn on the host from
// the device's logits; the ids on one line, then the prefill's and the last decode step's figures.
int run_generate(const GenerateArgs &a, ModelOptions o) {
    const LlamaCheckpoint ck = LlamaCheckpoint::open(a.checkpoint);
    const LlamaConfig &c = ck.config();
    const std::vector<int> prompt = parse_ids(a.prompt_ids, "--prompt-ids");
    GenerateOptions g;
    g.max_new_tokens = a.max_new_tokens;
    g.sampling = SamplingOptions{a.temperature, a.top_k, a.top_p, a.seed};
    if (!a.stop_ids.empty()) g.stop_ids = parse_ids(a.stop_ids, "--stop-ids");
    if (!a.no_eos) g.stop_ids.insert(g.stop_ids.end(), ck.eos_ids().begin(), ck.eos_ids().end());
    // Refused before the weights load: ids outside the vocabulary, sampling options out of range.
    for (int id : prompt)
        if (id < 0 || id >= c.vocab) spyre::throw_error("--prompt-ids: ", id, " outside the vocabulary [0, ", c.vocab, ")");
    Sampler check(g.sampling);
    o.checkpoint = &ck;
    o.max_context = int(prompt.size()) + std::max(a.max_new_tokens, 1);
    LlamaModel model(c, o);
    const LlamaConfig &cc = model.card_config();
    std::vector<StepResult> steps;
    const Generated out = generate(
        [&](const std::vector<int> &ids) {
            steps.push_back(steps.empty() ? model.prefill(ids, PrefillOptions{0, a.prefill_chunk}) : model.decode(ids));
            return model.logits(0);
        },
        c.vocab, prompt, g);
    for (size_t i = 0; i < out.ids.size(); i++) std::printf("%s%d", i ? "," : "", out.ids[i]);
    std::printf("\n");
    std::printf("%zu new tokens (%s); sampled on the host from the device's logits (%s)\n", out.ids.size(),
                out.stopped ? "stopped at a stop id" : "reached --max-new-tokens",
                a.temperature == 0 ? "greedy" : "temperature, top-k, top-p");
    if (steps.empty()) return 0;
    double decode_us = 0, reduce_us = 0;
    for (size_t i = 1; i < steps.size(); i++) decode_us += steps[i].us;
    for (const StepResult &s : steps)
        for (const AllReduceRun &a : s.allreduces) reduce_us += a.us;
    std::printf("modelled on the device (%d card%s): prefill of %zu tokens %.1f us; %zu decode steps %.1f us (%.1f us "
                "each)",
                o.cards, o.cards == 1 ? "" : "s", prompt.size(), steps[0].us, steps.size() - 1, decode_us,
                steps.size() > 1 ? decode_us / double(steps.size() - 1) : 0.0);
    if (o.cards > 1) std::printf("; all-reduces between the cards %.1f us of it", reduce_us);
    std::printf("\n");
    std::printf("prefill of %zu tokens%s:\n", prompt.size(), chunked(a.prefill_chunk, int(prompt.size())).c_str());
    print_figures(step_figures(cc, {int(prompt.size()), 1, int(prompt.size()), o.weights}, steps[0], o.machine), c.layers,
                  "prefill", 1, o.machine, o.cards);
    if (steps.size() > 1) {
        const int context = int(prompt.size() + steps.size()) - 1;
        std::printf("last decode step, context %d:\n", context);
        print_figures(step_figures(cc, {1, 1, context, o.weights}, steps.back(), o.machine), c.layers, "decode", 1, o.machine,
                      o.cards);
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"Run a Llama decoder on the simulated Spyre device."};
    std::string config = "tiny", phase = "both";
    int prompt = 64, steps = 8, context = 2048, batch = 1, layers = 0, cards = 1, prefill_chunk = 0;
    bool timing_only = false, check_cpu = false, exact_timing = false;
    std::string trace;
    app.add_option("--config", config, "model: tiny or 8b")->capture_default_str();
    app.add_option("--phase", phase, "prefill, decode or both (a prefill then decode steps)")->capture_default_str();
    app.add_option("--prompt", prompt, "prompt tokens of the prefill")->capture_default_str();
    app.add_option("--steps", steps, "decode steps")->capture_default_str();
    const std::string chunk_help = "prefill in steps of this many tokens (the last one what is left), each attending to the cache the "
                   "ones before it filled; 0: the whole prompt in one step";
    app.add_option("--prefill-chunk", prefill_chunk, chunk_help)->capture_default_str()->check(CLI::NonNegativeNumber);
    int kv_block = 0;
    const std::string kv_block_help =
        "0: each sequence's KV cache contiguous; N: a paged cache of blocks of N positions shared by the batch, "
        "read through each sequence's block table (in place by a decode step's attention when N is 64, 128 or 256; "
        "else gathered before the attention)";
    app.add_option("--kv-block", kv_block, kv_block_help)->capture_default_str()->check(CLI::NonNegativeNumber);
    app.add_option("--context", context, "timing-only decode: positions already in the cache")->capture_default_str();
    app.add_option("--batch", batch, "sequences decoded together (and, timing only, prefilled together)")->capture_default_str();
    app.add_option("--layers", layers, "layers run (0: all)")->capture_default_str();
    app.add_option("--cards", cards,
                   "tensor parallelism over this many cards (their heads and MLP columns split, the partials "
                   "all-reduced over PCIe); must divide heads, kv_heads and intermediate")
        ->capture_default_str();
    std::string weights = "fp16";
    const std::string weights_help =
        "the layers' projection weights: fp16, or int8 or fp8 E4M3 (per output column, quantised from the fp16 ones as they "
        "load; the embedding, norms and lm_head stay fp16)";
    app.add_option("--weights", weights, weights_help)->capture_default_str();
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

    GenerateArgs ga;
    CLI::App *gen = app.add_subcommand(
        "generate",
        "Generate token ids from a Hugging Face Llama checkpoint (config.json and safetensors), run on the simulated "
        "device. There is no tokenizer: the prompt is token ids, and so is the output (one line, comma-separated; "
        "decode them with the model's tokenizer elsewhere). The sampling runs on the host, on the device's logits.");
    gen->add_option("--checkpoint", ga.checkpoint,
                    "directory with config.json and model.safetensors (or model.safetensors.index.json and its shards)")
        ->required();
    gen->add_option("--prompt-ids", ga.prompt_ids, "the prompt as token ids, comma-separated (e.g. 128000,791,6864)")
        ->required();
    gen->add_option("--max-new-tokens", ga.max_new_tokens, "new tokens at most")->capture_default_str()->check(CLI::Range(0, 1 << 20));
    gen->add_option("--temperature", ga.temperature, "0: greedy; above 0: sample from softmax(logits / temperature)")
        ->capture_default_str();
    gen->add_option("--top-k", ga.top_k, "sample among the k likeliest tokens (0: all)")->capture_default_str();
    gen->add_option("--top-p", ga.top_p, "then among the fewest likeliest whose probability reaches p (1: all)")
        ->capture_default_str();
    gen->add_option("--seed", ga.seed, "the sampler's seed (std::mt19937_64; the same ids for the same seed)")
        ->capture_default_str();
    gen->add_option("--stop-ids", ga.stop_ids, "more ids that end generation, comma-separated (the config's "
                                               "eos_token_id always does)");
    gen->add_flag("--ignore-eos", ga.no_eos, "do not stop at the config's eos_token_id");
    gen->add_option("--prefill-chunk", ga.prefill_chunk, chunk_help)->capture_default_str()->check(CLI::NonNegativeNumber);
    gen->add_option("--kv-block", kv_block, kv_block_help)->capture_default_str()->check(CLI::NonNegativeNumber);
    std::string gen_weights = "fp16";
    gen->add_option("--weights", gen_weights, weights_help)->capture_default_str();
    int gen_cards = 1;
    gen->add_option("--cards", gen_cards, "tensor parallelism over this many cards (as for the main command)")
        ->capture_default_str();
    std::string gen_schedules = "named", gen_tuning_db;
    gen->add_option("--schedules", gen_schedules, "named, auto or fastest (as for the main command)")->capture_default_str();
    gen->add_option("--tuning-db", gen_tuning_db, "with --schedules auto or fastest: spyre-tune's database");
    gen->add_option("--auto-evaluations", auto_evaluations, "candidates each kernel's search times")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    CLI11_PARSE(app, argc, argv);
    try {
        if (*gen) {
            ModelOptions o;
            o.schedules = ModelOptions::schedules_by_name(gen_schedules);
            o.tuning_db = gen_tuning_db;
            o.auto_evaluations = auto_evaluations;
            o.cards = gen_cards;
            o.weights = weights_by_name(gen_weights);
            o.kv_block = kv_block;
            return run_generate(ga, o);
        }
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
        o.cards = cards;
        o.weights = weights_by_name(weights);
        o.kv_block = kv_block;
        LlamaModel model(c, o);
        const LlamaConfig &cc = model.card_config();
        if (timing_only) {
            if (phase == "prefill" || phase == "both") {
                // A batch prefills every sequence's prompt in one step (prefill_batch).
                const std::vector<int> one(size_t(prompt), 0);
                StepResult r = batch > 1 ? model.prefill_batch(std::vector<std::vector<int>>(size_t(batch), one), prefill_chunk)
                                         : model.prefill(one, PrefillOptions{0, prefill_chunk});
                std::printf("prefill of %d tokens%s%s:\n", prompt, batch > 1 ? (" x " + std::to_string(batch) + " sequences").c_str() : "",
                            chunked(prefill_chunk, prompt).c_str());
                print_figures(step_figures(cc, {prompt, batch, prompt, o.weights}, r, o.machine), c.layers, "prefill", batch,
                              o.machine, cards);
            }
            if (phase == "decode" || phase == "both") {
                model.set_context(context);
                StepResult r = model.decode(std::vector<int>(size_t(batch), 0));
                std::printf("decode step, batch %d, context %d:\n", batch, context + 1);
                print_figures(step_figures(cc, {1, batch, context + 1, o.weights}, r, o.machine), c.layers, "decode", batch,
                              o.machine, cards);
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
        std::vector<int> next = model.prefill(ids, PrefillOptions{0, prefill_chunk}).tokens, cpu_next;
        if (cpu) cpu_next = cpu->prefill(ids, PrefillOptions{0, prefill_chunk}).tokens;
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
