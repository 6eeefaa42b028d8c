// Rows (each phase's model step is run once, on first use, outside the timed loop):
//   llama/<stage>/<phase>   one layer's launches of a stage (or the embedding's and head's):
//                           sim_us, sol_us, sol_frac, launches, formula_us (IBM's formula for the
//                           same kernels) and faster_than_formula; the label names the term that
//                           binds the speed of light and the schedule the driver chose
//   llama/layer/<phase>     one decoder layer: the same counters, its speed of light the layer's
//                           compulsory work as one (apps/llama/llama_figures.h)
//   llama/model/<phase>     embedding, 32 layers and the head: sim_us (device time), formula_us,
//                           launches and
//                           launch_us (their host cost, MachineDesc::host_launch_ns), and tokens_per_s
//                           (decode) or ttft_ms (prefill) with that cost (`_device`: without it)
//   llama/<phase>/8b/cards<N>  prefill (a 2048-token prompt), decode (batch 1) and decode_b16
//   llama/<phase>/8b/int8/cards<N>  (batch 16), context 2048, with tensor parallelism over N = 1,
//                           2, 4 cards (ModelOptions::cards), fp16 or int8 projection weights
//                           (ModelOptions::weights), each kernel the faster of auto's and the named
//                           schedules: ttft_ms (prefill) or tokens_per_s (host launches included),
//                           the same `_device` without them, sim_us (the model's device time),
//                           launch_us (the launches' host cost, an assumption), allreduce_us (its
//                           all-reduces between the cards, the PCIe link model's: link_bytes_per_ns,
//                           link_latency_ns, assumptions) and outside_calibration (the label names
//                           the layer's validity notes)
// Each kernel runs the faster of spyre::auto_schedule's choice and the stage's named schedules (its
// label says which). Phases: prefill (2048 tokens), decode (batch 1, context 2048), decode_b8 (batch 8, context 2048),
// decode_8k (batch 1, context 8192). One layer is simulated: every layer is the same kernels on the
// same shapes, and a timing-only run does not depend on the data.
#include "llama_benchmarks.h"

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "llama_figures.h"
#include "llama_model.h"

