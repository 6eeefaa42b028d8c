// The kernels of a Llama decoder, each a Halide pipeline written once and scheduled either for
// Spyre (compiled to a device program) or for the CPU (Halide's own realisation, the reference),
// with the argument shapes and layouts under which consecutive kernels share device memory:
// activations are {width, tokens} fp16 matrices, the queries, attention output and KV cache are
// the same bytes seen as {head_dim, tokens, heads} stored head by head within a position.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "compile.h"
#include "device_memory.h"
#include "llama_config.h"

namespace spyre::llama {

// Spyre: the stage's named schedule; Cpu: Halide's CPU realisation (the reference); Auto: no
// schedule, for spyre::auto_schedule to choose one.
enum class Backend { Spyre, Cpu, Auto };

struct StageKernel {
    std::string name;  // the kernel's, e.g. "q_proj"
    Halide::Func output;
    std::vector<Halide::ImageParam> inputs;
    CompileOptions options;  // the arguments' shapes and layouts
    std::string schedule;    // the Spyre schedule applied, for the reports
};

// RMSNorm of {hidden, rows} with a gain of {hidden} (schedules/norms.h).
StageKernel rmsnorm_stage(const std::string &name, const LlamaConfig &c, int rows, Backend b);
// What a projection does with its fp32 product before the one rounding to fp16: nothing; add a
// third argument {cols, rows} (the residual); or multiply by silu of a third argument g {cols,
// rows}, silu(g) = g / (1 + exp(-g)) in fp32 (SwiGLU's up projection, g the gate projection's).
// Partial: no rounding, the fp32 product itself is the output (a card's share of a projection
// split over cards by K, summed with the other cards' on the host).
enum class Epilogue { None, Residual, SiluGate, Partial };
// x {inner, rows} times w {cols, inner} -> {cols, rows} (schedules/matmul.h), fp32 accumulation.
// Schedules: "pe" and "pe_ring" (schedules/matmul_stage.h: split over the cores by N and M, pe_ring
// sharing K panels over the ring), "split_k/<panel>" (a few rows: the cores split K and add their
// partials on the ring, so that each reads whole rows of W, in K panels of <panel>).
// Weights::Int8 or Fp8: w is int8 (or uint8 fp8 E4M3 codes) {cols, inner} and a third argument
// the scales {cols}, applied to the
// fp32 product before the epilogue (schedules/qlinear.h: "pe" and "pe_ring"); the epilogue's
// argument comes after the scales.
StageKernel projection_stage(const std::string &name, int rows, int inner, int cols, Epilogue e, Backend b,
                             const std::string &schedule = "pe", Weights w = Weights::F16);
// The schedules that apply to a projection of this shape, for the driver to time against each other.
std::vector<std::string> projection_schedules(int rows, int inner, int cols, Weights w = Weights::F16);
// Rotate-half RoPE of `width` columns from `offset` of an {in_cols, rows} input (the fused QKV
// projection's queries or keys) with cos and sin tables of {head_dim, rows} (schedules/rope.h) ->
// {width, rows}.
StageKernel rope_stage(const std::string &name, const LlamaConfig &c, int width, int rows, int in_cols, int offset,
                       Backend b);
// Causal grouped-query attention of `tokens` new queries against the first `context` positions of
// the KV cache (the new ones last): q {head_dim, tokens, heads}, k and v {head_dim, context,
// kv_heads}, out {head_dim, tokens, heads} (schedules/flash_attention.h).
// Schedules "kv_chunked" (a prefill), "kv_resident" (the head's K and V in LX) or "kv_stream" (key
// tiles streamed: a long cache); attention_schedules lists those that apply. A single-token decode
// reads k and v over decode_key_window(context) positions, in key tiles of 256, or of 128 or 64
// with the schedule "kv_stream/64" etc.
// With `bucket` (a single-token decode), one kernel for every context of its window: the keys past
// the context are weighed 0 by a fifth argument, a bias {window} fp16 (0, then -65504 from the
// context on: AttentionShape::key_bias) that the caller writes, instead of a compile-time bound.
// With pool_blocks > 0 (a single-token decode, schedule kv_stream with key tiles of the block size),
// k and v are a paged cache's pools of that many blocks and a further argument, the block table
// {window / block} int32, names each key tile's block (AttentionShape::pool_blocks).
StageKernel attention_stage(const LlamaConfig &c, int tokens, int context, Backend b,
                            const std::string &schedule = "kv_resident", bool bucket = false, int pool_blocks = 0);
std::vector<std::string> attention_schedules(int tokens, int context);
// The cache positions a single-token decode's attention reads: its context rounded up to whole key
// tiles of 256 (the keys past the context weigh 0). The cache holds at least this many.
int decode_key_window(int context);
// lm_head over the vocabulary's parts (vocab_split): x {hidden, rows} times w {part_cols, hidden,
// parts} (the parts' {part_cols, hidden} weight matrices one after the other) -> logits {part_cols,
// rows, parts}, stored as one {padded vocabulary, rows} matrix (each row the parts' columns in order).
StageKernel lm_head_stage(const LlamaConfig &c, int rows, const VocabSplit &v, Backend b);
// Rows of an embedding table {hidden, table_rows} gathered by int32 ids {rows}, clamped into it.
StageKernel embedding_stage(const LlamaConfig &c, int rows, int table_rows, Backend b);
// The same gather under another name and width: rows {width, table_rows} by int32 ids {rows} ->
// {width, rows} (a paged KV cache's positions from its pool of blocks, by the block table).
StageKernel gather_stage(const std::string &name, int width, int rows, int table_rows, Backend b);
// The index of each row's largest logit (the first, on ties) among the vocabulary's: {cols, rows} ->
// int32 {1, rows} (each row's index in a stick of its own), cols >= vocab (the padding is not read).
StageKernel argmax_stage(const LlamaConfig &c, int rows, int cols, Backend b);
// A copy of `width` columns from `offset` of an {in_cols, rows} input -> {width, rows} (the fused
// projection's values into the cache, a decode step's new K row into one sequence's cache).
StageKernel copy_stage(const std::string &name, int width, int rows, int in_cols, int offset, Backend b);

// Bytes of an argument's device image.
int64_t argument_bytes(const TensorSpec &spec, Halide::Type type, const MachineDesc &m);

// Runs a kernel on device memory: Spyre compiles it (compiled programs are kept by the caller) and
// the simulator runs it; Cpu realises the pipeline with Halide, taking its inputs from the views'
// device images and writing its output back as one (nothing happens in timing-only mode).
void realize_on_cpu(StageKernel &k, DeviceMemory &mem, const std::vector<TensorView> &args);

}  // namespace spyre::llama
