// The catalogue's apps, one entry each: the only place that says what an app's shape means, which
// generator and schedules it has, its buffers, its inputs' range, its tolerance, its algorithm and the
// shapes the report and the tests run it at. kernel_catalog.cpp's functions read these entries.
#include <algorithm>

#include "attention.h"
#include "conv1d.h"
#include "flash_attention.h"
#include "gated_mlp.h"
#include "kernel_catalog.h"
#include "matmul.h"
#include "mlp.h"
#include "norms.h"
#include "pointwise.h"
#include "qlinear.h"
#include "rope.h"
#include "softmax.h"
#include "stencil.h"
#include "transpose.h"

namespace spyre::report {

using namespace Halide;

namespace {

std::string kv(const char *k, int v) { return std::string(k) + "=" + std::to_string(v); }

// The Spyre schedules of a schedules/ list (every schedule but the CPU reference's).
std::vector<std::string> without_cpu(const std::vector<std::string> &all) {
    std::vector<std::string> s;
    for (const std::string &n : all)
        if (n != "cpu") s.push_back(n);
    return s;
}

// Odd shapes of the row apps (rows x cols): not whole sticks (33, 100, 130 columns), not whole core
// shares (1, 7, 33 rows), and model widths where fixed tiles once overflowed LX.
const std::vector<std::string> kOddRows = {"1x100", "7x33", "1x8192", "33x100", "100x130", "70x64"};
const std::vector<std::string> kOddRowsLarge = {"1151x8192", "4096x8192", "1151x100"};

// An app over rows of an fp16 {cols, rows} tensor (shape rows x cols): softmax, the norms, gelu,
// stencil, transpose, conv1d, rope. Its inputs default to the one {cols, rows} tensor and its output
// to {cols, rows}; the spyre-gen parameters are cols= and rows=.
AppInfo row_app(const std::string &name, std::function<std::vector<std::string>()> schedules,
                std::function<AppKernel(const Shape &)> kernel) {
    AppInfo a;
    a.name = name;
    a.generator = name;
    a.dims = {"rows", "cols"};
    a.report_shape_option = "shape";
    a.report_cores_option = "";
    a.schedules = std::move(schedules);
    a.generator_params = [](const Shape &s) { return std::vector<std::string>{kv("cols", s.dims[1]), kv("rows", s.dims[0])}; };
    a.inputs = [](const Shape &s) { return std::vector<std::vector<int>>{{s.dims[1], s.dims[0]}}; };
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[1], s.dims[0]}; };
    a.kernel = std::move(kernel);
    a.shapes = {"512x1024", 32, "64x128", 32, kOddRows, kOddRowsLarge};
    return a;
}

AppInfo softmax_app() {
    AppInfo a = row_app("softmax", [] { return softmax_schedules(); }, [](const Shape &s) {
        SoftmaxKernel k = make_softmax(s.dims[1], s.dims[0]);
        return AppKernel{k.out, {k.in}, [k](const std::string &n, const MachineDesc &m) mutable { schedule_softmax(k, n, m); },
                         [k]() mutable { schedule_softmax_cpu(k); }};
    });
    a.tolerance.ulp = 2;  // exp
    return a;
}

AppInfo norm_app(const std::string &op) {
    AppInfo a = row_app(op, [] { return norm_schedules(); }, [op](const Shape &s) {
        NormKernel k = make_norm(op, s.dims[1], s.dims[0]);
        return AppKernel{k.out, k.inputs, [k](const std::string &n, const MachineDesc &m) mutable { schedule_norm(k, n, m); },
                         [k]() mutable {
                             for (auto &stat : k.stats) stat.second.compute_root();
                         }};
    });
    const bool beta = op == "layernorm";
    a.inputs = [beta](const Shape &s) {
        std::vector<std::vector<int>> in = {{s.dims[1], s.dims[0]}, {s.dims[1]}};
        if (beta) in.push_back({s.dims[1]});
        return in;
    };
    return a;
}

AppInfo gelu_app() {
    return row_app("gelu", [] { return pointwise_schedules(); }, [](const Shape &s) {
        PointwiseKernel k = make_pointwise("gelu", Float(16), s.dims[1], s.dims[0]);
        return AppKernel{k.out, k.inputs,
                         [k](const std::string &n, const MachineDesc &m) mutable { schedule_pointwise(k, n, m); }};
    });
}

