#include "llama_stages.h"

#include <algorithm>

#include "device/dtype_host.h"
#include "device/error.h"
#include "device/layout.h"
#include "directives.h"
#include "flash_attention.h"
#include "gated_mlp.h"
#include "matmul.h"
#include "matmul_stage.h"
#include "norms.h"
#include "rope.h"
#include "cpu_reference.h"

namespace spyre::llama {

using namespace Halide;

namespace {

constexpr int kCores = 32;

TensorSpec matrix(int cols, int rows) { return TensorSpec{{cols, rows}, {}}; }

// {dim, positions, heads} stored position by position, head by head within one: the bytes of a
// {heads * dim, positions} matrix.
TensorSpec heads_inside(int dim, int positions, int heads) {
    return TensorSpec{{dim, positions, heads}, DeviceLayout{0, {1, 2, 0}}};
}

// The largest divisor of n up to `most` that is a multiple of `of` (n itself when none is smaller).
int tile_dividing(int n, int most, int of) {
    for (int t = std::min(most, n) / of * of; t >= of; t -= of)
        if (n % t == 0) return t;
    return n;
}

}  // namespace

StageKernel rmsnorm_stage(const std::string &name, const LlamaConfig &c, int rows, Backend b) {
    NormKernel k = make_norm("rmsnorm", c.hidden, rows, c.norm_eps);
    if (b == Backend::Spyre)
        schedule_norm(k, "cores32");
    else
        for (auto &st : k.stats) st.second.compute_root();
    StageKernel s{name, k.out, k.inputs, {}};
    s.options.inputs = {matrix(c.hidden, rows), TensorSpec{{c.hidden}, {}}};
    s.options.output = matrix(c.hidden, rows);
    return s;
}

StageKernel projection_stage(const std::string &name, int rows, int inner, int cols, bool residual, Backend b) {
    MatmulKernel k = make_bmm(1, rows, inner, cols);
    std::vector<ImageParam> inputs = {k.a, k.w};
    if (residual) {
        ImageParam res(Float(16), 3, "residual");
        k.out = Func(name);
        k.out(k.n, k.m, k.b) = cast<float16_t>(k.acc(k.n, k.m, k.b) + cast<float>(res(k.n, k.m, k.b)));
        inputs.push_back(res);
    }
    schedule_bmm(k, b == Backend::Spyre ? "pe" : "cpu", kCores);
    StageKernel s{name, k.out, inputs, {}};
    s.options.inputs = {TensorSpec{{inner, rows, 1}, {}}, matrix(cols, inner)};
    if (residual) s.options.inputs.push_back(TensorSpec{{cols, rows, 1}, {}});
    s.options.output = TensorSpec{{cols, rows, 1}, {}};
    return s;
}

StageKernel rope_stage(const std::string &name, const LlamaConfig &c, int width, int rows, Backend b) {
    RopeKernel k = make_rope(width, rows, c.head_dim, RopeStyle::RotateHalf);
    if (b == Backend::Spyre) schedule_rope(k, "cores32");
    StageKernel s{name, k.out, {k.in, k.cos, k.sin}, {}};
    s.options.inputs = {matrix(width, rows), matrix(c.head_dim, rows), matrix(c.head_dim, rows)};
    s.options.output = matrix(width, rows);
    return s;
}

StageKernel attention_stage(const LlamaConfig &c, int tokens, int context, Backend b) {
    AttentionShape shape{c.head_dim, tokens, c.heads, context, c.kv_heads, 0, 0, true};
    if (tokens == context) {
        const FlashTiles t = flash_attention_tiles(tokens, true);
        shape.q_tile = t.q_tile, shape.k_tile = t.k_tile;
    } else {
        // A decode step: its new queries are one tile, inside the last key tile.
        shape.q_tile = tokens;
        shape.k_tile = tile_dividing(context, 256, tokens);
    }
    FlashAttentionKernel k = make_flash_attention(shape);
    schedule_flash_attention(k, b == Backend::Cpu ? "cpu" : tokens == context ? "kv_chunked" : "kv_resident", kCores);
    StageKernel s{"attention", k.out, {k.q, k.k, k.v}, {}};
    s.options.inputs = {heads_inside(c.head_dim, tokens, c.heads), heads_inside(c.head_dim, context, c.kv_heads),
                        heads_inside(c.head_dim, context, c.kv_heads)};
    s.options.output = heads_inside(c.head_dim, tokens, c.heads);
    return s;
}

StageKernel mlp_stage(const LlamaConfig &c, int rows, Backend b) {
    GatedMlpKernel k = make_gated_mlp(c.hidden, c.intermediate, rows);
    ImageParam res(Float(16), 2, "residual");
    k.out = Func("mlp");
    k.out(k.n, k.m) = cast<float16_t>(k.down(k.n, k.m) + cast<float>(res(k.n, k.m)));
    schedule_gated_mlp(k, b == Backend::Spyre ? "tiled" : "cpu", kCores);
    StageKernel s{"mlp", k.out, {k.x, k.w1, k.w3, k.w2, res}, {}};
    s.options.inputs = {matrix(c.hidden, rows), matrix(c.intermediate, c.hidden), matrix(c.intermediate, c.hidden),
                        matrix(c.hidden, c.intermediate), matrix(c.hidden, rows)};
    s.options.output = matrix(c.hidden, rows);
    return s;
}

StageKernel lm_head_stage(const LlamaConfig &c, int rows, int parts, Backend b) {
    const int cols = c.vocab / parts;
    ImageParam x(Float(16), 2, "x"), w(Float(16), 3, "w");
    Var n("n"), m("m"), p("p");
    RDom k(0, c.hidden, "k");
    Func acc("lm_acc"), out("lm_head");
    acc(n, m, p) = 0.0f;
    acc(n, m, p) += cast<float>(x(k, m)) * cast<float>(w(n, k, p));
    out(n, m, p) = cast<float16_t>(acc(n, m, p));
    if (b == Backend::Spyre) {
        // Each part a batch of the matmul stage: its cores address only that part's weights.
        MatmulStage st;
        st.what = "lm_head";
        st.out = out, st.acc = acc, st.k = k, st.n = n, st.m = m, st.b = p;
        st.batch = parts, st.rows = rows, st.inner = c.hidden, st.cols = cols;
        schedule_matmul_stage(st, "pe", kCores, MachineDesc{});
    } else {
        acc.compute_root();
    }
    StageKernel s{"lm_head", out, {x, w}, {}};
    s.options.inputs = {matrix(c.hidden, rows), TensorSpec{{cols, c.hidden, parts}, {}}};
    s.options.output = TensorSpec{{cols, rows, parts}, DeviceLayout{0, {1, 2, 0}}};
    return s;
}

StageKernel embedding_stage(const LlamaConfig &c, int rows, int table_rows, Backend b) {
    ImageParam table(Float(16), 2, "table"), ids(Int(32), 1, "ids");
    Var x("x"), t("t");
    Func out("embedding");
    out(x, t) = table(x, clamp(ids(t), 0, table_rows - 1));
    if (b == Backend::Spyre && rows > 1) schedule(out).ring_split(t, std::min(kCores, rows));
    StageKernel s{"embedding", out, {table, ids}, {}};
    s.options.inputs = {matrix(c.hidden, table_rows), TensorSpec{{rows}, {}}};
    s.options.output = matrix(c.hidden, rows);
    return s;
}

StageKernel argmax_stage(const LlamaConfig &c, int rows, Backend b) {
    ImageParam logits(Float(16), 2, "logits");
    Var y("y");
    RDom r(0, c.vocab, "r");
    Func out("argmax");
    out(y) = argmax(logits(r, y))[0];
    if (b == Backend::Spyre && rows > 1) schedule(out).ring_split(y, std::min(kCores, rows));
    StageKernel s{"argmax", out, {logits}, {}};
    s.options.inputs = {matrix(c.vocab, rows)};
    s.options.output = TensorSpec{{rows}, {}};
    return s;
}

StageKernel copy_stage(const std::string &name, int width, int rows, Backend) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), t("t");
    Func out(name);
    out(x, t) = in(x, t);
    StageKernel s{name, out, {in}, {}};
    s.options.inputs = {matrix(width, rows)};
    s.options.output = matrix(width, rows);
    return s;
}

