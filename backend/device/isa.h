// The Spyre device instruction set: opcodes, the fixed instruction record, and a table that says
// what each operand slot of each opcode means, its engine, and for vector opcodes their form (how
// they touch LX) and throughput class. The table drives the file reader's validation, the
// disassembler, the assembler helpers, the simulator's LX ranges, execution and cost, and the KTIR
// exporter, so an opcode is described in exactly one place.
//
// Execution model (see docs/device_model.md): one SPMD program runs on every core; a core's
// control unit issues instructions in order. Scalar and control instructions complete at issue.
// Vector, PE, DMA and ring instructions are asynchronous: each goes to its engine's in-order queue
// and carries a completion tag (0..15); WAIT blocks issue until every earlier op whose tag is in its
// mask has completed. Engines of one core run concurrently; only WAIT and BARRIER order them.
#pragma once

#include <array>
#include <cstdint>

#include "dtype.h"

namespace spyre {

constexpr int kNumRegs = 32;      // scalar int64 registers; r0 reads as zero and may not be written
constexpr int kNumTags = 16;      // completion tags per core
constexpr int kMaxLoopDepth = 16; // nesting of LOOP and IF blocks
constexpr int kNumOperands = 10;

enum class Opcode : uint16_t {
    // scalar: rd = f(rs...) ; LI loads a 64-bit immediate from two 32-bit halves
    NOP, LI, MOV, ADD, SUB, MUL, DIV, REM, MIN, MAX, ADDI, MULI, SHLI, SHRI, CMPLT, CMPEQ, SEL,
    CORE_ID, NUM_CORES,
    // structured control flow
    LOOP, ENDLOOP, IF, ELSE, ENDIF,
    // vector unit on LX (async, tagged)
    VADD, VSUB, VMUL, VDIV, VMAX, VMIN, VFMA,
    VEXP, VLOG, VTANH, VRECIP, VRSQRT, VSQRT, VNEG, VABS, VCOPY,
    VCVT, VBCAST, VFILL, VREDSUM, VREDMAX, VREDMIN, VTRANSPOSE,
    // PE array (async, tagged)
    MATMUL,
    // DMA between device memory and LX (async, tagged)
    DMA_LD, DMA_ST,
    // ring (async, tagged). RING_REDUCE tag, op, src, off, sticks, group_size, group_stride: an
    // all-reduce of the sticks at src + off over every core (group_size 0), or over each group of
    // group_size cores group_stride (0: 1) apart, core c's group being {b + k * stride : k < size}
    // with b = c - c % (size * stride) + c % stride; size * stride must divide the core count.
    RING_SEND, RING_RECV, RING_REDUCE,
    // synchronisation
    WAIT, BARRIER,
    // appended after the first format version (vector unit, async, tagged)
    VROUND,
    // vector unit: shifted stick access (vector_shift.h)
    VSHIFT,
    // vector unit: fp8 conversions (fp8.h), appended in format version 3
    VCVTF8,
    // vector unit: select between two sources by lane index against a limit (vector_shift.h), e.g. a
    // causal mask; appended in format version 4
    VSELIDX = 58,
    // 59 is reserved for another extension; the reader rejects it until it is defined.
    RESERVED_59,
    // vector unit: select between two sources by lane block (vector_shift.h), e.g. even and odd lanes
    VLSEL = 60,
    // vector unit: the first extreme element of each group, its value and its lane index (an argmax
    // or argmin reduction); appended in format version 6
    VREDARGMAX = 61,
    VREDARGMIN = 62,
    // vector unit: a running sum along each group, in place (a scan); appended in format version 6
    VSCANSUM = 63,
    // scalar: rd = the int32 at LX byte address rs + imm, sign-extended (a gather's row index, read
    // after a WAIT on what wrote it); appended in format version 7
    LDLX = 64,
    // vector unit: element-wise comparisons giving 1 where they hold and 0 elsewhere, in the
    // operands' type (a mask), and a select by a mask held in the destination (the
    // destination's nonzero elements take src0, the others src1); appended in format version 8
    VCMPLT = 65,
    VCMPLE = 66,
    VCMPEQ = 67,
    VSELM = 68,
    // vector unit: a strided read along each row, every step-th element (a downsample) or each
    // element -step times (an upsample); appended in format version 11 (vector_shift.h)
    VSTRIDE = 69,
    NUM_OPCODES
};
constexpr int kNumOpcodes = int(Opcode::NUM_OPCODES);

// Which engine executes an opcode, and so which queue and busy counter it uses.
enum class Engine : uint8_t { Control, Vector, PE, DMA, Ring, Sync };
constexpr int kNumAsyncEngines = 4;  // Vector, PE, DMA, Ring
const char *engine_name(Engine e);

// What an operand slot holds; the reader checks each slot against its kind.
enum class Operand : uint8_t {
    None,      // must be 0
    RegDst,    // register written (1..31)
    RegSrc,    // register read (0..31)
    Imm,       // any 32-bit value
    Count,     // positive count (sticks, groups, iterations)
    CountOpt,  // non-negative count
    Tag,       // completion tag 0..15
    TagMask,   // non-zero 16-bit mask of tags
    Buffer,    // index into the program's buffer table
    DmaDesc,   // index into the DMA descriptor table
    MmDesc,    // index into the matmul descriptor table
    Dir,       // ring direction: +1 (to the next core) or -1 (to the previous core)
    RedOp,     // ring reduction: 0 sum, 1 max, 2 min
    DTypeImm,  // an element type code (dtype.h)
    Fp8Fmt,    // an fp8 format code (fp8.h): 0 e4m3, 1 e5m2
};

// Mode bits (Instr::mode) for vector ops.
enum VectorMode : uint8_t {
    kSrc1Scalar = 1,  // src1 is one element per group (broadcast over the group's sticks)
    kAccumulate = 2,  // reductions: combine with the value already at dst; MATMUL: C += A*B
    kDstF32 = 4,      // reductions: write the result as fp32
    // VREDSUM on fp16 without kDstF32: accumulate in fp16, rounding after every addition, in element
    // order, as Halide's fp16 arithmetic does for sum() of fp16 values. Without it a reduction
    // accumulates in fp32 and rounds once (what KTIR's f16 reductions import as).
    kAccF16 = 8,
    kEdgeClamp = 8,   // VSHIFT: a source position outside [lo, hi] reads the nearest edge (repeat_edge)
    kEdgeZero = 16,   // VSHIFT: a source position outside [lo, hi] reads zero (constant_exterior 0)
    kEdgeMirrorImage = 32,     // VSHIFT: positions reflect about the window's ends, edges repeated (mirror_image)
    kEdgeMirrorInterior = 64,  // VSHIFT: positions reflect about the edge elements themselves (mirror_interior)
    kLimitPerGroup = 128,      // VSELIDX: the limit grows by one per group (a diagonal: lane e of row g vs g + limit)
    // Element-wise ops of two sources (format version 10): src1 is one group of n sticks that every
    // group reads (a row operand: a bias, a gamma, a column maximum), as a stride-0 operand.
    kSrc1Row = 16,
    // Element-wise ops of two sources (format version 10): a fold over the groups of src1 into one
    // group. dst and src0 are one group of n sticks; in group order, acc = op(acc, src1[g]) from
    // acc = src0, then dst = acc: a column reduction (rows into one row), element by element.
    kFoldGroups = 32,
};
// Mode bits (Instr::mode) for DMA_LD.
enum DmaMode : uint8_t {
    // A shared (broadcast) load: the cores that issue this instruction for the same device bytes
    // receive them from one transfer, which crosses device memory once (IBM's cost model counts a
    // shared load's bytes once; docs/device_model.md). Without it each core's load is its own.
    kDmaShared = 1,
};

// The VSHIFT edge modes; an instruction sets at most one.
constexpr uint8_t kEdgeModes = kEdgeClamp | kEdgeZero | kEdgeMirrorImage | kEdgeMirrorInterior;

// Uniform operand slots of vector instructions (groups = a[8] sets of n = a[7] sticks each).
//   a0 tag, a1/a2 dst base reg + byte offset, a3/a4 src0, a5/a6 src1, a7 sticks per group,
//   a8 groups, a9 op-specific: VFILL float bits (int32 and byte destinations convert with saturation), VCVT destination type, VRED* valid elements per
//   group (0 = all lanes). VTRANSPOSE uses a7 = rows, a8 = cols of the source matrix. VSHIFT uses
//   a5 = element shift, a6 = lo, a9 = hi (its edge window; vector_shift.h). VCVTF8 converts like
//   VCVT (a9 the destination type) between fp8 codes (u8) and f16 or f32, in the fp8 format a5:
//   from f16/f32 to u8 it encodes, from u8 to f16/f32 it decodes (fp8.h has the rounding rules). VLSEL uses a9 = the lane
//   block width w: element e of a group takes src0 where (e / w) is even, src1 where it is odd.
//   VSELIDX uses a9 = a register holding the limit L: element e of group g takes src0 where
//   e <= L (+ g with kLimitPerGroup), src1 (one element per group with kSrc1Scalar) elsewhere.
//   VREDARGMAX/VREDARGMIN use a1/a2 = the running extreme values (one element per group, of the
//   source's type, read and written), a5/a6 = the running indices (one int32 per group, read and
//   written), a9 = valid elements per group (0 = all lanes): for each group, element by element
//   in lane order, an element strictly above (below) the running value replaces it and its lane
//   index e replaces the running index, so the first of equal extremes wins (Halide's argmax).
//   VCMPLT, VCMPLE and VCMPEQ are element-wise like VADD (src1 one element per group with
//   kSrc1Scalar): dst = 1 where src0 < (<=, ==) src1, else 0, in the instruction's type (a NaN
//   compares false). VSELM: dst = src0 where dst is nonzero, else src1 (one element per group with
//   kSrc1Scalar), element by element in the instruction's type.
//   VSTRIDE uses a5 = the first element read, a6 = the step, a9 = the source row stride in sticks:
//   element j of group g reads source element g * a9 * lanes + a5 + j * a6 (a6 >= 2), or
//   + (a5 + j) / -a6 (a6 <= -2); vector_shift.h.
//   VSCANSUM uses a9 = valid elements per group (0 = all lanes): for each group, in lane order,
//   dst[e] = dst[e - 1] + src0[e] for 1 <= e < valid, each sum rounded to the type (fp16 after every
//   element, int32 wrapping); dst[0] is kept (the scan's first value, written before it).
// How a vector instruction touches LX and what it computes, by kind: lx_access reads its ranges,
// vector_exec runs it and ktir_export writes it from this, so an opcode's class is said once (here,
// in op_info).
enum class VecForm : uint8_t {
    None,         // not a vector instruction
    Map2,         // element-wise of src0 and src1 (src1 one element per group with kSrc1Scalar, one group for
                  // all with kSrc1Row): VADD ... VFMA
    Map1,         // element-wise of src0: VEXP ... VROUND
    Copy,         // VCOPY: the bits of src0
    Convert,      // VCVT, VCVTF8: src0 into the element type a9
    Broadcast,    // VBCAST: src0's element of each group to all of the group's lanes
    Fill,         // VFILL: the constant a9
    Reduce,       // VREDSUM, VREDMAX, VREDMIN: one element per group
    Transpose,    // VTRANSPOSE
    Shift,        // VSHIFT
    LaneSelect,   // VLSEL
    IndexSelect,  // VSELIDX
    ArgReduce,    // VREDARGMAX, VREDARGMIN: one value and one int32 index per group
    Scan,         // VSCANSUM: dst read and written along each group
    MaskSelect,   // VSELM: dst (the mask) read, then written from src0 or src1
    Strided,      // VSTRIDE: every step-th element of src0's rows, or each element repeated
};
// A vector opcode's throughput class, as the machine description names its rates (op_cost.h).
enum class VecClass : uint8_t { AddMul, MinMax, Transcendental, Reduce, Convert, Restickify };

struct OpInfo {
    const char *name;
    Engine engine;
    std::array<Operand, kNumOperands> operands;
    VecForm form = VecForm::None;         // vector instructions only
    VecClass rate = VecClass::AddMul;     // vector instructions only
};

const OpInfo &op_info(Opcode op);
// Whether an opcode computes on element type t. Data movement (copy, convert, broadcast, fill,
// transpose) takes any type, int8 and uint8 included (they have no arithmetic: VCVT widens them);
// VCVTF8 takes f16, f32 and u8 (the pair of source and destination is checked by
// vcvtf8_types_valid);
// add, sub, mul, min, max, neg, abs, the reductions and RING_REDUCE take int32 too
// (two's-complement, wrapping); MATMUL takes f16 (fp32 accumulation) and int8 (int32 accumulation,
// wrapping); the rest (VROUND too) fp16 or fp32.
bool dtype_supported(Opcode op, DType t);
// VCVTF8's source and destination: one is u8 (the fp8 codes), the other f16 or f32.
bool vcvtf8_types_valid(DType from, DType to);
bool opcode_valid(int v);
// Opcode by name (case-sensitive, as printed by the disassembler); false if none.
bool opcode_by_name(const char *name, Opcode *out);

// One instruction: 44 bytes in the file, little-endian, fields in this order.
struct Instr {
    Opcode op = Opcode::NOP;
    uint8_t dtype = 0;  // DType for vector/matmul/ring ops
    uint8_t mode = 0;   // VectorMode bits
    std::array<int32_t, kNumOperands> a{};
};

// A DMA descriptor: an innermost run of `sticks` contiguous sticks, repeated over up to three outer
// dimensions (so up to 4-D), each with its own device-memory and LX byte stride. Strides may be
// zero (broadcast) but a store with a zero device stride is rejected (it would race with itself).
struct DmaDesc {
    int32_t sticks = 1;
    std::array<int32_t, 3> count{1, 1, 1};
    std::array<int64_t, 3> dram_stride{0, 0, 0};
    std::array<int32_t, 3> lx_stride{0, 0, 0};
};

// A PE-array matmul on LX: C[M][N] (fp32) (+)= A[M][K] (fp16, rows sticked on K) x B[K][N] (fp16,
// rows sticked on N); with the instruction's type int8, A and B are int8 and C is int32 (products
// summed exactly, the sum wrapping). Row strides are in bytes and whole sticks.
struct MatmulDesc {
    int32_t m = 1, n = 1, k = 1;
    int32_t lda = 0, ldb = 0, ldc = 0;
};

}  // namespace spyre