AppInfo transpose_app() {
    AppInfo a = row_app("transpose", [] { return transpose_schedules(); }, [](const Shape &s) {
        TransposeKernel k = make_transpose(s.dims[1], s.dims[0]);
        return AppKernel{k.out, {k.in}, [k](const std::string &n, const MachineDesc &m) mutable { schedule_transpose(k, n, m); }};
    });
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[0], s.dims[1]}; };  // the input's rows become sticks
    a.shapes.odd = {"64x100", "128x33", "64x1", "192x8192"};  // rows whole sticks
    a.shapes.odd_large = {"1152x8192", "4096x8192"};
    return a;
}

AppInfo stencil_app() {
    return row_app("stencil", [] { return stencil_schedules(); }, [](const Shape &s) {
        StencilKernel k = make_stencil(s.dims[1], s.dims[0]);
        return AppKernel{k.out, {k.in}, [k](const std::string &n, const MachineDesc &m) mutable { schedule_stencil(k, n, m); }};
    });
}

AppInfo conv1d_app() {
    AppInfo a = row_app("conv1d", [] { return conv1d_schedules(); }, [](const Shape &s) {
        Conv1dKernel k = make_conv1d(s.dims[1], s.dims[0], kConv1dTaps, true);
        return AppKernel{k.out, {k.in, k.w}, [k](const std::string &n, const MachineDesc &m) mutable { schedule_conv1d(k, n, m); }};
    });
    a.generator_params = [](const Shape &s) {
        return std::vector<std::string>{kv("cols", s.dims[1]), kv("rows", s.dims[0]), kv("taps", kConv1dTaps), "padding=causal"};
    };
    a.inputs = [](const Shape &s) { return std::vector<std::vector<int>>{{s.dims[1], s.dims[0]}, {s.dims[0], kConv1dTaps}}; };
    return a;
}

AppInfo rope_app(const std::string &name, RopeStyle style) {
    AppInfo a = row_app(name, [] { return rope_schedules(); }, [style](const Shape &s) {
        RopeKernel k = make_rope(s.dims[1], s.dims[0], kRopeHeadDim, style);
        return AppKernel{k.out, {k.in, k.cos, k.sin},
                         [k](const std::string &n, const MachineDesc &m) mutable { schedule_rope(k, n, m); }};
    });
    a.generator_params = [](const Shape &s) {
        return std::vector<std::string>{kv("cols", s.dims[1]), kv("rows", s.dims[0]), kv("head_dim", kRopeHeadDim)};
    };
    a.inputs = [](const Shape &s) {
        return std::vector<std::vector<int>>{{s.dims[1], s.dims[0]}, {kRopeHeadDim, s.dims[0]}, {kRopeHeadDim, s.dims[0]}};
    };
    a.shapes.odd = {"1x64", "7x128", "33x192", "100x640"};  // whole heads
    a.shapes.odd_large = {"1151x4096", "4096x4096"};
    return a;
}

