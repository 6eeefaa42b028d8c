#include "fp8.h"

#include <sstream>

#include "device/error.h"
#include "spyre_intrinsics.h"

// The functions Halide's CPU code calls for the fp8 Calls (their names: spyre_intrinsics.h).
// Exported from executables by spyre_dsl's link options so that the JIT finds them by name.
extern "C" {
__attribute__((visibility("default"))) uint8_t spyre_to_fp8_e4m3(float v) {
    return spyre::fp8_encode(v, spyre::Fp8Format::E4M3);
}
__attribute__((visibility("default"))) uint8_t spyre_to_fp8_e5m2(float v) {
    return spyre::fp8_encode(v, spyre::Fp8Format::E5M2);
}
__attribute__((visibility("default"))) float spyre_from_fp8_e4m3(uint8_t c) {
    return spyre::fp8_decode(c, spyre::Fp8Format::E4M3);
}
__attribute__((visibility("default"))) float spyre_from_fp8_e5m2(uint8_t c) {
    return spyre::fp8_decode(c, spyre::Fp8Format::E5M2);
}
__attribute__((visibility("default"))) uint16_t spyre_from_fp8_e4m3_f16(uint8_t c) {
    return spyre::fp8_decode_half(c, spyre::Fp8Format::E4M3);
}
__attribute__((visibility("default"))) uint16_t spyre_from_fp8_e5m2_f16(uint8_t c) {
    return spyre::fp8_decode_half(c, spyre::Fp8Format::E5M2);
}
}

namespace spyre {

using namespace Halide;
using Halide::Internal::FloatImm;
using Halide::Internal::make_const;
using Halide::Internal::UIntImm;

namespace {
std::string type_text(Type t) {
    if (t.is_bool()) return "bool";
    std::ostringstream os;
    os << t;
    return os.str();
}
}  // namespace

Expr to_fp8(const Expr &value, Fp8Format fmt) {
    if (!value.defined()) throw_error("spyre::to_fp8: the value is undefined");
    const Type t = value.type();
    if (t.is_bool() || (!t.is_float() && !t.is_int_or_uint()))
        throw_error("spyre::to_fp8: the value has type ", type_text(t), "; it takes a number (float16 or float32)");
    Expr v = t == Float(32, t.lanes()) ? value : cast(Float(32, t.lanes()), value);
    // A constant is encoded here: nothing is left to compute.
    if (const FloatImm *f = Internal::simplify(v).as<FloatImm>())
        return make_const(UInt(8), fp8_encode(float(f->value), fmt));
    return make_fp8(Fp8Call{true, fmt, v});
}

Expr from_fp8(const Expr &code, Fp8Format fmt, Type result) {
    if (!code.defined()) throw_error("spyre::from_fp8: the code is undefined");
    const Type t = code.type();
    if (t.element_of() != UInt(8))
        throw_error("spyre::from_fp8: the code has type ", type_text(t),
                    "; fp8 codes are uint8 (what spyre::to_fp8 gives, or a uint8 input)");
    if (result != Float(16) && result != Float(32))
        throw_error("spyre::from_fp8: result type ", type_text(result), " is not float16 or float32");
    if (const UIntImm *c = Internal::simplify(code).as<UIntImm>())
        return make_const(result, double(fp8_decode(uint8_t(c->value), fmt)));
    // float16 through its bits: Halide's own float32 -> float16 cast would turn NaN codes into inf.
    return make_fp8(Fp8Call{false, fmt, code, result == Float(16)});
}

std::map<std::string, JITExtern> fp8_jit_externs() {
    std::map<std::string, JITExtern> m;
    m.emplace(fp8_call_name(true, Fp8Format::E4M3), JITExtern(spyre_to_fp8_e4m3));
    m.emplace(fp8_call_name(true, Fp8Format::E5M2), JITExtern(spyre_to_fp8_e5m2));
    m.emplace(fp8_call_name(false, Fp8Format::E4M3), JITExtern(spyre_from_fp8_e4m3));
    m.emplace(fp8_call_name(false, Fp8Format::E5M2), JITExtern(spyre_from_fp8_e5m2));
    m.emplace(fp8_call_name(false, Fp8Format::E4M3, true), JITExtern(spyre_from_fp8_e4m3_f16));
    m.emplace(fp8_call_name(false, Fp8Format::E5M2, true), JITExtern(spyre_from_fp8_e5m2_f16));
    return m;
}

}  // namespace spyre
