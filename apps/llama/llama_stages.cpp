#include "llama_stages.h"

#include <algorithm>
#include <numeric>

#include "device/dtype_host.h"
#include "device/error.h"
#include "device/layout.h"
#include "directives.h"
#include "flash_attention.h"
#include "matmul.h"
#include "matmul_stage.h"
#include "norms.h"
#include "qlinear.h"
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

// A decode step's projection (a few rows) split over the cores by N reads runs of N / cores
// elements of each row of W, each paying the channel's per-run overhead (dram_read_run_overhead_bytes:
// at N = 4096, 256-byte runs move at about 60% of the channel's rate). Split by K instead, each core
// reads whole rows of W and the fp32 partials are added on the ring (split-K, ring_split_reduction).
struct SplitK {
    int cores = 0, panel = 0;  // cores 0: split N instead
    int n_tile = 0;            // 0: all of N at once
    std::string name() const {
        return "split_k/" + std::to_string(panel) + (n_tile ? "x" + std::to_string(n_tile) : std::string());
    }
};
// The most cores whose K shares are whole sticks, and the K panels worth timing: the core's whole
// share (one load) and the two deepest whole-stick divisors of it whose W panel, double-buffered,
// fits the usable LX beside the partial (the back end refuses what does not fit after all). None
// for more rows than the PE array's pass, where W's reuse over the rows pays for the N split.
std::vector<SplitK> split_k(int rows, int inner, int cols, const MachineDesc &m) {
    const int lanes = int(m.stick_bytes / 2);
    if (rows > m.pe_pass_rows || inner % lanes) return {};
    int cores = std::min(int(m.cores), inner / lanes);
    while (cores > 1 && inner % (cores * lanes)) cores--;
    if (cores < 2) return {};
    const int share = inner / cores;
    const int64_t row_bytes = int64_t((cols + lanes - 1) / lanes) * m.stick_bytes;
    const int64_t budget = m.lx_usable_bytes - int64_t(rows) * row_bytes * 2;  // less the fp32 partial
    std::vector<SplitK> out;
    if (share * row_bytes <= budget) out.push_back({cores, share});
    for (int panel = share / 2 / lanes * lanes; panel >= lanes && out.size() < 3; panel -= lanes)
        if (share % panel == 0 && 2 * panel * row_bytes <= budget) out.push_back({cores, panel});
    if (out.empty()) {
        // W's rows too wide for even a stick-deep panel: tiles of N (whole sticks dividing it), the
        // widest whose panels of the whole share, double-buffered, fit.
        const int sticks = (cols + lanes - 1) / lanes;
        for (int t = sticks / 2; t >= 1 && out.size() < 2; t--)
            if (sticks % t == 0 && 2 * int64_t(share) * t * m.stick_bytes <= budget)
                out.push_back({cores, share, t * lanes});
    }
    return out;
}

}  // namespace

StageKernel rmsnorm_stage(const std::string &name, const LlamaConfig &c, int rows, Backend b) {
    NormKernel k = make_norm("rmsnorm", c.hidden, rows, c.norm_eps);
    if (b == Backend::Spyre)
        schedule_norm(k, "cores32");
    else if (b == Backend::Cpu)
        for (auto &st : k.stats) st.second.compute_root();
    StageKernel s{name, k.out, k.inputs, {}, "cores32"};
    s.options.inputs = {matrix(c.hidden, rows), TensorSpec{{c.hidden}, {}}};
    s.options.output = matrix(c.hidden, rows);
    return s;
}

std::vector<std::string> projection_schedules(int rows, int inner, int cols, Weights w) {
    std::vector<std::string> names = {"pe", "pe_ring"};
    if (w == Weights::F16)
        for (const SplitK &sk : split_k(rows, inner, cols, MachineDesc{})) names.push_back(sk.name());
    return names;
}

