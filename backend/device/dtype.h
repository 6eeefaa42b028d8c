// Element types a device program can hold in LX and device memory, with their sizes.
// fp16 is IEEE binary16 (see half.h), so results compare exactly with Halide's CPU float16.
// int8 and uint8 are storage types: 128 to a stick, moved by DMA and the data-movement ops and
// converted (VCVT) to and from the types the vector unit computes on; FP8 codes are held as uint8.
#pragma once

#include <cstdint>
#include <string>

namespace spyre {

enum class DType : uint8_t { F16 = 0, F32 = 1, I32 = 2, I8 = 3, U8 = 4 };
constexpr int kNumDTypes = 5;

inline int dtype_bytes(DType t) {
    switch (t) {
    case DType::F16: return 2;
    case DType::I8:
    case DType::U8: return 1;
    default: return 4;
    }
}

inline bool dtype_is_byte(DType t) { return t == DType::I8 || t == DType::U8; }

inline const char *dtype_name(DType t) {
    switch (t) {
    case DType::F16: return "f16";
    case DType::F32: return "f32";
    case DType::I32: return "i32";
    case DType::I8: return "i8";
    case DType::U8: return "u8";
    }
    return "?";
}

inline bool dtype_valid(int v) { return v >= 0 && v < kNumDTypes; }

// Parses "f16"/"f32"/"i32"/"i8"/"u8"; returns false on anything else.
inline bool parse_dtype(const std::string &s, DType *out) {
    for (int i = 0; i < kNumDTypes; i++) {
        if (s == dtype_name(DType(i))) {
            *out = DType(i);
            return true;
        }
    }
    return false;
}

}  // namespace spyre
