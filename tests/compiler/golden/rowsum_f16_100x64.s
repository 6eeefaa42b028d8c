kernel rowsum: 1 cores, format version 11
buffers (2):
  0 in input f16 [100, 64] sticks(d0) order[d1,d0]
  1 rowsum output f32 [64] sticks(d0) order[d0]
dma descriptors (2):
  dma#0 sticks 2 count [64,1,1] dram_stride [256,0,0] lx_stride [256,0,0]
  dma#1 sticks 2 count [1,1,1] dram_stride [0,0,0] lx_stride [0,0,0]
matmul descriptors (0):
code (10):
  0  LI r1, 0
  1  DMA_LD t5, in[r1+0], [r0+0], dma#0
  2  VFILL.f32 t2, [r0+16640], 1, 1, 0
  3  VBCAST.f32 t2, [r0+16384], [r0+16640], 2, 1
  4  WAIT {t5}
  5  VREDSUM.f16.acc.f32out t2, [r0+16384], [r0+0], 2, 64, 100
  6  WAIT {t2}
  7  LI r1, 0
  8  DMA_ST t6, rowsum[r1+0], [r0+16384], dma#1
  9  WAIT {t6}