namespace {

// The int8 or fp8 projection: schedules/qlinear.h's kernel with the scale and the epilogue in its
// output.
StageKernel byte_projection_stage(const std::string &name, int rows, int inner, int cols, Epilogue e, Backend b,
                                  const std::string &sched, Weights w) {
    QLinearKernel k = make_qlinear(rows, inner, cols, w == Weights::Fp8 ? QuantFormat::Fp8E4M3 : QuantFormat::Int8);
    std::vector<ImageParam> inputs = {k.a, k.w, k.scale};
    const Expr acc = k.acc(k.n, k.m) * cast<float>(k.scale(k.n));
    k.out = Func(name);
    if (e == Epilogue::Partial) {
        k.out(k.n, k.m) = acc;
    } else if (e == Epilogue::None) {
        k.out(k.n, k.m) = cast<float16_t>(acc);
    } else {
        ImageParam extra(Float(16), 2, e == Epilogue::Residual ? "residual" : "gate");
        const Expr v = cast<float>(extra(k.n, k.m));
        k.out(k.n, k.m) = cast<float16_t>(e == Epilogue::Residual ? acc + v : v / (1.0f + exp(-v)) * acc);
        inputs.push_back(extra);
    }
    if (b != Backend::Auto) schedule_qlinear(k, b == Backend::Cpu ? "cpu" : sched, kCores);
    StageKernel s{name, k.out, inputs, {}, sched + ", " + weights_name(w) + " weights"};
    s.options.inputs = {matrix(inner, rows), matrix(cols, inner), TensorSpec{{cols}, {}}};
    if (e != Epilogue::None && e != Epilogue::Partial) s.options.inputs.push_back(matrix(cols, rows));
    s.options.output = matrix(cols, rows);
    return s;
}

}  // namespace

StageKernel projection_stage(const std::string &name, int rows, int inner, int cols, Epilogue e, Backend b,
                             const std::string &sched, Weights w) {
    if (byte_weights(w)) return byte_projection_stage(name, rows, inner, cols, e, b, sched, w);
    MatmulKernel k = make_bmm(1, rows, inner, cols);
    std::vector<ImageParam> inputs = {k.a, k.w};
    if (e == Epilogue::Partial) {
        k.out = Func(name);
        k.out(k.n, k.m, k.b) = k.acc(k.n, k.m, k.b);
    } else if (e != Epilogue::None) {
        ImageParam extra(Float(16), 3, e == Epilogue::Residual ? "residual" : "gate");
        Expr acc = k.acc(k.n, k.m, k.b), v = cast<float>(extra(k.n, k.m, k.b));
        k.out = Func(name);
        k.out(k.n, k.m, k.b) = cast<float16_t>(e == Epilogue::Residual ? acc + v : v / (1.0f + exp(-v)) * acc);
        inputs.push_back(extra);
    }
    if (b == Backend::Cpu) {
        schedule_bmm(k, "cpu", kCores);
    } else if (b == Backend::Auto) {
    } else if (sched.rfind("split_k/", 0) == 0) {
        SplitK sk;
        for (const SplitK &c : split_k(rows, inner, cols, MachineDesc{}))
            if (c.name() == sched) sk = c;
        if (!sk.cores) throw_error("llama: ", name, ": no schedule ", sched, " for ", rows, " rows of ", inner, " x ", cols);
        schedule(k.acc).scratchpad_root();
        schedule(k.acc).ring_split_reduction(k.k.x, sk.cores, inner, true, sk.panel, sk.n_tile);
        schedule(k.out).stick_vectorize(k.n);
    } else {
        schedule_bmm(k, sched, kCores);
    }
    StageKernel s{name, k.out, inputs, {}, sched};
    s.options.inputs = {TensorSpec{{inner, rows, 1}, {}}, matrix(cols, inner)};
    if (e != Epilogue::None && e != Epilogue::Partial) s.options.inputs.push_back(TensorSpec{{cols, rows, 1}, {}});
    s.options.output = TensorSpec{{cols, rows, 1}, {}};
    return s;
}

StageKernel rope_stage(const std::string &name, const LlamaConfig &c, int width, int rows, int in_cols, int offset,
                       Backend b) {
    RopeKernel k = make_rope(width, rows, c.head_dim, RopeStyle::RotateHalf, in_cols, offset);
    if (b == Backend::Spyre) schedule_rope(k, "cores32");
    StageKernel s{name, k.out, {k.in, k.cos, k.sin}, {}, "cores32"};
    s.options.inputs = {matrix(in_cols, rows), matrix(c.head_dim, rows), matrix(c.head_dim, rows)};
    s.options.output = matrix(width, rows);
    return s;
}

