// The figures of a model step: per stage (one layer's launches of a kernel, or the embedding and
// head's) and per layer, the modelled time, the speed of light and its fraction (the figure of
// merit of docs/design.md), and the term that binds it; and the whole model's time (every layer
// and the head), as tokens per second for decode and time to the first token for a prefill.
//
// A stage's speed of light is its kernels' (apps/report/speed_of_light.h: every input read and
// output written once under IBM's measured channel law, every MAC at the PE array's rate, over the
// whole chip), but the embedding's, which moves the rows it gathers, not its table. A layer's is
// the layer's compulsory work as one: its weights, the KV cache it reads and appends to and its
// activations in and out, once, against its MACs; for a decode step at batch 1 that is streaming
// the weights (Llama-3.1-8B: 436 MB, 2.9 ms at 150 GB/s). The step's time is given as device time
// and with the host's cost of its launches (MachineDesc::host_launch_ns, an assumption), the figure
// to hold against a measured time per token.
#pragma once

#include <string>
#include <vector>

#include "llama_config.h"
#include "llama_model.h"

namespace spyre::llama {

struct Figure {
    std::string name;      // the stage ("qkv_proj"), "layer", or "model"
    std::string schedule;  // the stage's schedule
    int launches = 0;      // per layer (a stage), or in all
    double us = 0, sol_us = 0;
    std::string bound;     // "memory", "pe" or "vector": the term that sets sol_us
    double formula_us = 0;  // IBM's cost formula for the same kernels (sim/ibm_formula.h)
    std::string validity;   // the model-validity note keys of its kernels ("short_tiles,ring"), "" if none
    double sol_frac() const { return us > 0 ? sol_us / us : 0; }
    // More than 25% faster than IBM's formula (report::kFasterThanFormula): a mechanism the formula
    // lacks must explain it (docs/device_model.md, "IBM's formula beside the simulator").
    bool faster_than_formula() const;
};

struct StepShape {
    int tokens = 1;   // new tokens per sequence
    int batch = 1;
    int context = 1;  // positions each sequence attends to (its cache after the step)
    Weights weights = Weights::F16;  // the projections' (their bytes bound a decode step)
};

struct StepFigures {
    std::vector<Figure> layer_stages;  // one layer's kernels (layer 0), by stage, in order
    std::vector<Figure> outside;       // the embedding and the head
    Figure layer;                      // one layer: its stages' time, its own speed of light
    double model_us = 0;               // embedding + every layer + head, device time
    double model_formula_us = 0;       // IBM's formula for the same kernels, summed as model_us is
    int launches = 0;                  // kernel launches of the whole step
    double host_us = 0;                // launches x the machine's host_launch_ns
    // Several cards (ModelOptions::cards): every layer's all-reduces (layer 0's, times the layers),
    // counted in layer.us and model_us; IBM's formula prices kernels only, so formula_us leaves them out.
    double allreduce_us = 0;
    double model_with_host_us() const { return model_us + host_us; }
};

// `r` must hold layer 0's launches (a timing-only step with any number of layers). On several cards
// pass the model's card_config(): the figures are one card's (every card runs the same kernels).
StepFigures step_figures(const LlamaConfig &c, const StepShape &shape, const StepResult &r, const MachineDesc &m);

// The stages a step launches, in order (layer stages, then the embedding and the head), as
// step_figures names them: for `batch` sequences of a token each, or a prefill.
std::vector<std::string> step_stage_names(int batch, bool prefill);

// The layer's compulsory device-memory bytes (read, written) and MACs.
struct LayerWork {
    double read_bytes = 0, write_bytes = 0, macs = 0;
};
LayerWork layer_work(const LlamaConfig &c, const StepShape &shape);

}  // namespace spyre::llama
