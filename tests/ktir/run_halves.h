// Test helpers for imported KTIR kernels on f16 data: random fp16 values, fp16 addition as the
// device rounds it, and a functional run of a device program with its buffers named.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "device/half.h"
#include "device/layout.h"
#include "device/program.h"
#include "sim/simulator.h"

namespace spyre::ktir_testing {

using Halves = std::vector<uint16_t>;

inline Halves random_halves(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-4, 4);
    Halves h(n);
    for (uint16_t &v : h) v = float_to_half(d(rng));
    return h;
}

inline uint16_t add_f16(uint16_t a, uint16_t b) { return float_to_half(half_to_float(a) + half_to_float(b)); }

// Runs a program, inputs from `in` by name (f16 buffers); returns every buffer by name, its bytes as
// 16-bit words (an f32 buffer's element i is words 2i and 2i + 1).
inline std::map<std::string, Halves> run(const DeviceProgram &p, const std::map<std::string, Halves> &in) {
    MachineDesc m;
    std::vector<std::vector<uint8_t>> images(p.buffers.size());
    for (size_t i = 0; i < p.buffers.size(); i++) {
        const BufferDecl &b = p.buffers[i];
        auto it = in.find(b.name);
        if (it != in.end()) images[i] = stickify(it->second.data(), b.shape, b.type, b.layout, m.stick_bytes);
    }
    SimResult r = simulate(p, m, images);
    std::map<std::string, Halves> out;
    for (size_t i = 0; i < p.buffers.size(); i++) {
        const BufferDecl &b = p.buffers[i];
        int64_t n = 1;
        for (int64_t e : b.shape) n *= e;
        Halves h(static_cast<size_t>(n * dtype_bytes(b.type) + 1) / 2);
        unstickify(r.buffers[i], h.data(), b.shape, b.type, b.layout, m.stick_bytes);
        out[b.name] = h;
    }
    return out;
}

}  // namespace spyre::ktir_testing
