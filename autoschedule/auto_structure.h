// What the autoscheduler (auto_schedule.h) knows about a pipeline before it schedules it: every Func
// reachable from the output, in the order they are computed, with the facts the candidate space is
// derived from (which Funcs reduce, which updates are matmuls, who consumes whom, which inputs each
// reads). Derived from the Halide definitions alone: no app names, no directives.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "Halide.h"

namespace spyre::autosched {

// A matmul-shaped update: f(n, m[, b]) += A(k, m[, b]) * W(n, k) (either operand maybe cast), the
// form schedules/matmul_stage.h tiles. `a` and `w` name the Funcs (or input Funcs) read.
struct MatmulShape {
    std::string rvar;      // the reduction variable's name ("k$x")
    std::string a, w;      // operand Funcs
    // A(k, m[, b]) and W(n, k[, b]) exactly: the tiled stage applies. A batched f may read A per
    // batch or one A for all (a shared activation), and one W for all or W per batch (lm_head's
    // vocabulary parts, each part's weights its own).
    bool stage_form = false;
    bool w_batched = false;   // W(n, k, b)
};

struct StageInfo {
    std::string name;
    // How summaries name it: display_name(name), or for a Func Halide made for a boundary
    // condition, the condition and what it wraps: repeat_edge(in) (boundary_condition_names.h).
    std::string shown;
    Halide::Internal::Function function;
    std::vector<std::string> args;    // pure args, innermost first
    Halide::Type type;
    int updates = 0;
    int values = 1;  // more: a Tuple (the type is its first value's)
    bool is_output = false;
    // Another output of a Pipeline({..}) that `is_output`'s stage reads: the search keeps it in
    // device memory at root (device_root) in every candidate, as a Pipeline's output is stored.
    bool also_output = false;
    // A reduction Halide made for an inline maximum()/sum() (or any update Func read by one
    // consumer at that consumer's own args, with no RDom of its own visible elsewhere): left to
    // the back end, which folds it into its consumer.
    bool folded = false;
    std::optional<MatmulShape> matmul;  // set when the (single) update is a matmul
    // The update streams along args[0] (acc(x) += in(x, r)): a column reduction.
    bool streams_x = false;
    int min_read_bytes = 0;             // smallest element size of the values it reads (0: none)
    // It reads at (x + c) / k along args[0], c not 0 (a linear upsample's second tap): a vector
    // reads whole sticks of what it reads only when it is k sticks wide, so the search tries
    // vectors k times wider beside the usual ones (1: no such read).
    int upsample = 1;
    // It reads a value whose stick dimension is not its own args[0] (out(x, y) = in(y, x)): the
    // back end transposes tiles, one output stick per row (auto_space.cpp schedules it so).
    bool transposes = false;
    // The same, with the reductions it folds in read at its own args (Halide orders an inline
    // reduction's args as it met them: sum() in out(d, h) = sum(e(r, h) * v(d, r)) is sum(h, d), so
    // `transposes` holds for out, which streams along d). The rows family goes by this one.
    bool reads_across_sticks = false;
    // Its definition takes args[0] modulo a constant (x % head_dim: RoPE's position within a head):
    // the search splits args[0] by it, so that the modulo is the inner loop and a condition on it
    // a window of each vector's lanes, as a hand schedule does. 0: none.
    int stick_period = 0;
    // With no update, it reads one input Func only, each call at its own args (wd(n, k) =
    // f16(w(n, k))): a conversion the matmul family computes per K panel, next to the MATMUL.
    std::string elementwise_input;
    std::vector<std::string> consumers;  // Funcs that call it
    std::vector<std::string> reads;      // Funcs (and input Funcs) it calls
};

struct InputInfo {
    std::string name;      // the ImageParam's name
    std::string func;      // its Func's name ("<name>_im")
    int dims = 0;
    Halide::Type type;
    std::vector<std::string> consumers;  // Funcs that read it
    // A consumer reads it with its own rows (its last arg) on the input's stick dimension (conv1d's
    // per-channel taps w(c, j) in out(t, c)): a tile of a few rows holds part-sticks of it.
    bool sticks_along_rows = false;
    // A gather: read at positions that are values of a Func or input (table(x, clamp(ids(t), ...))),
    // or those values themselves (ids). Either stays in device memory: the back end copies the ids
    // whole into LX and fetches the table's rows by their DMA (lower_gathers.h).
    bool in_gather = false;
    // Read outside the part of the pipeline being planned too (sub_pipeline: the residual's x beside
    // the norm's): left to the back end, as a copy staged in LX at this part's loops would not serve
    // the other readers.
    bool read_elsewhere = false;
};

struct PipelineInfo {
    std::vector<StageInfo> stages;  // producers first, the output last
    std::vector<InputInfo> inputs;  // in the order of the ImageParams given
    const StageInfo &output() const { return stages.back(); }
    const StageInfo *find(const std::string &name) const;
    std::string shown(const std::string &name) const;  // the stage's `shown`, else display_name(name)
    const InputInfo *find_input_func(const std::string &func) const;
};

// The extent of each stage's outermost arg (its rows) that an output of `output_shape` needs: the
// bounds of its consumers' calls (Halide's boxes_required over their definitions, reduction domains
// at their full ranges), consumers first. A stage whose rows are not a constant is left out.
std::map<std::string, int64_t> stage_rows(const PipelineInfo &info, const std::vector<int64_t> &output_shape);

// The part of `info` that computes stage `func`: its stage, as the output, and every stage it reads
// (transitively), in order, with the inputs they read; `input_index` gets each kept input's
// position in info.inputs. The autoscheduler plans a Func that other families need in device
// memory (a matmul's A computed by a norm) as a pipeline of its own.
PipelineInfo sub_pipeline(const PipelineInfo &info, const std::string &func, std::vector<size_t> *input_index);

// A Halide name as a person wrote it: Halide makes the names of Funcs made with the same name
// unique by a "$<n>" suffix ("out$2"), which this drops; an RDom's "r$x" is kept.
std::string display_name(const std::string &halide_name);

// Analyses the pipeline of `output` over `inputs` (the ImageParams every input Func stands for).
// Throws spyre::Error naming the Func for what the autoscheduler cannot handle (an extern stage, a
// Tuple-valued Func, an input that is not among `inputs`).
PipelineInfo analyse_pipeline(const Halide::Func &output, const std::vector<Halide::ImageParam> &inputs);

// Every Function of the pipeline by name, the output included (for deep copies and lookups).
std::map<std::string, Halide::Internal::Function> pipeline_env(const Halide::Func &output);

}  // namespace spyre::autosched
