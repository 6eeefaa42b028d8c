// Benchmarks of the device model. Counters carry the modelled figures; the benchmark's own time is
// the simulator's host time (a timing-only run: no numerics).
//
//   <app>/<schedule>/<shape>   every app of schedules/ with each of its Spyre schedules and `auto`
//                              (spyre::auto_schedule; its rows add best_hand_us, the best hand
//                              schedule benchmarked at that shape, and auto_vs_hand), compiled
//                              once from Halide (apps/report/kernel_catalog.h), shapes rows x cols,
//                              B x M x K x N (bmm), dim x hidden x rows (mlp, 32 cores) or dim x seq
//                              (attention, one core), dim x seq x heads (flash_attention and
//                              causal_attention, heads over the cores); bmm/pe_batch_{outermost,innermost}/... is
//                              IBM's full-size bmm layout experiment under our row-major layouts;
//                              bmm/layout_{default,batch_outer}/... the same in torch-spyre's
//                              layouts, each with auto_schedule's best schedule.
//   calibration/...            the dim-0 softmax calibration stages (modelled vs IBM's measured time), and
//                              stage 4 on 1-32 cores (IBM measured 1 and 4).
//   sim/bmm_timing_only/...    a hand-built full-size 32-core batched matmul.
//   llama/...                  Llama-3.1-8B's stages, layer and model (llama_benchmarks.cpp).
//   peer/<op>/<shape>          IBM's KTIR kernel for an op next to ours (peer_benchmarks.h; with
//                              SPYRE_PEER_KTIR_CPU set): counters ibm_us, ours_us, ibm_over_ours.
//   sim_speed/softmax/...      the functional simulator's host time on the compiled 32-core softmax,
//                              next to sim_speed/softmax_native/..., Halide's JIT of the same
//                              algorithm with a parallel, vectorized CPU schedule.
//
// Counters (every benchmark): sim_us (modelled time), dram_MB (device-memory bytes read + written),
// ring_MB, lx_peak_KB (max over cores), pe_util / vec_util / dma_util (mean busy fraction over the
// program's cores), roofline_frac (apps/report/roofline.h: max(device bytes / dram_bytes_per_ns,
// vector sticks / (cores x vec_add_sticks_per_cycle x clock), PE MACs / (cores x pe_macs_per_ns))
// over the modelled time; the label names the resource that sets that bound), and the figure of
// merit, sol_us / sol_frac (apps/report/speed_of_light.h: the whole chip's speed of light for the
// kernel's compulsory traffic and work, and its fraction; the label says which term binds),
// formula_us / sim_vs_formula / faster_than_formula (apps/report/formula_check.h: IBM's published
// cost formula for the same program, sim_us over it, and 1 where the simulator is more than 25%
// faster than the formula; the label then says so, with the formula's terms), outside_calibration
// (backend/sim/model_validity.h: how many validity notes the run gets, 0 when the kernel stays in
// the range the calibration suite validates; the label then names them, "outside calibration:
// short_tiles ring"), and sim_steps (instructions the simulator stepped: its host work, against
// SimOptions::max_instructions).
#include <benchmark/benchmark.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "auto_schedule.h"
#include "bmm_program.h"
#include "calibration.h"
#include "compile.h"
#include "device/layout.h"
#include "formula_check.h"
#include "kernel_catalog.h"
#include "llama_benchmarks.h"
#include "peer_benchmarks.h"
#include "matmul.h"
#include "mlp_block.h"
#include "roofline.h"
#include "softmax.h"
#include "speed_of_light.h"
#include "sim/model_validity.h"
#include "sim/simulator.h"
#include "softmax_stages.h"

