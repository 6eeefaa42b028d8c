#include "op_cost.h"

#include <algorithm>
#include <cmath>

namespace spyre {

int64_t vector_sticks(const Instr &in, const MachineDesc &m) {
    int64_t groups = in.a[8], sticks = in.a[7];
    if (in.op == Opcode::VTRANSPOSE) {
        // rows x cols, either orientation padded to sticks.
        int64_t lanes = m.stick_bytes / dtype_bytes(DType(in.dtype));
        int64_t rows = in.a[7], cols = in.a[8];
        int64_t src = rows * ((cols + lanes - 1) / lanes), dst = cols * ((rows + lanes - 1) / lanes);
        return std::max(src, dst);
    }
    int64_t n = groups * sticks;
    // A shifted stick is assembled from two neighbouring source sticks: the unit streams two sticks
    // in per stick out, at the copy rate. Our assumption; no published figure isolates it.
    if (in.op == Opcode::VSHIFT) return 2 * n;
    // A strided read streams every source stick its rows span (a downsample by s: s per stick out)
    // and writes each destination stick (an upsample: one per stick out). The same assumption.
    if (in.op == Opcode::VSTRIDE) {
        const int64_t lanes = m.stick_bytes / dtype_bytes(DType(in.dtype));
        const int64_t step = in.a[6], row = int64_t(in.a[7]) * lanes, d = std::max<int64_t>(2, -step);
        const int64_t first = step > 0 ? in.a[5] : in.a[5] / d;
        const int64_t last = step > 0 ? first + (row - 1) * step : (in.a[5] + row - 1) / d;
        const int64_t src_sticks = (first % lanes + last - first) / lanes + 1;
        return in.a[8] * std::max<int64_t>(in.a[7], src_sticks);
    }
    if (in.op == Opcode::VCVT || in.op == Opcode::VCVTF8) {
        int64_t src_bytes = dtype_bytes(DType(in.dtype)), dst_bytes = dtype_bytes(DType(in.a[9]));
        n = std::max(n, n * dst_bytes / src_bytes);
    }
    return n;
}

double vector_cycles(const Instr &in, const MachineDesc &m) {
    double sticks = double(vector_sticks(in, m));
    double rate = 1;
    switch (vec_class(in.op)) {
    case VecClass::AddMul: rate = m.vec_add_sticks_per_cycle; break;
    case VecClass::MinMax: rate = m.vec_minmax_sticks_per_cycle; break;
    case VecClass::Transcendental: rate = m.vec_transc_sticks_per_cycle; break;
    case VecClass::Reduce: rate = m.vec_reduce_sticks_per_cycle; break;
    case VecClass::Convert: rate = m.vec_convert_sticks_per_cycle; break;
    case VecClass::Restickify:
        // Layout conversion runs at the measured restickify rate, in bytes.
        rate = m.restickify_bytes_per_ns / m.clock_ghz / double(m.stick_bytes);
        break;
    }
    return m.vec_op_overhead_cycles + sticks / rate;
}

int64_t matmul_padded_macs(const MatmulDesc &d, const MachineDesc &m, DType t) {
    int64_t lanes = m.stick_bytes / dtype_bytes(t);  // elements of A and B per stick
    auto pad = [&](int64_t v) { return (v + lanes - 1) / lanes * lanes; };
    return int64_t(d.m) * pad(d.n) * pad(d.k);
}

// The array takes A in passes of pe_pass_rows rows; the first pass also fills the pipeline, which
// costs pe_fill_rows rows of time. So a short MATMUL runs at m / (m + fill) of the rate: IBM's
// measured efficiency ~(rows / 64)^0.35 below 64 rows per core has this shape (docs/device_model.md).
double matmul_cycles(const MatmulDesc &d, const MachineDesc &m, DType t) {
    double macs_per_cycle = m.pe_macs_per_ns / m.clock_ghz * (t == DType::I8 ? m.pe_int8_rate_factor : 1.0);
    int64_t lanes = m.stick_bytes / dtype_bytes(t);
    auto pad = [](int64_t v, int64_t to) { return (v + to - 1) / to * to; };
    double rows = double(pad(d.m, m.pe_pass_rows)) + m.pe_fill_rows;
    return rows * double(pad(d.n, lanes)) * double(pad(d.k, lanes)) / macs_per_cycle;
}

int64_t dma_runs(const DmaDesc &d, const MachineDesc &m) {
    int64_t run = int64_t(d.sticks) * m.stick_bytes, runs = 1;
    bool merging = true;
    for (int k = 0; k < 3; k++) {
        if (d.count[k] <= 1) continue;
        if (merging && d.dram_stride[k] == run) {
            run *= d.count[k];
        } else {
            merging = false;
            runs *= d.count[k];
        }
    }
    return runs;
}

double dma_channel_work(const DmaDesc &d, int64_t bytes, bool store, int64_t lx_ws, const MachineDesc &m) {
    double per_run = store ? m.dram_write_run_overhead_bytes : m.dram_read_run_overhead_bytes;
    double work = double(bytes) + double(dma_runs(d, m)) * per_run;
    if (lx_ws > m.lx_ws_knee_bytes) work *= std::pow(double(lx_ws) / double(m.lx_ws_knee_bytes), m.lx_ws_exponent);
    return work;
}

double ring_transfer_cycles(int64_t bytes, const MachineDesc &m) {
    return m.ring_hop_latency_cycles + double(bytes) / m.ring_bytes_per_cycle;
}

// A pipelined ring all-reduce: reduce-scatter then all-gather, each moving (n-1)/n of the data over
// n-1 hops. Our assumption for the dedicated reduce-sum ring; not a published figure.
double ring_reduce_cycles(int64_t bytes, int cores, const MachineDesc &m, int hops_between) {
    if (cores <= 1) return 0;
    double frac = double(cores - 1) / cores;
    return 2 * (cores - 1) * hops_between * m.ring_hop_latency_cycles + 2 * frac * double(bytes) / m.ring_bytes_per_cycle;
}

}  // namespace spyre