namespace spyre {
namespace {

using namespace llama;

struct Phase {
    std::string name;
    int tokens, batch, context;  // new tokens per sequence, sequences, positions after the step
};

const std::vector<Phase> &phases() {
    static const std::vector<Phase> p = {
        {"prefill", 2048, 1, 2048}, {"decode", 1, 1, 2048}, {"decode_b8", 1, 8, 2048}, {"decode_8k", 1, 1, 8192}};
    return p;
}

// A timing-only run of one layer (every layer is the same kernels) at the phase's batch and context.
ModelOptions phase_options(const Phase &p, int cards, ModelOptions::Schedules schedules) {
    ModelOptions o;
    o.timing_only = true;
    o.layers = 1;
    o.batch = p.batch;
    o.max_context = p.context;
    o.cards = cards;
    o.schedules = schedules;
    return o;
}

// One step of phase `p` on `model` (a prefill of its tokens, or a decode after its context).
StepResult run_step(LlamaModel &model, const Phase &p) {
    if (p.tokens == p.context) return model.prefill(std::vector<int>(size_t(p.tokens), 0));
    model.set_context(p.context - p.tokens);
    return model.decode(std::vector<int>(size_t(p.batch), 0));
}

const StepFigures &figures(const Phase &p) {
    static std::map<std::string, StepFigures> cache;
    auto it = cache.find(p.name);
    if (it != cache.end()) return it->second;
    const LlamaConfig c = llama31_8b();
    const ModelOptions o = phase_options(p, 1, ModelOptions::Schedules::Fastest);  // auto's or the named
    LlamaModel model(c, o);
    const StepResult r = run_step(model, p);
    return cache.emplace(p.name, step_figures(c, {p.tokens, p.batch, p.context}, r, o.machine)).first->second;
}

void set_figure(benchmark::State &state, const Figure &f) {
    state.counters["sim_us"] = f.us;
    state.counters["sol_us"] = f.sol_us;
    state.counters["sol_frac"] = f.sol_frac();
    state.counters["launches"] = f.launches;
    state.counters["formula_us"] = f.formula_us;
    state.counters["sim_vs_formula"] = f.formula_us > 0 ? f.us / f.formula_us : 0;
    state.counters["faster_than_formula"] = f.faster_than_formula() ? 1 : 0;
    state.counters["outside_calibration"] = f.validity.empty() ? 0 : 1;
    state.SetLabel("sol: " + f.bound + (f.schedule.empty() ? "" : "; " + f.schedule) +
                   (f.faster_than_formula() ? "; faster than IBM's formula" : "") +
                   (f.validity.empty() ? "" : "; outside calibration: " + f.validity));
}

// ttft_ms (a prefill) or tokens_per_s (a decode), with the host's launches and without (`_device`).
void set_rate(benchmark::State &state, const Phase &p, const StepFigures &f) {
    if (p.tokens == p.context) {
        state.counters["ttft_ms"] = f.model_with_host_us() / 1000.0;
        state.counters["ttft_ms_device"] = f.model_us / 1000.0;
    } else {
        state.counters["tokens_per_s"] = p.batch / (f.model_with_host_us() * 1e-6);
        state.counters["tokens_per_s_device"] = p.batch / (f.model_us * 1e-6);
    }
}

void BM_LlamaStage(benchmark::State &state, Phase p, std::string stage) {
    const StepFigures *f = nullptr;
    for (auto _ : state) f = &figures(p);
    for (const std::vector<Figure> *list : {&f->layer_stages, &f->outside})
        for (const Figure &g : *list)
            if (g.name == stage) return set_figure(state, g);
    state.SkipWithError(("no stage " + stage + " in this step").c_str());
}

void BM_LlamaLayer(benchmark::State &state, Phase p) {
    const StepFigures *f = nullptr;
    for (auto _ : state) f = &figures(p);
    set_figure(state, f->layer);
}

void BM_LlamaModel(benchmark::State &state, Phase p) {
    const StepFigures *f = nullptr;
    for (auto _ : state) f = &figures(p);
    state.counters["sim_us"] = f->model_us;
    state.counters["formula_us"] = f->model_formula_us;
    state.counters["sim_vs_formula"] = f->model_formula_us > 0 ? f->model_us / f->model_formula_us : 0;
    state.counters["outside_calibration"] = f->layer.validity.empty() ? 0 : 1;
    state.counters["launches"] = f->launches;
    state.counters["launch_us"] = f->host_us;  // host_launch_ns per launch, an assumption
    set_rate(state, p, *f);
    state.SetLabel(f->layer.validity.empty() ? "within the calibrated range"
                                             : "outside calibration: " + f->layer.validity);
}

// A phase on `cards` cards with these weights: one card's figures (every card runs the same kernels).
void BM_LlamaCards(benchmark::State &state, Phase p, int cards, Weights w) {
    ModelOptions o = phase_options(p, cards, ModelOptions::Schedules::Fastest);
    o.weights = w;
    const StepFigures *f = nullptr;
    for (auto _ : state) {
        LlamaModel model(llama31_8b(), o);
        const StepResult r = run_step(model, p);
        static StepFigures kept;
        kept = step_figures(model.card_config(), {p.tokens, p.batch, p.context, w}, r, o.machine);
        f = &kept;
    }
    state.counters["cards"] = cards;
    state.counters["batch"] = p.batch;
    state.counters["int8"] = w == Weights::Int8 ? 1 : 0;
    state.counters["sim_us"] = f->model_us;
    state.counters["allreduce_us"] = f->allreduce_us;
    state.counters["launches"] = f->launches;
    state.counters["launch_us"] = f->host_us;  // host_launch_ns per launch, an assumption
    state.counters["outside_calibration"] = f->layer.validity.empty() ? 0 : 1;
    set_rate(state, p, *f);
    state.SetLabel(std::string(weights_name(w)) + " weights; all-reduce over PCIe (link model, assumptions); " +
                   (f->layer.validity.empty() ? "within the calibrated range" : "outside calibration: " + f->layer.validity));
}

}  // namespace

void register_llama_benchmarks() {
    // Time to first token (a 2048-token prompt) and decode at batch 1 and 16, on 1, 2 and 4 cards,
    // with fp16 and int8 weights.
    const std::vector<Phase> on_cards = {{"prefill", 2048, 1, 2048}, {"decode", 1, 1, 2048}, {"decode_b16", 1, 16, 2048}};
    for (Weights w : {Weights::F16, Weights::Int8})
        for (const Phase &p : on_cards)
            for (int cards : {1, 2, 4})
                benchmark::RegisterBenchmark(("llama/" + p.name + "/8b/" + (w == Weights::Int8 ? "int8/" : "") + "cards" +
                                              std::to_string(cards))
                                                 .c_str(),
                                             BM_LlamaCards, p, cards, w)
                    ->Iterations(1)
                    ->Unit(benchmark::kMillisecond);
    for (const Phase &p : phases()) {
        for (const std::string &s : step_stage_names(p.batch, p.tokens == p.context))
            benchmark::RegisterBenchmark(("llama/" + s + "/" + p.name).c_str(), BM_LlamaStage, p, s)
                ->Iterations(1)
                ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("llama/layer/" + p.name).c_str(), BM_LlamaLayer, p)
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("llama/model/" + p.name).c_str(), BM_LlamaModel, p)
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
    }
}

}  // namespace spyre