namespace spyre {
namespace {

void set_counters(benchmark::State &state, const SimStats &st, const MachineDesc &m, const DeviceProgram &p,
                  const std::string &label = "") {
    const int64_t cores = p.num_cores;
    state.counters["sim_us"] = st.us;
    state.counters["sim_steps"] = double(st.stepped_instructions);
    state.counters["dram_MB"] = double(st.dram_read_bytes + st.dram_write_bytes) / 1e6;
    state.counters["ring_MB"] = double(st.ring_bytes) / 1e6;
    state.counters["lx_peak_KB"] = double(st.lx_peak_bytes) / 1024.0;
    state.counters["pe_util"] = st.mean_busy_fraction(kEngPE);
    state.counters["vec_util"] = st.mean_busy_fraction(kEngVector);
    state.counters["dma_util"] = st.mean_busy_fraction(kEngDMA);
    report::Roofline r = report::roofline(st, m, cores);
    state.counters["roofline_frac"] = r.frac;
    report::SpeedOfLight sol = report::speed_of_light(p, st, m);
    state.counters["sol_us"] = sol.bound_ns / 1000.0;
    state.counters["sol_frac"] = sol.frac;
    const report::FormulaCheck f = report::formula_check(p, st, m);
    state.counters["formula_us"] = f.formula_us;
    state.counters["sim_vs_formula"] = f.sim_vs_formula;
    state.counters["faster_than_formula"] = f.flagged ? 1 : 0;
    const std::vector<ValidityNote> notes = model_validity(p, st, m);
    state.counters["outside_calibration"] = double(notes.size());
    state.SetLabel((label.empty() ? "" : label + "; ") + r.limiter + "-bound; sol: " + sol.limiter +
                   (f.flagged ? "; faster than IBM's formula: " + f.terms : "") + "; waits: " + st.top_waits(3) +
                   (notes.empty() ? "" : "; outside calibration: " + validity_keys(notes, " ")));
}

SimStats run_timing(benchmark::State &state, const DeviceProgram &p, const MachineDesc &m, bool summarize) {
    SimOptions o;
    o.timing_only = true;
    o.summarize_loops = summarize;
    SimStats st;
    for (auto _ : state) {
        try {
            st = simulate(p, m, {}, o).stats;
        } catch (const std::exception &e) {
            state.SkipWithError(e.what());  // e.g. a simulator budget: report it, run the rest
            break;
        }
    }
    return st;
}

// ---- <app>/<schedule>/<shape>: compiled once (on first use, outside the timed loop) ----

struct AppCase {
    std::string app, schedule;
    report::Shape shape;
    bool summarize = false;  // summarise loops (full-size kernels; otherwise exact timing)
    std::string name() const { return app + "/" + schedule + "/" + shape.text(); }
};

// The autoscheduler's figures for the auto rows compiled so far, by name.
std::map<std::string, AutoResult> &searches() {
    static std::map<std::string, AutoResult> s;
    return s;
}

const DeviceProgram &compiled(const AppCase &c) {
    static std::map<std::string, std::unique_ptr<DeviceProgram>> cache;
    auto &slot = cache[c.name()];
    if (!slot) {
        AutoResult r;
        slot = std::make_unique<DeviceProgram>(report::compile_kernel(c.app, c.schedule, c.shape, {}, "", &r));
        if (c.schedule == "auto") searches()[c.name()] = r;
    }
    return *slot;
}

std::vector<AppCase> app_cases();

// On an auto row: the best hand schedule benchmarked at the same app and shape, timed the same
// way (best_hand_us), and auto's time over it (auto_vs_hand: at most 1 when auto is no worse).
void compare_with_hand(benchmark::State &state, const AppCase &c, double auto_us) {
    const MachineDesc m;
    double best = 0;
    for (const AppCase &h : app_cases()) {
        if (h.app != c.app || h.schedule == "auto" || h.shape.text() != c.shape.text() || h.shape.cores != c.shape.cores)
            continue;
        try {
            SimOptions o;
            o.timing_only = true;
            o.summarize_loops = c.summarize;
            double us = simulate(compiled(h), m, {}, o).stats.us;
            if (best == 0 || us < best) best = us;
        } catch (const std::exception &) {  // a hand schedule that does not fit this shape
        }
    }
    if (best > 0) {
        state.counters["best_hand_us"] = best;
        state.counters["auto_vs_hand"] = auto_us / best;
    }
}

void BM_App(benchmark::State &state, AppCase c) {
    const MachineDesc m;
    const DeviceProgram *p = nullptr;
    try {
        p = &compiled(c);
    } catch (const std::exception &e) {
        state.SkipWithError(e.what());
        for (auto _ : state) {
        }
        return;
    }
    // Exact timing (no loop summaries) for the small kernels: the same modelled time as a run with
    // numerics (spyre-report); full-size ones summarise their loops.
    SimStats st = run_timing(state, *p, m, c.summarize);
    set_counters(state, st, m, *p);
    state.counters["cores"] = double(p->num_cores);
    if (c.schedule == "auto") {
        compare_with_hand(state, c, st.us);
        // The search itself (wall time, on this machine): candidates compiled and simulated, and
        // how many a second (issue target: at least 100).
        const AutoResult &r = searches()[c.name()];
        state.counters["search_s"] = r.search_seconds;
        state.counters["timed"] = double(r.timed);
        state.counters["timed_per_s"] = r.timed_per_second;
    }
}

std::vector<AppCase> app_cases() {
    auto shape = [](std::vector<int> d, int cores = 32) {
        report::Shape s;
        s.dims = std::move(d);
        s.cores = cores;
        return s;
    };
    std::vector<AppCase> v;
    // Every schedule the catalog lists (a schedule added to schedules/ shows up here), at one shape
    // per app, plus the 32-core schedules at a larger one.
    for (const char *app : {"softmax", "layernorm", "rmsnorm", "gelu"}) {
        for (const std::string &st : report::app_schedules(app)) v.push_back({app, st, shape({512, 1024})});
        for (const char *st : {"cores32", "phased", "auto"}) v.push_back({app, st, shape({4096, 1024})});
    }
    // Model widths (the tiles adapt to the LX budget): loops summarised.
    for (const char *app : {"softmax", "layernorm", "rmsnorm"})
        for (const std::vector<int> &d : {std::vector<int>{4096, 8192}, std::vector<int>{1151, 8192}})
            for (const char *st : {"cores32", "phased", "auto"}) v.push_back({app, st, shape(d), true});
    for (const std::string &st : report::app_schedules("bmm")) v.push_back({"bmm", st, shape({4, 64, 256, 512})});
    // Model sizes (issue: kernels at the speed of light): loops summarised.
    for (int n : {12800, 25600})
        for (int b : {2, 4, 8})
            for (const std::string &st : report::app_schedules("bmm")) v.push_back({"bmm", st, shape({b, 512, 4096, n}), true});
    for (int n : {4096, 11008})
        for (const std::string &st : report::app_schedules("linear")) v.push_back({"linear", st, shape({512, 4096, n}), true});
    // The quantized linear beside the fp16 one (linear/.../512x4096x4096 above): its weights cross
    // device memory at one byte each.
    for (const std::string &st : report::app_schedules("qlinear")) {
        v.push_back({"qlinear", st, shape({64, 1024, 1024}), false});
        v.push_back({"qlinear", st, shape({512, 4096, 4096}), true});
    }
    // Both mlp schedules keep all of W2 in each core's LX and fused attention a query tile's scores
    // over the whole sequence beside K and V, so mlp 1024x4096x512 and attention 128x2048 overflow LX.
    for (const std::string &st : report::app_schedules("mlp")) v.push_back({"mlp", st, shape({256, 2048, 512}, 32), false});
    // The model size: only the schedules with a stage per matmul fit it (the others report LX overflow).
    for (const std::string &st : report::app_schedules("mlp")) v.push_back({"mlp", st, shape({4096, 16384, 512}, 32), true});
    for (const std::string &st : report::app_schedules("gated_mlp")) {
        v.push_back({"gated_mlp", st, shape({256, 1024, 256}, 32), false});
        v.push_back({"gated_mlp", st, shape({4096, 11008, 512}, 32), true});  // Llama's sizes
    }
    for (const std::string &st : report::app_schedules("attention")) {
        v.push_back({"attention", st, shape({128, 512}, 1), false});
        v.push_back({"attention", st, shape({128, 1024}, 1), true});
    }
    // Multi-head attention at the model size (32 heads of 128, sequence 2048): keys in tiles, an
    // online softmax in LX, one head per core, without and with the causal mask; with numerics at
    // a reduced shape.
    for (const char *app : {"flash_attention", "causal_attention"})
        for (const std::string &st : report::app_schedules(app)) {
            v.push_back({app, st, shape({128, 512, 4}, 4), false});
            v.push_back({app, st, shape({128, 2048, 32}, 32), true});
        }
    // A restickify (VTRANSPOSE of staged tiles) at the report's shape and at a model width.
    for (const std::string &st : report::app_schedules("transpose")) {
        v.push_back({"transpose", st, shape({512, 1024}), false});
        v.push_back({"transpose", st, shape({4096, 8192}), true});
    }
    // Shifted reads (VSHIFT of staged rows) at the report's shape and at a model width.
    for (const char *app : {"stencil", "conv1d", "rope", "rope_interleaved"})
        for (const std::string &st : report::app_schedules(app)) {
            v.push_back({app, st, shape({512, 1024}), false});
            v.push_back({app, st, shape({4096, 8192}), true});
        }
    // An app without shapes of its own here runs every schedule at its report shape: a new app's
    // folder (apps/<folder>/<folder>_app.cpp) is enough for it to be benchmarked.
    std::set<std::string> listed;
    for (const AppCase &c : v) listed.insert(c.app);
    for (const report::AppInfo &a : report::app_infos()) {
        if (listed.count(a.name)) continue;
        report::Shape s = report::parse_shape(a.name, a.shapes.report);
        s.cores = a.shapes.report_cores;
        for (const std::string &st : report::app_schedules(a.name)) v.push_back({a.name, st, s, false});
    }
    return v;
}

// ---- bmm/pe_batch_{outermost,innermost}/Bx512x4096xN: IBM's layout experiment ----
// The bmm compiled from Halide (PE array, 32 cores), with the activation and output laid out with
// the batch outermost or innermost of the non-stick dims; loops summarised (full size).
void BM_BmmLayout(benchmark::State &state, int batch, int cols, bool batch_inner) {
    static std::map<std::tuple<int, int, bool>, DeviceProgram> programs;
    auto key = std::make_tuple(batch, cols, batch_inner);
    if (!programs.count(key)) {
        MatmulKernel k = make_bmm(batch, 512, 4096, cols);
        schedule_bmm(k, "pe", 32);
        CompileOptions opt;
        opt.kernel_name = "bmm";
        DeviceLayout act;  // {K, M, B}: stick on K; batch outermost [2, 1, 0] or innermost [1, 2, 0]
        act.stick_dim = 0;
        act.order = batch_inner ? std::vector<int>{1, 2, 0} : std::vector<int>{2, 1, 0};
        opt.inputs = {TensorSpec{{4096, 512, batch}, act}, TensorSpec{{cols, 4096}, {}}};
        opt.output = TensorSpec{{cols, 512, batch}, act};
        programs[key] = compile_for_spyre(k.out, {k.a, k.w}, opt);
    }
    const DeviceProgram &p = programs[key];
    const MachineDesc m;
    SimStats st = run_timing(state, p, m, /*summarize=*/true);
    set_counters(state, st, m, p, batch_inner ? "batch innermost" : "batch outermost");
    state.counters["cores"] = double(p.num_cores);
    state.counters["pe_rate_frac"] = double(st.pe_macs) / (m.pe_macs_per_ns * 1000.0 * st.us * m.cores);
}

// ---- bmm/layout_{default,batch_outer}/Bx512x4096xN: the layout experiment as IBM describes it ----
// Activation [B,512,4096], weight [4096,N], output [B,512,N] (PyTorch order) on 32 cores, in
// torch-spyre's default layouts (each sticked on its last dim; [B, M, K] as [M, K/64, B, 64]), or with
// the batch outermost for the activation and the output (the weight as before); each with the
// best schedule auto_schedule finds for those layouts. Loops summarised (full size).
void BM_BmmLayoutAuto(benchmark::State &state, int batch, int cols, bool batch_outer) {
    static std::map<std::tuple<int, int, bool>, std::pair<DeviceProgram, std::string>> programs;
    auto key = std::make_tuple(batch, cols, batch_outer);
    if (!programs.count(key)) {
        MatmulKernel k = make_bmm(batch, 512, 4096, cols);
        CompileOptions opt;
        opt.kernel_name = "bmm";
        // Halide order {K, M, B}: torch-spyre's default {M, stick count, B}; batch outer {B, stick count, M}.
        const DeviceLayout act = batch_outer ? DeviceLayout{0, {2, 0, 1}} : torch_spyre_default_layout(3);
        opt.inputs = {TensorSpec{{4096, 512, batch}, act}, TensorSpec{{cols, 4096}, torch_spyre_default_layout(2)}};
        opt.output = TensorSpec{{cols, 512, batch}, act};
        AutoOptions ao;
        ao.progress = false;
        const AutoResult r = auto_schedule(k.out, {k.a, k.w}, opt, ao);
        programs[key] = {compile_for_spyre(k.out, {k.a, k.w}, r.options), "auto: " + r.summary};
    }
    const auto &[p, label] = programs[key];
    const MachineDesc m;
    SimStats st = run_timing(state, p, m, /*summarize=*/true);
    set_counters(state, st, m, p, label);
    state.counters["cores"] = double(p.num_cores);
    state.counters["pe_rate_frac"] = double(st.pe_macs) / (m.pe_macs_per_ns * 1000.0 * st.us * m.cores);
}

// ---- a decoder's whole MLP block as one pipeline (schedules/mlp_block.h) ----

// Llama-3.1-8B's MLP block over 64 rows, by the hand schedule ("stages") or by auto_schedule (issue
// target: at least 0.75 of its SOL, which is streaming its 352 MB of weights once).
void BM_MlpBlock(benchmark::State &state, std::string schedule) {
    static std::map<std::string, std::pair<DeviceProgram, std::string>> programs;
    if (!programs.count(schedule)) {
        MlpBlockKernel k = make_mlp_block(4096, 14336, 64);
        CompileOptions opt;
        opt.kernel_name = "mlp_block";
        for (const auto &s : k.input_shapes()) opt.inputs.push_back(TensorSpec{s, {}});
        opt.output = TensorSpec{k.output_shape(), {}};
        std::string label = schedule;
        if (schedule == "auto") {
            AutoOptions ao;
            ao.progress = false;
            const AutoResult r = auto_schedule(k.out, k.inputs(), opt, ao);
            opt = r.options;
            label = "auto: " + r.summary;
        } else {
            schedule_mlp_block(k, schedule);
        }
        programs[schedule] = {compile_for_spyre(k.out, k.inputs(), opt), label};
    }
    const auto &[p, label] = programs[schedule];
    const MachineDesc m;
    SimStats st = run_timing(state, p, m, /*summarize=*/true);
    set_counters(state, st, m, p, label);
    state.counters["cores"] = double(p.num_cores);
}

// ---- calibration and the hand-built bmm ----

void BM_SoftmaxStage(benchmark::State &state) {
    int stage = int(state.range(0));
    static const CalibrationCase compiled_stages = compiled_case();
    const DeviceProgram &p = compiled_stages.programs[stage - 1];
    const MachineDesc m;
    SimStats st = run_timing(state, p, m, /*summarize=*/false);
    set_counters(state, st, m, p, softmax_stage_info()[stage - 1].what);
    double measured = softmax_stage_info()[stage - 1].measured_us;
    state.counters["measured_us"] = measured;
    state.counters["error_pct"] = 100.0 * (st.us - measured) / measured;
}

// IBM's dim-0 softmax, stage 4, on 1 to 32 cores (its columns split over them): IBM measured 23.67 us
// on one core (fitted) and 32.17 us on four (scratchpad_planning.md; a validation figure, not in
// SPYRE_FACTS.md), so `ibm_us` is set on those two rows only.
void BM_SoftmaxDim0Cores(benchmark::State &state) {
    const int cores = int(state.range(0));
    SoftmaxKernel k = make_softmax(1024, 512, /*dim=*/0);
    const MachineDesc m;
    schedule_softmax(k, "stage4", m, cores);
    CompileOptions opt;
    opt.kernel_name = "softmax_dim0_stage4";
    opt.inputs = {TensorSpec{{1024, 512}, torch_spyre_default_layout(2)}};
    opt.output = TensorSpec{{1024, 512}, torch_spyre_default_layout(2)};
    const DeviceProgram p = compile_for_spyre(k.out, {k.in}, opt);
    SimStats st = run_timing(state, p, m, /*summarize=*/false);
    set_counters(state, st, m, p, "torch.softmax(x, dim=0), stage 4");
    state.counters["cores"] = double(p.num_cores);
    if (cores == 1) state.counters["ibm_us"] = 23.67;
    if (cores == 4) state.counters["ibm_us"] = 32.17;
}

void BM_BmmTimingOnly(benchmark::State &state) {
    BmmShape s;
    s.batch = int(state.range(0));
    s.n = int(state.range(1));
    s.cores = 32;
    DeviceProgram p = build_bmm(s);
    const MachineDesc m;
    SimStats st = run_timing(state, p, m, /*summarize=*/true);
    set_counters(state, st, m, p);
    // Utilisation against the PE array's sustained rate on every core.
    state.counters["pe_rate_frac"] = double(st.pe_macs) / (m.pe_macs_per_ns * 1000.0 * st.us * m.cores);
}

// ---- sim_speed/...: the functional simulator's host time against native CPU code ----

constexpr int kSpeedCols = 1024, kSpeedRows = 4096;

Halide::Runtime::Buffer<> speed_input() {
    Halide::Runtime::Buffer<> b(halide_type_t(halide_type_float, 16), {kSpeedCols, kSpeedRows});
    auto *p = static_cast<uint16_t *>(b.data());
    for (size_t i = 0; i < b.number_of_elements(); i++) p[i] = uint16_t(0x3c00 + (i * 37) % 1024);  // [1, 2)
    return b;
}

// Functional simulation (numerics on) of the compiled 32-core softmax: what spyre-run does.
void BM_SimSpeedSoftmax(benchmark::State &state) {
    const DeviceProgram &p = compiled({"softmax", "cores32", [] {
                                           report::Shape s;
                                           s.dims = {kSpeedRows, kSpeedCols};
                                           return s;
                                       }()});
    Halide::Runtime::Buffer<> in = speed_input();
    SpyreRun r;
    for (auto _ : state) r = run_on_spyre(p, std::vector<Halide::Runtime::Buffer<>>{in});
    state.counters["sim_us"] = r.stats.us;
}

// The same algorithm as native code: Halide's JIT with a parallel, vectorized CPU schedule. Rows
// go to threads in blocks of 64; exp and the divide are vectorized along the row; the row max and
// sum are split by rfactor into 32 vector lanes. The updates are written out (not maximum()/sum())
// so that rfactor can reach them; rfactor reassociates the sum, which changes its rounding, not
// the work.
void BM_SimSpeedSoftmaxNative(benchmark::State &state) {
    using namespace Halide;
    ImageParam in(Float(16), 2, "in");
    Var x("x"), y("y"), yo("yo"), yi("yi"), u("u");
    RDom r(0, kSpeedCols, "r");
    RVar ro("ro"), ri("ri");
    Func mx("mx"), e("e"), s("s"), out("out");
    mx(y) = Float(16).min();
    mx(y) = max(mx(y), in(r, y));
    e(x, y) = exp(in(x, y) - mx(y));
    s(y) = 0.0f;
    s(y) += cast<float>(e(r, y));
    out(x, y) = e(x, y) / cast<float16_t>(s(y));

    out.split(y, yo, yi, 64).parallel(yo).vectorize(x, 32);
    e.compute_at(out, yi).vectorize(x, 32);
    for (Func f : {mx, s}) {
        Func lanes = f.update().split(r.x, ro, ri, 32).rfactor(ri, u);
        f.compute_at(out, yi);
        lanes.compute_at(f, y).vectorize(u);
        lanes.update().vectorize(u);
    }
    Halide::Runtime::Buffer<> input = speed_input();
    in.set(Halide::Buffer<>(*input.raw_buffer()));
    Halide::Runtime::Buffer<> result(halide_type_t(halide_type_float, 16), {kSpeedCols, kSpeedRows});
    out.compile_jit(get_jit_target_from_environment());
    for (auto _ : state) out.realize(Pipeline::RealizationArg(result));
}

void register_benchmarks() {
    for (const AppCase &c : app_cases())
        benchmark::RegisterBenchmark(c.name().c_str(), BM_App, c)->Unit(benchmark::kMicrosecond);
    for (bool inner : {false, true})
        for (int n : {12800, 25600})
            for (int b : {2, 4, 8}) {
                std::string name = std::string("bmm/pe_batch_") + (inner ? "innermost" : "outermost") + "/" +
                                   std::to_string(b) + "x512x4096x" + std::to_string(n);
                benchmark::RegisterBenchmark(name.c_str(), BM_BmmLayout, b, n, inner)->Unit(benchmark::kMillisecond);
            }
    for (bool outer : {false, true})
        for (int n : {12800, 25600})
            for (int b : {2, 4, 8}) {
                std::string name = std::string("bmm/layout_") + (outer ? "batch_outer" : "default") + "/" +
                                   std::to_string(b) + "x512x4096x" + std::to_string(n);
                benchmark::RegisterBenchmark(name.c_str(), BM_BmmLayoutAuto, b, n, outer)->Unit(benchmark::kMillisecond);
            }
    for (const char *st : {"stages", "auto"})
        benchmark::RegisterBenchmark((std::string("mlp_block/") + st + "/64x4096x14336").c_str(), BM_MlpBlock,
                                     std::string(st))
            ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("calibration/softmax_512x1024_compiled/stage", BM_SoftmaxStage)
        ->DenseRange(1, 4)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("calibration/softmax_512x1024_compiled/stage4_cores", BM_SoftmaxDim0Cores)
        ->RangeMultiplier(2)
        ->Range(1, 32)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("sim_speed/softmax/4096x1024", BM_SimSpeedSoftmax)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("sim_speed/softmax_native/4096x1024", BM_SimSpeedSoftmaxNative)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark("sim/bmm_timing_only/Bx512x4096xN_32cores", BM_BmmTimingOnly)
        ->ArgNames({"B", "N"})
        ->Args({8, 12800})
        ->Args({4, 12800})
        ->Args({8, 25600})
        ->Unit(benchmark::kMillisecond);
    register_llama_benchmarks();
    register_peer_benchmarks();
}

}  // namespace
}  // namespace spyre

int main(int argc, char **argv) {
    spyre::register_benchmarks();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
