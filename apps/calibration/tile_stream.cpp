#include "tile_stream.h"

#include "device/error.h"

namespace spyre {

Lx tile_addr(ProgramBuilder &b, Reg tile, int32_t base, int32_t stride, Reg scratch) {
    if (stride == 0) return Lx(base);
    b.muli(scratch, tile, stride);
    return Lx(scratch, base);
}

namespace {

// Scratch registers of a 2-D walk, allocated only when a stream uses one.
struct GridRegs {
    Reg q, r, t;
};

// Device offset of tile `tile` of a 2-D walk from its base, into g.q.
Reg grid_offset(ProgramBuilder &b, const TileStream &ts, Reg base, Reg tile, const GridRegs &g) {
    b.li(g.t, ts.grid_cols);
    b.op3(Opcode::DIV, g.q, tile, g.t);
    b.op3(Opcode::REM, g.r, tile, g.t);
    b.li(g.t, ts.grid_row_bytes);
    b.mul(g.q, g.q, g.t);
    b.li(g.t, ts.tile_bytes);
    b.mul(g.r, g.r, g.t);
    b.add(g.q, g.q, g.r);
    b.add(g.q, g.q, base);
    return g.q;
}

// Issues the DMA of one tile for each stream; `tile` is the tile index register. A linear stream
// advances its device offset register; a 2-D one keeps it at the base and computes each tile's.
void issue(ProgramBuilder &b, bool store, int tag, int parity, const std::vector<TileStream> &streams,
           const std::vector<Reg> &dram_off, Reg tile, Reg scratch, const GridRegs &g) {
    for (size_t s = 0; s < streams.size(); s++) {
        const TileStream &ts = streams[s];
        Lx lx = tile_addr(b, tile, ts.lx[parity], ts.lx_tile_stride, scratch);
        Reg off = ts.grid_cols > 0 ? grid_offset(b, ts, dram_off[s], tile, g) : dram_off[s];
        if (ts.pieces > 1 && ts.grid_cols > 0) throw_error("stream_tiles: pieces need a linear walk");
        for (int j = 0; j < ts.pieces; j++) {
            Lx at(lx.reg, lx.off + j * ts.piece_lx_bytes);
            if (store) b.dma_st(tag, ts.buffer, off, j * ts.piece_bytes, at, ts.desc);
            else b.dma_ld(tag, ts.buffer, off, j * ts.piece_bytes, at, ts.desc);
        }
        if (ts.grid_cols <= 0) b.addi(dram_off[s], dram_off[s], int32_t(ts.tile_bytes));
    }
}

}  // namespace

void stream_tiles(ProgramBuilder &b, int tiles, const std::vector<TileStream> &loads,
                  const std::vector<TileStream> &stores, const std::function<void(int p, Reg tile)> &compute) {
    if (tiles < 2 || tiles % 2) throw_error("stream_tiles: tile count ", tiles, " must be even and at least 2");
    std::vector<Reg> ld_off, st_off;
    for (const TileStream &s : loads) ld_off.push_back(b.alloc()), b.mov(ld_off.back(), s.dram_base);
    for (const TileStream &s : stores) st_off.push_back(b.alloc()), b.mov(st_off.back(), s.dram_base);
    Reg tile = b.alloc(), next = b.alloc(), pair = b.alloc(), more = b.alloc(), limit = b.alloc(), scratch = b.alloc();
    GridRegs g;
    bool grid = false;
    for (const auto *v : {&loads, &stores})
        for (const TileStream &s : *v) grid |= s.grid_cols > 0;
    if (grid) g = GridRegs{b.alloc(), b.alloc(), b.alloc()};
    const bool dma_only = !compute;
    b.li(tile, 0);
    b.li(limit, tiles);
    issue(b, false, 0, 0, loads, ld_off, tile, scratch, g);
    // Unrolled by two so that each parity has its own static tags and LX buffers.
    b.loop(pair, tiles / 2);
    for (int p = 0; p < 2; p++) {
        b.addi(next, tile, 1);
        if (p == 1) {
            b.op3(Opcode::CMPLT, more, next, limit);
            b.if_(more);
        }
        if (dma_only && !loads.empty()) b.wait_tag(3 + (1 - p));  // the store still reading that tile
        issue(b, false, 1 - p, 1 - p, loads, ld_off, next, scratch, g);
        if (p == 1) b.end_if();
        b.wait((1u << p) | (1u << (3 + p)));  // this tile's loads; the stores that last used parity p
        if (!dma_only) {
            compute(p, tile);
            b.wait_tag(kTagCompute);
        }
        issue(b, true, 3 + p, p, stores, st_off, tile, scratch, g);
        b.addi(tile, tile, 1);
    }
    b.end_loop();
    b.wait((1u << 3) | (1u << 4));
    for (Reg r : ld_off) b.release(r);
    for (Reg r : st_off) b.release(r);
    for (Reg r : {tile, next, pair, more, limit, scratch}) b.release(r);
    if (grid) b.release(g.q), b.release(g.r), b.release(g.t);
}

void lx_tiles(ProgramBuilder &b, int tiles, const std::function<void(Reg tile)> &compute) {
    Reg tile = b.alloc();
    b.loop(tile, tiles);
    compute(tile);
    b.end_loop();
    b.wait_tag(kTagCompute);
    b.release(tile);
}

}  // namespace spyre
