#include "auto_cost.h"

#include <algorithm>

namespace spyre::autosched {

using namespace Halide;
using namespace Halide::Internal;

double vector_cycles_per_stick(const Expr &e, const MachineDesc &m) {
    struct Ops : IRVisitor {
        const MachineDesc *m;
        double cycles = 0;
        using IRVisitor::visit;
        void add() { cycles += 1.0 / m->vec_add_sticks_per_cycle; }
        void minmax() { cycles += 1.0 / m->vec_minmax_sticks_per_cycle; }
        void transc() { cycles += 1.0 / m->vec_transc_sticks_per_cycle; }
        void visit(const Add *op) override { add(), IRVisitor::visit(op); }
        void visit(const Sub *op) override { add(), IRVisitor::visit(op); }
        void visit(const Mul *op) override { add(), IRVisitor::visit(op); }
        void visit(const Div *op) override { transc(), IRVisitor::visit(op); }
        void visit(const Min *op) override { minmax(), IRVisitor::visit(op); }
        void visit(const Max *op) override { minmax(), IRVisitor::visit(op); }
        void visit(const Select *op) override { minmax(), IRVisitor::visit(op); }
        void visit(const Cast *op) override {
            cycles += 1.0 / m->vec_convert_sticks_per_cycle;
            IRVisitor::visit(op);
        }
        void visit(const Call *op) override {
            if (op->call_type == Call::PureExtern || op->call_type == Call::PureIntrinsic) transc();
            IRVisitor::visit(op);
        }
    } ops;
    ops.m = &m;
    e.accept(&ops);
    return ops.cycles + m.vec_op_overhead_cycles / 64.0;  // the issue overhead, amortised over a tile's sticks
}

double estimate_ns(const RowsWork &w, int cores, const MachineDesc &m) {
    cores = std::max(cores, 1);
    const double bw = std::min(m.dram_bytes_per_ns, double(cores) * m.dma_core_bytes_per_ns);
    const double reads = w.dram_bytes - w.dram_write_bytes, writes = w.dram_write_bytes;
    const double vec_ns = w.vector_sticks_cycles / double(cores) / m.clock_ghz;
    const double pe_ns = w.pe_macs / (double(cores) * m.pe_macs_per_ns);
    // The vector unit does a MAC per lane: lanes of fp32 per stick at the add rate.
    const double vmac_ns =
        w.vector_macs / (double(cores) * double(m.stick_bytes / 4) * m.vec_add_sticks_per_cycle * m.clock_ghz);
    const double compute_ns = vec_ns + pe_ns + vmac_ns;
    // Each tile starts with a DMA of its inputs and issues an instruction per stage.
    const double per_tile_ns = (m.dma_setup_cycles + m.vec_op_overhead_cycles * w.stages_per_tile) / m.clock_ghz;
    const double barriers_ns = double(w.roots - 1) * m.barrier_latency_cycles / m.clock_ghz;
    const double tiles_ns = double(w.tiles_per_core) * per_tile_ns + barriers_ns;
    // The channel charges the turnaround over the kernel's totals, on the smaller direction, however
    // the reads and writes are ordered (docs/device_model.md).
    const double turnaround_ns = std::min(reads, writes) * m.dram_turnaround_ns_per_byte;
    if (w.phased) {
        // Loads overlap the compute; the stores have the channel to themselves, between barriers.
        const double phase_ns = 2.0 * m.barrier_latency_cycles / m.clock_ghz;
        return std::max(reads / bw, compute_ns) + writes / bw + turnaround_ns + double(w.tiles_per_core) * phase_ns +
               tiles_ns;
    }
    return std::max(w.dram_bytes / bw + turnaround_ns, compute_ns) + tiles_ns;
}

}  // namespace spyre::autosched