std::vector<std::string> attention_schedules(int tokens, int context) {
    if (tokens == context) return {"kv_chunked", "kv_resident", "kv_stream"};
    if (tokens == 1 && context > 1) {
        // Key tiles of 256, 128 or 64 positions over the same window (decode_key_window).
        std::vector<std::string> v;
        for (const char *s : {"kv_resident", "kv_stream"})
            for (int t : {256, 128, 64})
                if (t <= decode_key_window(context)) v.push_back(std::string(s) + (t == 256 ? "" : "/" + std::to_string(t)));
        return v;
    }
    return {"kv_resident", "kv_stream"};
}

int decode_key_window(int context) { return (context + 255) / 256 * 256; }

StageKernel attention_stage(const LlamaConfig &c, int tokens, int context, Backend b, const std::string &sched,
                            bool bucket, int pool_blocks) {
    const int group = c.heads / c.kv_heads;
    if (pool_blocks > 0 && !(tokens == 1 && context > 1))
        throw_error("llama: attention reads a paged cache in place for a single-token decode only (", tokens,
                    " tokens at context ", context, ")");
    if (tokens == 1 && context > 1) {
        // One new token: it sees every cached position, so no mask; and the query heads of a KV
        // head are that head's query rows ({head_dim, group, kv_heads}: the same bytes as
        // {heads * head_dim, 1}). Each core then reads its KV head's K and V once, where one query
        // head per core would read each four times.
        // The cache is read in whole key tiles of a window rounded up from the context
        // (decode_key_window): the keys past the context weigh 0 (valid_kv), and the tiles past
        // its last are not visited. Any context takes tiles of 64 to 256 keys (a tile dividing
        // the context would be 3 keys at 2049, one at a prime).
        const size_t slash = sched.find('/');
        const std::string base = sched.substr(0, slash), tile = slash == std::string::npos ? "256" : sched.substr(slash + 1);
        if (tile != "256" && tile != "128" && tile != "64")
            throw_error("llama: attention schedule '", sched, "': key tiles of ", tile, "; a decode step takes 64, 128 or 256");
        // (auto_schedule gets the tiles of 64, fastest of the three under the named schedules at
        // Llama-3.1-8B's decode: it chooses schedules, not the algorithm's tiles.)
        // A paged cache read in place: each key tile is a block of the pool, its key tile the block's.
        const int key_tile = b == Backend::Auto && pool_blocks == 0 ? 64 : std::stoi(tile);
        const int window = decode_key_window(context);
        AttentionShape shape{c.head_dim, group, c.kv_heads, window, c.kv_heads, group, std::min(key_tile, window), false,
                             bucket ? 0 : context};
        shape.key_bias = bucket;
        shape.pool_blocks = pool_blocks;
        FlashAttentionKernel k = make_flash_attention(shape);
        if (b != Backend::Auto) schedule_flash_attention(k, b == Backend::Cpu ? "cpu" : base, kCores);
        std::vector<ImageParam> inputs = {k.q, k.k, k.v};
        if (bucket) inputs.push_back(k.kv_bias);
        if (pool_blocks > 0) inputs.push_back(k.block_table);
        StageKernel s{"attention", k.out, inputs, {}, sched + ", a KV head's query heads as rows" +
                                                          (bucket ? ", keys by a bias (every context of its window)" : "") +
                                                          (pool_blocks > 0 ? ", K and V read in place from the paged pool" : "")};
        const int kv_rows = pool_blocks > 0 ? pool_blocks * shape.k_tile : window;
        s.options.inputs = {TensorSpec{{c.head_dim, group, c.kv_heads}, {}},
                            heads_inside(c.head_dim, kv_rows, c.kv_heads), heads_inside(c.head_dim, kv_rows, c.kv_heads)};
        if (bucket) s.options.inputs.push_back(TensorSpec{{window}, {}});
        if (pool_blocks > 0) s.options.inputs.push_back(TensorSpec{{window / shape.k_tile}, {}});
        s.options.output = TensorSpec{{c.head_dim, group, c.kv_heads}, {}};
        return s;
    }
    AttentionShape shape{c.head_dim, tokens, c.heads, context, c.kv_heads, 0, 0, true};
    if (tokens == context) {
        const FlashTiles t = flash_attention_tiles(tokens, true);
        shape.q_tile = t.q_tile, shape.k_tile = t.k_tile;
    } else {
        // New queries after cached positions (a chunk of a prefill, a few decode tokens): query
        // tiles of at most 32 rows, as a prefill's, that divide the queries and the context (so the
        // first query, at context - tokens, starts a tile), in key tiles of whole query tiles: each
        // query tile lies inside one key tile.
        shape.q_tile = flash_attention_tiles(std::gcd(tokens, context), true).q_tile;
        shape.k_tile = tile_dividing(context, 256, shape.q_tile);
    }
    FlashAttentionKernel k = make_flash_attention(shape);
    if (b != Backend::Auto) schedule_flash_attention(k, b == Backend::Cpu ? "cpu" : sched, kCores);
    StageKernel s{"attention", k.out, {k.q, k.k, k.v}, {}, sched};
    s.options.inputs = {heads_inside(c.head_dim, tokens, c.heads), heads_inside(c.head_dim, context, c.kv_heads),
                        heads_inside(c.head_dim, context, c.kv_heads)};
    s.options.output = heads_inside(c.head_dim, tokens, c.heads);
    return s;
}

