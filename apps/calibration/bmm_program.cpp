#include "bmm_program.h"

#include "device/error.h"
#include "device/program_builder.h"
#include "tile_stream.h"

namespace spyre {

namespace {
constexpr int kStick = 128;
constexpr int kLanes = 64;  // fp16 per stick

void check_divides(const char *what, int64_t tile, int64_t extent) {
    if (tile <= 0 || extent % tile) throw_error("bmm: ", what, " (", tile, ") must divide ", extent);
}
}  // namespace

DeviceProgram build_bmm(const BmmShape &s) {
    check_divides("batch", s.batch, s.cores);
    const int nsplit = s.cores / s.batch;
    check_divides("cores / batch", nsplit, s.n);
    const int n_core = s.n / nsplit;
    check_divides("tile_m", s.tile_m, s.m);
    check_divides("tile_n", s.tile_n, n_core);
    check_divides("tile_k", s.tile_k, s.k);
    if (s.tile_n % kLanes || s.tile_k % kLanes || n_core % kLanes)
        throw_error("bmm: tile_n (", s.tile_n, "), tile_k (", s.tile_k, ") and N per core (", n_core,
                    ") must be whole sticks of ", kLanes);
    const int k_tiles = s.k / s.tile_k;
    if (k_tiles % 2) throw_error("bmm: K tiles (", k_tiles, ") must be even for double buffering");

    ProgramBuilder b("bmm", s.cores);
    int a = b.buffer("A", BufferKind::Input, DType::F16, {s.k, s.m, s.batch});
    int w = b.buffer("W", BufferKind::Input, DType::F16, {s.n, s.k});
    int c = b.buffer("C", BufferKind::Output, DType::F16, {s.n, s.m, s.batch});

    const int64_t a_row = int64_t(s.k) * 2, w_row = int64_t(s.n) * 2, c_row = int64_t(s.n) * 2;
    const int a_tile_sticks = s.tile_k / kLanes, w_tile_sticks = s.tile_n / kLanes;
    DmaDesc da;  // tile_m rows x tile_k of A
    da.sticks = a_tile_sticks, da.count[0] = s.tile_m, da.dram_stride[0] = a_row, da.lx_stride[0] = a_tile_sticks * kStick;
    DmaDesc dw;  // tile_k rows x tile_n of W
    dw.sticks = w_tile_sticks, dw.count[0] = s.tile_k, dw.dram_stride[0] = w_row, dw.lx_stride[0] = w_tile_sticks * kStick;
    DmaDesc dc;  // tile_m rows x tile_n of C
    dc.sticks = w_tile_sticks, dc.count[0] = s.tile_m, dc.dram_stride[0] = c_row, dc.lx_stride[0] = w_tile_sticks * kStick;
    int d_a = b.dma_desc(da), d_w = b.dma_desc(dw), d_c = b.dma_desc(dc);
    MatmulDesc mm;
    mm.m = s.tile_m, mm.n = s.tile_n, mm.k = s.tile_k;
    mm.lda = a_tile_sticks * kStick, mm.ldb = w_tile_sticks * kStick, mm.ldc = s.tile_n * 4;
    int d_mm = b.mm_desc(mm);

    // LX plan: double-buffered A and W tiles, one fp32 accumulator, one fp16 output tile.
    const int32_t a_bytes = s.tile_m * a_tile_sticks * kStick, w_bytes = s.tile_k * w_tile_sticks * kStick;
    const int32_t acc_bytes = s.tile_m * s.tile_n * 4;
    int32_t at = 0;
    int32_t lx_a[2] = {at, at + a_bytes};
    at += 2 * a_bytes;
    int32_t lx_w[2] = {at, at + w_bytes};
    at += 2 * w_bytes;
    int32_t lx_acc = at;
    at += acc_bytes;
    int32_t lx_out = at;

    // Which batch and which slice of N this core owns.
    Reg core = b.alloc(), t = b.alloc(), bi = b.alloc(), ni = b.alloc();
    b.core_id(core);
    b.li(t, nsplit);
    b.op3(Opcode::DIV, bi, core, t);
    b.op3(Opcode::REM, ni, core, t);
    Reg a_base = b.alloc(), w_base = b.alloc(), c_base = b.alloc();
    b.li(t, int64_t(s.m) * a_row);
    b.mul(a_base, bi, t);  // A[b]
    b.li(t, int64_t(n_core) * 2);
    b.mul(w_base, ni, t);  // W[:, n0]
    b.li(t, int64_t(s.m) * c_row);
    b.mul(c_base, bi, t);
    b.add(c_base, c_base, w_base);  // C[b][:, n0]
    b.release(core), b.release(bi), b.release(ni);

    const int kTagStore = 5;
    Reg mt = b.alloc(), nt = b.alloc(), wa = b.alloc(), ww = b.alloc(), wc = b.alloc();
    b.loop(mt, s.m / s.tile_m);
    b.loop(nt, n_core / s.tile_n);
    // Device offsets of this (mt, nt) tile.
    b.li(t, int64_t(s.tile_m) * a_row);
    b.mul(wa, mt, t);
    b.add(wa, wa, a_base);
    b.li(t, int64_t(s.tile_n) * 2);
    b.mul(ww, nt, t);
    b.add(ww, ww, w_base);
    b.li(t, int64_t(s.tile_m) * c_row);
    b.mul(wc, mt, t);
    b.add(wc, wc, c_base);
    b.li(t, int64_t(s.tile_n) * 2);
    b.mul(t, nt, t);
    b.add(wc, wc, t);

    b.vfill(DType::F32, kTagCompute, Lx(lx_acc), 0.0f, acc_bytes / kStick);
    b.wait_tag(kTagCompute);  // the PE array accumulates into what the vector unit cleared
    TileStream sa, sw;
    sa.buffer = a, sa.desc = d_a, sa.tile_bytes = int64_t(s.tile_k) * 2, sa.lx[0] = lx_a[0], sa.lx[1] = lx_a[1];
    sa.dram_base = wa;
    sw.buffer = w, sw.desc = d_w, sw.tile_bytes = int64_t(s.tile_k) * w_row, sw.lx[0] = lx_w[0], sw.lx[1] = lx_w[1];
    sw.dram_base = ww;
    stream_tiles(b, k_tiles, {sa, sw}, {}, [&](int p, Reg) {
        b.matmul(kTagCompute, Lx(lx_acc), Lx(lx_a[p]), Lx(lx_w[p]), d_mm, true);
    });
    b.wait_tag(kTagStore);  // the previous tile's store has left the output buffer
    b.vcvt(DType::F32, DType::F16, kTagCompute, Lx(lx_out), Lx(lx_acc), acc_bytes / kStick);
    b.wait_tag(kTagCompute);
    b.dma_st(kTagStore, c, wc, 0, Lx(lx_out), d_c);
    b.end_loop();
    b.end_loop();
    b.wait_tag(kTagStore);
    return b.finish();
}

}  // namespace spyre
