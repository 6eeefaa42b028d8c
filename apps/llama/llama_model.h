// A Llama decoder run on one simulated Spyre device (or, for reference, the same kernels realised
// by Halide on the CPU): embedding, the decoder layers and the head (final RMSNorm, lm_head,
// argmax), each a kernel of llama_stages.h launched in order on one DeviceMemory. The layers'
// weights and the KV caches stay resident there between steps; a prefill fills a sequence's cache
// and a decode step appends one position to each sequence's cache, in place.
//
//   LlamaModel m(llama_tiny(), {});           // random weights (a seed), numerics on
//   int next = m.prefill(prompt).tokens[0];   // the greedy next token
//   next = m.decode({next}).tokens[0];
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device_memory.h"
#include "llama_config.h"
#include "sim/sim_stats.h"

namespace spyre::llama {

enum class Backend;
struct StageKernel;
class StepTrace;
class LlamaCheckpoint;

struct ModelOptions {
    bool cpu = false;           // Halide's CPU realisation of every kernel instead of the simulator
    // How each kernel is scheduled: Named, the stages' named schedules (the fastest of those that
    // apply, by modelled time); Auto, spyre::auto_schedule's choice (autoschedule/auto_schedule.h,
    // timing at most `auto_evaluations` candidates, seed 1), or the named ones where it finds none
    // (the schedule label says so); Fastest, whichever of those two is faster.
    enum class Schedules { Named, Auto, Fastest };
    Schedules schedules = Schedules::Named;
    int auto_evaluations = 32;
    // The tuning database (an SQLite file, AutoOptions::tuning_db) that Auto and Fastest read each
    // kernel's search from, and store new searches in; empty: none (every run searches).
    std::string tuning_db;
    // "named", "auto" or "fastest"; spyre::Error naming the known ones otherwise.
    static Schedules schedules_by_name(const std::string &name);
    bool timing_only = false;   // modelled time only: no weights, no numerics (tokens come back 0)
    // Timing-only runs summarise steady loops (docs/device_model.md, "Timing-only mode and loop
    // summaries"); false runs every iteration, to check a summary or when the exact figure matters.
    bool summarize_loops = true;
    int batch = 1;              // sequences decoded together (a prefill fills one: PrefillOptions)
    // Tensor parallelism over this many cards, as vLLM splits Llama (Megatron style): each card
    // holds its share of the query and KV heads (their columns of wqkv, their rows of wo) and of
    // the MLP's columns (w1, w3; w2's rows), and the embedding, norms and lm_head whole. Every card
    // runs the same kernels on its shapes; after o_proj and down_proj the cards' fp32 partials are
    // summed on the host in card order with the residual and rounded to fp16 once (an all-reduce,
    // timed by allreduce_us). The head runs on card 0. The cards must divide heads, kv_heads and
    // intermediate (spyre::Error naming the field).
    int cards = 1;
    // The layers' projections (wqkv, wo, w1, w3, w2) in fp16, or in int8 or fp8 with an fp16 scale
    // per output column (quantised from the fp16 weights as they are written: int8, scale = max |w|
    // / 127 of the column and q = round(w / scale); fp8, scale = max |w| / 448 and the E4M3 code of
    // w / scale); the embedding, norms and lm_head stay fp16. weights() returns them dequantised
    // (q * scale), which the plain decoder then runs.
    Weights weights = Weights::F16;
    int max_context = 2048;     // positions each sequence's KV cache holds
    // 0: each sequence's KV cache one contiguous buffer per layer. N > 0: a paged cache, as vLLM's:
    // each layer's keys and values in a pool of blocks of N positions shared by the batch, each
    // sequence's blocks taken from the pool as it grows (in no particular order) and listed in its
    // block table; a step's new rows are copied into their blocks. A single-token decode's attention
    // reads the pool in place, a key tile per block, when N is one of its key tiles (64, 128, 256);
    // otherwise the sequence's positions are gathered through the table (by row ids, gather_stage)
    // into a contiguous copy before the attention kernel.
    int kv_block = 0;
    // A single-token decode's attention: one kernel for every context of a window of 256 positions
    // (decode_key_window; the keys past the context weighed 0 by a bias the step writes), compiled
    // once per window; false: one kernel per context, its keys bounded at compile time. The two
    // give the same logits bit for bit.
    bool decode_buckets = true;
    // Layers run per step; 0: all. The layers are the same kernels on the same shapes, so in
    // timing-only mode one layer's time is every layer's (see LlamaModel::layer_us).
    int layers = 0;
    uint32_t seed = 1;          // the random weights
    // The weights from this checkpoint instead (held by the caller while the model is built; its
    // config must be the model's); null: random.
    const LlamaCheckpoint *checkpoint = nullptr;
    // Each step writes its timeline here (a Chrome trace event file for Perfetto: every kernel's
    // cores and engines, one after another, and a track of the kernels); empty: none.
    std::string trace_path;
    MachineDesc machine;
};

// One kernel launch of a step.
struct KernelRun {
    std::string stage;     // "q_proj", "attention", ...
    std::string schedule;  // the Spyre schedule it ran (of the variants timed, the fastest)
    int layer = -1;     // -1: outside the layers (embedding, head)
    SimStats stats;     // zero for the CPU backend
    const DeviceProgram *program = nullptr;  // the program run (Spyre backend), held by the model
};

// One all-reduce between the cards (ModelOptions::cards > 1) of a step.
struct AllReduceRun {
    std::string stage;  // the partials' kernel: "o_proj" or "down_proj"
    int layer = 0;
    int64_t bytes = 0;  // one card's partials (fp32)
    double us = 0;      // allreduce_us
};

// Which sequence of the batch a prefill fills, and in chunks of how many tokens.
struct PrefillOptions {
    int sequence = 0;  // 0 .. batch - 1
    // 0: the whole prompt in one step. Otherwise steps of `chunk` tokens (the last one what is
    // left), each attending to the cache the ones before it filled, as a server's chunked prefill
    // does to bound a step's time and memory; the head (final norm, lm_head, argmax) runs after the
    // last chunk only.
    int chunk = 0;
};

struct StepResult {
    std::vector<int> tokens;  // the greedy next token of each sequence (0 in timing-only mode)
    std::vector<KernelRun> runs;           // card 0's (every card runs the same kernels at once); a
                                           // chunked prefill's: every chunk's, in order
    std::vector<AllReduceRun> allreduces;  // in order; none on one card
    double us = 0;            // modelled time of the step as run (the layers run, not all), all-reduces included
};

// The modelled time of a ring all-reduce of `bytes` (each card's) over `cards` cards linked by the
// machine's PCIe link (link_bytes_per_ns, link_latency_ns, assumptions): 2 (cards - 1) / cards x
// bytes / rate + 2 (cards - 1) steps' latency; 0 on one card.
double allreduce_us(int64_t bytes, int cards, const MachineDesc &m);
// One card's share of the model: heads, kv_heads and intermediate divided by `cards`; spyre::Error
// naming the field that `cards` does not divide.
LlamaConfig card_config(const LlamaConfig &c, int cards);

class LlamaModel {
public:
    LlamaModel(const LlamaConfig &config, const ModelOptions &options);
    ~LlamaModel();

