// Saturating int64 arithmetic for sizes, spans and addresses computed from file data. A hostile
// operand must give a huge (rejected) value, never wrap into a small one that passes a range check.
// Also the wrapping arithmetic of the device's 64-bit scalar registers (never undefined behaviour).
#pragma once

#include <cstdint>
#include <limits>

namespace spyre {

inline int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    return r;
}

inline int64_t sat_mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
    return r;
}

// Two's-complement register arithmetic, as the hardware wraps it.
inline int64_t wrap_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
inline int64_t wrap_mul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

}  // namespace spyre
