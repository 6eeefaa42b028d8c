#include "softmax_stages.h"

#include "device/error.h"
#include "device/program_builder.h"
#include "softmax_ops.h"
#include "tile_stream.h"

namespace spyre {

const std::array<SoftmaxStageInfo, kNumSoftmaxStages> &softmax_stage_info() {
    static const std::array<SoftmaxStageInfo, kNumSoftmaxStages> info = {{
        {"stage1", "every intermediate in device memory", 32.51},
        {"stage2", "max and sum kept in LX", 27.66},
        {"stage3", "sub and exp in place in LX", 23.93},
        {"stage4", "input copied into LX once", 23.67},
    }};
    return info;
}

namespace {

constexpr int kTileRows = 64;  // one stick of fp16 row maxima per tile
constexpr int kStick = 128;    // the programs are written for 128-byte sticks

// Stick-aligned bump allocator over LX.
struct LxPlan {
    int32_t next = 0;
    int32_t take(int64_t bytes) {
        int32_t at = next;
        next += int32_t((bytes + kStick - 1) / kStick * kStick);
        return at;
    }
};

}  // namespace

DeviceProgram build_softmax_stage(int stage, const SoftmaxShape &shape) {
    if (stage < 1 || stage > kNumSoftmaxStages) throw_error("softmax stage ", stage, " does not exist (1..4)");
    if (shape.rows <= 0 || shape.rows % (2 * kTileRows))
        throw_error("softmax stages: rows (", shape.rows, ") must be a positive multiple of ", 2 * kTileRows);
    if (shape.cols <= 0) throw_error("softmax stages: cols (", shape.cols, ") must be positive");

    const int rows = shape.rows, cols = shape.cols;
    const int row_sticks = (cols + 63) / 64;
    const int tiles = rows / kTileRows;
    const int64_t tile_bytes = int64_t(row_sticks) * kStick * kTileRows;
    const int32_t mx_tile = kTileRows * 2, s_tile = kTileRows * 4;

    ProgramBuilder b("softmax_stage" + std::to_string(stage), 1);
    const std::vector<int64_t> shape2{cols, rows};
    int x = b.buffer("x", BufferKind::Input, DType::F16, shape2);
    int mx_d = -1, t_d = -1, e_d = -1, s_d = -1;
    if (stage <= 2) {
        t_d = b.buffer("t", BufferKind::Temp, DType::F16, shape2);
        e_d = b.buffer("e", BufferKind::Temp, DType::F16, shape2);
    }
    if (stage == 1) {
        mx_d = b.buffer("mx", BufferKind::Temp, DType::F16, {rows});
        s_d = b.buffer("s", BufferKind::Temp, DType::F32, {rows});
    }
    int y = b.buffer("y", BufferKind::Output, DType::F16, shape2);

    DmaDesc tile_desc;
    tile_desc.sticks = int32_t(tile_bytes / kStick);
    int d_tile = b.dma_desc(tile_desc);
    DmaDesc mx_desc;
    mx_desc.sticks = mx_tile / kStick;
    int d_mx = b.dma_desc(mx_desc);
    DmaDesc s_desc;
    s_desc.sticks = s_tile / kStick;
    int d_s = b.dma_desc(s_desc);

    LxPlan lx;
    SoftmaxOps ops{b, row_sticks, cols, kTileRows, 0};
    ops.sum_half = lx.take(mx_tile);
    // Per-row results: double-buffered tiles when they travel through device memory (stage 1),
    // whole-tensor arrays when they stay in LX.
    int32_t mx_buf[2], s_buf[2], mx_all = 0, s_all = 0;
    if (stage == 1) {
        mx_buf[0] = lx.take(mx_tile), mx_buf[1] = lx.take(mx_tile);
        s_buf[0] = lx.take(s_tile), s_buf[1] = lx.take(s_tile);
    } else {
        mx_all = lx.take(int64_t(rows) * 2);
        s_all = lx.take(int64_t(rows) * 4);
    }
    Reg scr = b.alloc();
    auto per_tile = [&](Reg tile, int32_t base, int32_t stride) { return tile_addr(b, tile, base, stride, scr); };
    auto dbl = [&](int buffer, int desc, int64_t dram_tile, int32_t a, int32_t c) {
        TileStream s;
        s.buffer = buffer, s.desc = desc, s.tile_bytes = dram_tile, s.lx[0] = a, s.lx[1] = c;
        return s;
    };

    if (stage <= 2) {
        int32_t in[2] = {lx.take(tile_bytes), lx.take(tile_bytes)};
        int32_t out[2] = {lx.take(tile_bytes), lx.take(tile_bytes)};
        TileStream x_in = dbl(x, d_tile, tile_bytes, in[0], in[1]);
        bool dram_red = stage == 1;
        // max
        std::vector<TileStream> st;
        if (dram_red) st.push_back(dbl(mx_d, d_mx, mx_tile, mx_buf[0], mx_buf[1]));
        stream_tiles(b, tiles, {x_in}, st, [&](int p, Reg tile) {
            ops.max(Lx(in[p]), dram_red ? Lx(mx_buf[p]) : per_tile(tile, mx_all, mx_tile));
        });
        // sub
        std::vector<TileStream> ld{x_in};
        if (dram_red) ld.push_back(dbl(mx_d, d_mx, mx_tile, mx_buf[0], mx_buf[1]));
        stream_tiles(b, tiles, ld, {dbl(t_d, d_tile, tile_bytes, out[0], out[1])}, [&](int p, Reg tile) {
            ops.sub(Lx(in[p]), dram_red ? Lx(mx_buf[p]) : per_tile(tile, mx_all, mx_tile), Lx(out[p]));
        });
        // exp
        stream_tiles(b, tiles, {dbl(t_d, d_tile, tile_bytes, in[0], in[1])},
                     {dbl(e_d, d_tile, tile_bytes, out[0], out[1])},
                     [&](int p, Reg) { ops.exp(Lx(in[p]), Lx(out[p])); });
        // sum
        st.clear();
        if (dram_red) st.push_back(dbl(s_d, d_s, s_tile, s_buf[0], s_buf[1]));
        TileStream e_in = dbl(e_d, d_tile, tile_bytes, in[0], in[1]);
        stream_tiles(b, tiles, {e_in}, st, [&](int p, Reg tile) {
            ops.sum(Lx(in[p]), dram_red ? Lx(s_buf[p]) : per_tile(tile, s_all, s_tile));
        });
        // div
        ld = {e_in};
        if (dram_red) ld.push_back(dbl(s_d, d_s, s_tile, s_buf[0], s_buf[1]));
        stream_tiles(b, tiles, ld, {dbl(y, d_tile, tile_bytes, out[0], out[1])}, [&](int p, Reg tile) {
            ops.div(Lx(in[p]), dram_red ? Lx(s_buf[p]) : per_tile(tile, s_all, s_tile), Lx(out[p]));
        });
    } else if (stage == 3) {
        // The tensor lives in LX: sub and exp run on each tile as it streams in, in place.
        int32_t all = lx.take(tile_bytes * tiles);
        int32_t stride = int32_t(tile_bytes);
        int32_t in[2] = {lx.take(tile_bytes), lx.take(tile_bytes)};
        int32_t out[2] = {lx.take(tile_bytes), lx.take(tile_bytes)};
        TileStream x_in = dbl(x, d_tile, tile_bytes, in[0], in[1]);
        stream_tiles(b, tiles, {x_in}, {}, [&](int p, Reg tile) {
            ops.max(Lx(in[p]), per_tile(tile, mx_all, mx_tile));
        });
        stream_tiles(b, tiles, {x_in}, {}, [&](int p, Reg tile) {
            Lx dst = per_tile(tile, all, stride);
            Reg keep = b.alloc();
            b.mov(keep, dst.reg);
            ops.sub(Lx(in[p]), per_tile(tile, mx_all, mx_tile), Lx(keep, all));
            ops.exp(Lx(keep, all), Lx(keep, all));
            b.release(keep);
        });
        lx_tiles(b, tiles, [&](Reg tile) {
            Lx t = per_tile(tile, all, stride);
            Reg keep = b.alloc();
            b.mov(keep, t.reg);
            ops.sum(Lx(keep, all), per_tile(tile, s_all, s_tile));
            b.release(keep);
        });
        stream_tiles(b, tiles, {}, {dbl(y, d_tile, tile_bytes, out[0], out[1])}, [&](int p, Reg tile) {
            Lx t = per_tile(tile, all, stride);
            Reg keep = b.alloc();
            b.mov(keep, t.reg);
            ops.div(Lx(keep, all), per_tile(tile, s_all, s_tile), Lx(out[p]));
            b.release(keep);
        });
    } else {
        // Each tile is copied into LX once and every op works on it there, in place.
        int32_t in[2] = {lx.take(tile_bytes), lx.take(tile_bytes)};
        int32_t out[2] = {lx.take(tile_bytes), lx.take(tile_bytes)};
        stream_tiles(b, tiles, {dbl(x, d_tile, tile_bytes, in[0], in[1])}, {dbl(y, d_tile, tile_bytes, out[0], out[1])},
                     [&](int p, Reg tile) {
                         ops.max(Lx(in[p]), per_tile(tile, mx_all, mx_tile));
                         ops.sub(Lx(in[p]), per_tile(tile, mx_all, mx_tile), Lx(in[p]));
                         ops.exp(Lx(in[p]), Lx(in[p]));
                         ops.sum(Lx(in[p]), per_tile(tile, s_all, s_tile));
                         ops.div(Lx(in[p]), per_tile(tile, s_all, s_tile), Lx(out[p]));
                     });
    }
    b.release(scr);
    (void)s_d;
    return b.finish();
}

}  // namespace spyre