// bmm, linear and qlinear: split over Shape::cores, checked in ULP of inputs in [-2, 2].
AppInfo matmul_app(const std::string &name) {
    AppInfo a;
    a.name = name;
    a.generator = name;
    a.takes_cores = true;
    a.input_range = 2;
    if (name == "bmm") {
        a.dims = {"B", "M", "K", "N"};
        a.report_shape_option = "bmm-shape";
        a.report_cores_option = "bmm-cores";
        a.schedules = [] { return without_cpu(bmm_schedules()); };
        a.generator_params = [](const Shape &s) {
            return std::vector<std::string>{kv("batch", s.dims[0]), kv("rows", s.dims[1]), kv("inner", s.dims[2]),
                                            kv("cols", s.dims[3]), kv("cores", s.cores)};
        };
        a.inputs = [](const Shape &s) {
            return std::vector<std::vector<int>>{{s.dims[2], s.dims[1], s.dims[0]}, {s.dims[3], s.dims[2]}};
        };
        a.output = [](const Shape &s) { return std::vector<int>{s.dims[3], s.dims[1], s.dims[0]}; };
        a.kernel = [](const Shape &s) {
            MatmulKernel k = make_bmm(s.dims[0], s.dims[1], s.dims[2], s.dims[3]);
            const int cores = s.cores;
            return AppKernel{k.out, {k.a, k.w},
                             [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_bmm(k, n, cores, m); },
                             [k]() mutable { schedule_bmm(k, "cpu"); }};
        };
        a.shapes = {"4x64x256x512", 32, "2x8x64x128", 32, {"1x1x100x100", "1x7x64x100", "3x33x130x70", "2x1x64x8192"},
                    {"2x1151x100x8192"}};
        return a;
    }
    a.dims = {"M", "K", "N"};
    a.report_shape_option = name + "-shape";
    a.generator_params = [](const Shape &s) {
        return std::vector<std::string>{kv("rows", s.dims[0]), kv("inner", s.dims[1]), kv("cols", s.dims[2]), kv("cores", s.cores)};
    };
    a.shapes.odd = {"1x100x100", "7x64x100", "33x130x70"};
    a.shapes.odd_large = {"1151x100x8192"};
    if (name == "linear") {
        a.schedules = [] { return without_cpu(bmm_schedules()); };
        a.inputs = [](const Shape &s) {
            return std::vector<std::vector<int>>{{s.dims[1], s.dims[0], 1}, {s.dims[2], s.dims[1]}, {s.dims[2]}};
        };
        a.output = [](const Shape &s) { return std::vector<int>{s.dims[2], s.dims[0], 1}; };
        a.kernel = [](const Shape &s) {
            MatmulKernel k = make_linear(s.dims[0], s.dims[1], s.dims[2]);
            const int cores = s.cores;
            return AppKernel{k.out, {k.a, k.w, k.bias},
                             [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_bmm(k, n, cores, m); },
                             [k]() mutable { schedule_bmm(k, "cpu"); }};
        };
        a.shapes.report = "64x192x256", a.shapes.report_cores = 4;
        a.shapes.small = "8x64x256";
        return a;
    }
    a.schedules = [] { return without_cpu(qlinear_schedules()); };
    a.inputs = [](const Shape &s) {
        return std::vector<std::vector<int>>{{s.dims[1], s.dims[0]}, {s.dims[2], s.dims[1]}, {s.dims[2]}};
    };
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[2], s.dims[0]}; };
    a.int8_inputs = {1};  // the weights
    a.kernel = [](const Shape &s) {
        QLinearKernel k = make_qlinear(s.dims[0], s.dims[1], s.dims[2]);
        const int cores = s.cores;
        return AppKernel{k.out, {k.a, k.w, k.scale},
                         [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_qlinear(k, n, cores, m); },
                         [k]() mutable { schedule_qlinear(k, "cpu"); }};
    };
    a.shapes.report = "32x1024x512", a.shapes.report_cores = 8;
    a.shapes.small = "8x128x256";
    a.shapes.odd.push_back("5x200x300");
    return a;
}

// mlp and gated_mlp: dim x hidden x rows, split over Shape::cores, checked in absolute error of
// inputs in [-0.25, 0.25] (tanh, exp).
AppInfo mlp_app(bool gated) {
    AppInfo a;
    a.name = gated ? "gated_mlp" : "mlp";
    a.generator = a.name;
    a.dims = {"dim", "hidden", "rows"};
    a.takes_cores = true;
    a.report_shape_option = gated ? "gated-mlp-shape" : "mlp-shape";
    a.report_cores_option = "mlp-cores";
    a.generator_params = [](const Shape &s) {
        return std::vector<std::string>{kv("dim", s.dims[0]), kv("hidden", s.dims[1]), kv("rows", s.dims[2]), kv("cores", s.cores)};
    };
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[0], s.dims[2]}; };
    a.input_range = 0.25f;
    a.tolerance.abs = 1e-3;
    a.shapes = {gated ? "256x1024x256" : "256x2048x256", 32, "64x256x64", 2, {"100x200x1", "64x100x33", "130x64x7"},
                {"64x100x1151"}};
    if (!gated) {
        a.schedules = [] { return without_cpu(mlp_schedules()); };
        a.inputs = [](const Shape &s) {
            const int d = s.dims[0], h = s.dims[1], m = s.dims[2];
            return std::vector<std::vector<int>>{{d, m}, {h, d}, {h}, {d, h}, {d}};
        };
        a.kernel = [](const Shape &s) {
            MlpKernel k = make_mlp(s.dims[0], s.dims[1], s.dims[2]);
            const int cores = s.cores;
            return AppKernel{k.out, {k.x, k.w1, k.b1, k.w2, k.b2},
                             [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_mlp(k, n, cores, m); },
                             [k]() mutable { schedule_mlp(k, "cpu"); }};
        };
        return a;
    }
    a.schedules = [] { return without_cpu(gated_mlp_schedules()); };
    a.inputs = [](const Shape &s) {
        const int d = s.dims[0], h = s.dims[1], m = s.dims[2];
        return std::vector<std::vector<int>>{{d, m}, {h, d}, {h, d}, {d, h}};
    };
    a.kernel = [](const Shape &s) {
        GatedMlpKernel k = make_gated_mlp(s.dims[0], s.dims[1], s.dims[2]);
        const int cores = s.cores;
        return AppKernel{k.out, {k.x, k.w1, k.w3, k.w2},
                         [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_gated_mlp(k, n, cores, m); },
                         [k]() mutable { schedule_gated_mlp(k, "cpu"); }};
    };
    return a;
}

