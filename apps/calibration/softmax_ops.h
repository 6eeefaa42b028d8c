// The five ops of softmax on one LX tile of `rows` rows (max, sub, exp, sum, div), each a few
// vector instructions on tag kTagCompute. Shared by the softmax stage programs and the fused,
// multi-core softmax of the sweep programs, so both emit exactly the same per-tile work.
#pragma once

#include "device/program_builder.h"
#include "tile_stream.h"

namespace spyre {

struct SoftmaxOps {
    ProgramBuilder &b;
    int row_sticks, cols;
    int rows;          // rows per tile
    int32_t sum_half;  // LX: the tile's sums narrowed to fp16 (sum_half_bytes(rows))

    // LX bytes of a tile's fp32 sums (as div reads them) and of their fp16 copy: the conversion
    // works on whole pairs of fp32 sticks, so both round up to 64 rows.
    static int32_t sum_bytes(int rows) { return 256 * ((rows + 63) / 64); }
    static int32_t sum_half_bytes(int rows) { return 128 * ((rows + 63) / 64); }

    int32_t tile_sticks() const { return row_sticks * rows; }
    void max(Lx in, Lx mx) { b.vred(Opcode::VREDMAX, DType::F16, kTagCompute, mx, in, row_sticks, rows, cols); }
    void sub(Lx in, Lx mx, Lx out) {
        b.vbin(Opcode::VSUB, DType::F16, kTagCompute, out, in, mx, row_sticks, rows, kSrc1Scalar);
    }
    void exp(Lx in, Lx out) { b.vun(Opcode::VEXP, DType::F16, kTagCompute, out, in, tile_sticks()); }
    // Sums fp16 values in fp32 (the lane reduction accumulates in fp32), as the compiler does.
    void sum(Lx in, Lx s) {
        b.vred(Opcode::VREDSUM, DType::F16, kTagCompute, s, in, row_sticks, rows, cols, kDstF32);
    }
    void div(Lx in, Lx s, Lx out) {
        b.vcvt(DType::F32, DType::F16, kTagCompute, Lx(sum_half), s, sum_bytes(rows) / 128);
        b.vbin(Opcode::VDIV, DType::F16, kTagCompute, out, in, Lx(sum_half), row_sticks, rows, kSrc1Scalar);
    }
};

}  // namespace spyre
