// Numerics of the vector unit and PE array. Every fp16 op converts its inputs to float, computes in
// float and rounds the result to half once (RNE), which is what Halide's CPU back end does for
// float16, so simulated results compare bit-exactly with CPU references. fp32 ops are plain float.
//
// The element type is resolved once per instruction: the loops are templates over an element
// accessor (F16 or F32) and an operation functor, so the inner loops have no switches, virtual
// calls or allocations. Elements go through float chunks (kChunk): converted in bulk (F16C where
// the CPU has it), computed in a plain loop the compiler vectorizes, converted back. Operands that
// overlap other than exactly (dst == src) are processed chunk by chunk in increasing address
// order; programs should not rely on that. The library is built with -ffp-contract=off, so a*b+c
// is never fused, as in Halide's CPU code.
#include "vector_exec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "device/half.h"
#include "device/fp8.h"
#include "device/half_bulk.h"
#include "device/vector_shift.h"

namespace spyre {

namespace {

// Element accessors: load as float, store from float (rounding to the storage type), and round a
// float intermediate to the storage precision.
struct F16E {
    static constexpr int64_t bytes = 2;
    static float load(const uint8_t *p) {
        uint16_t h;
        std::memcpy(&h, p, 2);
        return half_to_float(h);
    }
    static void store(uint8_t *p, float v) {
        uint16_t h = float_to_half(v);
        std::memcpy(p, &h, 2);
    }
    static float round(float v) { return round_to_half(v); }
    static void load_n(const uint8_t *p, float *f, int64_t n) { halves_to_floats(p, f, n); }
    static void store_n(uint8_t *p, const float *f, int64_t n) { floats_to_halves(f, p, n); }
    static void round_n(float *v, int64_t n) { round_floats_to_half(v, n); }
};

struct F32E {
    static constexpr int64_t bytes = 4;
    static float load(const uint8_t *p) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    static void store(uint8_t *p, float v) { std::memcpy(p, &v, 4); }
    static float round(float v) { return v; }
    static void load_n(const uint8_t *p, float *f, int64_t n) { std::memcpy(f, p, size_t(n) * 4); }
    static void store_n(uint8_t *p, const float *f, int64_t n) { std::memcpy(p, f, size_t(n) * 4); }
    static void round_n(float *, int64_t) {}
};

// Elements per float chunk: small enough to stay in L1, large enough to amortise the calls.
constexpr int64_t kChunk = 512;

int32_t load_i32(const uint8_t *p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
void store_i32(uint8_t *p, int32_t v) { std::memcpy(p, &v, 4); }

// max/min rule shared by VMAX/VMIN and the reductions: a > b ? a : b (resp. a < b ? a : b).
// With equal operands (including -0 vs +0) the second is returned; NaN handling is unspecified.
inline float fmax_rule(float a, float b) { return a > b ? a : b; }
inline float fmin_rule(float a, float b) { return a < b ? a : b; }

// float/half -> int32: truncate toward zero like a C cast; out-of-range saturates, NaN gives 0.
inline int32_t float_to_i32_sat(float f) {
    if (std::isnan(f)) return 0;
    if (f >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
    if (f <= -2147483648.0f) return std::numeric_limits<int32_t>::min();
    return int32_t(f);
}

// dst[i] = f(src0[i], src1[i]) over n elements; src1 is the single value `*b` when `scalar`.
template <class E, class F>
void map_binary_run(uint8_t *dst, const uint8_t *a, const uint8_t *b, bool scalar, int64_t n, F f) {
    constexpr int64_t eb = E::bytes;
    float x[kChunk], y[kChunk];
    const float bv = scalar ? E::load(b) : 0.0f;
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
        const int64_t m = std::min(kChunk, n - i0);
        E::load_n(a + i0 * eb, x, m);
        if (scalar) {
            for (int64_t i = 0; i < m; i++) x[i] = f(x[i], bv);
        } else {
            E::load_n(b + i0 * eb, y, m);
            for (int64_t i = 0; i < m; i++) x[i] = f(x[i], y[i]);
        }
        E::store_n(dst + i0 * eb, x, m);
    }
}

// VFMA, unfused: dst[i] = round(src0[i] * src1[i]) + dst[i], the sum rounded by the store.
template <class E>
void fma_run(uint8_t *dst, const uint8_t *a, const uint8_t *b, bool scalar, int64_t n) {
    constexpr int64_t eb = E::bytes;
    float x[kChunk], y[kChunk], c[kChunk];
    const float bv = scalar ? E::load(b) : 0.0f;
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
        const int64_t m = std::min(kChunk, n - i0);
        E::load_n(a + i0 * eb, x, m);
        E::load_n(dst + i0 * eb, c, m);
        if (scalar) {
            for (int64_t i = 0; i < m; i++) x[i] *= bv;
        } else {
            E::load_n(b + i0 * eb, y, m);
            for (int64_t i = 0; i < m; i++) x[i] *= y[i];
        }
        E::round_n(x, m);
        for (int64_t i = 0; i < m; i++) x[i] += c[i];
        E::store_n(dst + i0 * eb, x, m);
    }
}

template <class E>
void exec_binary(Opcode op, uint8_t *dst, const uint8_t *a, const uint8_t *b, bool scalar, int64_t groups,
                 int64_t per_group) {
    constexpr int64_t eb = E::bytes;
    // Without a scalar operand the groups are back to back: one run over all of them.
    const int64_t runs = scalar ? groups : 1, n = scalar ? per_group : groups * per_group;
    for (int64_t g = 0; g < runs; g++) {
        uint8_t *d = dst + g * n * eb;
        const uint8_t *s0 = a + g * n * eb, *s1 = scalar ? b + g * eb : b;
        auto run = [&](auto f) { map_binary_run<E>(d, s0, s1, scalar, n, f); };
        switch (op) {
        case Opcode::VADD: run([](float x, float y) { return x + y; }); break;
        case Opcode::VSUB: run([](float x, float y) { return x - y; }); break;
        case Opcode::VMUL: run([](float x, float y) { return x * y; }); break;
        case Opcode::VDIV: run([](float x, float y) { return x / y; }); break;
        case Opcode::VMAX: run([](float x, float y) { return fmax_rule(x, y); }); break;
        case Opcode::VMIN: run([](float x, float y) { return fmin_rule(x, y); }); break;
        case Opcode::VFMA: fma_run<E>(d, s0, s1, scalar, n); break;
        // Masks: 1 or 0 in the type, exact in fp16 and fp32 (a NaN compares false).
        case Opcode::VCMPLT: run([](float x, float y) { return x < y ? 1.0f : 0.0f; }); break;
        case Opcode::VCMPLE: run([](float x, float y) { return x <= y ? 1.0f : 0.0f; }); break;
        case Opcode::VCMPEQ: run([](float x, float y) { return x == y ? 1.0f : 0.0f; }); break;
        default: break;
        }
    }
}

// An fp16 unary op has only 65536 inputs: its results, computed once with the same float function
// and rounding, replace a libm call per element by a lookup. One table per op (per lambda type).
template <class F>
const uint16_t *half_table(F f) {
    static const std::vector<uint16_t> table = [&] {
        std::vector<uint16_t> t(65536);
        for (uint32_t h = 0; h < 65536; h++) t[h] = float_to_half(f(half_to_float(uint16_t(h))));
        return t;
    }();
    return table.data();
}

template <class E, class F>
void map_unary(uint8_t *dst, const uint8_t *src, int64_t n, F f) {
    constexpr int64_t eb = E::bytes;
    if constexpr (std::is_same_v<E, F16E>) {
        const uint16_t *table = half_table(f);
        for (int64_t i = 0; i < n; i++) {
            uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            std::memcpy(dst + 2 * i, &table[h], 2);
        }
        return;
    }
    float x[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
        const int64_t m = std::min(kChunk, n - i0);
        E::load_n(src + i0 * eb, x, m);
        for (int64_t i = 0; i < m; i++) x[i] = f(x[i]);
        E::store_n(dst + i0 * eb, x, m);
    }
}

template <class E>
void exec_unary(Opcode op, uint8_t *dst, const uint8_t *src, int64_t n) {
    auto run = [&](auto f) { map_unary<E>(dst, src, n, f); };
    switch (op) {
    case Opcode::VEXP: run([](float x) { return std::exp(x); }); break;
    case Opcode::VLOG: run([](float x) { return std::log(x); }); break;
    case Opcode::VTANH: run([](float x) { return std::tanh(x); }); break;
    case Opcode::VRECIP: run([](float x) { return 1.0f / x; }); break;
    case Opcode::VRSQRT: run([](float x) { return 1.0f / std::sqrt(x); }); break;
    case Opcode::VSQRT: run([](float x) { return std::sqrt(x); }); break;
    case Opcode::VNEG: run([](float x) { return -x; }); break;
    case Opcode::VABS: run([](float x) { return std::fabs(x); }); break;
    // Halide's round(): to the nearest integer, ties to even (the default rounding mode).
    case Opcode::VROUND: run([](float x) { return std::nearbyint(x); }); break;
    default: break;
    }
}

// int32 arithmetic: two's complement, wrapping like the hardware (and like Halide's CPU code in
// practice); max/min exact. dst[i] = f(a[i], b[i]), b one element per group when `scalar`.
template <class F>
void map_i32(uint8_t *dst, const uint8_t *a, const uint8_t *b, bool scalar, int64_t groups, int64_t per_group, F f) {
    for (int64_t g = 0; g < groups; g++) {
        const int64_t base = g * per_group;
        const int32_t bv = scalar ? load_i32(b + g * 4) : 0;
        for (int64_t i = 0; i < per_group; i++) {
            const int64_t k = base + i;
            store_i32(dst + k * 4, f(load_i32(a + k * 4), scalar ? bv : load_i32(b + k * 4)));
        }
    }
}

int32_t wrap32(int64_t v) { return int32_t(uint32_t(uint64_t(v))); }

void exec_i32(Opcode op, uint8_t *dst, const uint8_t *a, const uint8_t *b, bool scalar, int64_t groups,
              int64_t per_group) {
    auto run = [&](auto f) { map_i32(dst, a, b, scalar, groups, per_group, f); };
    switch (op) {
    case Opcode::VADD: run([](int32_t x, int32_t y) { return wrap32(int64_t(x) + y); }); break;
    case Opcode::VSUB: run([](int32_t x, int32_t y) { return wrap32(int64_t(x) - y); }); break;
    case Opcode::VMUL: run([](int32_t x, int32_t y) { return wrap32(int64_t(x) * y); }); break;
    case Opcode::VMAX: run([](int32_t x, int32_t y) { return std::max(x, y); }); break;
    case Opcode::VMIN: run([](int32_t x, int32_t y) { return std::min(x, y); }); break;
    case Opcode::VNEG: run([](int32_t x, int32_t) { return wrap32(-int64_t(x)); }); break;
    case Opcode::VABS: run([](int32_t x, int32_t) { return wrap32(x < 0 ? -int64_t(x) : int64_t(x)); }); break;
    case Opcode::VCMPLT: run([](int32_t x, int32_t y) { return int32_t(x < y); }); break;
    case Opcode::VCMPLE: run([](int32_t x, int32_t y) { return int32_t(x <= y); }); break;
    case Opcode::VCMPEQ: run([](int32_t x, int32_t y) { return int32_t(x == y); }); break;
    default: break;
    }
}

// int32 reductions: a wrapping sum or an exact max/min per group, written as int32.
void exec_reduce_i32(Opcode op, uint8_t *dst, const uint8_t *src, int64_t groups, int64_t group_elems, int64_t valid,
                     bool accumulate) {
    for (int64_t g = 0; g < groups; g++) {
        uint8_t *d = dst + g * 4;
        int32_t acc = accumulate                  ? load_i32(d)
                      : op == Opcode::VREDSUM     ? 0
                      : op == Opcode::VREDMAX     ? std::numeric_limits<int32_t>::min()
                                                  : std::numeric_limits<int32_t>::max();
        const uint8_t *s = src + g * group_elems * 4;
        for (int64_t i = 0; i < valid; i++) {
            int32_t v = load_i32(s + i * 4);
            acc = op == Opcode::VREDSUM ? wrap32(int64_t(acc) + v) : op == Opcode::VREDMAX ? std::max(acc, v) : std::min(acc, v);
        }
        store_i32(d, acc);
    }
}

template <class S, class D>
void convert_ff(uint8_t *dst, const uint8_t *src, int64_t n) {
    float x[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
        const int64_t m = std::min(kChunk, n - i0);
        S::load_n(src + i0 * S::bytes, x, m);
        D::store_n(dst + i0 * D::bytes, x, m);
    }
}
template <class S>
void convert_to_i32(uint8_t *dst, const uint8_t *src, int64_t n) {
    for (int64_t i = 0; i < n; i++) store_i32(dst + i * 4, float_to_i32_sat(S::load(src + i * S::bytes)));
}
// int32 -> float rounds to nearest even; int32 -> half goes through float, which is exact for
// |v| < 2^24 and for larger magnitudes the half result is inf either way, so there is one rounding.
template <class D>
void convert_from_i32(uint8_t *dst, const uint8_t *src, int64_t n) {
    for (int64_t i = 0; i < n; i++) D::store(dst + i * D::bytes, float(load_i32(src + i * 4)));
}

// Byte elements widen exactly; a narrowing to a byte keeps the low 8 bits of the int32 value (a
// float truncated toward zero first), which is what Halide's CPU code does for its int8 and uint8
// casts (an integer cast wraps; a float cast goes through a 32-bit truncating conversion on x86).
// In range, as after the clamp of a quantize, that is the plain truncation.
// (A NaN or a float beyond int32, infinities included, becomes 0x80000000 there, so the byte is 0.)
int32_t load_byte(DType t, const uint8_t *p) { return t == DType::I8 ? int32_t(int8_t(*p)) : int32_t(*p); }
inline int32_t float_to_i32_x86(float f) {
    if (!(f > -2147483904.0f && f < 2147483648.0f)) return std::numeric_limits<int32_t>::min();
    return int32_t(f);
}

void exec_cvt(DType from, DType to, uint8_t *dst, const uint8_t *src, int64_t n) {
    if (from == to) {
        std::memmove(dst, src, size_t(n * dtype_bytes(from)));
        return;
    }
    if (dtype_is_byte(from)) {
        // Through int32: exact into int32, fp32 (|v| < 2^24) and fp16 (|v| <= 2048).
        for (int64_t i = 0; i < n; i++) {
            const int32_t v = load_byte(from, src + i);
            switch (to) {
            case DType::F16: F16E::store(dst + i * 2, float(v)); break;
            case DType::F32: F32E::store(dst + i * 4, float(v)); break;
            case DType::I32: store_i32(dst + i * 4, v); break;
            default: dst[i] = uint8_t(v); break;  // int8 <-> uint8: the same bits
            }
        }
        return;
    }
    if (dtype_is_byte(to)) {
        for (int64_t i = 0; i < n; i++) {
            const int32_t v = from == DType::I32   ? load_i32(src + i * 4)
                              : from == DType::F16 ? float_to_i32_x86(F16E::load(src + i * 2))
                                                   : float_to_i32_x86(F32E::load(src + i * 4));
            dst[i] = uint8_t(uint32_t(v));
        }
        return;
    }
    switch (from) {
    case DType::F16:
        if (to == DType::F32) convert_ff<F16E, F32E>(dst, src, n);
        else convert_to_i32<F16E>(dst, src, n);
        break;
    case DType::F32:
        if (to == DType::F16) convert_ff<F32E, F16E>(dst, src, n);
        else convert_to_i32<F32E>(dst, src, n);
        break;
    case DType::I32:
        if (to == DType::F16) convert_from_i32<F16E>(dst, src, n);
        else convert_from_i32<F32E>(dst, src, n);
        break;
    default: break;
    }
}

// fp8 codes <-> f16 / f32 (fp8.h). The source is read whole before the destination is written
// when they overlap (a decode writes more bytes than it reads).
void exec_cvt_fp8(DType from, DType to, Fp8Format fmt, uint8_t *dst, const uint8_t *src, int64_t n) {
    thread_local std::vector<uint8_t> copy;
    copy.assign(src, src + n * dtype_bytes(from));
    const uint8_t *s = copy.data();
    for (int64_t i = 0; i < n; i++) {
        switch (from) {
        case DType::F16: {
            uint16_t h;
            std::memcpy(&h, s + i * 2, 2);
            dst[i] = fp8_encode_half(h, fmt);
            break;
        }
        case DType::F32: dst[i] = fp8_encode(F32E::load(s + i * 4), fmt); break;
        default:  // u8 codes
            if (to == DType::F16) {
                uint16_t h = fp8_decode_half(s[i], fmt);
                std::memcpy(dst + i * 2, &h, 2);
            } else {
                F32E::store(dst + i * 4, fp8_decode(s[i], fmt));
            }
            break;
        }
    }
}

// Fills n elements of eb bytes each with the bytes at `elem`.
void fill_elems(uint8_t *dst, const uint8_t *elem, int64_t eb, int64_t n) {
    if (eb == 1) {
        std::memset(dst, elem[0], size_t(n));
    } else if (eb == 2) {
        uint16_t v;
        std::memcpy(&v, elem, 2);
        for (int64_t i = 0; i < n; i++) std::memcpy(dst + i * 2, &v, 2);
    } else {
        uint32_t v;
        std::memcpy(&v, elem, 4);
        for (int64_t i = 0; i < n; i++) std::memcpy(dst + i * 4, &v, 4);
    }
}

// Folds in element order: the sum's rounding depends on it, and max/min keep the later of equals.
template <class E, class F>
float fold(const uint8_t *src, int64_t n, float acc, F f) {
    float x[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
        const int64_t m = std::min(kChunk, n - i0);
        E::load_n(src + i0 * E::bytes, x, m);
        for (int64_t i = 0; i < m; i++) acc = f(acc, x[i]);
    }
    return acc;
}

// A max/min fold, eight lanes at a time. Its value equals the in-order fold's except when the
// extreme is a zero (the in-order fold keeps the sign of the last zero) or a NaN takes part; such a
// chunk is refolded in order.
template <class E, class F>
float fold_extreme(const uint8_t *src, int64_t n, float acc, F f) {
    constexpr int kLanes = 8;
    float x[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
        const int64_t m = std::min(kChunk, n - i0);
        E::load_n(src + i0 * E::bytes, x, m);
        float lane[kLanes];
        for (int l = 0; l < kLanes; l++) lane[l] = acc;
        int nan = acc != acc;
        int64_t i = 0;
        for (; i + kLanes <= m; i += kLanes)
            for (int l = 0; l < kLanes; l++) {
                nan |= x[i + l] != x[i + l];
                lane[l] = f(lane[l], x[i + l]);
            }
        float r = acc;
        for (int l = 0; l < kLanes; l++) r = f(r, lane[l]);
        for (; i < m; i++) {
            nan |= x[i] != x[i];
            r = f(r, x[i]);
        }
        if (nan || r == 0.0f) {
            for (int64_t k = 0; k < m; k++) acc = f(acc, x[k]);
        } else {
            acc = r;
        }
    }
    return acc;
}

// One reduction per group: fold the first `valid` elements into a float accumulator (starting from
// the identity or, with kAccumulate, the value at dst), then write it once, as fp32 or fp16. With
// acc_f16 (kAccF16) a sum rounds to fp16 after every addition instead, as Halide's fp16 sum does.
template <class E>
void exec_reduce(Opcode op, uint8_t *dst, const uint8_t *src, int64_t groups, int64_t group_elems, int64_t valid,
                 bool accumulate, bool dst_f32, bool acc_f16) {
    const float inf = std::numeric_limits<float>::infinity();
    const float identity = op == Opcode::VREDSUM ? 0.0f : op == Opcode::VREDMAX ? -inf : inf;
    const int64_t db = dst_f32 ? 4 : 2;
    for (int64_t g = 0; g < groups; g++) {
        uint8_t *d = dst + g * db;
        float acc = accumulate ? (dst_f32 ? F32E::load(d) : F16E::load(d)) : identity;
        const uint8_t *s = src + g * group_elems * E::bytes;
        switch (op) {
        case Opcode::VREDSUM:
            if (acc_f16) acc = fold<E>(s, valid, acc, [](float x, float y) { return round_to_half(x + y); });
            else acc = fold<E>(s, valid, acc, [](float x, float y) { return x + y; });
            break;
        case Opcode::VREDMAX: acc = fold_extreme<E>(s, valid, acc, [](float x, float y) { return fmax_rule(x, y); }); break;
        default: acc = fold_extreme<E>(s, valid, acc, [](float x, float y) { return fmin_rule(x, y); }); break;
        }
        if (dst_f32) F32E::store(d, acc);
        else F16E::store(d, acc);
    }
}

// VREDARGMAX / VREDARGMIN (isa.h): per group, element by element in lane order, an element strictly
// beyond the running value replaces it and its lane replaces the running index, so the first of
// equal extremes wins and a NaN never does (its comparisons are false), as in Halide's argmax().
// Values are compared exactly: an fp16 or fp32 value widens to float without rounding.
template <class E>
void exec_arg_reduce(bool max, uint8_t *values, uint8_t *indices, const uint8_t *src, int64_t groups,
                     int64_t group_elems, int64_t valid) {
    for (int64_t g = 0; g < groups; g++) {
        uint8_t *v = values + g * E::bytes;
        float best = E::load(v);
        int32_t at = load_i32(indices + g * 4);
        const uint8_t *s = src + g * group_elems * E::bytes;
        bool changed = false;
        for (int64_t i = 0; i < valid; i++) {
            const float x = E::load(s + i * E::bytes);
            if (max ? x > best : x < best) best = x, at = int32_t(i), changed = true;
        }
        if (changed) E::store(v, best);  // the element's own bits: exact in its type
        store_i32(indices + g * 4, at);
    }
}

void exec_arg_reduce_i32(bool max, uint8_t *values, uint8_t *indices, const uint8_t *src, int64_t groups,
                         int64_t group_elems, int64_t valid) {
    for (int64_t g = 0; g < groups; g++) {
        int32_t best = load_i32(values + g * 4), at = load_i32(indices + g * 4);
        const uint8_t *s = src + g * group_elems * 4;
        for (int64_t i = 0; i < valid; i++) {
            const int32_t x = load_i32(s + i * 4);
            if (max ? x > best : x < best) best = x, at = int32_t(i);
        }
        store_i32(values + g * 4, best);
        store_i32(indices + g * 4, at);
    }
}

// VSCANSUM (isa.h): element by element along each group, each sum rounded to the element type, as
// Halide's sequential update acc(r) = acc(r - 1) + in(r) computes it.
template <class E>
void exec_scan_sum(uint8_t *dst, const uint8_t *src, int64_t groups, int64_t group_elems, int64_t valid) {
    for (int64_t g = 0; g < groups; g++) {
        uint8_t *d = dst + g * group_elems * E::bytes;
        const uint8_t *s = src + g * group_elems * E::bytes;
        if (valid < 1) continue;
        float acc = E::load(d);
        for (int64_t e = 1; e < valid; e++) {
            acc = E::round(acc + E::load(s + e * E::bytes));
            E::store(d + e * E::bytes, acc);
        }
    }
}

void exec_scan_sum_i32(uint8_t *dst, const uint8_t *src, int64_t groups, int64_t group_elems, int64_t valid) {
    for (int64_t g = 0; g < groups; g++) {
        uint8_t *d = dst + g * group_elems * 4;
        const uint8_t *s = src + g * group_elems * 4;
        if (valid < 1) continue;
        int32_t acc = load_i32(d);
        for (int64_t e = 1; e < valid; e++) {
            acc = wrap32(int64_t(acc) + load_i32(s + e * 4));
            store_i32(d + e * 4, acc);
        }
    }
}

// dst (C x R, rows padded to rs_dst elements) = transpose(src (R x C, rows padded to rs_src)).
template <class T>
void transpose(uint8_t *dst, const uint8_t *src, int64_t rows, int64_t cols, int64_t rs_src, int64_t rs_dst) {
    constexpr int64_t eb = sizeof(T);
    for (int64_t c = 0; c < cols; c++) {
        uint8_t *d = dst + c * rs_dst * eb;
        for (int64_t r = 0; r < rows; r++) std::memcpy(d + r * eb, src + (r * rs_src + c) * eb, eb);
        std::memset(d + rows * eb, 0, size_t((rs_dst - rows) * eb));
    }
}

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

// An operand's LX address. lx_access has checked every operand an op uses; one it does not use may
// hold anything, so its address is clamped into LX rather than formed out of range.
static uint8_t *lx_at(uint8_t *lx, const int64_t *regs, int32_t reg, int32_t imm, int64_t lx_bytes) {
    int64_t off = int64_t(uint64_t(regs[reg]) + uint64_t(int64_t(imm)));
    return lx + std::clamp<int64_t>(off, 0, lx_bytes);
}

// VSHIFT (vector_shift.h). The source span is copied first, so a destination that overlaps it
// still sees the old values. lx_access checked the span against LX.
void exec_shift(const Instr &in, const int64_t *regs, uint8_t *lx, const MachineDesc &machine) {
    const int64_t eb = dtype_bytes(DType(in.dtype));
    const int64_t row = in.a[7] * (machine.stick_bytes / eb), groups = in.a[8];
    const int64_t shift = in.a[5], lo = in.a[6], hi = in.a[9];
    const ShiftEdge edge = shift_edge(in.mode);
    const int64_t base = int64_t(uint64_t(regs[in.a[3]]) + uint64_t(int64_t(in.a[4])));
    uint8_t *dst = lx + (regs[in.a[1]] + in.a[2]);
    const ShiftSpan span = vshift_read_span(in, machine.stick_bytes / eb);
    thread_local std::vector<uint8_t> src;
    src.resize(span.empty() ? 0 : size_t((span.last - span.first + 1) * eb));
    if (!span.empty()) std::memcpy(src.data(), lx + base + span.first * eb, src.size());
    for (int64_t g = 0; g < groups; g++) {
        uint8_t *out = dst + g * row * eb;
        for (int64_t j = 0; j < row; j++) {
            bool zero = false;
            const int64_t k = shift_source(edge, j + shift, lo, hi, &zero);
            if (zero) {
                std::memset(out + j * eb, 0, size_t(eb));  // +0.0 in every element type
                continue;
            }
            std::memcpy(out + j * eb, src.data() + (g * row + k - span.first) * eb, size_t(eb));
        }
    }
}

// VSTRIDE (vector_shift.h). The source span is copied first, so a destination that overlaps it
// still sees the old values. lx_access checked the span against LX.
void exec_strided(const Instr &in, const int64_t *regs, uint8_t *lx, const MachineDesc &machine) {
    const int64_t eb = dtype_bytes(DType(in.dtype)), lanes = machine.stick_bytes / eb;
    const int64_t row = in.a[7] * lanes, groups = in.a[8];
    const int64_t base = int64_t(uint64_t(regs[in.a[3]]) + uint64_t(int64_t(in.a[4])));
    uint8_t *dst = lx + (regs[in.a[1]] + in.a[2]);
    const ShiftSpan span = vstride_read_span(in, lanes);
    thread_local std::vector<uint8_t> src;
    src.resize(size_t((span.last - span.first + 1) * eb));
    std::memcpy(src.data(), lx + base + span.first * eb, src.size());
    for (int64_t g = 0; g < groups; g++)
        for (int64_t j = 0; j < row; j++)
            std::memcpy(dst + (g * row + j) * eb, src.data() + (vstride_source(in, lanes, g, j) - span.first) * eb,
                        size_t(eb));
}

// VLSEL (vector_shift.h): element by element, so a destination equal to a source is fine.
void exec_lane_select(const Instr &in, const int64_t *regs, uint8_t *lx, const MachineDesc &machine) {
    const int64_t eb = dtype_bytes(DType(in.dtype));
    const int64_t row = in.a[7] * (machine.stick_bytes / eb), groups = in.a[8], w = in.a[9];
    uint8_t *dst = lx_at(lx, regs, in.a[1], in.a[2], machine.lx_bytes);
    const uint8_t *s0 = lx_at(lx, regs, in.a[3], in.a[4], machine.lx_bytes);
    const uint8_t *s1 = lx_at(lx, regs, in.a[5], in.a[6], machine.lx_bytes);
    for (int64_t g = 0; g < groups; g++)
        for (int64_t e = 0; e < row; e++) {
            const int64_t at = (g * row + e) * eb;
            std::memmove(dst + at, ((e / w) % 2 == 0 ? s0 : s1) + at, size_t(eb));
        }
}

// VSELIDX and VSELM: element e of group g from src0 where take(g, e, its byte offset) holds, else
// from src1 (one element per group with kSrc1Scalar). Element by element, so a destination equal
// to a source is fine (VSELM's mask is read from the element before it is overwritten).
template <class Take>
void exec_element_select(const Instr &in, const int64_t *regs, uint8_t *lx, const MachineDesc &machine, Take take) {
    const int64_t eb = dtype_bytes(DType(in.dtype));
    const int64_t row = in.a[7] * (machine.stick_bytes / eb), groups = in.a[8];
    const bool scalar = in.mode & kSrc1Scalar;
    uint8_t *dst = lx_at(lx, regs, in.a[1], in.a[2], machine.lx_bytes);
    const uint8_t *s0 = lx_at(lx, regs, in.a[3], in.a[4], machine.lx_bytes);
    const uint8_t *s1 = lx_at(lx, regs, in.a[5], in.a[6], machine.lx_bytes);
    for (int64_t g = 0; g < groups; g++)
        for (int64_t e = 0; e < row; e++) {
            const int64_t at = (g * row + e) * eb;
            std::memmove(dst + at, take(g, e, dst + at) ? s0 + at : s1 + (scalar ? g * eb : at), size_t(eb));
        }
}

// VSELIDX (vector_shift.h): the limit is the register's value at issue; 64-bit arithmetic, so no
// register value overflows.
void exec_index_select(const Instr &in, const int64_t *regs, uint8_t *lx, const MachineDesc &machine) {
    const int64_t limit = regs[in.a[9]];
    const bool per_group = in.mode & kLimitPerGroup;
    exec_element_select(in, regs, lx, machine, [&](int64_t g, int64_t e, const uint8_t *) {
        return e <= (per_group ? sat_add(limit, g) : limit);
    });
}

// VSELM: an element's mask is nonzero when any of its bits but a float's sign is set (a -0.0 mask
// is 0; every type's 1 is nonzero).
void exec_mask_select(const Instr &in, const int64_t *regs, uint8_t *lx, const MachineDesc &machine) {
    const int64_t eb = dtype_bytes(DType(in.dtype));
    const bool is_float = DType(in.dtype) == DType::F16 || DType(in.dtype) == DType::F32;
    exec_element_select(in, regs, lx, machine, [&](int64_t, int64_t, const uint8_t *mask) {
        for (int64_t b = 0; b < eb; b++)
            if (is_float && b == eb - 1 ? (mask[b] & 0x7F) != 0 : mask[b] != 0) return true;
        return false;
    });
}

void exec_vector(const Instr &in, const int64_t *regs, uint8_t *lx, const MachineDesc &machine) {
    const VecForm form = op_info(in.op).form;
    if (form == VecForm::MaskSelect) return exec_mask_select(in, regs, lx, machine);
    if (form == VecForm::Shift) return exec_shift(in, regs, lx, machine);
    if (form == VecForm::Strided) return exec_strided(in, regs, lx, machine);
    if (form == VecForm::LaneSelect) return exec_lane_select(in, regs, lx, machine);
    if (form == VecForm::IndexSelect) return exec_index_select(in, regs, lx, machine);
    const DType t = DType(in.dtype);
    const int64_t eb = dtype_bytes(t);
    const int64_t lanes = machine.stick_bytes / eb;
    const int64_t sticks = in.a[7], groups = in.a[8];
    const int64_t per_group = sticks * lanes;  // elements per group
    uint8_t *dst = lx_at(lx, regs, in.a[1], in.a[2], machine.lx_bytes);
    const uint8_t *src0 = lx_at(lx, regs, in.a[3], in.a[4], machine.lx_bytes);
    const uint8_t *src1 = lx_at(lx, regs, in.a[5], in.a[6], machine.lx_bytes);
    const bool f16 = t == DType::F16;

    switch (form) {
    case VecForm::Map2: {
        if (in.mode & kFoldGroups) {  // acc = src0; acc = op(acc, src1[g]) in group order; dst = acc
            const int64_t gb = per_group * eb;
            for (int64_t g = 0; g < groups; g++) {
                const uint8_t *acc = g == 0 ? src0 : dst;
                if (t == DType::I32) exec_i32(in.op, dst, acc, src1 + g * gb, false, 1, per_group);
                else if (f16) exec_binary<F16E>(in.op, dst, acc, src1 + g * gb, false, 1, per_group);
                else exec_binary<F32E>(in.op, dst, acc, src1 + g * gb, false, 1, per_group);
            }
            break;
        }
        if (in.mode & kSrc1Row) {  // every group reads the one row at src1, in group order
            const int64_t gb = per_group * eb;
            for (int64_t g = 0; g < groups; g++) {
                if (t == DType::I32) exec_i32(in.op, dst + g * gb, src0 + g * gb, src1, false, 1, per_group);
                else if (f16) exec_binary<F16E>(in.op, dst + g * gb, src0 + g * gb, src1, false, 1, per_group);
                else exec_binary<F32E>(in.op, dst + g * gb, src0 + g * gb, src1, false, 1, per_group);
            }
            break;
        }
        const bool scalar = in.mode & kSrc1Scalar;
        if (t == DType::I32) exec_i32(in.op, dst, src0, src1, scalar, groups, per_group);
        else if (f16) exec_binary<F16E>(in.op, dst, src0, src1, scalar, groups, per_group);
        else exec_binary<F32E>(in.op, dst, src0, src1, scalar, groups, per_group);
        break;
    }
    case VecForm::Map1:
        if (t == DType::I32) exec_i32(in.op, dst, src0, src0, false, 1, groups * per_group);
        else if (f16) exec_unary<F16E>(in.op, dst, src0, groups * per_group);
        else exec_unary<F32E>(in.op, dst, src0, groups * per_group);
        break;
    case VecForm::Copy:  // bitwise, any type
        std::memmove(dst, src0, size_t(groups * sticks * machine.stick_bytes));
        break;
    case VecForm::Convert:
        if (in.op == Opcode::VCVTF8) {
            exec_cvt_fp8(t, DType(in.a[9]), Fp8Format(in.a[5]), dst, src0, groups * per_group);
            break;
        }
        // Source and destination groups are both back to back, so the groups form one flat run.
        exec_cvt(t, DType(in.a[9]), dst, src0, groups * per_group);
        break;
    case VecForm::Fill: {
        const float v = bits_to_float(uint32_t(in.a[9]));
        uint8_t elem[4];
        if (t == DType::F16) F16E::store(elem, v);
        else if (t == DType::F32) F32E::store(elem, v);
        else if (t == DType::I32) store_i32(elem, float_to_i32_sat(v));
        else elem[0] = uint8_t(uint32_t(float_to_i32_sat(v)));
        fill_elems(dst, elem, eb, groups * per_group);
        break;
    }
    case VecForm::Broadcast:
        for (int64_t g = 0; g < groups; g++) {
            uint8_t elem[4];
            std::memcpy(elem, src0 + g * eb, size_t(eb));  // copy first: dst may cover the source
            fill_elems(dst + g * per_group * eb, elem, eb, per_group);
        }
        break;
    case VecForm::Reduce: {
        const int64_t valid = in.a[9] > 0 ? in.a[9] : per_group;
        const bool accumulate = in.mode & kAccumulate;
        const bool dst_f32 = (in.mode & kDstF32) || t == DType::F32;
        if (t == DType::I32) exec_reduce_i32(in.op, dst, src0, groups, per_group, valid, accumulate);
        else if (f16) exec_reduce<F16E>(in.op, dst, src0, groups, per_group, valid, accumulate, dst_f32, in.mode & kAccF16);
        else exec_reduce<F32E>(in.op, dst, src0, groups, per_group, valid, accumulate, dst_f32, false);
        break;
    }
    case VecForm::Scan: {
        const int64_t valid = in.a[9] > 0 ? in.a[9] : per_group;
        if (t == DType::I32) exec_scan_sum_i32(dst, src0, groups, per_group, valid);
        else if (f16) exec_scan_sum<F16E>(dst, src0, groups, per_group, valid);
        else exec_scan_sum<F32E>(dst, src0, groups, per_group, valid);
        break;
    }
    case VecForm::ArgReduce: {
        const int64_t valid = in.a[9] > 0 ? in.a[9] : per_group;
        const bool max = in.op == Opcode::VREDARGMAX;
        uint8_t *indices = lx_at(lx, regs, in.a[5], in.a[6], machine.lx_bytes);
        if (t == DType::I32) exec_arg_reduce_i32(max, dst, indices, src0, groups, per_group, valid);
        else if (f16) exec_arg_reduce<F16E>(max, dst, indices, src0, groups, per_group, valid);
        else exec_arg_reduce<F32E>(max, dst, indices, src0, groups, per_group, valid);
        break;
    }
    case VecForm::Transpose: {
        const int64_t rows = in.a[7], cols = in.a[8];
        const int64_t rs_src = round_up(cols, lanes), rs_dst = round_up(rows, lanes);
        if (eb == 1) transpose<uint8_t>(dst, src0, rows, cols, rs_src, rs_dst);
        else if (eb == 2) transpose<uint16_t>(dst, src0, rows, cols, rs_src, rs_dst);
        else transpose<uint32_t>(dst, src0, rows, cols, rs_src, rs_dst);
        break;
    }
    default: break;
    }
}

// int8 x int8 -> int32: products exact, summed in k order with wrapping (two's complement), as
// Halide's CPU code sums int32 values.
static void exec_matmul_i8(const MatmulDesc &d, uint8_t *C, const uint8_t *A, const uint8_t *B, bool accumulate) {
    thread_local std::vector<int32_t> acc;
    acc.resize(size_t(d.n));
    for (int64_t i = 0; i < d.m; i++) {
        uint8_t *crow = C + i * d.ldc;
        if (accumulate) std::memcpy(acc.data(), crow, size_t(d.n) * 4);
        else std::fill(acc.begin(), acc.end(), 0);
        const int8_t *arow = reinterpret_cast<const int8_t *>(A + i * d.lda);
        for (int64_t kk = 0; kk < d.k; kk++) {
            const int32_t a = arow[kk];
            const int8_t *brow = reinterpret_cast<const int8_t *>(B + kk * d.ldb);
            for (int64_t j = 0; j < d.n; j++) acc[size_t(j)] = int32_t(uint32_t(acc[size_t(j)]) + uint32_t(a * brow[j]));
        }
        std::memcpy(crow, acc.data(), size_t(d.n) * 4);
    }
}

void exec_matmul(const Instr &in, const MatmulDesc &d, const int64_t *regs, uint8_t *lx) {
    uint8_t *C = lx + (regs[in.a[1]] + in.a[2]);
    const uint8_t *A = lx + (regs[in.a[3]] + in.a[4]);
    const uint8_t *B = lx + (regs[in.a[5]] + in.a[6]);
    const int64_t m = d.m, n = d.n, k = d.k;
    const bool accumulate = in.mode & kAccumulate;
    if (DType(in.dtype) == DType::I8) return exec_matmul_i8(d, C, A, B, accumulate);

    // B converted to float once, reused across instructions of this thread (no per-op allocation
    // after warm-up). The i-kk-j loop order keeps each C[i][j] summed in increasing kk order, and
    // every product of two halves is exact in float, so the result is that of the naive loop.
    thread_local std::vector<float> bf, acc, af;
    bf.resize(size_t(k * n));
    acc.resize(size_t(n));
    af.resize(size_t(k));
    for (int64_t kk = 0; kk < k; kk++) F16E::load_n(B + kk * d.ldb, bf.data() + kk * n, n);

    for (int64_t i = 0; i < m; i++) {
        uint8_t *crow = C + i * d.ldc;
        if (accumulate) F32E::load_n(crow, acc.data(), n);
        else std::fill(acc.begin(), acc.end(), 0.0f);
        F16E::load_n(A + i * d.lda, af.data(), k);
        for (int64_t kk = 0; kk < k; kk++) {
            const float a = af[size_t(kk)];
            const float *brow = bf.data() + kk * n;
            float *ac = acc.data();
            for (int64_t j = 0; j < n; j++) ac[j] += a * brow[j];
        }
        F32E::store_n(crow, acc.data(), n);
    }
}

void combine_elements(RedOp op, DType t, uint8_t *acc, const uint8_t *src, int64_t bytes) {
    auto run_float = [&](auto e, auto f) {
        using E = decltype(e);
        map_binary_run<E>(acc, acc, src, false, bytes / E::bytes, f);
    };
    auto run = [&](auto e) {
        switch (op) {
        case RedOp::Sum: run_float(e, [](float x, float y) { return x + y; }); break;
        case RedOp::Max: run_float(e, fmax_rule); break;
        case RedOp::Min: run_float(e, fmin_rule); break;
        }
    };
    switch (t) {
    case DType::F16: run(F16E{}); break;
    case DType::F32: run(F32E{}); break;
    case DType::I32: {
        // Integer semantics: wrapping sum, exact max/min.
        const int64_t n = bytes / 4;
        for (int64_t i = 0; i < n; i++) {
            int32_t x = load_i32(acc + i * 4), y = load_i32(src + i * 4);
            int32_t r = op == RedOp::Sum ? int32_t(uint32_t(x) + uint32_t(y))
                        : op == RedOp::Max ? std::max(x, y)
                                           : std::min(x, y);
            store_i32(acc + i * 4, r);
        }
        break;
    }
    default: break;  // byte types take no reduction (dtype_supported)
    }
}

}  // namespace spyre
