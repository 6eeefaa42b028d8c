// Element types a device program can hold in LX and device memory, with their sizes.
// fp16 is IEEE binary16 (see half.h), so results compare exactly with Halide's CPU float16.
#pragma once

#include <cstdint>
#include <string>

namespace spyre {

enum class DType : uint8_t { F16 = 0, F32 = 1, I32 = 2 };
constexpr int kNumDTypes = 3;

inline int dtype_bytes(DType t) { return t == DType::F16 ? 2 : 4; }

inline const char *dtype_name(DType t) {
    switch (t) {
    case DType::F16: return "f16";
    case DType::F32: return "f32";
    case DType::I32: return "i32";
    }
    return "?";
}

inline bool dtype_valid(int v) { return v >= 0 && v < kNumDTypes; }

// Parses "f16"/"f32"/"i32"; returns false on anything else.
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
