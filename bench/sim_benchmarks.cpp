// Benchmarks of the device model: the softmax calibration stages (modelled vs measured time) and
// a full-size 32-core batched matmul timed in timing-only mode. Counters carry the modelled
// figures; the benchmark's own time is the simulator's host time.
#include <benchmark/benchmark.h>

#include <map>
#include <tuple>

#include "bmm_program.h"
#include "compile.h"
#include "matmul.h"
#include "calibration.h"
#include "sim/simulator.h"
#include "softmax_stages.h"

namespace spyre {
namespace {

void set_counters(benchmark::State &state, const SimStats &st) {
    state.counters["sim_us"] = st.us;
    state.counters["dram_MB"] = double(st.dram_read_bytes + st.dram_write_bytes) / 1e6;
    state.counters["ring_MB"] = double(st.ring_bytes) / 1e6;
    state.counters["lx_peak_KB"] = double(st.lx_peak_bytes) / 1024.0;
    state.counters["pe_util"] = st.mean_busy_fraction(kEngPE);
    state.counters["vec_util"] = st.mean_busy_fraction(kEngVector);
    state.counters["dma_util"] = st.mean_busy_fraction(kEngDMA);
}

void BM_SoftmaxStage(benchmark::State &state) {
    int stage = int(state.range(0));
    static const CalibrationCase compiled = compiled_case();
    const DeviceProgram &p = compiled.programs[stage - 1];
    MachineDesc m;
    SimOptions o;
    o.timing_only = true;
    o.summarize_loops = false;
    SimStats st;
    for (auto _ : state) st = simulate(p, m, {}, o).stats;
    set_counters(state, st);
    double measured = softmax_stage_info()[stage - 1].measured_us;
    state.counters["measured_us"] = measured;
    state.counters["error_pct"] = 100.0 * (st.us - measured) / measured;
    state.SetLabel(softmax_stage_info()[stage - 1].what);
}
BENCHMARK(BM_SoftmaxStage)->Name("calibration/softmax_512x1024_compiled/stage")->DenseRange(1, 4)->Unit(benchmark::kMicrosecond);

void BM_BmmTimingOnly(benchmark::State &state) {
    BmmShape s;
    s.batch = int(state.range(0));
    s.n = int(state.range(1));
    s.cores = 32;
    DeviceProgram p = build_bmm(s);
    MachineDesc m;
    SimOptions o;
    o.timing_only = true;
    SimStats st;
    for (auto _ : state) st = simulate(p, m, {}, o).stats;
    set_counters(state, st);
    // Utilisation against the PE array's sustained rate on every core.
    double peak_macs = m.pe_macs_per_ns * 1000.0 * st.us * m.cores;
    state.counters["pe_rate_frac"] = double(st.pe_macs) / peak_macs;
}
BENCHMARK(BM_BmmTimingOnly)
    ->Name("sim/bmm_timing_only/Bx512x4096xN_32cores")
    ->ArgNames({"B", "N"})
    ->Args({8, 12800})
    ->Args({4, 12800})
    ->Args({8, 25600})
    ->Unit(benchmark::kMillisecond);

// IBM's layout experiment: the same bmm compiled from Halide (PE array, 32 cores), with the
// activation and output laid out with the batch outermost or innermost of the non-stick dims.
void BM_BmmLayout(benchmark::State &state) {
    const int batch = int(state.range(0)), cols = int(state.range(1));
    const bool batch_inner = state.range(2) != 0;
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
    MachineDesc m;
    SimOptions o;
    o.timing_only = true;
    SimStats st;
    for (auto _ : state) st = simulate(p, m, {}, o).stats;
    set_counters(state, st);
    double peak_macs = m.pe_macs_per_ns * 1000.0 * st.us * m.cores;
    state.counters["pe_rate_frac"] = double(st.pe_macs) / peak_macs;
    state.SetLabel(batch_inner ? "batch innermost" : "batch outermost");
}
BENCHMARK(BM_BmmLayout)
    ->Name("bmm_layout/Bx512x4096xN_32cores")
    ->ArgNames({"B", "N", "batch_inner"})
    ->ArgsProduct({{2, 4, 8}, {12800, 25600}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace spyre

BENCHMARK_MAIN();
