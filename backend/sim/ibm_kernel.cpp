#include "ibm_kernel.h"

#include <algorithm>

#include "device/dtype.h"
#include "program_work.h"

namespace spyre {

namespace {

int64_t elements(const BufferDecl &b) {
    int64_t n = 1;
    for (int64_t e : b.shape) n *= e;
    return n;
}

// The largest buffer of a kind (by device bytes), or -1.
int largest(const DeviceProgram &p, BufferKind kind, const MachineDesc &m) {
    int best = -1;
    for (size_t i = 0; i < p.buffers.size(); i++)
        if (p.buffers[i].kind == kind &&
            (best < 0 || p.buffer_bytes(i, m.stick_bytes) > p.buffer_bytes(size_t(best), m.stick_bytes)))
            best = int(i);
    return best;
}

}  // namespace

IbmKernel ibm_kernel(const DeviceProgram &p, const MachineDesc &m) {
    const std::vector<CoreTraffic> cores = program_traffic(p, m);
    const size_t nbuf = p.buffers.size();
    IbmKernel k;
    k.cores = p.num_cores;

    // Replicated operands: loads at a core-independent address that two or more cores issue, each
    // its own (plain) load; shared ones: the same bytes in one shared load (kDmaShared).
    std::vector<bool> replicated(nbuf, false), shared(nbuf, false);
    for (size_t b = 0; b < nbuf; b++) {
        int issuers = 0, sharers = 0;
        for (const CoreTraffic &c : cores) issuers += c.replicated_load_bytes[b] > 0, sharers += c.shared_load_bytes[b] > 0;
        replicated[b] = issuers >= 2;
        shared[b] = sharers >= 2;
    }
    int64_t macs = 0, reduce_sticks = 0, transpose_sticks = 0;
    for (const CoreTraffic &c : cores) {
        for (const auto &[shape, count] : c.matmuls) macs += int64_t(shape[0]) * shape[1] * shape[2] * count;
        reduce_sticks += c.reduce_sticks;
        transpose_sticks += c.transpose_sticks;
    }
    const bool matmul = macs > 0;

    // R counts a replicated or shared operand once (the most one core reads of it); a matmul's
    // cores pay their own copies of a replicated one at the replicated rate (IBM's cost model: a
    // shared load's bytes count once, cost_model.md).
    std::vector<double> once(nbuf, 0);
    for (const CoreTraffic &c : cores) {
        double rep = 0;
        for (size_t b = 0; b < nbuf; b++) {
            k.read_bytes += double(c.load_bytes[b]);
            k.write_bytes += double(c.store_bytes[b]);
            const double same = (replicated[b] ? double(c.replicated_load_bytes[b]) : 0.0) +
                                (shared[b] ? double(c.shared_load_bytes[b]) : 0.0);
            k.read_bytes -= same;
            once[b] = std::max(once[b], same);
            if (replicated[b]) rep += double(c.replicated_load_bytes[b]);
        }
        if (matmul) k.replicated_bytes_per_core = std::max(k.replicated_bytes_per_core, rep + double(c.ring_recv_bytes));
    }
    for (double b : once) k.read_bytes += b;

    const int in = largest(p, BufferKind::Input, m), out = largest(p, BufferKind::Output, m);
    if (in >= 0 && !p.buffers[size_t(in)].shape.empty()) {
        const BufferDecl &b = p.buffers[size_t(in)];
        k.cols = double(b.shape[0]);
        k.rows = double(elements(b)) / std::max(k.cols, 1.0);
    }

    if (matmul) {
        k.kind = IbmKernelKind::Matmul;
        for (const CoreTraffic &c : cores) k.core_matmuls.push_back(c.matmuls);
        for (size_t b = 0; b < nbuf; b++)
            if (p.buffers[b].kind == BufferKind::Input) k.operand_bytes += double(p.buffer_bytes(b, m.stick_bytes));
        if (out >= 0) k.output_tile_elems = double(elements(p.buffers[size_t(out)])) / double(std::max(k.cores, int64_t(1)));
        k.program_reread_bytes = std::max(0.0, k.read_bytes - k.operand_bytes);
        return k;
    }
    if (in < 0 || out < 0) return k;  // nothing read or nothing written: the channel law
    const BufferDecl &ib = p.buffers[size_t(in)], &ob = p.buffers[size_t(out)];
    // The elements the kernel reads of its main input and writes of its output: a kernel that reads
    // a window of a wider tensor (a fused projection's values, a gather's rows of a table) moves
    // what it writes, which no reduction does (one that halves its input reads twice what it
    // writes); the formula prices it as pointwise.
    int64_t in_read = 0, out_written = 0;
    for (const CoreTraffic &c : cores) in_read += c.load_bytes[size_t(in)], out_written += c.store_bytes[size_t(out)];
    const double read_elems = double(in_read) / dtype_bytes(ib.type), written_elems = double(out_written) / dtype_bytes(ob.type);
    const bool reads_more = read_elems > 1.5 * written_elems;
    const int64_t in_elems = elements(ib), out_elems = elements(ob);
    if (transpose_sticks > 0) {
        k.kind = IbmKernelKind::Restickify;
    } else if (out_elems < in_elems && reads_more) {  // a reduction, by lane reductions or by accumulating rows
        const bool rows_kept = !ob.shape.empty() && !ib.shape.empty() && ob.shape[0] == ib.shape[0];
        k.kind = rows_kept ? IbmKernelKind::ColumnReduction : IbmKernelKind::RowReduction;
    } else if (reduce_sticks > 0) {
        k.kind = IbmKernelKind::FusedReduction;
    } else if (in_elems == out_elems) {
        for (size_t b = 0; b < nbuf; b++) {
            const BufferDecl &s = p.buffers[b];
            if (s.kind != BufferKind::Input || elements(s) >= out_elems) continue;
            k.kind = IbmKernelKind::Broadcast;
            if (!s.shape.empty() && s.shape[0] == ob.shape[0] && s.shape[0] > 1) k.row_operand = true;
        }
    }

    // Row tiles: the rows of one load of the main input, on the core that loads it most often.
    int64_t loads = 0, bytes = 0;
    for (const CoreTraffic &c : cores)
        if (c.loads[size_t(in)] > loads) loads = c.loads[size_t(in)], bytes = c.load_bytes[size_t(in)];
    if (loads > 1 && k.rows > 0) {
        // A kernel reading a window of each row (or some of the rows) tiles what it reads.
        const double row_bytes = std::min(double(p.buffer_bytes(size_t(in), m.stick_bytes)), double(in_read)) / k.rows;
        const double tile_bytes = double(bytes) / double(loads);
        k.tile_rows = tile_bytes / row_bytes;
        k.working_set_bytes = 2.0 * tile_bytes;
    }
    return k;
}

IbmFormula ibm_formula(const DeviceProgram &program, const MachineDesc &machine) {
    return ibm_formula(ibm_kernel(program, machine), machine);
}

}  // namespace spyre