StageKernel lm_head_stage(const LlamaConfig &c, int rows, const VocabSplit &v, Backend b) {
    const int cols = v.part_cols, parts = v.parts;
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
    } else if (b == Backend::Cpu) {
        acc.compute_root();
    }
    StageKernel s{"lm_head", out, {x, w}, {}, "pe, a vocabulary part per group of cores"};
    s.options.inputs = {matrix(c.hidden, rows), TensorSpec{{cols, c.hidden, parts}, {}}};
    s.options.output = TensorSpec{{cols, rows, parts}, DeviceLayout{0, {1, 2, 0}}};
    return s;
}

StageKernel embedding_stage(const LlamaConfig &c, int rows, int table_rows, Backend b) {
    return gather_stage("embedding", c.hidden, rows, table_rows, b);
}

StageKernel gather_stage(const std::string &name, int width, int rows, int table_rows, Backend b) {
    ImageParam table(Float(16), 2, "table"), ids(Int(32), 1, "ids");
    Var x("x"), t("t");
    Func out(name);
    out(x, t) = table(x, clamp(ids(t), 0, table_rows - 1));
    if (b == Backend::Spyre && rows > 1) schedule(out).ring_split(t, std::min(kCores, rows));
    StageKernel s{name, out, {table, ids}, {}, "gather, rows over the cores"};
    s.options.inputs = {matrix(width, table_rows), TensorSpec{{rows}, {}}};
    s.options.output = matrix(width, rows);
    return s;
}

StageKernel argmax_stage(const LlamaConfig &c, int rows, int cols, Backend b) {
    ImageParam logits(Float(16), 2, "logits");
    Var k("k"), y("y");
    RDom r(0, c.vocab, "r");
    Func out("argmax");
    // One column per row: each row's index in a stick of its own, so that the rows split over the
    // cores a row each (a 1-D output's rows would go to the cores in whole sticks of 32).
    out(k, y) = argmax(logits(r, y))[0];
    if (b == Backend::Spyre && rows > 1) schedule(out).ring_split(y, std::min(kCores, rows));
    StageKernel s{"argmax", out, {logits}, {}, "a row per core"};
    s.options.inputs = {matrix(cols, rows)};
    s.options.output = TensorSpec{{1, rows}, {}};
    return s;
}

StageKernel copy_stage(const std::string &name, int width, int rows, int in_cols, int offset, Backend b) {
    ImageParam in(Float(16), 2, "in");
    Var x("x"), t("t");
    Func out(name);
    out(x, t) = in(x + offset, t);
    if (b == Backend::Spyre && rows > 1) schedule(out).ring_split(t, std::min(kCores, rows));
    StageKernel s{name, out, {in}, {}, "copy"};
    s.options.inputs = {matrix(in_cols, rows)};
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
