#include "isa.h"

#include <cstring>

namespace spyre {

namespace {

using O = Operand;
constexpr O N = O::None;

// Operand slots shared by families of opcodes (see the slot comments in isa.h).
constexpr std::array<O, kNumOperands> kScalar3{O::RegDst, O::RegSrc, O::RegSrc, N, N, N, N, N, N, N};
constexpr std::array<O, kNumOperands> kScalarImm{O::RegDst, O::RegSrc, O::Imm, N, N, N, N, N, N, N};
constexpr std::array<O, kNumOperands> kNone{N, N, N, N, N, N, N, N, N, N};
constexpr std::array<O, kNumOperands> kVecBin{O::Tag,    O::RegSrc, O::Imm,   O::RegSrc, O::Imm,
                                              O::RegSrc, O::Imm,    O::Count, O::Count,  N};
constexpr std::array<O, kNumOperands> kVecUn{O::Tag, O::RegSrc, O::Imm, O::RegSrc, O::Imm, N, N, O::Count, O::Count, N};
constexpr std::array<O, kNumOperands> kVecRed{O::Tag, O::RegSrc, O::Imm,   O::RegSrc, O::Imm,
                                              N,      N,         O::Count, O::Count,  O::CountOpt};
constexpr std::array<O, kNumOperands> kVecArgRed{O::Tag,    O::RegSrc, O::Imm,   O::RegSrc, O::Imm,
                                                 O::RegSrc, O::Imm,    O::Count, O::Count,  O::CountOpt};
constexpr std::array<O, kNumOperands> kVecScan{O::Tag, O::RegSrc, O::Imm,   O::RegSrc, O::Imm,
                                               N,      N,         O::Count, O::Count,  O::CountOpt};
constexpr std::array<O, kNumOperands> kDma{O::Tag, O::Buffer, O::RegSrc, O::Imm, O::RegSrc, O::Imm, O::DmaDesc, N, N, N};
constexpr std::array<O, kNumOperands> kRing{O::Tag, O::Dir, O::RegSrc, O::Imm, O::Count, N, N, N, N, N};

const OpInfo kOps[kNumOpcodes] = {
    {"NOP", Engine::Control, kNone},
    {"LI", Engine::Control, {O::RegDst, O::Imm, O::Imm, N, N, N, N, N, N, N}},
    {"MOV", Engine::Control, {O::RegDst, O::RegSrc, N, N, N, N, N, N, N, N}},
    {"ADD", Engine::Control, kScalar3},
    {"SUB", Engine::Control, kScalar3},
    {"MUL", Engine::Control, kScalar3},
    {"DIV", Engine::Control, kScalar3},
    {"REM", Engine::Control, kScalar3},
    {"MIN", Engine::Control, kScalar3},
    {"MAX", Engine::Control, kScalar3},
    {"ADDI", Engine::Control, kScalarImm},
    {"MULI", Engine::Control, kScalarImm},
    {"SHLI", Engine::Control, kScalarImm},
    {"SHRI", Engine::Control, kScalarImm},
    {"CMPLT", Engine::Control, kScalar3},
    {"CMPEQ", Engine::Control, kScalar3},
    {"SEL", Engine::Control, {O::RegDst, O::RegSrc, O::RegSrc, O::RegSrc, N, N, N, N, N, N}},
    {"CORE_ID", Engine::Control, {O::RegDst, N, N, N, N, N, N, N, N, N}},
    {"NUM_CORES", Engine::Control, {O::RegDst, N, N, N, N, N, N, N, N, N}},
    {"LOOP", Engine::Control, {O::RegDst, O::RegSrc, O::CountOpt, N, N, N, N, N, N, N}},
    {"ENDLOOP", Engine::Control, kNone},
    {"IF", Engine::Control, {O::RegSrc, N, N, N, N, N, N, N, N, N}},
    {"ELSE", Engine::Control, kNone},
    {"ENDIF", Engine::Control, kNone},
    {"VADD", Engine::Vector, kVecBin, VecForm::Map2, VecClass::AddMul},
    {"VSUB", Engine::Vector, kVecBin, VecForm::Map2, VecClass::AddMul},
    {"VMUL", Engine::Vector, kVecBin, VecForm::Map2, VecClass::AddMul},
    {"VDIV", Engine::Vector, kVecBin, VecForm::Map2, VecClass::Transcendental},
    {"VMAX", Engine::Vector, kVecBin, VecForm::Map2, VecClass::MinMax},
    {"VMIN", Engine::Vector, kVecBin, VecForm::Map2, VecClass::MinMax},
    {"VFMA", Engine::Vector, kVecBin, VecForm::Map2, VecClass::AddMul},
    {"VEXP", Engine::Vector, kVecUn, VecForm::Map1, VecClass::Transcendental},
    {"VLOG", Engine::Vector, kVecUn, VecForm::Map1, VecClass::Transcendental},
    {"VTANH", Engine::Vector, kVecUn, VecForm::Map1, VecClass::Transcendental},
    {"VRECIP", Engine::Vector, kVecUn, VecForm::Map1, VecClass::Transcendental},
    {"VRSQRT", Engine::Vector, kVecUn, VecForm::Map1, VecClass::Transcendental},
    {"VSQRT", Engine::Vector, kVecUn, VecForm::Map1, VecClass::Transcendental},
    {"VNEG", Engine::Vector, kVecUn, VecForm::Map1, VecClass::AddMul},
    {"VABS", Engine::Vector, kVecUn, VecForm::Map1, VecClass::AddMul},
    {"VCOPY", Engine::Vector, kVecUn, VecForm::Copy, VecClass::AddMul},
    {"VCVT", Engine::Vector, {O::Tag, O::RegSrc, O::Imm, O::RegSrc, O::Imm, N, N, O::Count, O::Count, O::DTypeImm},
     VecForm::Convert, VecClass::Convert},
    {"VBCAST", Engine::Vector, kVecUn, VecForm::Broadcast, VecClass::Convert},
    {"VFILL", Engine::Vector, {O::Tag, O::RegSrc, O::Imm, N, N, N, N, O::Count, O::Count, O::Imm},
     VecForm::Fill, VecClass::Convert},
    {"VREDSUM", Engine::Vector, kVecRed, VecForm::Reduce, VecClass::Reduce},
    {"VREDMAX", Engine::Vector, kVecRed, VecForm::Reduce, VecClass::Reduce},
    {"VREDMIN", Engine::Vector, kVecRed, VecForm::Reduce, VecClass::Reduce},
    {"VTRANSPOSE", Engine::Vector, kVecUn, VecForm::Transpose, VecClass::Restickify},
    {"MATMUL", Engine::PE, {O::Tag, O::RegSrc, O::Imm, O::RegSrc, O::Imm, O::RegSrc, O::Imm, O::MmDesc, N, N}},
    {"DMA_LD", Engine::DMA, kDma},
    {"DMA_ST", Engine::DMA, kDma},
    {"RING_SEND", Engine::Ring, kRing},
    {"RING_RECV", Engine::Ring, kRing},
    {"RING_REDUCE", Engine::Ring, {O::Tag, O::RedOp, O::RegSrc, O::Imm, O::Count, O::CountOpt, O::CountOpt, N, N, N}},
    {"WAIT", Engine::Sync, {O::TagMask, N, N, N, N, N, N, N, N, N}},
    {"BARRIER", Engine::Sync, kNone},
    {"VROUND", Engine::Vector, kVecUn, VecForm::Map1, VecClass::MinMax},
    {"VSHIFT", Engine::Vector, {O::Tag, O::RegSrc, O::Imm, O::RegSrc, O::Imm, O::Imm, O::Imm, O::Count, O::Count, O::Imm},
     VecForm::Shift, VecClass::AddMul},
    // VCVTF8: no published fp8 rate, so it is priced as VCVT (docs/device_model.md).
    {"VCVTF8", Engine::Vector, {O::Tag, O::RegSrc, O::Imm, O::RegSrc, O::Imm, O::Fp8Fmt, N, O::Count, O::Count, O::DTypeImm},
     VecForm::Convert, VecClass::Convert},
    {"VSELIDX", Engine::Vector, {O::Tag, O::RegSrc, O::Imm, O::RegSrc, O::Imm, O::RegSrc, O::Imm, O::Count, O::Count, O::RegSrc},
     VecForm::IndexSelect, VecClass::AddMul},
    {"", Engine::Control, kNone},  // reserved 59
    {"VLSEL", Engine::Vector, {O::Tag, O::RegSrc, O::Imm, O::RegSrc, O::Imm, O::RegSrc, O::Imm, O::Count, O::Count, O::Count},
     VecForm::LaneSelect, VecClass::AddMul},
    // No published rate for an argmax: priced as the other reductions (docs/device_model.md).
    {"VREDARGMAX", Engine::Vector, kVecArgRed, VecForm::ArgReduce, VecClass::Reduce},
    {"VREDARGMIN", Engine::Vector, kVecArgRed, VecForm::ArgReduce, VecClass::Reduce},
    // No published scan rate: priced as a reduction over the same sticks (docs/device_model.md).
    {"VSCANSUM", Engine::Vector, kVecScan, VecForm::Scan, VecClass::Reduce},
    // A scalar read of LX: no published latency, so it costs the scalar step (docs/device_model.md).
    {"LDLX", Engine::Control, kScalarImm},
    // Comparisons and the mask select: no published rates; priced as VMAX and VMIN (a comparison)
    // and as a copy (docs/device_model.md).
    {"VCMPLT", Engine::Vector, kVecBin, VecForm::Map2, VecClass::MinMax},
    {"VCMPLE", Engine::Vector, kVecBin, VecForm::Map2, VecClass::MinMax},
    {"VCMPEQ", Engine::Vector, kVecBin, VecForm::Map2, VecClass::MinMax},
    {"VSELM", Engine::Vector, kVecBin, VecForm::MaskSelect, VecClass::AddMul},
    // A strided read moves bits: priced as a copy of the sticks it streams (op_cost.cpp).
    {"VSTRIDE", Engine::Vector, {O::Tag, O::RegSrc, O::Imm, O::RegSrc, O::Imm, O::Imm, O::Imm, O::Count, O::Count, O::CountOpt},
     VecForm::Strided, VecClass::AddMul},
};

}  // namespace

const char *engine_name(Engine e) {
    switch (e) {
    case Engine::Control: return "control";
    case Engine::Vector: return "vector";
    case Engine::PE: return "pe";
    case Engine::DMA: return "dma";
    case Engine::Ring: return "ring";
    case Engine::Sync: return "sync";
    }
    return "?";
}

const OpInfo &op_info(Opcode op) { return kOps[int(op)]; }

// A reserved number (no name yet) is not an opcode.
bool opcode_valid(int v) { return v >= 0 && v < kNumOpcodes && kOps[v].name[0] != '\0'; }

bool opcode_by_name(const char *name, Opcode *out) {
    for (int i = 0; i < kNumOpcodes; i++) {
        if (kOps[i].name[0] != '\0' && std::strcmp(kOps[i].name, name) == 0) {
            *out = Opcode(i);
            return true;
        }
    }
    return false;
}

bool dtype_supported(Opcode op, DType t) {
    switch (op) {
    case Opcode::VCOPY:
    case Opcode::VCVT:
    case Opcode::VBCAST:
    case Opcode::VFILL:
    case Opcode::VTRANSPOSE:
    case Opcode::VSHIFT:
    case Opcode::VSTRIDE:
    case Opcode::VLSEL:
    case Opcode::VSELIDX:
    case Opcode::VSELM: return true;
    case Opcode::MATMUL: return t == DType::F16 || t == DType::I8;
    case Opcode::VCVTF8: return t == DType::F16 || t == DType::F32 || t == DType::U8;
    case Opcode::VADD:
    case Opcode::VSUB:
    case Opcode::VMUL:
    case Opcode::VMAX:
    case Opcode::VMIN:
    case Opcode::VNEG:
    case Opcode::VABS:
    case Opcode::VREDSUM:
    case Opcode::VREDMAX:
    case Opcode::VREDMIN:
    case Opcode::VREDARGMAX:
    case Opcode::VREDARGMIN:
    case Opcode::VSCANSUM:
    case Opcode::VCMPLT:
    case Opcode::VCMPLE:
    case Opcode::VCMPEQ:
    case Opcode::RING_REDUCE: return t == DType::F16 || t == DType::F32 || t == DType::I32;
    default: return t == DType::F16 || t == DType::F32;
    }
}

bool vcvtf8_types_valid(DType from, DType to) {
    auto is_float = [](DType t) { return t == DType::F16 || t == DType::F32; };
    return (from == DType::U8 && is_float(to)) || (is_float(from) && to == DType::U8);
}

}  // namespace spyre
