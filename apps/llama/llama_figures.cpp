#include "llama_figures.h"

#include <map>

#include "formula_check.h"
#include "roofline.h"
#include "sim/ibm_formula.h"
#include "sim/ibm_kernel.h"
#include "sim/model_validity.h"
#include "speed_of_light.h"

namespace spyre::llama {

LayerWork layer_work(const LlamaConfig &c, const StepShape &s) {
    LayerWork w;
    const double rows = double(s.tokens) * s.batch, kv = c.kv_width();
    const double weights = double(c.layer_weight_bytes(byte_weights(s.weights)));
    // The residual stream in and out, the cache read (the earlier positions) and appended to.
    w.read_bytes = weights + rows * c.hidden * 2 + double(s.batch) * (s.context - s.tokens) * kv * 2 * 2;
    w.write_bytes = rows * c.hidden * 2 + rows * kv * 2 * 2;
    const double proj = double(c.hidden) * (c.q_width() + 2 * kv) + double(c.q_width()) * c.hidden +
                        3.0 * c.hidden * c.intermediate;
    // Attention: scores and P V, for each query the positions it sees (causal).
    double seen = 0;
    for (int t = 0; t < s.tokens; t++) seen += s.context - s.tokens + t + 1;
    w.macs = rows * proj + double(s.batch) * seen * c.heads * c.head_dim * 2;
    return w;
}

std::vector<std::string> step_stage_names(int batch, bool prefill) {
    std::vector<std::string> s = {"attn_norm", "qkv_proj", "rope_q", "rope_k"};
    if (batch > 1 && !prefill) s.push_back("k_to_cache");
    s.push_back("v_to_cache");
    for (const char *n : {"attention", "o_proj", "ffn_norm", "gate_proj", "up_proj", "down_proj", "embedding",
                          "final_norm", "lm_head", "argmax"})
        s.push_back(n);
    return s;
}

namespace {

Figure stage_figure(const KernelRun &k, const MachineDesc &m, int tokens, int context) {
    Figure f;
    f.name = k.stage;
    f.schedule = k.schedule;
    f.launches = 1;
    f.us = k.stats.us;
    f.bound = "-";
    if (!k.program) return f;
    f.formula_us = ibm_formula(*k.program, m).total_ns / 1000.0;
    f.validity = validity_keys(model_validity(*k.program, k.stats, m));
    report::SpeedOfLight sol = report::speed_of_light(*k.program, k.stats, m);
    // The output: the last argument (every buffer after the inputs is the output or a temporary).
    int64_t out_bytes = 0, other_in = 0;
    for (size_t i = 0; i < k.program->buffers.size(); i++) {
        const BufferDecl &b = k.program->buffers[i];
        if (b.kind == BufferKind::Output) out_bytes = k.program->buffer_bytes(i, m.stick_bytes);
        if (b.kind == BufferKind::Input && i > 0) other_in += k.program->buffer_bytes(i, m.stick_bytes);
    }
    if (k.stage == "embedding" || k.stage == "k_gather" || k.stage == "v_gather") {
        // A gather reads the rows it fetches (and the ids, its other input), not its table; it
        // writes them once.
        sol = report::bound(ibm_channel_ns(double(out_bytes + other_in), double(out_bytes), m), 0, 0, m.cores, m,
                            k.stats.us);
    } else if (k.stage == "rope_q" || k.stage == "rope_k" || k.stage == "v_to_cache" || k.stage == "k_to_cache" ||
               k.stage == "v_to_pool" || k.stage == "k_to_pool") {
        // These read their columns of the fused QKV projection's rows (as many bytes as they
        // write), not the whole rows; and the rotary tables.
        sol = report::bound(ibm_channel_ns(double(out_bytes + other_in), double(out_bytes), m),
                            double(k.stats.vector_sticks), 0, m.cores, m, k.stats.us);
    }
    if (k.stage == "attention" && k.program->buffers.size() >= 3) {
        // A decode step reads its cache in whole key tiles past its context (decode_key_window);
        // what it must read is the context's positions of K and V, and the MACs over them.
        const int64_t window = k.program->buffers[1].shape.size() == 3 ? k.program->buffers[1].shape[1] : 0;
        if (window > context && context > 0) {
            const double f_keys = double(context) / double(window);
            const double kv = double(k.program->buffer_bytes(1, m.stick_bytes) + k.program->buffer_bytes(2, m.stick_bytes));
            const double q = double(k.program->buffer_bytes(0, m.stick_bytes));
            sol = report::bound(ibm_channel_ns(q + kv * f_keys, double(out_bytes), m), double(k.stats.vector_sticks) * f_keys,
                                double(k.stats.pe_macs) * f_keys, m.cores, m, k.stats.us);
        }
    }
    f.sol_us = sol.bound_ns / 1000.0;
    f.bound = sol.limiter;
    return f;
}

// The keys of `a` and then those of `b` it lacks, comma-separated.
std::string key_union(const std::string &a, const std::string &b) {
    std::string out = a;
    size_t i = 0;
    while (i < b.size()) {
        size_t j = b.find(',', i);
        if (j == std::string::npos) j = b.size();
        const std::string key = b.substr(i, j - i);
        if (("," + out + ",").find("," + key + ",") == std::string::npos) out += (out.empty() ? "" : ",") + key;
        i = j + 1;
    }
    return out;
}

void add_to(std::vector<Figure> &list, const Figure &f) {
    for (Figure &g : list)
        if (g.name == f.name) {
            g.us += f.us, g.sol_us += f.sol_us, g.launches += f.launches, g.formula_us += f.formula_us;
            g.validity = key_union(g.validity, f.validity);
            return;
        }
    list.push_back(f);
}

}  // namespace

bool Figure::faster_than_formula() const {
    return formula_us > 0 && us / formula_us < report::kFasterThanFormula;
}

StepFigures step_figures(const LlamaConfig &c, const StepShape &shape, const StepResult &r, const MachineDesc &m) {
    StepFigures f;
    for (const KernelRun &k : r.runs) {
        if (k.layer > 0) continue;
        add_to(k.layer < 0 ? f.outside : f.layer_stages, stage_figure(k, m, shape.tokens * shape.batch, shape.context));
    }
    f.layer.name = "layer";
    for (const Figure &s : f.layer_stages) {
        f.layer.us += s.us, f.layer.launches += s.launches, f.layer.formula_us += s.formula_us;
        f.layer.validity = key_union(f.layer.validity, s.validity);
    }
    double layer_reduces = 0;
    for (const AllReduceRun &a : r.allreduces)
        if (a.layer == 0) layer_reduces += a.us;
    f.layer.us += layer_reduces;
    f.allreduce_us = layer_reduces * c.layers;
    const LayerWork w = layer_work(c, shape);
    const report::SpeedOfLight sol =
        report::bound(ibm_channel_ns(w.read_bytes, w.write_bytes, m), 0, w.macs, m.cores, m, f.layer.us);
    f.layer.sol_us = sol.bound_ns / 1000.0;
    f.layer.bound = sol.limiter;
    double outside = 0, outside_formula = 0;
    int outside_launches = 0;
    for (const Figure &s : f.outside) outside += s.us, outside_launches += s.launches, outside_formula += s.formula_us;
    f.model_us = outside + f.layer.us * c.layers;
    f.model_formula_us = outside_formula + f.layer.formula_us * c.layers;
    f.launches = outside_launches + f.layer.launches * c.layers;
    f.host_us = f.launches * m.host_launch_ns / 1000.0;
    return f;
}

}  // namespace spyre::llama
