// Pipelines the catalogue does not have, written from the docs as a new user would (LLM blocks,
// reductions, scans, stencils, a gather), each compiled twice: by spyre::auto_schedule and by a
// plain hand schedule. Both must match Halide's CPU realisation (bit-exactly, or within the ULPs a
// case states where the two orders of a float sum differ), and auto must be no slower than the
// hand schedule in modelled time. Each case's auto search is seconds: the suite runs under `sweep`.
#include <gtest/gtest.h>

#include "auto_schedule.h"
#include "compiler_test_util.h"
#include "scan_kernels.h"

namespace spyre::testing {
namespace {

using namespace Halide;

struct UnseenCase {
    std::string name;
    Algorithm alg;
    std::vector<std::vector<int>> ins;
    std::vector<int> out;
    Schedule hand;
    int64_t ulp = 0;  // allowed difference from the CPU (both schedules)
};
void PrintTo(const UnseenCase &c, std::ostream *os) { *os << c.name; }

// A 2-D pipeline of `inputs` fp16 images: out = f(in0, in1, ...), the rows split by hand.
Kernel two_d(int inputs, const std::function<Expr(const std::vector<ImageParam> &, Var, Var)> &f) {
    Kernel k;
    Var x("x"), y("y");
    for (int i = 0; i < inputs; i++) k.inputs.push_back(ImageParam(Float(16), 2, "in" + std::to_string(i)));
    Func out("out");
    out(x, y) = f(k.inputs, x, y);
    k.output = out;
    k.vars = {{"x", x}, {"y", y}};
    return k;
}

Schedule rows_over(int cores) {
    return [=](Kernel &k) { spyre::schedule(k.output).ring_split(k.vars.at("y"), cores); };
}

Expr f16(Expr e) { return cast<float16_t>(e); }

std::vector<UnseenCase> unseen_cases() {
    std::vector<UnseenCase> v;
    // SwiGLU's elementwise half: silu(gate) * up.
    v.push_back({"silu_times_up", [] {
                     return two_d(2, [](const std::vector<ImageParam> &in, Var x, Var y) {
                         Expr g = cast<float>(in[0](x, y));
                         return f16(g / (1.0f + exp(-g)) * cast<float>(in[1](x, y)));
                     });
                 }, {{1024, 64}, {1024, 64}}, {1024, 64}, rows_over(32), 1});
    // A residual add, scaled.
    v.push_back({"residual_scale", [] {
                     return two_d(2, [](const std::vector<ImageParam> &in, Var x, Var y) {
                         return (in[0](x, y) + in[1](x, y)) * f16(Expr(0.5f));
                     });
                 }, {{4096, 16}, {4096, 16}}, {4096, 16}, rows_over(16)});
    // Each row less its maximum.
    v.push_back({"row_minus_max", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var x("x"), y("y");
                     RDom r(0, 1000, "r");
                     Func m("m"), out("out");
                     m(y) = maximum(in(r, y));
                     out(x, y) = in(x, y) - m(y);
                     k.inputs = {in};
                     k.output = out;
                     k.funcs = {{"m", m}};
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{1000, 64}}, {1000, 64}, [](Kernel &k) {
                     spyre::schedule(k.output).ring_split(k.vars.at("y"), 32);
                     spyre::schedule(k.funcs.at("m")).scratchpad_store_at(k.output, k.vars.at("y"));
                 }});
    // Sum down the columns into a 1-D output.
    v.push_back({"column_sums", [] {
                     Kernel k;
                     ImageParam in(Float(32), 2, "in");
                     Var x("x");
                     RDom r(0, 48, "r");
                     Func out("out");
                     out(x) = sum(in(x, r));
                     k.inputs = {in};
                     k.output = out;
                     k.vars = {{"x", x}};
                     return k;
                 }, {{2048, 48}}, {2048}, [](Kernel &k) { spyre::schedule(k.output).stick_vectorize(k.vars.at("x")); }});
    // A 3-tap average along the rows with the edges repeated.
    v.push_back({"smooth_rows_repeat_edge", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var x("x"), y("y");
                     Func c = BoundaryConditions::repeat_edge(in);
                     Func out("out");
                     out(x, y) = f16((cast<float>(c(x - 1, y)) + cast<float>(c(x, y)) + cast<float>(c(x + 1, y))) / 3.0f);
                     k.inputs = {in};
                     k.output = out;
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{512, 32}}, {512, 32}, [](Kernel &k) {
                     // As the catalogue's stencil: rows over the cores, each core's rows staged in LX.
                     Var y = k.vars.at("y"), yo("yo"), yi("yi");
                     spyre::schedule(k.output).ring_split(y, 32).split(y, yo, yi, 1).stick_vectorize(k.vars.at("x"));
                     stage_all_in_lx(k.inputs[0], k.output, yo);
                 }, 1});
    // Greedy sampling over a vocabulary row.
    v.push_back({"argmax_rows", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var y("y");
                     RDom r(0, 2000, "r");
                     Func out("out");
                     out(y) = argmax(in(r, y))[0];
                     k.inputs = {in};
                     k.output = out;
                     k.vars = {{"y", y}};
                     return k;
                 }, {{2000, 8}}, {8}, [](Kernel &) {}});
    // An embedding lookup, the ids clamped to the table.
    v.push_back({"embedding", [] {
                     Kernel k;
                     ImageParam table(Float(16), 2, "table"), ids(Int(32), 1, "ids");
                     Var x("x"), t("t");
                     Func out("out");
                     out(x, t) = table(x, clamp(ids(t), 0, 499));
                     k.inputs = {table, ids};
                     k.output = out;
                     k.vars = {{"x", x}, {"y", t}};
                     return k;
                 }, {{256, 500}, {64}}, {256, 64}, rows_over(8)});
    // RMSNorm with a (1 + gamma) weight (Gemma's form), a SmolLM-sized row of 576.
    v.push_back({"rmsnorm_one_plus_gamma", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in"), gamma(Float(16), 1, "gamma");
                     Var x("x"), y("y");
                     RDom r(0, 576, "r");
                     Func ss("ss"), out("out");
                     Expr xr = cast<float>(in(r, y));
                     ss(y) = sum(xr * xr);
                     Expr rms = sqrt(ss(y) / 576.0f + 1e-6f);
                     out(x, y) = f16(cast<float>(in(x, y)) / rms * (1.0f + cast<float>(gamma(x))));
                     k.inputs = {in, gamma};
                     k.output = out;
                     k.funcs = {{"ss", ss}};
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{576, 64}, {576}}, {576, 64}, [](Kernel &k) {
                     spyre::schedule(k.output).ring_split(k.vars.at("y"), 32).stick_vectorize(k.vars.at("x"));
                     spyre::schedule(k.funcs.at("ss")).scratchpad_store_at(k.output, k.vars.at("y"));
                 }});
    // LayerNorm from the two moments (var = E[x^2] - mean^2), with gamma and beta, 200 odd columns.
    v.push_back({"layernorm_moments", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in"), gamma(Float(16), 1, "gamma"), beta(Float(16), 1, "beta");
                     Var x("x"), y("y");
                     RDom r(0, 200, "r");
                     Func s1("s1"), s2("s2"), out("out");
                     Expr xr = cast<float>(in(r, y));
                     s1(y) = sum(xr);
                     s2(y) = sum(xr * xr);
                     Expr mean = s1(y) / 200.0f, var = s2(y) / 200.0f - mean * mean;
                     out(x, y) = f16((cast<float>(in(x, y)) - mean) / sqrt(var + 1e-5f) * cast<float>(gamma(x)) +
                                     cast<float>(beta(x)));
                     k.inputs = {in, gamma, beta};
                     k.output = out;
                     k.funcs = {{"s1", s1}, {"s2", s2}};
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{200, 64}, {200}, {200}}, {200, 64}, [](Kernel &k) {
                     Var y = k.vars.at("y");
                     spyre::schedule(k.output).ring_split(y, 32).stick_vectorize(k.vars.at("x"));
                     spyre::schedule(k.funcs.at("s1")).scratchpad_store_at(k.output, y);
                     spyre::schedule(k.funcs.at("s2")).scratchpad_store_at(k.output, y);
                 }});
    // Attention scores' softmax with the 1/sqrt(d) scale (d = 64) folded into the exponent, 520 keys.
    v.push_back({"scaled_softmax", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var x("x"), y("y");
                     RDom r(0, 520, "r");
                     Func m("m"), e("e"), s("s"), out("out");
                     m(y) = maximum(in(r, y));
                     e(x, y) = exp(cast<float>(in(x, y) - m(y)) * 0.125f);
                     s(y) = sum(e(r, y));
                     out(x, y) = f16(e(x, y) / s(y));
                     k.inputs = {in};
                     k.output = out;
                     k.funcs = {{"m", m}, {"e", e}, {"s", s}};
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{520, 64}}, {520, 64}, [](Kernel &k) {
                     Var x = k.vars.at("x"), y = k.vars.at("y");
                     spyre::schedule(k.output).ring_split(y, 32).stick_vectorize(x);
                     spyre::stage_all_in_lx(k.inputs[0], k.output, y);
                     spyre::schedule(k.funcs.at("m")).scratchpad_store_at(k.output, y);
                     spyre::schedule(k.funcs.at("e")).scratchpad_store_at(k.output, y).stick_vectorize(x);
                     spyre::schedule(k.funcs.at("s")).scratchpad_store_at(k.output, y);
                 }, 1});  // exp is an ulp off the CPU's on a few elements
    // Causal softmax: query row y keeps keys x <= y (an index condition), the rest -inf.
    v.push_back({"causal_masked_softmax", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var x("x"), y("y");
                     RDom r(0, 96, "r");
                     Func masked("masked"), m("m"), e("e"), s("s"), out("out");
                     masked(x, y) = select(x <= y, cast<float>(in(x, y)), Float(32).min());
                     m(y) = maximum(masked(r, y));
                     e(x, y) = exp(masked(x, y) - m(y));
                     s(y) = sum(e(r, y));
                     out(x, y) = f16(e(x, y) / s(y));
                     k.inputs = {in};
                     k.output = out;
                     k.funcs = {{"m", m}, {"e", e}, {"s", s}};
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{96, 96}}, {96, 96}, [](Kernel &k) {
                     Var x = k.vars.at("x"), y = k.vars.at("y");
                     spyre::schedule(k.output).ring_split(y, 32).stick_vectorize(x);
                     spyre::schedule(k.funcs.at("m")).scratchpad_store_at(k.output, y);
                     spyre::schedule(k.funcs.at("e")).scratchpad_store_at(k.output, y).stick_vectorize(x);
                     spyre::schedule(k.funcs.at("s")).scratchpad_store_at(k.output, y);
                 }});
    // Each row's variance into a 1-D output, the mean kept in LX (docs: a mean read by a sum needs a home).
    v.push_back({"row_variance", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var y("y");
                     RDom r(0, 333, "r");
                     Func mean("mean"), out("out");
                     mean(y) = sum(cast<float>(in(r, y))) / 333.0f;
                     Expr d = cast<float>(in(r, y)) - mean(y);
                     out(y) = sum(d * d) / 333.0f;
                     k.inputs = {in};
                     k.output = out;
                     k.funcs = {{"mean", mean}};
                     k.vars = {{"y", y}};
                     return k;
                 }, {{333, 100}}, {100}, [](Kernel &k) { spyre::schedule(k.funcs.at("mean")).scratchpad_root(); }});
    // The maximum down each column of an fp16 image into a 1-D output.
    v.push_back({"column_max", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var x("x");
                     RDom r(0, 50, "r");
                     Func out("out");
                     out(x) = maximum(in(x, r));
                     k.inputs = {in};
                     k.output = out;
                     k.vars = {{"x", x}};
                     return k;
                 }, {{700, 50}}, {700}, [](Kernel &k) { spyre::schedule(k.output).stick_vectorize(k.vars.at("x")); }});
    // log_softmax over a row: x - max - log(sum(exp(x - max))).
    v.push_back({"log_softmax_rows", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var x("x"), y("y");
                     RDom r(0, 260, "r");
                     Func m("m"), s("s"), out("out");
                     m(y) = maximum(cast<float>(in(r, y)));
                     s(y) = sum(exp(cast<float>(in(r, y)) - m(y)));
                     out(x, y) = f16(cast<float>(in(x, y)) - m(y) - log(s(y)));
                     k.inputs = {in};
                     k.output = out;
                     k.funcs = {{"m", m}, {"s", s}};
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{260, 32}}, {260, 32}, [](Kernel &k) {
                     Var y = k.vars.at("y");
                     spyre::schedule(k.output).ring_split(y, 32).stick_vectorize(k.vars.at("x"));
                     spyre::schedule(k.funcs.at("m")).scratchpad_store_at(k.output, y);
                     spyre::schedule(k.funcs.at("s")).scratchpad_store_at(k.output, y);
                 }});
    // A running sum along each row (a scan along x, the stick dimension), fp32.
    v.push_back({"running_sum_along_rows", [] {
                     Kernel k;
                     ImageParam in(Float(32), 2, "in");
                     Var x("x"), y("y");
                     RDom r(1, 149, "r");
                     Func acc("acc"), out("out");
                     acc(x, y) = in(x, y);
                     acc(r, y) = acc(r - 1, y) + in(r, y);
                     out(x, y) = acc(x, y);
                     k.inputs = {in};
                     k.output = out;
                     k.funcs = {{"acc", acc}};
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{150, 32}}, {150, 32}, [](Kernel &k) {
                     Var x = k.vars.at("x"), y = k.vars.at("y");
                     spyre::schedule(k.output).ring_split(y, 32).stick_vectorize(x);
                     spyre::schedule(k.funcs.at("acc")).scratchpad_store_at(k.output, y).stick_vectorize(x);
                 }});
    // A 2-D 5-point Laplacian with zeros outside the image.
    v.push_back({"laplacian_constant_exterior", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var x("x"), y("y");
                     Func c = BoundaryConditions::constant_exterior(in, f16(Expr(0.0f)));
                     Func out("out");
                     out(x, y) = c(x, y) * f16(Expr(4.0f)) - c(x - 1, y) - c(x + 1, y) - c(x, y - 1) - c(x, y + 1);
                     k.inputs = {in};
                     k.output = out;
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{200, 64}}, {200, 64}, [](Kernel &k) {
                     spyre::schedule(k.output).ring_split(k.vars.at("y"), 32).stick_vectorize(k.vars.at("x"));
                 }});
    // A vertical 3-tap blur with the rows mirrored at the top and bottom.
    v.push_back({"vertical_blur_mirror", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var x("x"), y("y");
                     Func c = BoundaryConditions::mirror_image(in);
                     Func out("out");
                     Expr up = cast<float>(c(x, y - 1)), mid = cast<float>(c(x, y)), down = cast<float>(c(x, y + 1));
                     out(x, y) = f16((up + 2.0f * mid + down) * 0.25f);
                     k.inputs = {in};
                     k.output = out;
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{300, 64}}, {300, 64}, [](Kernel &k) {
                     spyre::schedule(k.output).ring_split(k.vars.at("y"), 32).stick_vectorize(k.vars.at("x"));
                 }});
    // Token plus position embeddings: rows of a table gathered by clamped ids, added to a position row.
    v.push_back({"token_plus_position_embedding", [] {
                     Kernel k;
                     ImageParam table(Float(16), 2, "table"), ids(Int(32), 1, "ids"), pos(Float(16), 2, "pos");
                     Var x("x"), t("t");
                     Func out("out");
                     out(x, t) = table(x, clamp(ids(t), 0, 299)) + pos(x, t);
                     k.inputs = {table, ids, pos};
                     k.output = out;
                     k.vars = {{"x", x}, {"y", t}};
                     return k;
                 }, {{192, 300}, {64}, {192, 64}}, {192, 64}, rows_over(32)});
    // int8 codes dequantized with a per-row fp16 scale, to fp16.
    v.push_back({"dequantize_int8_rows", [] {
                     Kernel k;
                     ImageParam q(Int(8), 2, "q"), s(Float(16), 1, "s");
                     Var x("x"), y("y");
                     Func out("out");
                     out(x, y) = cast<float16_t>(q(x, y)) * s(y);
                     k.inputs = {q, s};
                     k.output = out;
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{200, 128}, {128}}, {200, 128}, [](Kernel &k) {
                     // docs: an fp16 Func reading int8 data takes stick_vectorize(x, 2); 64 rows a core keep
                     // each core's share of the scale whole sticks.
                     spyre::schedule(k.output).ring_split(k.vars.at("y"), 2).stick_vectorize(k.vars.at("x"), 2);
                 }});
    // GELU, the tanh approximation, in fp32 on fp16 data.
    v.push_back({"gelu_tanh", [] {
                     return two_d(1, [](const std::vector<ImageParam> &in, Var x, Var y) {
                         Expr a = cast<float>(in[0](x, y));
                         return f16(0.5f * a * (1.0f + tanh(0.7978845608f * (a + 0.044715f * a * a * a))));
                     });
                 }, {{1000, 32}}, {1000, 32}, rows_over(32)});
    // A linear layer with bias and ReLU: fp16 in, an fp32 accumulation over K (RDom), fp16 out.
    v.push_back({"linear_bias_relu", [] {
                     Kernel k;
                     ImageParam a(Float(16), 2, "a"), w(Float(16), 2, "w"), bias(Float(16), 1, "bias");
                     Var n("n"), m("m");
                     RDom r(0, 96, "k");
                     Func acc("acc"), out("out");
                     acc(n, m) = 0.0f;
                     acc(n, m) += cast<float>(a(r, m)) * cast<float>(w(n, r));
                     out(n, m) = f16(max(acc(n, m) + cast<float>(bias(n)), 0.0f));
                     k.inputs = {a, w, bias};
                     k.output = out;
                     k.funcs = {{"acc", acc}};
                     k.vars = {{"x", n}, {"y", m}};
                     return k;
                 }, {{96, 20}, {130, 96}, {130}}, {130, 20}, [](Kernel &k) {
                     Func acc = k.funcs.at("acc");
                     RVar rk(acc.update(0).get_schedule().rvars()[0].var);
                     spyre::schedule(acc).scratchpad_root().stick_vectorize(k.vars.at("x")).pe_matmul(rk);
                     spyre::schedule(k.output).stick_vectorize(k.vars.at("x"));
                 }});
    // SwiGLU's hidden row, then a dot product with a vector: one value per row.
    v.push_back({"swiglu_then_dot", [] {
                     Kernel k;
                     ImageParam g(Float(16), 2, "gate"), u(Float(16), 2, "up"), w(Float(16), 1, "w");
                     Var x("x"), y("y");
                     RDom r(0, 384, "r");
                     Func h("h"), out("out");
                     Expr gv = cast<float>(g(x, y));
                     h(x, y) = gv / (1.0f + exp(-gv)) * cast<float>(u(x, y));
                     out(y) = f16(sum(h(r, y) * cast<float>(w(r))));
                     k.inputs = {g, u, w};
                     k.output = out;
                     k.funcs = {{"h", h}};
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{384, 64}, {384, 64}, {384}}, {64}, [](Kernel &k) {
                     spyre::schedule(k.funcs.at("h")).scratchpad_root().stick_vectorize(k.vars.at("x"));
                 }});
    // RoPE's rotate-half on one 64-wide head: out = in * cos + (x < 32 ? -in(x + 32) : in(x - 32)) * sin.
    v.push_back({"rope_rotate_half_64", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in"), cs(Float(16), 2, "cos"), sn(Float(16), 2, "sin");
                     Var x("x"), y("y");
                     Func out("out");
                     Expr partner = select(x < 32, -in(clamp(x + 32, 0, 63), y), in(clamp(x - 32, 0, 63), y));
                     out(x, y) = in(x, y) * cs(x, y) + partner * sn(x, y);
                     k.inputs = {in, cs, sn};
                     k.output = out;
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{64, 128}, {64, 128}, {64, 128}}, {64, 128}, [](Kernel &k) {
                     spyre::schedule(k.output).ring_split(k.vars.at("y"), 32).stick_vectorize(k.vars.at("x"));
                 }});
    // Two inputs concatenated along the rows (a KV cache's old and new rows).
    v.push_back({"concat_rows", [] {
                     return two_d(2, [](const std::vector<ImageParam> &in, Var x, Var y) {
                         return select(y < 40, in[0](x, clamp(y, 0, 39)), in[1](x, clamp(y - 40, 0, 23)));
                     });
                 }, {{96, 40}, {96, 24}}, {96, 64}, [](Kernel &k) {
                     spyre::schedule(k.output).ring_split(k.vars.at("y"), 32).stick_vectorize(k.vars.at("x"));
                 }});
    // Quantize to int8 with a fixed scale of 1/64 that saturates most values at -128 or 127.
    v.push_back({"quantize_int8_saturating", [] {
                     Kernel k;
                     ImageParam in(Float(16), 2, "in");
                     Var x("x"), y("y");
                     Func out("out");
                     out(x, y) = cast<int8_t>(clamp(round(cast<float>(in(x, y)) * 64.0f), -128.0f, 127.0f));
                     k.inputs = {in};
                     k.output = out;
                     k.vars = {{"x", x}, {"y", y}};
                     return k;
                 }, {{330, 64}}, {330, 64}, [](Kernel &k) {
                     spyre::schedule(k.output).ring_split(k.vars.at("y"), 32).stick_vectorize(k.vars.at("x"));
                 }});
    // A running sum down the columns (a scan along y), by the docs' "Scans" schedule: stick-wide
    // column tiles over the cores, each tile's scan in LX.
    v.push_back({"running_sum_down_rows", column_scan(45), {{200, 45}}, {200, 45}, column_tiles(200, 4)});
    // Some of them again at row counts no power of two divides, split as a user would (a row or
    // three per core). Auto tried only power-of-two core counts then, and lost to each of these.
    auto again = [&](const std::string &name, std::vector<std::vector<int>> ins, std::vector<int> out, int cores,
                     std::vector<std::string> stats_at_rows) {
        for (const UnseenCase &c : v) {
            if (c.name != name) continue;
            UnseenCase o = c;
            o.name = name + "_" + std::to_string(out.back()) + "_rows";
            o.ins = std::move(ins);
            o.out = std::move(out);
            o.hand = [=](Kernel &k) {
                const Var y = k.vars.at("y");
                spyre::schedule(k.output).ring_split(y, cores).stick_vectorize(k.vars.at("x"));
                for (const std::string &f : stats_at_rows) spyre::schedule(k.funcs.at(f)).scratchpad_store_at(k.output, y);
            };
            return o;
        }
        throw std::runtime_error("no unseen case " + name);
    };
    std::vector<UnseenCase> odd = {
        again("gelu_tanh", {{1000, 30}}, {1000, 30}, 30, {}),
        again("layernorm_moments", {{200, 33}, {200}, {200}}, {200, 33}, 11, {"s1", "s2"}),
        again("log_softmax_rows", {{260, 20}}, {260, 20}, 20, {"m", "s"}),
        again("vertical_blur_mirror", {{300, 50}}, {300, 50}, 25, {}),
        again("quantize_int8_saturating", {{330, 33}}, {330, 33}, 11, {}),
    };
    v.insert(v.end(), odd.begin(), odd.end());
    return v;
}

