// Runs the generated scaled_add kernel on the simulator and Halide's CPU reference of the same
// generator on the same inputs; exits 0 when they agree exactly.
#include <cstdio>

#include "HalideBuffer.h"
#include "scaled_add.h"
#include "scaled_add_cpu.h"

int main() {
    const int cols = 200, rows = 64;
    const halide_type_t f16(halide_type_float, 16);
    Halide::Runtime::Buffer<> a(f16, cols, rows), b(f16, cols, rows), got(f16, cols, rows), want(f16, cols, rows);
    auto bits = [&](Halide::Runtime::Buffer<> &buf, int x, int y) -> uint16_t & {
        return static_cast<uint16_t *>(buf.data())[y * cols + x];
    };
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            bits(a, x, y) = uint16_t(0x3c00 + ((x * 7 + y) % 256));  // fp16 values in [1, 1.25)
            bits(b, x, y) = uint16_t(0x3800 + ((x + y * 3) % 256));  // and in [0.5, 0.625)
        }
    spyre::SimStats stats;
    if (scaled_add(a, b, got, &stats) != 0) return 1;
    if (scaled_add_cpu(a, b, want) != 0) return 1;
    int bad = 0;
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) bad += bits(got, x, y) != bits(want, x, y);
    std::printf("scaled_add %dx%d on the simulator: %.2f us modelled, %d elements differ from the CPU\n", cols, rows,
                stats.us, bad);
    return bad == 0 ? 0 : 1;
}
