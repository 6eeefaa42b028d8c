#include "llama_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "device/error.h"
#include "device/fp8.h"
#include "device/half.h"
#include "device/layout.h"
#include "auto_schedule.h"
#include "llama_checkpoint.h"
#include "llama_stages.h"
#include "step_trace.h"

namespace spyre::llama {

namespace {

// Bytes of a row of `cols` fp16 elements, padded to whole sticks.
int64_t row_bytes(int cols, const MachineDesc &m) {
    const int64_t lanes = m.stick_bytes / 2;
    return (cols + lanes - 1) / lanes * m.stick_bytes;
}

std::string layer_tensor(int l, const std::string &what) { return "L" + std::to_string(l) + "." + what; }

// Bytes of a row of `cols` int8 elements, padded to whole sticks.
int64_t i8_row_bytes(int cols, const MachineDesc &m) { return (cols + m.stick_bytes - 1) / m.stick_bytes * m.stick_bytes; }

// A layer tensor's name after "L<l>." ("" for the others).
std::string layer_part(const std::string &tensor) {
    const size_t dot = tensor.find('.');
    return tensor[0] == 'L' && dot != std::string::npos ? tensor.substr(dot + 1) : "";
}

bool is_projection(const std::string &what) {
    return what == "wqkv" || what == "wo" || what == "w1" || what == "w3" || what == "w2";
}

// Bytes of a row of `cols` fp32 elements, padded to whole sticks.
int64_t f32_row_bytes(int cols, const MachineDesc &m) {
    const int64_t lanes = m.stick_bytes / 4;
    return (cols + lanes - 1) / lanes * m.stick_bytes;
}

}  // namespace

double allreduce_us(int64_t bytes, int cards, const MachineDesc &m) {
    if (cards <= 1) return 0;
    const double steps = 2.0 * (cards - 1);
    return (steps / cards * double(bytes) / m.link_bytes_per_ns + steps * m.link_latency_ns) / 1000.0;
}

LlamaConfig card_config(const LlamaConfig &c, int cards) {
    if (cards < 1) throw_error("llama: cards ", cards, " (at least one)");
    if (cards == 1) return c;
    // Each card's heads and MLP columns; whole sticks of fp16 columns (64), as every kernel takes.
    const int lanes = 64;
    if (c.heads % cards) throw_error("llama: cards ", cards, " do not divide the ", c.heads, " query heads (heads)");
    if (c.kv_heads % cards)
        throw_error("llama: cards ", cards, " do not divide the ", c.kv_heads, " key and value heads (kv_heads)");
    if (c.intermediate % (cards * lanes))
        throw_error("llama: cards ", cards, " do not split the MLP's ", c.intermediate,
                    " columns (intermediate) into whole sticks of ", lanes, " a card");
    LlamaConfig k = c;
    k.heads /= cards, k.kv_heads /= cards, k.intermediate /= cards;
    return k;
}

// The CPU backend's kernels, built once per key (Halide JIT-compiles each once).
struct LlamaModel::Kernels {
    std::map<std::string, StageKernel> cpu;
};

ModelOptions::Schedules ModelOptions::schedules_by_name(const std::string &name) {
    if (name == "named") return Schedules::Named;
    if (name == "auto") return Schedules::Auto;
    if (name == "fastest") return Schedules::Fastest;
    throw_error("llama: schedules '", name, "'; known: named, auto, fastest");
}

LlamaModel::LlamaModel(const LlamaConfig &config, const ModelOptions &options)
    : config_(config), card_config_(llama::card_config(config, options.cards)), options_(options),
      mem_(options.timing_only, options.machine),
      others_(size_t(std::max(options.cards, 1) - 1), DeviceMemory(options.timing_only, options.machine)),
      positions_(size_t(std::max(options.batch, 1)), 0), block_tables_(positions_.size()),
      kernels_(std::make_unique<Kernels>()) {
    if (options.batch < 1) throw_error("llama: batch ", options.batch, " (at least one sequence)");
    if (options.max_context < 1) throw_error("llama: max_context ", options.max_context);
    if (options.kv_block < 0)
        throw_error("llama: kv_block ", options.kv_block, " (0: a contiguous cache per sequence; or positions a block)");
    if (options.layers < 0 || options.layers > config.layers)
        throw_error("llama: layers ", options.layers, " of a model of ", config.layers);
    if (options.cpu && options.timing_only) throw_error("llama: the CPU backend has no timing-only mode");
    if (!options.tuning_db.empty() && options.schedules == ModelOptions::Schedules::Named)
        throw_error("llama: tuning_db holds auto_schedule's searches; the named schedules run none");
    if (options.auto_evaluations < 1)
        throw_error("llama: auto_evaluations ", options.auto_evaluations, " (each search times at least one candidate)");
    const MachineDesc &m = options.machine;
    // On several cards each holds its share of the layers' weights and KV cache (card_config_).
    const LlamaConfig &c = card_config_;
    if (byte_weights(options.weights))
        // schedules/qlinear.h takes N (a projection's columns) in whole byte sticks.
        for (auto [what, cols] : std::initializer_list<std::pair<const char *, int>>{
                 {"intermediate", c.intermediate}, {"hidden", c.hidden}, {"heads x head_dim", c.q_width()},
                 {"kv_heads x head_dim", c.kv_width()}})
            if (cols % int(m.stick_bytes))
                throw_error("llama: ", weights_name(options.weights), " weights take a projection's columns in whole "
                            "byte sticks of ", m.stick_bytes,
                            "; ", what, " is ", cols, options.cards > 1 ? " a card" : "");
    auto matrix = [&](const std::string &name, int cols, int rows) {
        if (byte_tensor(name)) {
            for (DeviceMemory *d : all_cards()) d->allocate(name, i8_row_bytes(cols, m) * rows);
            for (DeviceMemory *d : all_cards()) d->allocate(name + ".scale", row_bytes(cols, m));
            return;
        }
        for (DeviceMemory *d : all_cards()) d->allocate(name, row_bytes(cols, m) * rows);
    };
    // The embedding table, in parts a core can address (max_span_bytes) if it is larger.
    matrix("embed", c.hidden, c.vocab);
    for (int l = 0; l < c.layers; l++) {
        matrix(layer_tensor(l, "attn_norm"), c.hidden, 1);
        matrix(layer_tensor(l, "wqkv"), c.q_width() + 2 * c.kv_width(), c.hidden);
        matrix(layer_tensor(l, "wo"), c.hidden, c.q_width());
        matrix(layer_tensor(l, "ffn_norm"), c.hidden, 1);
        matrix(layer_tensor(l, "w1"), c.intermediate, c.hidden);
        matrix(layer_tensor(l, "w3"), c.intermediate, c.hidden);
        matrix(layer_tensor(l, "w2"), c.hidden, c.intermediate);
        if (options.kv_block > 0) {
            // Every sequence's blocks in one pool.
            matrix(layer_tensor(l, "kpool"), c.kv_width(), pool_blocks() * options.kv_block);
            matrix(layer_tensor(l, "vpool"), c.kv_width(), pool_blocks() * options.kv_block);
        }
        for (int b = 0; b < options.batch && options.kv_block == 0; b++) {
            // Whole key tiles of the last window a decode step reads (decode_key_window).
            matrix(layer_tensor(l, "kc" + std::to_string(b)), c.kv_width(), decode_key_window(options.max_context));
            matrix(layer_tensor(l, "vc" + std::to_string(b)), c.kv_width(), decode_key_window(options.max_context));
        }
    }
    if (options.kv_block > 0) {
        // A sequence's keys and values gathered from the pool for its attention, a window at most.
        matrix("kg", c.kv_width(), decode_key_window(options.max_context));
        matrix("vg", c.kv_width(), decode_key_window(options.max_context));
        free_all_blocks();
    }
    matrix("final_norm", c.hidden, 1);
    const VocabSplit v = vocab_split(c, m);
    matrix("lm_head", v.part_cols, c.hidden * v.parts);
    if (options.checkpoint)
        load_weights(*options.checkpoint);
    else
        init_weights();
}

LlamaModel::~LlamaModel() = default;

std::vector<DeviceMemory *> LlamaModel::all_cards() {
    std::vector<DeviceMemory *> v = {&mem_};
    for (DeviceMemory &d : others_) v.push_back(&d);
    return v;
}

bool LlamaModel::byte_tensor(const std::string &tensor) const {
    return byte_weights(options_.weights) && is_projection(layer_part(tensor));
}

std::vector<std::pair<std::vector<float>, int>> LlamaModel::card_slices(const std::string &tensor,
                                                                        const std::vector<float> &values,
                                                                        int cols) const {
    const size_t n_cards = others_.size() + 1;
    if (n_cards == 1) return {{values, cols}};
    // Several cards: the layers' projections sliced (card i: its heads' columns of wqkv, q then k
    // then v, and their rows of wo; its columns of w1 and w3 and their rows of w2); the rest whole.
    const LlamaConfig &c = config_, &k = card_config_;
    const std::string what = layer_part(tensor);
    const size_t rows = values.size() / size_t(cols);
    // Row r's columns [from, from + n) appended to out.
    auto cols_of = [&](std::vector<float> &out, size_t r, int from, int n) {
        out.insert(out.end(), values.begin() + long(r * size_t(cols) + size_t(from)),
                   values.begin() + long(r * size_t(cols) + size_t(from + n)));
    };
    std::vector<std::pair<std::vector<float>, int>> slices;
    for (size_t i = 0; i < n_cards; i++) {
        const int ci = int(i);
        std::vector<float> mine;
        int mine_cols = cols;
        if (what == "wqkv") {
            const int qc = k.q_width(), kc = k.kv_width();
            mine_cols = qc + 2 * kc;
            for (size_t r = 0; r < rows; r++) {
                cols_of(mine, r, ci * qc, qc);
                cols_of(mine, r, c.q_width() + ci * kc, kc);
                cols_of(mine, r, c.q_width() + c.kv_width() + ci * kc, kc);
            }
        } else if (what == "w1" || what == "w3") {
            mine_cols = k.intermediate;
            for (size_t r = 0; r < rows; r++) cols_of(mine, r, ci * k.intermediate, k.intermediate);
        } else if (what == "wo" || what == "w2") {
            const int share = what == "wo" ? k.q_width() : k.intermediate;
            for (size_t r = size_t(ci * share); r < size_t((ci + 1) * share); r++) cols_of(mine, r, 0, cols);
        } else {
            mine = values;
        }
        slices.push_back({std::move(mine), mine_cols});
    }
    return slices;
}

void LlamaModel::write_tensor(const std::string &tensor, const std::vector<float> &values, int cols) {
    std::vector<DeviceMemory *> cards = all_cards();
    if (!byte_tensor(tensor)) {
        const auto slices = card_slices(tensor, values, cols);
        for (size_t i = 0; i < cards.size(); i++) write_card(*cards[i], tensor, slices[i].first, slices[i].second);
        return;
    }
    // Per output column n over the whole tensor (before the cards' slices, so that a card's rows of
    // wo or w2 keep their column's scale): scale = max |w| / 127 (int8) or / 448 (fp8 E4M3's
    // largest) in fp16; q = round(w / scale), or the E4M3 code of w / scale.
    const bool fp8 = options_.weights == Weights::Fp8;
    const size_t rows = values.size() / size_t(cols);
    std::vector<float> scale(size_t(cols), 0.0f), q(values.size());
    for (size_t r = 0; r < rows; r++)
        for (size_t n = 0; n < size_t(cols); n++) scale[n] = std::max(scale[n], std::fabs(values[r * size_t(cols) + n]));
    const float top = fp8 ? fp8_max(Fp8Format::E4M3) : 127.0f;
    for (float &s : scale) s = s > 0 ? half_to_float(float_to_half(s / top)) : 1.0f;
    for (size_t i = 0; i < values.size(); i++) {
        const float v = values[i] / scale[i % size_t(cols)];
        q[i] = fp8 ? float(fp8_encode(v, Fp8Format::E4M3)) : std::clamp(std::nearbyint(v), -127.0f, 127.0f);
    }
    const auto slices = card_slices(tensor, q, cols);
    // The scales go with their columns: sliced as one row of the tensor where the cards split its
    // columns, whole where they split its rows (wo, w2).
    const std::string what = layer_part(tensor);
    const auto scales = what == "wo" || what == "w2" ? std::vector<std::pair<std::vector<float>, int>>(cards.size(), {scale, cols})
                                                     : card_slices(tensor, scale, cols);
    for (size_t i = 0; i < cards.size(); i++) {
        write_card(*cards[i], tensor, slices[i].first, slices[i].second, true);
        write_card(*cards[i], tensor + ".scale", scales[i].first, scales[i].second);
    }
}
void LlamaModel::write_card(DeviceMemory &mem, const std::string &tensor, const std::vector<float> &values, int cols,
                            bool bytes) {
    // Rows of `cols` values, each padded to whole sticks (the padding stays zero).
    const int64_t rb = bytes ? i8_row_bytes(cols, mem.machine()) : row_bytes(cols, mem.machine());
    const int64_t n_rows = int64_t(values.size()) / cols;
    if (n_rows * rb != mem.size(tensor))
        throw_error("llama: ", n_rows, " rows of ", cols, " values for tensor ", tensor, " of ", mem.size(tensor),
                    " bytes");
    std::vector<uint8_t> image(size_t(mem.size(tensor)), 0);
    for (size_t i = 0; i < values.size(); i++) {
        uint8_t *at = image.data() + int64_t(i / size_t(cols)) * rb;
        if (bytes) {
            at[i % size_t(cols)] = uint8_t(int(values[i]) & 0xFF);  // an int8 value or an fp8 code
        } else {
            const uint16_t h = float_to_half(values[i]);
            std::memcpy(at + 2 * int64_t(i % size_t(cols)), &h, 2);
        }
    }
    mem.write(mem.whole(tensor), image);
}

void LlamaModel::init_weights() {
    if (options_.timing_only) return;
    const LlamaConfig &c = config_;
    uint32_t state = options_.seed * 2654435761u + 12345u;
    auto uniform = [&](size_t n, float scale, float centre) {
        std::vector<float> v(n);
        for (float &x : v) {
            state = state * 1664525u + 1013904223u;
            x = centre + scale * (float((state >> 8) & 0xFFFFFF) / float(1 << 23) - 1.0f);
        }
        return v;
    };
    // Projections scaled by 1/sqrt(inner) so that activations keep their size through the layers;
    // the embedding and lm_head wide enough that the logits separate (distinct greedy tokens).
    auto proj = [&](int cols, int inner) { return uniform(size_t(cols) * inner, 1.0f / std::sqrt(float(inner)), 0); };
    write_tensor("embed", uniform(size_t(c.hidden) * c.vocab, 1.0f, 0), c.hidden);
    for (int l = 0; l < c.layers; l++) {
        write_tensor(layer_tensor(l, "attn_norm"), uniform(size_t(c.hidden), 0.2f, 1.0f), c.hidden);
        const int qkv = c.q_width() + 2 * c.kv_width();
        write_tensor(layer_tensor(l, "wqkv"), proj(qkv, c.hidden), qkv);
        write_tensor(layer_tensor(l, "wo"), proj(c.hidden, c.q_width()), c.hidden);
        write_tensor(layer_tensor(l, "ffn_norm"), uniform(size_t(c.hidden), 0.2f, 1.0f), c.hidden);
        write_tensor(layer_tensor(l, "w1"), proj(c.intermediate, c.hidden), c.intermediate);
        write_tensor(layer_tensor(l, "w3"), proj(c.intermediate, c.hidden), c.intermediate);
        write_tensor(layer_tensor(l, "w2"), proj(c.hidden, c.intermediate), c.hidden);
    }
    write_tensor("final_norm", uniform(size_t(c.hidden), 0.2f, 1.0f), c.hidden);
    // lm_head in the vocabulary's parts, one {part_cols, hidden} matrix after another; the columns
    // past the vocabulary stay zero.
    const VocabSplit v = vocab_split(c, options_.machine);
    std::vector<float> head = proj(v.padded(), c.hidden);
    for (int p = 0; p < v.parts; p++)
        for (int k = 0; k < c.hidden; k++)
            for (int n = 0; n < v.part_cols; n++)
                if (p * v.part_cols + n >= c.vocab) head[(size_t(p) * c.hidden + size_t(k)) * v.part_cols + size_t(n)] = 0;
    write_tensor("lm_head", head, v.part_cols);
}

void LlamaModel::load_weights(const LlamaCheckpoint &ck) {
    if (options_.timing_only) return;
    const LlamaConfig &c = config_, &k = ck.config();
    if (c.hidden != k.hidden || c.heads != k.heads || c.kv_heads != k.kv_heads || c.head_dim != k.head_dim ||
        c.intermediate != k.intermediate || c.vocab != k.vocab || c.layers != k.layers)
        throw_error("llama: the checkpoint's shape (hidden ", k.hidden, ", heads ", k.heads, "/", k.kv_heads, " of ",
                    k.head_dim, ", intermediate ", k.intermediate, ", vocabulary ", k.vocab, ", ", k.layers,
                    " layers) is not the model's (config ", c.name, ")");
    // A tensor at a time, so that the host holds one in fp32 (lm_head's is the largest).
    write_tensor("embed", ck.weight("embed"), c.hidden);
    for (int l = 0; l < c.layers; l++) {
        write_tensor(layer_tensor(l, "attn_norm"), ck.weight(layer_tensor(l, "attn_norm")), c.hidden);
        write_tensor(layer_tensor(l, "wqkv"), ck.weight(layer_tensor(l, "wqkv")), c.q_width() + 2 * c.kv_width());
        write_tensor(layer_tensor(l, "wo"), ck.weight(layer_tensor(l, "wo")), c.hidden);
        write_tensor(layer_tensor(l, "ffn_norm"), ck.weight(layer_tensor(l, "ffn_norm")), c.hidden);
        write_tensor(layer_tensor(l, "w1"), ck.weight(layer_tensor(l, "w1")), c.intermediate);
        write_tensor(layer_tensor(l, "w3"), ck.weight(layer_tensor(l, "w3")), c.intermediate);
        write_tensor(layer_tensor(l, "w2"), ck.weight(layer_tensor(l, "w2")), c.hidden);
    }
    write_tensor("final_norm", ck.weight("final_norm"), c.hidden);
    const VocabSplit v = vocab_split(c, options_.machine);
    write_tensor("lm_head", split_lm_head(c, v, ck.weight("lm_head")), v.part_cols);
}

std::vector<float> LlamaModel::weights(const std::string &name) const {
    if (byte_tensor(name)) {
        // q * scale, row by row of the byte image (its rows padded to whole sticks).
        const std::vector<float> scale = weights(name + ".scale");
        const std::vector<uint8_t> image = mem_.read(mem_.whole(name));
        const size_t cols = scale.size(), rb = size_t(i8_row_bytes(int(cols), options_.machine));
        std::vector<float> v;
        for (size_t r = 0; r + rb <= image.size(); r += rb)
            for (size_t n = 0; n < cols; n++) {
                const uint8_t b = image[r + n];
                const float q = options_.weights == Weights::Fp8 ? fp8_decode(b, Fp8Format::E4M3) : float(int8_t(b));
                v.push_back(q * scale[n]);
            }
        return v;
    }
    const std::vector<uint8_t> image = mem_.read(mem_.whole(name));
    std::vector<float> v(image.size() / 2);
    for (size_t i = 0; i < v.size(); i++) v[i] = half_to_float(uint16_t(image[2 * i] | image[2 * i + 1] << 8));
    return v;
}

void LlamaModel::launch(StepResult &r, const std::string &key, int layer, const std::vector<Builder> &builds,
                        const std::vector<TensorView> &args) {
    try {
        launch_kernel(r, key, layer, builds, args);
    } catch (const spyre::Error &e) {
        throw_error_of(e.kind(), "llama: kernel ", key, layer >= 0 ? " of layer " + std::to_string(layer) : std::string(),
                       ": ", e.what());
    }
}

void LlamaModel::launch_kernel(StepResult &r, const std::string &key, int layer, const std::vector<Builder> &builds,
                               const std::vector<TensorView> &args) {
    if (options_.cpu) {
        auto it = kernels_->cpu.find(key);
        if (it == kernels_->cpu.end()) it = kernels_->cpu.emplace(key, builds.front()(Backend::Cpu)).first;
        for (DeviceMemory *d : head_only_ ? std::vector<DeviceMemory *>{&mem_} : all_cards())
            realize_on_cpu(it->second, *d, args);
        r.runs.push_back({it->second.name, "cpu", layer, {}, nullptr});
        return;
    }
    auto it = programs_.find(key);
    if (it == programs_.end()) {
        // Each schedule compiled and timed alone; a schedule the back end refuses for this shape is
        // passed over (the first refusal is reported if every one is).
        std::optional<Compiled> best;
        double best_us = 0;
        std::string first_error, auto_failure;
        ErrorKind first_kind = ErrorKind::Refused;
        // Keeps the faster of `c` and the best so far (timed when there is a choice).
        const bool choose = builds.size() > 1 || options_.schedules == ModelOptions::Schedules::Fastest;
        auto consider = [&](Compiled c) {
            double us = 0;
            if (choose) {
                SimOptions so;
                so.timing_only = true;
                so.summarize_loops = options_.summarize_loops;
                us = simulate(c.program, options_.machine, {}, so).stats.us;
            }
            if (!best || us < best_us) best = std::move(c), best_us = us;
        };
        if (options_.schedules != ModelOptions::Schedules::Named) {
            // One unscheduled instance (the builders differ only in their schedules).
            StageKernel k = builds.front()(Backend::Auto);
            CompileOptions o = k.options;
            o.kernel_name = k.name;
            o.machine = options_.machine;
            AutoOptions ao;
            ao.max_evaluations = options_.auto_evaluations;
            ao.progress = false;
            ao.tuning_db = options_.tuning_db;
            // The named decode projections split K over the cores (split_k), adding the partial
            // sums in another order than the algorithm's; auto may do the same (a projection's
            // results are then within the same rounding of the CPU's).
            ao.allow_reassociation = true;
            try {
                const AutoResult a = auto_schedule(k.output, k.inputs, o, ao);
                consider(Compiled{compile_for_spyre(k.output, k.inputs, a.options),
                                  "auto: " + a.summary + (a.from_tuning_db ? " (tuning db)" : "")});
            } catch (const spyre::Error &e) {
                if (e.kind() == ErrorKind::Internal) throw;
                // Said in the schedule's label (and so in every report): the named schedules run.
                auto_failure = e.what();
            }
        }
        const bool named = options_.schedules != ModelOptions::Schedules::Auto || !best;
        for (const Builder &build : named ? builds : std::vector<Builder>{}) {
            try {
                StageKernel k = build(Backend::Spyre);
                CompileOptions o = k.options;
                o.kernel_name = k.name;
                o.machine = options_.machine;
                consider(Compiled{compile_for_spyre(k.output, k.inputs, o), k.schedule});
            } catch (const spyre::Error &e) {
                if (e.kind() == ErrorKind::Internal) throw;  // a bug, not a schedule that does not fit
                if (first_error.empty()) first_error = e.what(), first_kind = e.kind();
            }
        }
        if (!best) throw Error(first_error, first_kind);
        if (!auto_failure.empty() && best->schedule.rfind("auto: ", 0) != 0)
            best->schedule += " (auto found none: " + auto_failure.substr(0, 120) + ")";
        it = programs_.emplace(key, std::move(*best)).first;
    }
    SimOptions so;
    so.summarize_loops = options_.summarize_loops;
    if (trace_) so.trace_path = options_.trace_path + ".kernel";
    SimResult s = mem_.run(it->second.program, args, so);
    // The other cards run the same program on their own shares at the same time (the same shapes:
    // in timing-only mode, the same time, so card 0 stands for them); the slowest sets the time.
    if (!head_only_ && !options_.timing_only)
        for (DeviceMemory &d : others_) {
            SimOptions o2 = so;
            o2.trace_path.clear();
            const SimResult t = d.run(it->second.program, args, o2);
            if (t.stats.us > s.stats.us) s.stats = t.stats;
        }
    if (trace_)
        trace_->add(so.trace_path, it->second.program.kernel_name + (layer >= 0 ? " L" + std::to_string(layer) : ""),
                    r.us, s.stats.us);
    r.runs.push_back({it->second.program.kernel_name, it->second.schedule, layer, s.stats, &it->second.program});
    r.us += s.stats.us;
}

void LlamaModel::reset() {
    for (int &p : positions_) p = 0;
    last_rows_ = last_first_ = 0;
    free_all_blocks();
}

void LlamaModel::free_all_blocks() {
    for (std::vector<int> &t : block_tables_) t.clear();
    free_blocks_.clear();
    if (options_.kv_block == 0) return;
    // Blocks are taken from the back: the pool's last block first, so that a sequence's blocks are
    // not its positions' order in the pool even alone.
    for (int i = 0; i < pool_blocks(); i++) free_blocks_.push_back(i);
}

int LlamaModel::pool_blocks() const {
    return (options_.max_context + options_.kv_block - 1) / options_.kv_block * options_.batch;
}

void LlamaModel::take_blocks(int s, int positions) {
    if (options_.kv_block == 0) return;
    std::vector<int> &table = block_tables_.at(size_t(s));
    while (int(table.size()) * options_.kv_block < positions) {
        if (free_blocks_.empty()) throw_internal("llama: the KV pool has no free block for sequence ", s);
        table.push_back(free_blocks_.back());
        free_blocks_.pop_back();
    }
}

int LlamaModel::pool_row(int s, int p) const {
    const int b = options_.kv_block;
    return block_tables_.at(size_t(s)).at(size_t(p / b)) * b + p % b;
}

void LlamaModel::set_context(int positions) {
    if (!options_.timing_only)
        throw_error("llama: set_context stands in for a prefill only in timing-only mode; run prefill() instead");
    if (positions < 0 || positions >= options_.max_context)
        throw_error("llama: context ", positions, " outside the cache of ", options_.max_context, " positions");
    for (int &p : positions_) p = positions;
    for (int s = 0; s < int(positions_.size()); s++) take_blocks(s, positions);
}

StepResult LlamaModel::prefill_batch(const std::vector<std::vector<int>> &prompts, int chunk) {
    if (int(prompts.size()) != options_.batch)
        throw_error("llama: prefill_batch takes a prompt for each of the batch's ", options_.batch, " sequences, got ",
                    prompts.size());
    for (size_t b = 1; b < prompts.size(); b++)
        if (prompts[b].size() != prompts[0].size())
            throw_error("llama: prefill_batch takes prompts of one length: sequence ", b, " has ", prompts[b].size(),
                        " tokens, sequence 0 has ", prompts[0].size(), " (prefill them one by one instead)");
    return prefill_steps(prompts, 0, chunk);
}

StepResult LlamaModel::prefill(const std::vector<int> &prompt, const PrefillOptions &p) {
    if (p.sequence < 0 || p.sequence >= options_.batch)
        throw_error("llama: prefill of sequence ", p.sequence, ", but the batch holds ", options_.batch,
                    " (sequences 0 to ", options_.batch - 1, ")");
    return prefill_steps({prompt}, p.sequence, p.chunk);
}

StepResult LlamaModel::prefill_steps(const std::vector<std::vector<int>> &prompts, int first, int chunk) {
    if (chunk < 0) throw_error("llama: prefill chunk ", chunk, " (0: the whole prompt at once; or the tokens of each chunk)");
    const int n = int(prompts[0].size());
    // Checked for the whole prompts before the first chunk runs: a refused prefill fills nothing.
    for (int b = 0; b < int(prompts.size()) && n > 0; b++)
        if (positions_[size_t(first + b)] + n > options_.max_context)
            throw_error("llama: sequence ", first + b, " at position ", positions_[size_t(first + b)],
                        " has no room for ", n, " more in a cache of ", options_.max_context);
    const int step_tokens = chunk ? chunk : std::max(n, 1);
    StepResult all;
    for (int t0 = 0; t0 < n || t0 == 0; t0 += step_tokens) {
        const int t1 = std::min(n, t0 + step_tokens);
        std::vector<int> ids;
        for (const std::vector<int> &p : prompts) ids.insert(ids.end(), p.begin() + t0, p.begin() + t1);
        StepResult r = step(ids, t1 - t0, first, t1 == n);
        all.runs.insert(all.runs.end(), r.runs.begin(), r.runs.end());
        all.allreduces.insert(all.allreduces.end(), r.allreduces.begin(), r.allreduces.end());
        all.us += r.us;
        all.tokens = r.tokens;
    }
    return all;
}

StepResult LlamaModel::decode(const std::vector<int> &tokens) {
    if (int(tokens.size()) != options_.batch)
        throw_error("llama: decode takes one token per sequence (", options_.batch, "), got ", tokens.size());
    return step(tokens, 1);
}

std::vector<float> LlamaModel::logits(int b) const {
    if (b < last_first_ || b >= last_first_ + last_rows_) throw_error("llama: no logits for sequence ", b);
    const int64_t rb = row_bytes(vocab_split(config_, options_.machine).padded(), options_.machine);
    const std::vector<uint8_t> row = mem_.read(mem_.window("logits", (b - last_first_) * rb, rb));
    std::vector<float> v(size_t(config_.vocab));
    for (size_t i = 0; i < v.size(); i++) v[i] = half_to_float(uint16_t(row[2 * i] | row[2 * i + 1] << 8));
    return v;
}

void LlamaModel::all_reduce(StepResult &r, const std::string &stage, int layer, int rows, const std::string &residual,
                            const std::string &out) {
    const MachineDesc &m = options_.machine;
    const int hidden = config_.hidden;
    const int64_t prow = f32_row_bytes(hidden, m), hrow = row_bytes(hidden, m);
    if (!options_.timing_only) {
        // In card order, then the residual: the single card's fp16(acc + residual), its acc summed
        // over the cards' shares of K.
        std::vector<float> acc(size_t(rows) * size_t(hidden), 0.0f);
        for (DeviceMemory *d : all_cards()) {
            const std::vector<uint8_t> img = d->read(d->window("part", 0, prow * rows));
            for (int t = 0; t < rows; t++)
                for (int i = 0; i < hidden; i++) {
                    float v;
                    std::memcpy(&v, img.data() + t * prow + 4 * i, 4);
                    acc[size_t(t) * size_t(hidden) + size_t(i)] += v;
                }
        }
        const std::vector<uint8_t> res = mem_.read(mem_.window(residual, 0, hrow * rows));
        std::vector<uint8_t> img(size_t(hrow * rows), 0);
        for (int t = 0; t < rows; t++)
            for (int i = 0; i < hidden; i++) {
                const float v = half_to_float(uint16_t(res[size_t(t * hrow + 2 * i)] | res[size_t(t * hrow + 2 * i + 1)] << 8));
                const uint16_t h = float_to_half(acc[size_t(t) * size_t(hidden) + size_t(i)] + v);
                std::memcpy(img.data() + t * hrow + 2 * i, &h, 2);
            }
        for (DeviceMemory *d : all_cards()) d->write(d->window(out, 0, hrow * rows), img);
    }
    AllReduceRun a{stage, layer, int64_t(rows) * hidden * 4, 0};
    a.us = allreduce_us(a.bytes, options_.cards, m);
    r.us += a.us;
    r.allreduces.push_back(a);
}

StepResult LlamaModel::step(const std::vector<int> &ids, int n, int first, bool head) {
    // One card's shapes (the whole model's on one card): the hidden width, head_dim and
    // vocabulary are every card's.
    const LlamaConfig &c = card_config_;
    const MachineDesc &m = options_.machine;
    if (ids.empty() || n < 1) throw_error("llama: a step of no tokens");
    const int T = int(ids.size()), B = T / n;
    // Sequence b of the step is the batch's sequence first + b.
    auto at = [&](int b) { return positions_[size_t(first + b)]; };
    for (int b = 0; b < B; b++)
        if (at(b) + n > options_.max_context)
            throw_error("llama: sequence ", first + b, " at position ", at(b), " has no room for ", n,
                        " more in a cache of ", options_.max_context);
    last_rows_ = 0;  // a step without the head leaves no logits
    const bool paged = options_.kv_block > 0;
    for (int b = 0; b < B; b++) take_blocks(first + b, at(b) + n);
    // The cache positions a sequence's attention reads: its context, or a decode step's window.
    auto keys_of = [&](int b) {
        const int context = at(b) + n;
        return n == 1 && context > 1 ? decode_key_window(context) : context;
    };
    StepResult r;
    StepTrace trace;
    if (!options_.trace_path.empty()) trace_ = &trace;
    struct Clear {
        StepTrace *&t;
        ~Clear() { t = nullptr; }
    } clear{trace_};
    const int qkv = c.q_width() + 2 * c.kv_width();
    const int64_t hrow = row_bytes(c.hidden, m), qrow = row_bytes(c.q_width(), m), kvrow = row_bytes(c.kv_width(), m);
    const int64_t qkvrow = row_bytes(qkv, m);
    const VocabSplit vs = vocab_split(c, m);
    const int64_t drow = row_bytes(c.head_dim, m), vrow = row_bytes(vs.padded(), m), irow = row_bytes(c.intermediate, m);
    for (auto [name, bytes] : std::initializer_list<std::pair<const char *, int64_t>>{
             {"x", hrow}, {"xn", hrow}, {"h", hrow}, {"hn", hrow}, {"qkv", qkvrow}, {"qr", qrow}, {"attn", qrow},
             {"kr", kvrow}, {"cos", drow}, {"sin", drow}, {"gate", irow}, {"mid", irow}})
        for (DeviceMemory *d : all_cards()) d->ensure(name, bytes * T);
    for (DeviceMemory *d : all_cards()) d->ensure("ids", (T + 31) / 32 * m.stick_bytes);
    const bool several = !others_.empty();
    const int64_t prow = f32_row_bytes(c.hidden, m);
    if (several)
        for (DeviceMemory *d : all_cards()) d->ensure("part", prow * T);
    head_only_ = false;
    auto rows = [&](const std::string &t, int64_t row, int first, int count) {
        return mem_.window(t, first * row, count * row);
    };
    auto all = [&](const std::string &t, int64_t row) { return rows(t, row, 0, T); };

    // Host inputs: the ids and the rotary tables of each token's position.
    std::vector<int> pos;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < n; i++) pos.push_back(at(b) + i);
    if (!options_.timing_only) {
        const RopeTables tables = rope_tables(c, pos);
        auto table = [&](const std::string &name, const std::vector<float> &v) {
            std::vector<uint8_t> img(size_t(drow * T), 0);
            for (int t = 0; t < T; t++)
                for (int i = 0; i < c.head_dim; i++) {
                    const uint16_t h = float_to_half(v[size_t(t) * c.head_dim + i]);
                    std::memcpy(img.data() + t * drow + 2 * i, &h, 2);
                }
            for (DeviceMemory *d : all_cards()) d->write(all(name, drow), img);
        };
        table("cos", tables.cos);
        table("sin", tables.sin);
    }
    // Decode buckets: each sequence's key bias over its window, 0 up to its context and fp16's lowest
    // after it.
    const bool buckets = options_.decode_buckets && n == 1;
    for (int b = 0; b < B && buckets; b++) {
        const int context = at(b) + n, keys = keys_of(b);
        if (context <= 1) continue;
        const std::string name = "kvbias" + std::to_string(b);
        for (DeviceMemory *d : all_cards()) d->ensure(name, row_bytes(keys, m));
        if (options_.timing_only) continue;
        std::vector<uint8_t> img(size_t(row_bytes(keys, m)), 0);
        const uint16_t lowest = float_to_half(-65504.0f);
        for (int p = context; p < keys; p++) std::memcpy(img.data() + 2 * p, &lowest, 2);
        for (DeviceMemory *d : all_cards()) d->write(mem_.window(name, 0, row_bytes(keys, m)), img);
    }
    // A paged cache whose blocks are a decode attention's key tiles (64, 128 or 256 positions): a
    // single-token step's attention reads the pool in place, a key tile per block, through the
    // sequence's block table (past its last block, the last: those keys weigh 0 by the bias or
    // valid_kv). Otherwise each sequence's positions are gathered from the pool first.
    const int blk = options_.kv_block;
    // Sequence b's attention reads the pool in place (a single-token step past position 0).
    auto in_place = [&](int b) { return paged && n == 1 && at(b) + n > 1 && (blk == 64 || blk == 128 || blk == 256); };
    auto ids_bytes = [&](int count) { return int64_t(count + 31) / 32 * m.stick_bytes; };
    for (int b = 0; b < B; b++) {
        if (!in_place(b)) continue;
        const int tiles = keys_of(b) / blk;
        const std::string name = "kvtab" + std::to_string(b);
        for (DeviceMemory *d : all_cards()) d->ensure(name, ids_bytes(tiles));
        if (options_.timing_only) continue;
        const std::vector<int> &table = block_tables_.at(size_t(first + b));
        std::vector<uint8_t> img(size_t(ids_bytes(tiles)), 0);
        for (int j = 0; j < tiles; j++) {
            const int block = table.at(std::min<size_t>(size_t(j), table.size() - 1));
            std::memcpy(img.data() + 4 * j, &block, 4);
        }
        for (DeviceMemory *d : all_cards()) d->write(mem_.window(name, 0, ids_bytes(tiles)), img);
    }
    // Gathered: each sequence's pool rows, position by position over what its attention reads (past
    // its context, its last position's row: those keys weigh 0, but their values must be finite).
    for (int b = 0; b < B; b++) {
        if (!paged || in_place(b)) continue;
        const std::string name = "kvids" + std::to_string(b);
        for (DeviceMemory *d : all_cards()) d->ensure(name, ids_bytes(keys_of(b)));
        if (options_.timing_only) continue;
        std::vector<uint8_t> img(size_t(ids_bytes(keys_of(b))), 0);
        for (int p = 0; p < keys_of(b); p++) {
            const int row = pool_row(first + b, std::min(p, at(b) + n - 1));
            std::memcpy(img.data() + 4 * p, &row, 4);
        }
        for (DeviceMemory *d : all_cards()) d->write(mem_.window(name, 0, ids_bytes(keys_of(b))), img);
    }
    const std::string ts = "/" + std::to_string(T);
    // The embedding: each run of consecutive tokens whose ids lie in one part of the vocabulary
    // (vocab_parts) gathers from that part, with its ids rebased into it.
    const int part_rows = vs.part_cols;
    for (int t0 = 0; t0 < T;) {
        const int part = std::clamp(ids[size_t(t0)], 0, c.vocab - 1) / part_rows;
        int t1 = t0 + 1;
        while (t1 < T && std::clamp(ids[size_t(t1)], 0, c.vocab - 1) / part_rows == part) t1++;
        const int count = t1 - t0, table_rows = std::min(part_rows, c.vocab - part * part_rows);
        const int64_t id_bytes = (count + 31) / 32 * m.stick_bytes;
        if (!options_.timing_only) {
            std::vector<uint8_t> img(size_t(id_bytes), 0);
            for (int t = t0; t < t1; t++) {
                const int id = ids[size_t(t)] - part * part_rows;
                std::memcpy(img.data() + 4 * (t - t0), &id, 4);
            }
            for (DeviceMemory *d : all_cards()) d->write(mem_.window("ids", 0, id_bytes), img);
        }
        launch(r, "embedding/" + std::to_string(count) + "/" + std::to_string(table_rows), -1,
               [&](Backend be) { return embedding_stage(c, count, table_rows, be); },
               {mem_.window("embed", part * part_rows * hrow, table_rows * hrow), mem_.window("ids", 0, id_bytes),
                rows("x", hrow, t0, count)});
        t0 = t1;
    }
    const int layers = options_.layers ? options_.layers : c.layers;
    for (int l = 0; l < layers; l++) {
        auto w = [&](const std::string &what) { return mem_.whole(layer_tensor(l, what)); };
        auto attention_variants = [&](int tokens, int context, bool bucket) {
            std::vector<Builder> v;
            for (const std::string &sched : attention_schedules(tokens, context))
                v.push_back([=](Backend be) { return attention_stage(c, tokens, context, be, sched, bucket); });
            return v;
        };
        // A projection under each schedule that applies to its shape; launch keeps the fastest.
        const Weights wt = options_.weights;
        auto proj = [&](const std::string &name, int inner, int cols, Epilogue e) {
            std::vector<Builder> v;
            for (const std::string &sched : projection_schedules(T, inner, cols, wt))
                v.push_back([=](Backend be) { return projection_stage(name, T, inner, cols, e, be, sched, wt); });
            return v;
        };
        // A projection's arguments: x, the weights (and their scales, in int8 or fp8), then the rest.
        auto proj_args = [&](const TensorView &x, const std::string &what, const std::vector<TensorView> &rest) {
            std::vector<TensorView> v = {x, w(what)};
            if (byte_tensor(layer_tensor(l, what))) v.push_back(w(what + ".scale"));
            v.insert(v.end(), rest.begin(), rest.end());
            return v;
        };
        launch(r, "attn_norm" + ts, l, [&](Backend be) { return rmsnorm_stage("attn_norm", c, T, be); },
               {all("x", hrow), w("attn_norm"), all("xn", hrow)});
        // The queries, keys and values of every token by one projection: {q | k | v} per row.
        launch(r, "qkv_proj" + ts, l, proj("qkv_proj", c.hidden, qkv, Epilogue::None),
               proj_args(all("xn", hrow), "wqkv", {all("qkv", qkvrow)}));
        const int p0 = at(0);
        // Sequence b of the step's cache rows [from, from + count).
        auto cache = [&](const std::string &what, int b, int from, int count) {
            return rows(layer_tensor(l, what + std::to_string(first + b)), kvrow, from, count);
        };
        launch(r, "rope_q" + ts, l,
               [&](Backend be) { return rope_stage("rope_q", c, c.q_width(), T, qkv, 0, be); },
               {all("qkv", qkvrow), all("cos", drow), all("sin", drow), all("qr", qrow)});
        // One sequence: the rotated keys and the values go straight to their place in its cache.
        // One contiguous sequence: the rotated keys and the values go straight to their place in its
        // cache. Otherwise the keys go to "kr" first and each sequence's rows are copied into its
        // cache, or into its blocks of a paged cache (a copy per run of positions in one block).
        const bool direct = B == 1 && !paged;
        launch(r, "rope_k" + ts, l,
               [&](Backend be) { return rope_stage("rope_k", c, c.kv_width(), T, qkv, c.q_width(), be); },
               {all("qkv", qkvrow), all("cos", drow), all("sin", drow), direct ? cache("kc", 0, p0, T) : all("kr", kvrow)});
        if (direct) {
            launch(r, "v_to_cache" + ts, l,
                   [&](Backend be) { return copy_stage("v_to_cache", c.kv_width(), T, qkv, c.q_width() + c.kv_width(), be); },
                   {all("qkv", qkvrow), cache("vc", 0, p0, T)});
        } else {
            for (int b = 0; b < B; b++)
                for (int i0 = 0; i0 < n;) {
                    // The step's rows b * n + [i0, i1): positions at(b) + [i0, i1), in one block.
                    const int blk = paged ? options_.kv_block : n;
                    const int i1 = std::min(n, i0 + blk - (at(b) + i0) % blk), len = i1 - i0;
                    const std::string ls = "/" + std::to_string(len);
                    auto dest = [&](const std::string &what) {
                        return paged ? rows(layer_tensor(l, what + "pool"), kvrow, pool_row(first + b, at(b) + i0), len)
                                     : cache(what + "c", b, at(b) + i0, len);
                    };
                    const char *k_name = paged ? "k_to_pool" : "k_to_cache", *v_name = paged ? "v_to_pool" : "v_to_cache";
                    launch(r, k_name + ls, l,
                           [&](Backend be) { return copy_stage(k_name, c.kv_width(), len, c.kv_width(), 0, be); },
                           {rows("kr", kvrow, b * n + i0, len), dest("k")});
                    launch(r, v_name + ls, l,
                           [&](Backend be) {
                               return copy_stage(v_name, c.kv_width(), len, qkv, c.q_width() + c.kv_width(), be);
                           },
                           {rows("qkv", qkvrow, b * n + i0, len), dest("v")});
                    i0 = i1;
                }
        }
        for (int b = 0; b < B; b++) {
            const int context = at(b) + n, keys = keys_of(b);
            // A single token reads whole key tiles, the positions past its context weighing 0. A
            // paged cache is read in place (above), or its positions are gathered from the pool
            // first, by the sequence's rows.
            const bool bucket = buckets && n == 1 && context > 1;
            if (in_place(b)) {
                const int pool_blocks = int(mem_.size(layer_tensor(l, "kpool")) / kvrow / blk);
                const std::string sched = blk == 256 ? "kv_stream" : "kv_stream/" + std::to_string(blk);
                std::vector<TensorView> args = {rows("qr", qrow, b * n, n), mem_.whole(layer_tensor(l, "kpool")),
                                                mem_.whole(layer_tensor(l, "vpool"))};
                if (bucket) args.push_back(mem_.window("kvbias" + std::to_string(b), 0, row_bytes(keys, m)));
                args.push_back(mem_.window("kvtab" + std::to_string(b), 0, ids_bytes(keys / blk)));
                args.push_back(rows("attn", qrow, b * n, n));
                launch(r, "attention/1/" + (bucket ? "w" + std::to_string(keys) : std::to_string(context)) + "/paged", l,
                       Builder([=](Backend be) { return attention_stage(c, 1, context, be, sched, bucket, pool_blocks); }),
                       args);
                continue;
            }
            std::vector<TensorView> kv;  // K and V as the attention reads them
            if (!paged) {
                kv = {cache("kc", b, 0, keys), cache("vc", b, 0, keys)};
            } else {
                const int64_t pool = mem_.size(layer_tensor(l, "kpool")) / kvrow;
                const TensorView ids_view = mem_.window("kvids" + std::to_string(b), 0, ids_bytes(keys));
                for (const char *what : {"k", "v"}) {
                    const std::string name = std::string(what) + "_gather";
                    launch(r, name + "/" + std::to_string(keys), l,
                           [&](Backend be) { return gather_stage(name, c.kv_width(), keys, int(pool), be); },
                           {mem_.whole(layer_tensor(l, std::string(what) + "pool")), ids_view,
                            rows(std::string(what) + "g", kvrow, 0, keys)});
                }
                kv = {rows("kg", kvrow, 0, keys), rows("vg", kvrow, 0, keys)};
            }
            // A decode step's bucket: the kernel of its window, the keys past its context weighed 0
            // by the sequence's bias (written once a step, before the layers).
            std::vector<TensorView> args = {rows("qr", qrow, b * n, n), kv[0], kv[1]};
            if (bucket) args.push_back(mem_.window("kvbias" + std::to_string(b), 0, row_bytes(keys, m)));
            args.push_back(rows("attn", qrow, b * n, n));
            launch(r, "attention/" + std::to_string(n) + "/" + (bucket ? "w" + std::to_string(keys) : std::to_string(context)),
                   l, attention_variants(n, context, bucket), args);
        }
        if (several) {
            // Each card's heads' share of the product; the residual is added in the all-reduce.
            launch(r, "o_proj" + ts, l, proj("o_proj", c.q_width(), c.hidden, Epilogue::Partial),
                   proj_args(all("attn", qrow), "wo", {all("part", prow)}));
            all_reduce(r, "o_proj", l, T, "x", "h");
        } else {
            launch(r, "o_proj" + ts, l, proj("o_proj", c.q_width(), c.hidden, Epilogue::Residual),
                   proj_args(all("attn", qrow), "wo", {all("x", hrow), all("h", hrow)}));
        }
        launch(r, "ffn_norm" + ts, l, [&](Backend be) { return rmsnorm_stage("ffn_norm", c, T, be); },
               {all("h", hrow), w("ffn_norm"), all("hn", hrow)});
        // SwiGLU: the gate projection, the up projection times silu of the gate, the down
        // projection plus the residual.
        launch(r, "gate_proj" + ts, l, proj("gate_proj", c.hidden, c.intermediate, Epilogue::None),
               proj_args(all("hn", hrow), "w1", {all("gate", irow)}));
        launch(r, "up_proj" + ts, l, proj("up_proj", c.hidden, c.intermediate, Epilogue::SiluGate),
               proj_args(all("hn", hrow), "w3", {all("gate", irow), all("mid", irow)}));
        if (several) {
            launch(r, "down_proj" + ts, l, proj("down_proj", c.intermediate, c.hidden, Epilogue::Partial),
                   proj_args(all("mid", irow), "w2", {all("part", prow)}));
            all_reduce(r, "down_proj", l, T, "h", "x");
        } else {
            launch(r, "down_proj" + ts, l, proj("down_proj", c.intermediate, c.hidden, Epilogue::Residual),
                   proj_args(all("mid", irow), "w2", {all("h", hrow), all("x", hrow)}));
        }
    }
    if (head) {
        // The head, on each sequence's last token: one row per sequence (on card 0 alone). A chunk
        // before a prefill's last has none.
        head_only_ = true;
        const int H = B;
        mem_.ensure("xf", hrow * H);
        mem_.ensure("logits", vrow * H);
        mem_.ensure("next", H * m.stick_bytes);
        // Each sequence's last row: the step's row itself for one sequence or one token each;
        // otherwise (a batched prefill) copied into a matrix of its own first.
        TensorView last = B == 1 ? rows("x", hrow, T - 1, 1) : all("x", hrow);
        if (B > 1 && n > 1) {
            mem_.ensure("xl", hrow * H);
            for (int b = 0; b < B; b++)
                launch(r, "last_row/1", -1, [&](Backend be) { return copy_stage("last_row", c.hidden, 1, c.hidden, 0, be); },
                       {rows("x", hrow, b * n + n - 1, 1), mem_.window("xl", b * hrow, hrow)});
            last = mem_.window("xl", 0, hrow * H);
        }
        const std::string hs = "/" + std::to_string(H);
        launch(r, "final_norm" + hs, -1, [&](Backend be) { return rmsnorm_stage("final_norm", c, H, be); },
               {last, mem_.whole("final_norm"), mem_.window("xf", 0, hrow * H)});
        if (H == 1) {
            // One row: a launch per part of the vocabulary, each over every core.
            const int64_t part_w = int64_t(c.hidden) * row_bytes(part_rows, m), part_out = row_bytes(part_rows, m);
            for (int p = 0; p < vs.parts; p++)
                launch(r, "lm_head_part/1", -1,
                       Builder([&](Backend be) { return projection_stage("lm_head", 1, c.hidden, part_rows, Epilogue::None, be); }),
                       {mem_.window("xf", 0, hrow), mem_.window("lm_head", p * part_w, part_w),
                        mem_.window("logits", p * part_out, part_out)});
        } else {
            launch(r, "lm_head" + hs, -1, [&](Backend be) { return lm_head_stage(c, H, vs, be); },
                   {mem_.window("xf", 0, hrow * H), mem_.whole("lm_head"), mem_.window("logits", 0, vrow * H)});
        }
        // The greedy tokens, a row per core, each row's index in a stick of its own.
        launch(r, "argmax" + hs, -1, [&](Backend be) { return argmax_stage(c, H, vs.padded(), be); },
               {mem_.window("logits", 0, vrow * H), mem_.window("next", 0, H * m.stick_bytes)});
        last_rows_ = H;
        last_first_ = first;
        r.tokens.assign(size_t(H), 0);
        if (!options_.timing_only) {
            const std::vector<uint8_t> img = mem_.read(mem_.whole("next"));
            for (int b = 0; b < H; b++) std::memcpy(&r.tokens[size_t(b)], img.data() + b * m.stick_bytes, 4);
        }
    }
    for (int b = 0; b < B; b++) positions_[size_t(first + b)] += n;
    if (trace_) trace.write(options_.trace_path);
    return r;
}

}  // namespace spyre::llama