    // The prompt of one sequence of the batch: fills its cache from its position (0 after a
    // reset, or where earlier prefills and decodes left it). The sequences of a batch are prefilled
    // one by one, each with its own prompt, and then decode together at their own contexts.
    StepResult prefill(const std::vector<int> &prompt, const PrefillOptions &p = {});
    // The prompts of every sequence of the batch at once, one launch of each kernel for all their
    // rows (attention and the KV copies a launch per sequence): the prompts must be of one length;
    // each sequence continues at its own position. `chunk` as PrefillOptions::chunk (its sequence is
    // unused). Then logits(b) is sequence b's.
    StepResult prefill_batch(const std::vector<std::vector<int>> &prompts, int chunk = 0);
    // One new token per sequence (options.batch of them), each at its sequence's next position.
    StepResult decode(const std::vector<int> &tokens);
    // Timing-only: every sequence's cache holds `positions` earlier positions (as after a prefill).
    void set_context(int positions);
    // Every sequence starts again at position 0 (a new prompt); the weights and compiled kernels stay.
    void reset();

    // The last step's logits of sequence b's last token (fp16 values as floats): after a decode, of
    // every sequence; after a prefill, of the sequence it filled. Not in timing-only mode.
    std::vector<float> logits(int b) const;
    // The weights as the model holds them (fp16 values as floats), by tensor name: "embed",
    // "L<l>.attn_norm", "L<l>.wqkv" ({cols, inner} row-major, Halide order; the query, key and value
    // projections' columns side by side), ..., "final_norm", "lm_head".
    std::vector<float> weights(const std::string &name) const;
    const LlamaConfig &config() const { return config_; }
    // One card's share of the layers' shapes (the config itself on one card): what step_figures
    // takes for a step's per-card figures.
    const LlamaConfig &card_config() const { return card_config_; }
    const ModelOptions &options() const { return options_; }
    int position(int b) const { return positions_.at(size_t(b)); }
    // A paged cache's block table of sequence b: its blocks, in position order (empty otherwise).
    const std::vector<int> &block_table(int b) const { return block_tables_.at(size_t(b)); }
    int programs_compiled() const { return int(programs_.size()); }

private:
    struct Kernels;
    // `ids`: per_sequence tokens of each sequence from `first` on; the head runs when `head`.
    StepResult step(const std::vector<int> &ids, int per_sequence, int first = 0, bool head = true);
    // The prompts (of one length) of the sequences from `first` on, in steps of `chunk` tokens.
    StepResult prefill_steps(const std::vector<std::vector<int>> &prompts, int first, int chunk);
    using Builder = std::function<StageKernel(Backend)>;
    // Runs the kernel `build` makes (compiled once per key) on `args`, and records it in r. Given
    // several builders (the same algorithm under different schedules), the Spyre backend compiles
    // each, times it in timing-only mode and keeps the fastest for the key.
    void launch(StepResult &r, const std::string &key, int layer, const std::vector<Builder> &builds,
                const std::vector<TensorView> &args);
    void launch(StepResult &r, const std::string &key, int layer, const Builder &build,
                const std::vector<TensorView> &args) {
        launch(r, key, layer, std::vector<Builder>{build}, args);
    }
    void launch_kernel(StepResult &r, const std::string &key, int layer, const std::vector<Builder> &builds,
                       const std::vector<TensorView> &args);
    void init_weights();
    void load_weights(const LlamaCheckpoint &ck);
    // Writes a whole tensor (`cols` values a row): on several cards each its slice (wqkv, wo, w1,
    // w3, w2) or a copy; a projection in int8 or fp8 (options.weights) quantised first, its scales
    // beside.
    void write_tensor(const std::string &tensor, const std::vector<float> &values, int cols);
    // Each card's part of a tensor (its values and columns a row), in card order.
    std::vector<std::pair<std::vector<float>, int>> card_slices(const std::string &tensor,
                                                                const std::vector<float> &values, int cols) const;
    // Rows of `cols` values, each padded to whole sticks, in fp16 (or bytes: values that are int8
    // values or fp8 codes).
    static void write_card(DeviceMemory &mem, const std::string &tensor, const std::vector<float> &values, int cols,
                           bool bytes = false);
    // Whether a tensor is held a byte an element (a layer's projection, with int8 or fp8 weights).
    bool byte_tensor(const std::string &tensor) const;
    // Every card (1..N-1 besides mem_) in order.
    std::vector<DeviceMemory *> all_cards();
    // The all-reduce after o_proj or down_proj: out = fp16(sum over cards of their fp32 partials
    // {hidden, rows} in "part", + the residual), on every card; its time in r.
    void all_reduce(StepResult &r, const std::string &stage, int layer, int rows, const std::string &residual,
                    const std::string &out);

    LlamaConfig config_, card_config_;
    ModelOptions options_;
    DeviceMemory mem_;              // card 0
    std::vector<DeviceMemory> others_;  // cards 1..N-1
    bool head_only_ = false;        // launches on card 0 alone (the head)
    std::vector<int> positions_;
    // The paged cache (kv_block > 0): each sequence's blocks, and the pool's free ones (taken from
    // the back).
    std::vector<std::vector<int>> block_tables_;
    std::vector<int> free_blocks_;
    void free_all_blocks();
    int pool_blocks() const;  // the pool's blocks: every sequence's max_context, in whole blocks
    // Sequence s's blocks to cover `positions`; the pool row of its position p.
    void take_blocks(int s, int positions);
    int pool_row(int s, int p) const;
    struct Compiled {
        DeviceProgram program;
        std::string schedule;
    };
    std::map<std::string, Compiled> programs_;
    std::unique_ptr<Kernels> kernels_;
    StepTrace *trace_ = nullptr;  // the step's timeline while a step with a trace runs
    int last_rows_ = 0, last_first_ = 0;  // the last head's rows: sequences last_first_ on
};

}  // namespace spyre::llama
