#include "peer_benchmarks.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernel_catalog.h"
#include "ktir_import.h"
#include "sim/simulator.h"

namespace spyre {
namespace {

// One of IBM's kernels and the catalogue app that computes the same op. The app's shape is read off
// the imported program's buffers (IBM's files fix their shapes), so the two run the same problem.
struct Peer {
    std::string op, file, app;
    std::map<std::string, std::string> args;  // the kernel's scalar arguments (docs/ktir.md's table)
    // The app's shape from the imported buffers (Halide order: innermost first).
    report::Shape (*shape)(const DeviceProgram &);
};

report::Shape rows_cols(const DeviceProgram &p) {  // softmax, layernorm: the first input's rows x cols
    report::Shape s;
    const std::vector<int64_t> &in = p.buffers.at(0).shape;
    s.dims = {int(in.at(1)), int(in.at(0))};
    return s;
}

report::Shape matmul(const DeviceProgram &p) {  // a [M, K] x b [K, N]: bmm 1 x M x K x N over 32 cores
    report::Shape s;
    const std::vector<int64_t> &a = p.buffers.at(0).shape, &b = p.buffers.at(1).shape;
    s.dims = {1, int(a.at(1)), int(a.at(0)), int(b.at(0))};
    return s;
}

const std::vector<Peer> &peers() {
    static const std::vector<Peer> v = {
        {"softmax", "examples/triton-ktir/softmax_fwd_ktir.mlir", "softmax", {{"n_rows", "4096"}}, rows_cols},
        {"layernorm", "examples/triton-ktir/layernorm_fwd_ktir.mlir", "layernorm",
         {{"N", "8192"}, {"eps", "1e-5"}, {"BLOCK_SIZE", "1024"}}, rows_cols},
        {"matmul", "examples/triton-ktir/matmul_fwd_ktir.mlir", "bmm",
         {{"K", "2048"}, {"BLOCK_SIZE_M", "32"}, {"BLOCK_SIZE_N", "512"}, {"BLOCK_SIZE_K", "128"}}, matmul},
    };
    return v;
}

double timed_us(const DeviceProgram &p) {
    SimOptions o;
    o.timing_only = true;
    return simulate(p, MachineDesc{}, {}, o).stats.us;
}

void BM_Peer(benchmark::State &state, std::shared_ptr<DeviceProgram> ibm, std::string app, report::Shape shape) {
    double ibm_us = 0, ours_us = 0;
    std::string best;
    for (auto _ : state) {
        ibm_us = timed_us(*ibm);
        for (const std::string &schedule : report::app_schedules(app)) {
            try {
                const double us = timed_us(report::compile_kernel(app, schedule, shape));
                if (ours_us == 0 || us < ours_us) ours_us = us, best = schedule;
            } catch (const std::exception &) {  // a schedule that does not fit this shape
            }
        }
    }
    state.counters["ibm_us"] = ibm_us;
    state.counters["ours_us"] = ours_us;
    state.counters["ibm_over_ours"] = ours_us > 0 ? ibm_us / ours_us : 0;
    state.SetLabel(ours_us > 0 ? "ours: " + app + "/" + best + "/" + shape.text() : "no schedule of " + app + " compiled");
}

}  // namespace

void register_peer_benchmarks() {
    const char *root = std::getenv("SPYRE_PEER_KTIR_CPU");
    if (!root || !*root) return;
    for (const Peer &p : peers()) {
        const std::filesystem::path file = std::filesystem::path(root) / p.file;
        if (!std::filesystem::exists(file)) {
            std::cerr << "spyre-bench: peer/" << p.op << ": " << file.string() << " not found, skipped\n";
            continue;
        }
        try {
            ktir::ImportOptions o;
            o.args = p.args;
            auto ibm = std::make_shared<DeviceProgram>(ktir::import_ktir_file(file.string(), o));
            const report::Shape shape = p.shape(*ibm);
            benchmark::RegisterBenchmark(("peer/" + p.op + "/" + shape.text()).c_str(), BM_Peer, ibm, p.app, shape)
                ->Unit(benchmark::kMicrosecond)
                ->Iterations(1);
        } catch (const std::exception &e) {
            std::cerr << "spyre-bench: peer/" << p.op << ": " << file.string() << ": " << e.what() << "\n";
        }
    }
}

}  // namespace spyre
