// Hand-built programs for the configurations of torch-spyre's cost-model sweeps (see
// sweep_programs.h): pointwise streams, row and column reductions, restickify, stick-plane
// transports, a compute-isolated matmul and the fused row-tiled softmax. Each is written the way
// IBM's compiler lays the kernel out (rows split over cores by CORE_ID, tiles streamed through LX
// with double buffering through stream_tiles), so that timing them measures the simulator's
// mechanisms rather than a per-kernel rate.
#include "sweep_programs.h"

#include <functional>
#include <string>
#include <vector>

#include "device/error.h"
#include "device/machine_desc.h"
#include "device/program_builder.h"
#include "softmax_ops.h"
#include "tile_stream.h"

namespace spyre {

namespace {

constexpr int kStick = 128;    // the programs are written for 128-byte sticks
constexpr int kLanes = 64;     // fp16 per stick
constexpr int kTagOnce = 5;    // one-off loads and stores outside stream_tiles (which uses 0..4)
constexpr float kFill = 1.0f;  // the value build_pointwise(inputs = 0) writes

void need_positive(const char *kernel, const char *field, int64_t v) {
    if (v <= 0) throw_error(kernel, ": ", field, " (", v, ") must be positive");
}

void need_multiple(const char *kernel, const char *field, int64_t v, const char *of, int64_t m) {
    if (v <= 0 || v % m) throw_error(kernel, ": ", field, " (", v, ") must be a positive multiple of ", of, " (", m, ")");
}

// Stick-aligned bump allocator over one core's LX; fit() rejects a plan above the usable LX.
struct LxPlan {
    int64_t next = 0;
    int32_t take(int64_t bytes) {
        int64_t at = next;
        next += (bytes + kStick - 1) / kStick * kStick;
        return int32_t(at);
    }
    template <class... Args>
    void fit(const char *kernel, const Args &...what) const {
        const int64_t usable = MachineDesc{}.lx_usable_bytes;
        if (next > usable)
            throw_error(kernel, ": ", what..., " needs ", next, " bytes of LX per core, more than the usable ", usable);
    }
};

// A register holding CORE_ID * bytes: this core's offset into a tensor split over cores.
Reg core_offset(ProgramBuilder &b, int64_t bytes) {
    Reg r = b.alloc(), t = b.alloc();
    b.core_id(r);
    b.li(t, bytes);
    b.mul(r, r, t);
    b.release(t);
    return r;
}

TileStream stream(int buffer, int desc, int64_t tile_bytes, int32_t lx0, int32_t lx1, Reg base) {
    TileStream s;
    s.buffer = buffer, s.desc = desc, s.tile_bytes = tile_bytes, s.lx[0] = lx0, s.lx[1] = lx1, s.dram_base = base;
    return s;
}

int contiguous(ProgramBuilder &b, int64_t sticks) {
    DmaDesc d;
    d.sticks = int32_t(sticks);
    return b.dma_desc(d);
}

}  // namespace

DeviceProgram build_pointwise(const PointwiseShape &s) {
    const char *k = "pointwise";
    need_positive(k, "cores", s.cores);
    need_positive(k, "tile_rows", s.tile_rows);
    if (s.inputs < 0 || s.inputs > 2) throw_error(k, ": inputs (", s.inputs, ") must be 0, 1 or 2");
    const bool bcast = s.broadcast != Broadcast::None;
    if (bcast && s.inputs != 1)
        throw_error(k, ": a broadcast operand is added to one input (out = x + b); inputs (", s.inputs, ") must be 1");
    need_multiple(k, "cols", s.cols, "a stick", kLanes);
    need_multiple(k, "rows", s.rows, "cores * tile_rows * 2", int64_t(s.cores) * s.tile_rows * 2);

    const int row_sticks = s.cols / kLanes, rows_core = s.rows / s.cores, tiles = rows_core / s.tile_rows;
    const int64_t row_bytes = int64_t(row_sticks) * kStick, tile_bytes = row_bytes * s.tile_rows;
    static const char *names[] = {"fill", "copy", "add"};
    std::string name = std::string(names[s.inputs]) +
                       (s.broadcast == Broadcast::Row ? "_bcast_row" : bcast ? "_bcast_scalar" : "");
    ProgramBuilder b(name, s.cores);
    const std::vector<int64_t> shape{s.cols, s.rows};
    std::vector<int> xs;
    for (int i = 0; i < s.inputs; i++) xs.push_back(b.buffer("x" + std::to_string(i), BufferKind::Input, DType::F16, shape));
    int bc = -1;
    if (bcast)
        bc = b.buffer("b", BufferKind::Input, DType::F16, {s.broadcast == Broadcast::Row ? s.cols : 1});
    int y = b.buffer("y", BufferKind::Output, DType::F16, shape);

    // Fill and copy store straight from the tiles they fill or load (two tiles); ops with a
    // result write separate output tiles, so the next loads never wait on a store.
    LxPlan lx;
    const bool computes = s.inputs == 2 || bcast;
    int32_t in[2][2] = {}, out[2];
    for (int i = 0; i < s.inputs; i++) in[i][0] = lx.take(tile_bytes), in[i][1] = lx.take(tile_bytes);
    if (computes || s.inputs == 0) out[0] = lx.take(tile_bytes), out[1] = lx.take(tile_bytes);
    else out[0] = in[0][0], out[1] = in[0][1];
    const int64_t bc_sticks = s.broadcast == Broadcast::Row ? row_sticks : 1;
    int32_t lx_b = bcast ? lx.take(bc_sticks * kStick) : 0;
    lx.fit(k, "a tile of tile_rows (", s.tile_rows, ") x cols (", s.cols, ")");

    const int d_tile = contiguous(b, tile_bytes / kStick);
    Reg base = core_offset(b, int64_t(rows_core) * row_bytes);
    std::vector<TileStream> loads;
    for (int i = 0; i < s.inputs; i++) loads.push_back(stream(xs[size_t(i)], d_tile, tile_bytes, in[i][0], in[i][1], base));
    std::vector<TileStream> stores{stream(y, d_tile, tile_bytes, out[0], out[1], base)};

    if (s.inputs == 0) {
        // The constant is written once; the loop only stores.
        for (int p = 0; p < 2; p++) b.vfill(DType::F16, kTagCompute, Lx(out[p]), kFill, int32_t(tile_bytes / kStick));
        b.wait_tag(kTagCompute);
    }
    if (bcast) {
        // The broadcast operand is loaded once per core and stays in LX.
        b.dma_ld(kTagOnce, bc, kZero, 0, Lx(lx_b), contiguous(b, bc_sticks));
        b.wait_tag(kTagOnce);
    }
    std::function<void(int, Reg)> compute;  // empty: a pure DMA stream (fill, copy)
    const int32_t tile_sticks = int32_t(tile_bytes / kStick);
    if (s.inputs == 2) {
        compute = [&](int p, Reg) {
            b.vbin(Opcode::VADD, DType::F16, kTagCompute, Lx(out[p]), Lx(in[0][p]), Lx(in[1][p]), tile_sticks);
        };
    } else if (s.broadcast == Broadcast::Scalar) {
        compute = [&](int p, Reg) {
            b.vbin(Opcode::VADD, DType::F16, kTagCompute, Lx(out[p]), Lx(in[0][p]), Lx(lx_b), tile_sticks, 1,
                   kSrc1Scalar);
        };
    } else if (s.broadcast == Broadcast::Row) {
        // A vector op's second operand spans all its groups, so a row operand repeated per group is
        // not expressible: one VADD per row of the tile.
        compute = [&](int p, Reg) {
            for (int r = 0; r < s.tile_rows; r++) {
                const int32_t at = int32_t(r * row_bytes);
                b.vbin(Opcode::VADD, DType::F16, kTagCompute, Lx(out[p] + at), Lx(in[0][p] + at), Lx(lx_b), row_sticks);
            }
        };
    }
    stream_tiles(b, tiles, loads, stores, compute);
    b.release(base);
    return b.finish();
}

DeviceProgram build_row_reduction(const RowReductionShape &s) {
    const char *k = "row_reduction";
    need_positive(k, "cores", s.cores);
    need_positive(k, "tile_rows", s.tile_rows);
    need_positive(k, "cols", s.cols);
    need_multiple(k, "rows", s.rows, "cores * tile_rows * 2", int64_t(s.cores) * s.tile_rows * 2);

    const int row_sticks = (s.cols + kLanes - 1) / kLanes, rows_core = s.rows / s.cores;
    const int64_t tile_bytes = int64_t(row_sticks) * kStick * s.tile_rows, out_tile = int64_t(s.tile_rows) * kStick;
    ProgramBuilder b("reduce_rows", s.cores);
    int x = b.buffer("x", BufferKind::Input, DType::F16, {s.cols, s.rows});
    // A (rows, 1) tensor sticked on its unit dimension: one stick per row, the sum in lane 0.
    int y = b.buffer("y", BufferKind::Output, DType::F16, {1, s.rows});

    LxPlan lx;
    int32_t in[2] = {lx.take(tile_bytes), lx.take(tile_bytes)};
    int32_t out[2] = {lx.take(out_tile), lx.take(out_tile)};
    int32_t sums = lx.take(int64_t(s.tile_rows) * 2);
    lx.fit(k, "a tile of tile_rows (", s.tile_rows, ") x cols (", s.cols, ")");

    Reg x_base = core_offset(b, int64_t(rows_core) * row_sticks * kStick);
    Reg y_base = core_offset(b, int64_t(rows_core) * kStick);
    TileStream ld = stream(x, contiguous(b, tile_bytes / kStick), tile_bytes, in[0], in[1], x_base);
    // Each row's result stick is written on its own, the scattered write IBM names as the cause of
    // the slowdown at many rows.
    TileStream st = stream(y, contiguous(b, 1), out_tile, out[0], out[1], y_base);
    st.pieces = s.tile_rows, st.piece_bytes = kStick, st.piece_lx_bytes = kStick;
    stream_tiles(b, rows_core / s.tile_rows, {ld}, {st}, [&](int p, Reg) {
        // Summed in fp32 and rounded to fp16 once; then each sum spread over its row's stick.
        b.vred(Opcode::VREDSUM, DType::F16, kTagCompute, Lx(sums), Lx(in[p]), row_sticks, s.tile_rows, s.cols);
        b.vbcast(DType::F16, kTagCompute, Lx(out[p]), Lx(sums), 1, s.tile_rows);
    });
    b.release(x_base), b.release(y_base);
    return b.finish();
}

DeviceProgram build_col_reduction(const ColReductionShape &s) {
    const char *k = "col_reduction";
    need_positive(k, "cores", s.cores);
    need_positive(k, "tile_rows", s.tile_rows);
    need_multiple(k, "cols", s.cols, "cores * 64", int64_t(s.cores) * kLanes);
    need_multiple(k, "rows", s.rows, "tile_rows * 2", int64_t(s.tile_rows) * 2);

    const int strip = s.cols / (s.cores * kLanes);  // sticks per row of this core's strip
    const int64_t strip_bytes = int64_t(strip) * kStick, tile_bytes = strip_bytes * s.tile_rows;
    ProgramBuilder b("reduce_cols", s.cores);
    int x = b.buffer("x", BufferKind::Input, DType::F16, {s.cols, s.rows});
    int y = b.buffer("y", BufferKind::Output, DType::F16, {s.cols});

    LxPlan lx;
    int32_t in[2] = {lx.take(tile_bytes), lx.take(tile_bytes)};
    int32_t wide = lx.take(2 * tile_bytes);  // the tile in fp32
    int32_t acc = lx.take(2 * strip_bytes), out = lx.take(strip_bytes);
    lx.fit(k, "a tile of tile_rows (", s.tile_rows, ") x cols / cores (", s.cols / s.cores, ")");

    DmaDesc dt;  // tile_rows runs of one strip, a row apart in device memory
    dt.sticks = strip, dt.count[0] = s.tile_rows, dt.dram_stride[0] = int64_t(s.cols) * 2;
    dt.lx_stride[0] = int32_t(strip_bytes);
    const int d_tile = b.dma_desc(dt);
    Reg base = core_offset(b, strip_bytes);

    const int32_t wide_row = int32_t(2 * strip_bytes), wide_row_sticks = 2 * strip;
    b.vfill(DType::F32, kTagCompute, Lx(acc), 0.0f, wide_row_sticks);
    b.wait_tag(kTagCompute);
    TileStream ld = stream(x, d_tile, int64_t(s.tile_rows) * s.cols * 2, in[0], in[1], base);
    stream_tiles(b, s.rows / s.tile_rows, {ld}, {}, [&](int p, Reg) {
        // Widen to fp32, fold the tile's rows in halves (log2(tile_rows) adds of whole blocks),
        // then add the surviving row into the accumulator.
        b.vcvt(DType::F16, DType::F32, kTagCompute, Lx(wide), Lx(in[p]), int32_t(tile_bytes / kStick));
        for (int n = s.tile_rows; n > 1;) {
            const int h = n / 2;
            b.vbin(Opcode::VADD, DType::F32, kTagCompute, Lx(wide), Lx(wide), Lx(wide + (n - h) * wide_row),
                   h * wide_row_sticks);
            n -= h;
        }
        b.vbin(Opcode::VADD, DType::F32, kTagCompute, Lx(acc), Lx(acc), Lx(wide), wide_row_sticks);
    });
    b.vcvt(DType::F32, DType::F16, kTagCompute, Lx(out), Lx(acc), wide_row_sticks);
    b.wait_tag(kTagCompute);
    b.dma_st(kTagOnce, y, base, 0, Lx(out), contiguous(b, strip));
    b.wait_tag(kTagOnce);
    b.release(base);
    return b.finish();
}

DeviceProgram build_restickify(const RestickifyShape &s) {
    const char *k = "restickify";
    need_positive(k, "cores", s.cores);
    need_multiple(k, "cols", s.cols, "cores * a stick", int64_t(s.cores) * kLanes);
    need_multiple(k, "tile_rows", s.tile_rows, "a stick", kLanes);
    need_multiple(k, "rows", s.rows, "tile_rows * 2", int64_t(s.tile_rows) * 2);
    const int cols_core = s.cols / s.cores, tiles = s.rows / s.tile_rows;

    // A tile is tile_rows input rows of this core's cols_core columns; transposed, it is cols_core
    // output rows of tile_rows elements.
    const int64_t block = int64_t(s.tile_rows) * cols_core * 2;
    ProgramBuilder b("restickify", s.cores);
    int x = b.buffer("x", BufferKind::Input, DType::F16, {s.cols, s.rows});
    int y = b.buffer("y", BufferKind::Output, DType::F16, {s.rows, s.cols});

    LxPlan lx;
    int32_t in[2] = {lx.take(block), lx.take(block)};
    int32_t out[2] = {lx.take(block), lx.take(block)};
    lx.fit(k, "four tiles of tile_rows (", s.tile_rows, ") x cols / cores (", cols_core, ")");

    DmaDesc dl;  // tile_rows runs of cols_core elements, an input row apart
    dl.sticks = cols_core / kLanes, dl.count[0] = s.tile_rows;
    dl.dram_stride[0] = int64_t(s.cols) * 2, dl.lx_stride[0] = cols_core * 2;
    DmaDesc ds;  // cols_core runs of tile_rows elements, an output row apart
    ds.sticks = s.tile_rows / kLanes, ds.count[0] = cols_core;
    ds.dram_stride[0] = int64_t(s.rows) * 2, ds.lx_stride[0] = s.tile_rows * 2;
    const int d_ld = b.dma_desc(dl), d_st = b.dma_desc(ds);

    Reg x_base = core_offset(b, int64_t(cols_core) * 2);
    Reg y_base = core_offset(b, int64_t(cols_core) * s.rows * 2);
    stream_tiles(b, tiles, {stream(x, d_ld, int64_t(s.tile_rows) * s.cols * 2, in[0], in[1], x_base)},
                 {stream(y, d_st, int64_t(s.tile_rows) * 2, out[0], out[1], y_base)}, [&](int p, Reg) {
                     b.vtranspose(DType::F16, kTagCompute, Lx(out[p]), Lx(in[p]), s.tile_rows, cols_core);
                 });
    b.release(x_base), b.release(y_base);
    return b.finish();
}

DeviceProgram build_plane_transport(const PlaneTransportShape &s) {
    const char *k = "plane_transport";
    need_positive(k, "cores", s.cores);
    need_positive(k, "planes", s.planes);
    need_positive(k, "run_sticks", s.run_sticks);
    need_multiple(k, "rows", s.rows, "cores * run_sticks * 2", int64_t(s.cores) * s.run_sticks * 2);

    const int sp = s.planes, m = s.run_sticks, rows_core = s.rows / s.cores;
    const int64_t tile_bytes = int64_t(m) * sp * kStick;
    ProgramBuilder b("plane_transport", s.cores);
    int x = b.buffer("x", BufferKind::Input, DType::F16, {int64_t(sp) * kLanes, s.rows});  // [R][sp][64]
    int y = b.buffer("y", BufferKind::Output, DType::F16, {kLanes, s.rows, sp});           // [sp][R][64]

    LxPlan lx;
    int32_t buf[2] = {lx.take(tile_bytes), lx.take(tile_bytes)};
    lx.fit(k, "a tile of run_sticks (", m, ") x planes (", sp, ") sticks");

    // The tile sits in LX plane-major ([sp][m]) so that each plane's m sticks are one run for the
    // store. The load reads the m rows as one contiguous span of device memory and scatters the
    // sticks into that order (1-stick pieces on the LX side only).
    DmaDesc dl;
    dl.sticks = 1;
    dl.count[0] = sp, dl.dram_stride[0] = kStick, dl.lx_stride[0] = m * kStick;
    dl.count[1] = m, dl.dram_stride[1] = int64_t(sp) * kStick, dl.lx_stride[1] = kStick;
    DmaDesc ds;  // sp runs of m sticks, one per plane, a plane (R sticks) apart
    ds.sticks = m, ds.count[0] = sp, ds.dram_stride[0] = int64_t(s.rows) * kStick, ds.lx_stride[0] = m * kStick;
    const int d_ld = b.dma_desc(dl), d_st = b.dma_desc(ds);

    Reg x_base = core_offset(b, int64_t(rows_core) * sp * kStick);
    Reg y_base = core_offset(b, int64_t(rows_core) * kStick);
    stream_tiles(b, rows_core / m, {stream(x, d_ld, tile_bytes, buf[0], buf[1], x_base)},
                 {stream(y, d_st, int64_t(m) * kStick, buf[0], buf[1], y_base)}, {});
    b.release(x_base), b.release(y_base);
    return b.finish();
}

DeviceProgram build_lx_matmul(const LxMatmulShape &s) {
    const char *k = "lx_matmul";
    need_positive(k, "cores", s.cores);
    need_positive(k, "m", s.m);
    need_positive(k, "reps", s.reps);
    need_multiple(k, "n", s.n, "a stick", kLanes);
    need_multiple(k, "k", s.k, "a stick", kLanes);

    const int64_t a_bytes = int64_t(s.m) * s.k * 2, b_bytes = int64_t(s.k) * s.n * 2;
    const int64_t c_bytes = int64_t(s.m) * s.n * 4, out_bytes = int64_t(s.m) * s.n * 2;
    ProgramBuilder b("lx_matmul", s.cores);
    // Each core has its own copy of A and B: the sweep isolates the PE, so no core reads what
    // another reads (a replicated operand read would bind instead).
    int a = b.buffer("A", BufferKind::Input, DType::F16, {s.k, int64_t(s.m) * s.cores});
    int w = b.buffer("B", BufferKind::Input, DType::F16, {s.n, int64_t(s.k) * s.cores});
    int c = b.buffer("C", BufferKind::Output, DType::F16, {s.n, int64_t(s.m) * s.cores});

    LxPlan lx;
    int32_t lx_a = lx.take(a_bytes), lx_b = lx.take(b_bytes), lx_c = lx.take(c_bytes), lx_out = lx.take(out_bytes);
    lx.fit(k, "A, B and C of m (", s.m, "), n (", s.n, "), k (", s.k, ")");

    MatmulDesc mm;
    mm.m = s.m, mm.n = s.n, mm.k = s.k, mm.lda = s.k * 2, mm.ldb = s.n * 2, mm.ldc = s.n * 4;
    const int d_mm = b.mm_desc(mm);
    const int kTagLoad = 0, kTagPe = 1, kTagStore = 3;

    // Every core reads its own operands and writes its own m rows of C.
    Reg a_base = core_offset(b, a_bytes), b_base = core_offset(b, b_bytes);
    b.dma_ld(kTagLoad, a, a_base, 0, Lx(lx_a), contiguous(b, a_bytes / kStick));
    b.dma_ld(kTagLoad, w, b_base, 0, Lx(lx_b), contiguous(b, b_bytes / kStick));
    b.release(a_base), b.release(b_base);
    b.wait_tag(kTagLoad);
    b.matmul(kTagPe, Lx(lx_c), Lx(lx_a), Lx(lx_b), d_mm, false);
    if (s.reps > 1) {
        Reg r = b.alloc();
        b.loop(r, s.reps - 1);
        b.matmul(kTagPe, Lx(lx_c), Lx(lx_a), Lx(lx_b), d_mm, true);
        b.end_loop();
        b.release(r);
    }
    b.wait_tag(kTagPe);
    b.vcvt(DType::F32, DType::F16, kTagCompute, Lx(lx_out), Lx(lx_c), int32_t(c_bytes / kStick));
    b.wait_tag(kTagCompute);
    Reg base = core_offset(b, out_bytes);
    b.dma_st(kTagStore, c, base, 0, Lx(lx_out), contiguous(b, out_bytes / kStick));
    b.wait_tag(kTagStore);
    b.release(base);
    return b.finish();
}

DeviceProgram build_replicated_load(const ReplicatedLoadShape &s) {
    const char *k = "replicated_load";
    need_positive(k, "cores", s.cores);
    need_multiple(k, "bytes", s.bytes, "a stick", kStick);
    ProgramBuilder b("replicated_load", s.cores);
    int x = b.buffer("x", BufferKind::Input, DType::F16, {s.bytes / 2});
    LxPlan lx;
    int32_t at = lx.take(s.bytes);
    lx.fit(k, "bytes (", s.bytes, ")");
    b.dma_ld(kTagOnce, x, kZero, 0, Lx(at), contiguous(b, s.bytes / kStick));
    b.wait_tag(kTagOnce);
    return b.finish();
}

DeviceProgram build_fused_softmax(const FusedSoftmaxShape &s) {
    const char *k = "fused_softmax";
    need_positive(k, "cores", s.cores);
    need_multiple(k, "tiles", s.tiles, "2", 2);
    need_positive(k, "cols", s.cols);
    need_multiple(k, "rows", s.rows, "cores * tiles", int64_t(s.cores) * s.tiles);

    const int h = s.rows / (s.cores * s.tiles), row_sticks = (s.cols + kLanes - 1) / kLanes;
    const int64_t tile_bytes = int64_t(h) * row_sticks * kStick;
    ProgramBuilder b("softmax_tiled", s.cores);
    const std::vector<int64_t> shape{s.cols, s.rows};
    int x = b.buffer("x", BufferKind::Input, DType::F16, shape);
    int y = b.buffer("y", BufferKind::Output, DType::F16, shape);

    // The per-row max and sum are only live within a tile, and the vector unit runs the tiles'
    // ops in order, so one copy of each serves every tile.
    LxPlan lx;
    SoftmaxOps ops{b, row_sticks, s.cols, h, 0};
    ops.sum_half = lx.take(SoftmaxOps::sum_half_bytes(h));
    int32_t mx = lx.take(int64_t(h) * 2), sum = lx.take(SoftmaxOps::sum_bytes(h));
    int32_t in[2] = {lx.take(tile_bytes), lx.take(tile_bytes)};
    int32_t out[2] = {lx.take(tile_bytes), lx.take(tile_bytes)};
    lx.fit(k, "a tile of rows / (cores * tiles) (", h, ") x cols (", s.cols, ")");

    const int d_tile = contiguous(b, tile_bytes / kStick);
    Reg base = core_offset(b, tile_bytes * s.tiles);
    stream_tiles(b, s.tiles, {stream(x, d_tile, tile_bytes, in[0], in[1], base)},
                 {stream(y, d_tile, tile_bytes, out[0], out[1], base)}, [&](int p, Reg) {
                     ops.max(Lx(in[p]), Lx(mx));
                     ops.sub(Lx(in[p]), Lx(mx), Lx(in[p]));
                     ops.exp(Lx(in[p]), Lx(in[p]));
                     ops.sum(Lx(in[p]), Lx(sum));
                     ops.div(Lx(in[p]), Lx(sum), Lx(out[p]));
                 });
    b.release(base);
    return b.finish();
}

}  // namespace spyre
