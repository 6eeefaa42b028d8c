#include "scalar_ops.h"

#include <algorithm>

#include "device/checked_math.h"

namespace spyre {

bool is_scalar_op(Opcode op) { return op >= Opcode::LI && op <= Opcode::NUM_CORES; }

bool eval_scalar(const Instr &in, const int64_t *R, int64_t core_id, int64_t num_cores, int64_t *out) {
    const auto &a = in.a;
    switch (in.op) {
    case Opcode::LI: *out = int64_t(uint64_t(uint32_t(a[1])) | (uint64_t(uint32_t(a[2])) << 32)); break;
    case Opcode::MOV: *out = R[a[1]]; break;
    case Opcode::ADD: *out = wrap_add(R[a[1]], R[a[2]]); break;
    case Opcode::SUB: *out = int64_t(uint64_t(R[a[1]]) - uint64_t(R[a[2]])); break;
    case Opcode::MUL: *out = wrap_mul(R[a[1]], R[a[2]]); break;
    case Opcode::DIV:
    case Opcode::REM: {
        int64_t x = R[a[1]], y = R[a[2]];
        if (y == 0) return false;
        // INT64_MIN / -1 overflows (and traps on x86): wrap it as the hardware register would.
        if (y == -1) *out = in.op == Opcode::DIV ? int64_t(0 - uint64_t(x)) : 0;
        else *out = in.op == Opcode::DIV ? x / y : x % y;
        break;
    }
    case Opcode::MIN: *out = std::min(R[a[1]], R[a[2]]); break;
    case Opcode::MAX: *out = std::max(R[a[1]], R[a[2]]); break;
    case Opcode::ADDI: *out = wrap_add(R[a[1]], a[2]); break;
    case Opcode::MULI: *out = wrap_mul(R[a[1]], a[2]); break;
    case Opcode::SHLI: *out = int64_t(uint64_t(R[a[1]]) << (a[2] & 63)); break;
    case Opcode::SHRI: *out = R[a[1]] >> (a[2] & 63); break;
    case Opcode::CMPLT: *out = R[a[1]] < R[a[2]]; break;
    case Opcode::CMPEQ: *out = R[a[1]] == R[a[2]]; break;
    case Opcode::SEL: *out = R[a[1]] ? R[a[2]] : R[a[3]]; break;
    case Opcode::CORE_ID: *out = core_id; break;
    case Opcode::NUM_CORES: *out = num_cores; break;
    default: *out = 0; break;
    }
    return true;
}

}  // namespace spyre