class UnseenPipelines : public ::testing::TestWithParam<UnseenCase> {};

TEST_P(UnseenPipelines, AutoMatchesCpuAndIsNoSlowerThanTheHandSchedule) {
    const UnseenCase &c = GetParam();
    const DiffResult hand = run_differential(c.alg, c.hand, c.ins, c.out, -3, 3);
    EXPECT_LE(hand.cmp.max_ulp, c.ulp) << "hand: " << hand.cmp.first_mismatch;
    AutoResult chosen;
    Schedule by_auto = [&](Kernel &k) {
        CompileOptions o;
        for (const auto &s : c.ins) o.inputs.push_back(TensorSpec{std::vector<int64_t>(s.begin(), s.end()), {}});
        o.output = TensorSpec{std::vector<int64_t>(c.out.begin(), c.out.end()), {}};
        AutoOptions ao;
        ao.max_evaluations = 128;
        ao.progress = false;
        chosen = auto_schedule(k.output, k.inputs, o, ao);
    };
    const DiffResult a = run_differential(c.alg, by_auto, c.ins, c.out, -3, 3);
    EXPECT_LE(a.cmp.max_ulp, c.ulp) << "auto (" << chosen.summary << "): " << a.cmp.first_mismatch;
    EXPECT_LE(a.stats.us, hand.stats.us) << "auto (" << chosen.summary << ") " << a.stats.us << " us, hand " << hand.stats.us
                                         << " us";
}

INSTANTIATE_TEST_SUITE_P(Sweep, UnseenPipelines, ::testing::ValuesIn(unseen_cases()),
                         [](const ::testing::TestParamInfo<UnseenCase> &i) { return i.param.name; });

}  // namespace
}  // namespace spyre::testing
