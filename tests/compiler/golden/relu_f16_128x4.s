kernel relu: 1 cores, format version 11
buffers (2):
  0 in input f16 [128, 4] sticks(d0) order[d1,d0]
  1 relu output f16 [128, 4] sticks(d0) order[d1,d0]
dma descriptors (1):
  dma#0 sticks 8 count [1,1,1] dram_stride [0,0,0] lx_stride [0,0,0]
matmul descriptors (0):
code (9):
  0  LI r1, 0
  1  DMA_LD t5, in[r1+0], [r0+1024], dma#0
  2  VFILL.f16 t2, [r0+2048], 1, 1, 0
  3  WAIT {t5}
  4  VMAX.f16.scalar t2, [r0+0], [r0+1024], [r0+2048], 8, 1
  5  WAIT {t2}
  6  LI r1, 0
  7  DMA_ST t6, relu[r1+0], [r0+0], dma#0
  8  WAIT {t6}
