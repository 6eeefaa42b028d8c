// A quantized linear layer: fp16 activations a {K, M}, int8 weights w {N, K} (sticked on N, one
// byte per element; or fp8 E4M3 codes, QuantFormat) with fp16 per-output-channel scales {N}:
//   out(n, m) = fp16(scale(n) * sum_k fp32(a(k, m)) * fp32(fp16(w(n, k)))).
// The weights cross device memory at one byte per element, half the traffic of an fp16 linear.
// The PE array multiplies fp16 (isa.h: MATMUL), so each K panel of w is dequantized (int8 -> fp16,
// exact: VCVT on the vector unit) into LX before the array or the vector unit uses it; the scale,
// the same for a whole output column, is applied once per output in the epilogue. Schedules (the
// split and tiles of matmul_stage.h, N in whole int8 sticks of 128):
//   "pe":      a's and w's panels staged per K step, w's dequantized, MATMUL on the PE array;
//   "pe_ring": the same, with the panels the cores of a run share (a's or w's) sent over the ring;
//   "vector":  the same dequantized panels, the update on the vector unit;
//   "cpu":     the CPU reference.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "device/machine_desc.h"

namespace spyre {

// How the weights are stored: int8 values, or fp8 E4M3 codes (uint8, dsl/fp8.h) whose dequantization
// is one VCVTF8 instead of a VCVT.
enum class QuantFormat { Int8, Fp8E4M3 };

struct QLinearKernel {
    Halide::ImageParam a, w, scale;
    Halide::Func wd, acc, out;  // wd: the dequantized (unscaled) weights
    Halide::Var n, m;
    Halide::RDom k;
    int rows = 1, inner = 1, cols = 1;  // M, K, N
};

QLinearKernel make_qlinear(int rows, int inner, int cols, QuantFormat format = QuantFormat::Int8);
const std::vector<std::string> &qlinear_schedules();
// Throws spyre::Error naming qlinear on an unknown schedule, and as matmul_stage.h does.
void schedule_qlinear(QLinearKernel &k, const std::string &name, int cores = 32, const MachineDesc &machine = {});

}  // namespace spyre