// Single-head attention: dim x seq, one core, inputs in [-1, 1]; exp moves a probability by one fp16
// ULP, so the check is absolute.
AppInfo attention_app() {
    AppInfo a;
    a.name = a.generator = "attention";
    a.dims = {"dim", "seq"};
    a.report_shape_option = "attention-shape";
    a.schedules = [] { return without_cpu(attention_schedules()); };
    a.generator_params = [](const Shape &s) { return std::vector<std::string>{kv("dim", s.dims[0]), kv("seq", s.dims[1])}; };
    a.inputs = [](const Shape &s) { return std::vector<std::vector<int>>(3, {s.dims[0], s.dims[1]}); };
    a.output = [](const Shape &s) { return std::vector<int>{s.dims[0], s.dims[1]}; };
    a.input_range = 1;
    a.tolerance.abs = 1e-4;
    a.kernel = [](const Shape &s) {
        AttentionKernel k = make_attention(s.dims[0], s.dims[1]);
        return AppKernel{k.out, {k.q, k.k, k.v},
                         [k](const std::string &n, const MachineDesc &m) mutable { schedule_attention(k, n, m); },
                         [k]() mutable { schedule_attention(k, "cpu"); }};
    };
    a.shapes = {"128x512", 32, "64x128", 32, {"64x100", "100x33", "128x1"}, {"128x1151"}};
    return a;
}

// Multi-head attention with keys in tiles and an online softmax (dim x seq x heads, heads over
// Shape::cores, the default tiles of flash_attention_tiles); causal_attention is the same generator
// with mask=causal. The running maxima's rescaling adds to attention's error: one fp16 ULP below 0.5.
AppInfo flash_app(bool causal) {
    AppInfo a;
    a.name = causal ? "causal_attention" : "flash_attention";
    a.generator = "flash_attention";
    a.dims = {"dim", "seq", "heads"};
    a.takes_cores = true;
    a.report_shape_option = "flash-attention-shape";
    a.report_cores_option = "bmm-cores";
    a.schedules = [causal] {
        // kv_chunked loads key tiles as causal query tiles reach them: without the mask it has none.
        std::vector<std::string> s = without_cpu(flash_attention_schedules());
        if (!causal) s.erase(std::remove(s.begin(), s.end(), "kv_chunked"), s.end());
        return s;
    };
    a.generator_params = [causal](const Shape &s) {
        return std::vector<std::string>{kv("dim", s.dims[0]), kv("seq", s.dims[1]), kv("heads", s.dims[2]), kv("cores", s.cores),
                                        std::string("mask=") + (causal ? "causal" : "none")};
    };
    a.inputs = [](const Shape &s) { return std::vector<std::vector<int>>(3, s.dims); };
    a.output = [](const Shape &s) { return s.dims; };
    a.input_range = 1;
    a.tolerance.abs = 2.5e-4;
    a.kernel = [causal](const Shape &s) {
        const FlashTiles t = flash_attention_tiles(s.dims[1], causal);
        FlashAttentionKernel k = make_flash_attention(s.dims[0], s.dims[1], s.dims[2], t.q_tile, t.k_tile, causal);
        const int cores = s.cores;
        return AppKernel{k.out, {k.q, k.k, k.v},
                         [k, cores](const std::string &n, const MachineDesc &m) mutable { schedule_flash_attention(k, n, cores, m); },
                         [k]() mutable { schedule_flash_attention(k, "cpu", 1); }};
    };
    a.max_cores = [](const Shape &s) { return s.dims[2]; };
    // 40 heads on 32 cores; the compiler tests run more shapes of both (test_flash_attention.cpp).
    a.shapes = {"128x512x4", 4, "64x128x2", 32, {"100x33x2", "128x1x1", "64x96x40"}, {"128x2048x32", "128x1152x7"}};
    return a;
}

std::vector<AppInfo> make_apps() {
    return {softmax_app(),       norm_app("layernorm"), norm_app("rmsnorm"), gelu_app(),
            matmul_app("bmm"),   matmul_app("linear"),  mlp_app(false),      mlp_app(true),
            attention_app(),     flash_app(false),      flash_app(true),     transpose_app(),
            matmul_app("qlinear"), stencil_app(),       conv1d_app(),        rope_app("rope", RopeStyle::RotateHalf),
            rope_app("rope_interleaved", RopeStyle::Interleaved)};
}

}  // namespace

const std::vector<AppInfo> &app_infos() {
    static const std::vector<AppInfo> apps = make_apps();
    return apps;
}

}  // namespace spyre::report
