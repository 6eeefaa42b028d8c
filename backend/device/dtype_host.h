// The one mapping between device element types and Halide's (host) types, for everything that
// crosses between a Halide pipeline or buffer and a device program: the compiler, the host
// wrappers and the tools. Header-only; needs Halide's runtime header, not its compiler.
#pragma once

#include <HalideRuntime.h>

#include <string>

#include "dtype.h"

namespace spyre {

inline halide_type_t dtype_host_type(DType t) {
    switch (t) {
    case DType::F16: return halide_type_t(halide_type_float, 16);
    case DType::F32: return halide_type_t(halide_type_float, 32);
    case DType::I32: return halide_type_t(halide_type_int, 32);
    case DType::I8: return halide_type_t(halide_type_int, 8);
    case DType::U8: return halide_type_t(halide_type_uint, 8);
    }
    return halide_type_t();
}

// The device type of a scalar host type; false for the types a device program cannot hold.
inline bool dtype_from_host(halide_type_t h, DType *out) {
    for (int i = 0; i < kNumDTypes; i++) {
        if (dtype_host_type(DType(i)) == halide_type_t(h.code, h.bits)) {
            *out = DType(i);
            return true;
        }
    }
    return false;
}

// A host type as the docs and Halide print it (float16, int32, uint8, bool), for error messages:
// never the raw code and bits.
inline std::string host_type_name(halide_type_t t) {
    if (t.code == halide_type_uint && t.bits == 1) return "bool";
    const char *code = t.code == halide_type_int     ? "int"
                       : t.code == halide_type_uint  ? "uint"
                       : t.code == halide_type_float ? "float"
                       : t.code == halide_type_bfloat ? "bfloat"
                                                      : "handle";
    std::string n = code + std::to_string(int(t.bits));
    return t.lanes > 1 ? n + "x" + std::to_string(int(t.lanes)) : n;
}

// For error messages: the host types that dtype_from_host accepts.
constexpr const char *kDeviceTypesText = "float16, float32, int32, int8, uint8";

}  // namespace spyre