int64_t argument_bytes(const TensorSpec &spec, Type type, const MachineDesc &m) {
    DType d = DType::F16;
    if (!dtype_from_host(type, &d)) throw_error("llama: an argument of type ", type, " has no device type");
    const DeviceLayout layout = spec.layout.order.empty() ? default_layout(int(spec.shape.size())) : spec.layout;
    return device_geometry(layout, spec.shape, d, m.stick_bytes).total_bytes;
}

void realize_on_cpu(StageKernel &k, DeviceMemory &mem, const std::vector<TensorView> &args) {
    if (mem.timing_only()) return;
    if (args.size() != k.inputs.size() + 1)
        throw_error("kernel ", k.name, ": ", args.size(), " tensors bound to its ", k.inputs.size() + 1, " arguments");
    const int64_t stick = mem.machine().stick_bytes;
    auto host_buffer = [](Type t, const std::vector<int64_t> &shape) {
        std::vector<int> extents(shape.begin(), shape.end());
        return Buffer<>(t, extents);
    };
    auto layout_of = [](const TensorSpec &s) {
        return s.layout.order.empty() ? default_layout(int(s.shape.size())) : s.layout;
    };
    std::vector<Buffer<>> keep;
    for (size_t i = 0; i < k.inputs.size(); i++) {
        const TensorSpec &spec = k.options.inputs[i];
        const Type t = k.inputs[i].type();
        DType d = DType::F16;
        dtype_from_host(t, &d);
        if (args[i].bytes != argument_bytes(spec, t, mem.machine()))
            throw_error("kernel ", k.name, ": argument ", k.inputs[i].name(), " bound to ", args[i].bytes, " bytes");
        Buffer<> host = host_buffer(t, spec.shape);
        unstickify(mem.read(args[i]), host.data(), spec.shape, d, layout_of(spec), stick);
        k.inputs[i].set(host);
        keep.push_back(host);
    }
    const TensorSpec &spec = k.options.output;
    const Type t = k.output.output_types()[0];
    DType d = DType::F16;
    dtype_from_host(t, &d);
    Buffer<> out = host_buffer(t, spec.shape);
    k.output.realize(Pipeline::RealizationArg(out), cpu_reference_target());
    mem.write(args.back(), stickify(out.data(), spec.shape, d, layout_of(spec), stick));
}

}  // namespace spyre::llama
