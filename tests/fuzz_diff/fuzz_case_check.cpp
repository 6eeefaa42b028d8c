#include "fuzz_case_check.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "device/half.h"

namespace spyre::fuzzdiff {

namespace {

// The element as a double, for messages and NaN tests.
double value(const Halide::Runtime::Buffer<> &b, size_t i) {
    const halide_type_t t = b.type();
    const uint8_t *d = static_cast<const uint8_t *>(b.data());
    if (t.code == halide_type_float && t.bits == 16) return half_to_float(reinterpret_cast<const uint16_t *>(d)[i]);
    if (t.code == halide_type_float) return reinterpret_cast<const float *>(d)[i];
    if (t.bits == 32) return reinterpret_cast<const int32_t *>(d)[i];
    if (t.bits == 8) return t.code == halide_type_int ? double(reinterpret_cast<const int8_t *>(d)[i]) : double(d[i]);
    return reinterpret_cast<const int16_t *>(d)[i];
}

// Floats as integers in the order of their values (adjacent floats differ by 1); integers as
// themselves.
int64_t ordered(const Halide::Runtime::Buffer<> &b, size_t i) {
    const halide_type_t t = b.type();
    if (t.code != halide_type_float) return int64_t(value(b, i));
    if (t.bits == 16) {
        int64_t v = static_cast<const uint16_t *>(b.data())[i];
        return (v & 0x8000) ? -(v & 0x7fff) : v;
    }
    uint32_t u;
    std::memcpy(&u, static_cast<const float *>(b.data()) + i, 4);
    int64_t v = u;
    return (v & 0x80000000LL) ? -(v & 0x7fffffffLL) : v;
}

}  // namespace

std::string compare_outputs(const Halide::Runtime::Buffer<> &got, const Halide::Runtime::Buffer<> &want, int ulp) {
    std::ostringstream os;
    if (got.type() != want.type() || got.number_of_elements() != want.number_of_elements()) {
        os << "the device output has another type or size than the CPU's (" << got.number_of_elements() << " against "
           << want.number_of_elements() << " elements)";
        return os.str();
    }
    // Below the smallest normal value every result is as good as zero: Halide's CPU exp (its own
    // polynomial) flushes results there to 0 where the simulator's keeps the subnormal, 119 ULP
    // apart near 1e-43 (spyre-fuzz-diff --seed 83 --case 290: exp(int8 - 1.5) at -98.5).
    const double smallest_normal = want.type().bits == 16 ? 6.103515625e-05 : 1.1754943508222875e-38;
    for (size_t i = 0; i < want.number_of_elements(); i++) {
        double g = value(got, i), w = value(want, i);
        if (std::isnan(g) && std::isnan(w)) continue;
        if (want.type().code == halide_type_float && std::fabs(g) < smallest_normal && std::fabs(w) < smallest_normal)
            continue;
        int64_t d = std::llabs(ordered(got, i) - ordered(want, i));
        if (d > ulp || std::isnan(g) != std::isnan(w)) {
            os << "element " << i << ": device " << g << ", CPU " << w << " (" << d
               << (want.type().code == halide_type_float ? " ULP" : " apart") << ", tolerance " << ulp << ")";
            return os.str();
        }
    }
    return "";
}

}  // namespace spyre::fuzzdiff
