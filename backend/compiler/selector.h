// Instruction selection, shared by the files that hold its concerns: one Selector
// per kernel walks the final Stmt (select_instructions.cpp) and emits scalar code and addresses
// (select_scalar.cpp), waits for hazards between engine queues (select_hazards.cpp), vector
// expressions, temporaries and loop nests (select_vector.cpp), masks by lane index
// (select_masks.cpp), MATMUL (select_matmul.cpp),
// reductions (select_reductions.cpp), scans (select_scans.cpp), DMA (select_dma.cpp) and double-buffered, ring-shared loops
// (select_pipelines.cpp). What it has decided so far is one value, SelectionState
// (selection_state.h). Internal to the pass: its one entry point is select_instructions.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "affine.h"
#include "device/dtype_host.h"
#include "device/error.h"
#include "device/hazard_tracker.h"
#include "device/program_builder.h"
#include "kernel_plan.h"
#include "map_cores.h"
#include "plan_pipelines.h"
#include "select_instructions.h"
#include "selection_state.h"
#include "spyre_intrinsics.h"

namespace spyre {
namespace selection {

using namespace Halide;
using namespace Halide::Internal;

// Tags beyond the general policy's one per queue (device/queues.h): pipelined loops own 0/1 (loads
// by parity) and 3/4 (stores by parity).
constexpr int kTagForward = kTagRing;  // ring forwards of shared tiles: 9 and 10, by iteration parity
constexpr int kTagShared = 11;  // arrivals of shared tiles (read or received): 11 and 12, by parity
constexpr int kTagInnerLoad = 13;  // loads of a pipelined loop inside another: 13 and 14, by parity

// A value the vector unit can use: a run of sticks per group (Vec) or one element per group / one
// element for all groups (Scal). Addresses stay symbolic until an instruction needs them.
struct Operand {
    enum Kind { Vec, Scal } kind = Vec;
    DType type = DType::F16;
    std::string buf;   // the LX buffer, for hazards ("" for temporaries)
    int32_t base = 0;  // LX byte offset of the buffer (or temporary)
    Expr index;        // element index of element 0 within the buffer
    bool per_group = false;
    bool row = false;  // Vec: one group that every group reads (kSrc1Row; a bias or gamma over rows)
    bool uniform = false;  // Scal: the same value in every group (a constant)
    int temp = -1;     // temporary slot, or -1
};

// Where the elements of one instruction's groups come from.
struct Domain {
    int ramp_lanes = 0;                                 // > 0: Halide vector expressions
    std::vector<std::pair<std::string, int64_t>> lane;  // loop vars merged into a group, with expected coeff
    std::string group_var;
    int64_t groups = 1;
    int64_t elems = 1;  // elements per group
    bool padded = false;  // element mode: groups are padded to whole sticks
    // Vector reads that do not move with group_var are one row for every group (Operand::row).
    bool shared_rows = false;
    std::map<std::string, Expr> zero;
    std::set<std::string> vars() const {
        std::set<std::string> v;
        for (auto &l : lane) v.insert(l.first);
        if (!group_var.empty()) v.insert(group_var);
        return v;
    }
};

// A select's condition as E <= k, E = base + stride * lane (select_masks.cpp); nullopt when it is
// not a comparison of int vectors of that form.
struct MaskForm {
    Expr base;
    int64_t stride = 0;
    int64_t k = 0;
};
std::optional<MaskForm> mask_form(const Expr &cond);

// Whether e selects by a condition of the loops alone (a select() on a scalar or broadcast
// condition, a boundary condition's if_then_else): it may test the rows, which a step that shares a
// row operand or folds the rows would evaluate once for all of them.
bool has_select(const Expr &e);

inline DType dtype_of(Type t) {
    t = t.element_of();
    DType d;
    if (dtype_from_host(t, &d)) return d;
    throw_error("type ", t, " has no Spyre vector form");
}

// Counts an emission around the statements emitted while it lives (the depth counters of Selector).
class Nested {
public:
    explicit Nested(int &depth) : depth_(depth) { depth_++; }
    ~Nested() { depth_--; }
    Nested(const Nested &) = delete;
    Nested &operator=(const Nested &) = delete;

private:
    int &depth_;
};

class Selector {
public:
    // `b` holds the kernel's buffers; the selector emits its code into it (finish() returns the program).
    Selector(KernelPlan &p, ProgramBuilder b)
        : plan_(p), sb_(p.machine.stick_bytes), temp_base_(int32_t((p.lx_peak_bytes + sb_ - 1) / sb_ * sb_)),
          st_(std::move(b)) {}

    void run(const Stmt &s);
    DeviceProgram finish() { return b_.finish(); }

private:
    // ---------------------------------------------------------------- scalar code
    static bool uses_core_id(const Stmt &s) { return stmt_uses_var(s, kCoreIdVar); }

    // Halide's Euclidean division or remainder of a by b in a register (eval's Div and Mod).
    Reg euclidean(const Halide::Expr &a, const Halide::Expr &b, bool quotient);
    bool never_negative(const Halide::Expr &e) const;
    Reg eval(const Expr &e0);

    // ---------------------------------------------------------------- hazards
    // The hazard tracker sees what instructions touch by LX byte ranges (so that a buffer taking a
    // released buffer's LX waits for the work still in flight there) and, for buffers outside LX,
    // by an index per name.
    Access access(const std::set<std::string> &reads, const std::set<std::string> &writes);
    void before(Queue q, const std::set<std::string> &reads, const std::set<std::string> &writes) {
        hz_.before(q, access(reads, writes));
    }
    void after(int tag, Queue q, const std::set<std::string> &reads, const std::set<std::string> &writes) {
        hz_.after(tag, q, access(reads, writes));
    }
    void wait(uint32_t mask) { hz_.wait(mask); }
    void drain() { hz_.drain(); }
    void release_buffer(const std::string &name);
    std::optional<LxSpan> lx_range(const std::string &name) const;

    // ---------------------------------------------------------------- LX addresses
    int32_t lx_base(const std::string &name);
    // Materialises an operand's address; registers it needs are appended to `regs`.
    Lx addr(const Operand &o, std::vector<Reg> &regs);

    // ---------------------------------------------------------------- temporaries
    int64_t sticks_per_group(const Domain &d, DType t) const;
    Operand new_temp(DType t, int64_t bytes);
    Operand temp_operand(int slot, DType t);
    void free_temp(const Operand &o);

    // ---------------------------------------------------------------- vector instructions
    void vinstr(Opcode op, DType t, const Operand &dst, const Operand *a, const Operand *b2, int64_t sticks,
                int64_t groups, uint8_t mode = 0, int32_t aux = 0, int32_t a5 = 0);

    // A shifted read (ShiftCall) as one VSHIFT of its home rows.
    Operand shifted_load(const ShiftCall &s, const Domain &d, const Operand *into);
    // A strided read (StrideCall) as one VSTRIDE of its home rows.
    Operand strided_load(const StrideCall &s, const Domain &d, const Operand *into);
    // One vector instruction that reads `src` into the step's result (`into`, or a temporary of
    // src's type), ordered after what writes src and before what reads the result: emit(dst, src).
    Operand read_op(const Operand &src, const Domain &d, const Operand *into, const std::function<void(Lx, Lx)> &emit);

    // select() on the stick index against a limit (select_masks.cpp): element e of group g takes
    // the true value where e <= limit (+ g when per_group); `swap` when it is the false value.
    struct LaneMask {
        Expr limit;
        bool per_group = false, swap = false;
    };
    std::optional<LaneMask> lane_mask(const Expr &cond, const Domain &d);
    Operand index_select(const Select *op, const Domain &d, const Operand *into);
    // select() on the values (x < v, x == v && t > q, ...): the condition as a mask of 1s and 0s in
    // type t (VCMPLT, VCMPLE, VCMPEQ; && and || as VMIN and VMAX of masks, ! as a comparison with
    // 0; a comparison of the stick index as a VSELIDX of 1 and 0), then one VSELM.
    Operand mask_of(const Expr &cond, const Domain &d, DType t);
    Operand data_select(const Select *op, const Domain &d, const Operand *into);

    // ---------------------------------------------------------------- expressions
    [[noreturn]] void unsupported(const std::string &what) const;
    // A broken invariant of selection, as unsupported() words it ("Func f: internal: ...").
    [[noreturn]] void internal(const std::string &what) const;

    // Classifies a load in domain d.
    Operand load(const Load *op, const Domain &d);
    // A load whose lanes walk the rows of its buffer: restickified with VTRANSPOSE.
    // `into`: the destination, when the loaded value is stored as it is (the transpose goes there).
    Operand transposed_load(const Load *op, const Ramp *r, const BufferInfo &bi, const Domain &d,
                            const Operand *into = nullptr);

    bool is_scalar_like(const Expr &e, const Domain &d);

    // A scalar-valued subexpression, evaluated for every group at once as a vector over the groups.
    Operand scalar_value(const Expr &e0, const Domain &d);

    // Per-group scalar array (or a uniform one when there is a single group) usable as src1.
    Operand as_src1(Operand s, const Domain &d);

    Operand constant(double v, DType t, const Domain &d);

    Operand result_for(const Domain &d, DType t, const Operand *into, std::initializer_list<const Operand *> reuse);

    // Emits the vector code of e in domain d; writes the result into `into` when given.
    DType vector_type(const Halide::Expr &e);
    Operand gen(const Expr &e, const Domain &d, const Operand *into);

    // A scalar operand spread over a whole vector, for positions that need sticks.
    Operand to_vec(Operand s, const Domain &d);
    Operand convert(Operand a, DType t, const Domain &d, const Operand *into, Opcode op = Opcode::VCVT,
                    int32_t fmt = 0);

    Operand binary_ops(Opcode op, const Expr &x, const Expr &y, const Domain &d, const Operand *into, DType t,
                       int64_t sticks);
    // A row operand written out to every group of `d` (into `into`, or a temporary): one copy,
    // then copies of the rows already written, log2(groups) instructions.
    Operand spread_row(const Operand &row, const Domain &d, const Operand *into);

    // What an expression is, in the terms of the algorithm (never IR text).
    std::string describe(const Expr &e) const;

    // ---------------------------------------------------------------- loop nests
    struct Loop {
        std::string name;
        int64_t extent;
    };

    void emit_loops(const std::vector<Loop> &loops, size_t n, const std::function<void()> &inner);

    // A Store at the bottom of `loops`: one of the three vector forms.
    void emit_nest(const std::vector<Loop> &loops, const Store *st);

    std::set<std::string> var_set(const std::vector<Loop> &loops);

    struct AccessCoeffs {
        // Index bases; for vec, whether the read may be one row for all groups (not a shifted
        // read's home, whose edge reaches into the next row); for scal, under a broadcast.
        std::vector<std::pair<Expr, bool>> vec, scal;
        std::vector<std::pair<Expr, int64_t>> trans;   // strided (transposed) vector reads: base, stride
        struct Strided {
            Expr base;        // of the home row
            int step = 0;     // StrideCall's
            int64_t lanes = 0;  // of a stick of the home's type
        };
        std::vector<Strided> strided;                  // strided reads along the stick (StrideCall)
        std::vector<Expr> windows;                     // edge window bounds of shifted reads (home-relative)
        std::vector<MaskForm> masks;                   // selects on the stick index (select_masks.cpp)
        // Loop variables a broadcast scalar computes with, outside any load (x64(select(y >= 10, a,
        // b))): the scalar is evaluated once per group, so such a loop cannot be merged into lanes.
        std::set<std::string> scalar_vars;
        // The scalar conditions of selects between vectors (select(y >= 1, a, b)).
        std::vector<Expr> scalar_conds;
    };
    void collect(const Expr &e, bool under_broadcast, AccessCoeffs &out);

    void emit_vector_store(const std::vector<Loop> &loops, const Store *st);
    // The LX buffer `name` as an operand of type t, its element 0 at `index`.
    Operand at_buffer(const std::string &name, DType t, const Expr &index, Operand::Kind kind = Operand::Vec);
    // acc(x) = op(acc(x), E(x, r)) with op add, max or min, r the innermost loop left outside the
    // lanes `d`, and E's rows back to back along r: one fold of E's rows into acc (kFoldGroups), in
    // chunks of rows where E's temporaries would not fit. False (nothing emitted) when it is not
    // that form; loops[k - 1] is r.
    bool emit_fold(const std::vector<Loop> &loops, const Store *st, const Domain &d, size_t k);

    static bool ends_with(const std::string &s, const std::string &suffix);

    // C[n + ldc*m] += f32(A[k + lda*m]) * f32(B[n + ldb*k]) over loops (..., m, n, k_pe) in any order of
    // m and n: one MATMUL per iteration of the loops outside them.
    void emit_matmul(const std::vector<Loop> &loops, const Store *st);

    // A matmul accumulator's zero fill (SelectionState::deferred_fill_stmt), held back for the nest.
    bool defer_zero_fill(const Halide::Internal::Stmt &fill, const Halide::Internal::Stmt &next);
    Halide::Internal::Stmt take_deferred_fill();  // and forget it
    void flush_deferred_fill();                   // emit it, if one is held

    struct Reduction {
        Opcode op;
        Expr value;
    };
    std::optional<Reduction> reduction_of(const Store *st);

    void emit_reduction(const std::vector<Loop> &loops, const Store *st, const Reduction &red);
    // The lane loops (the innermost loops `index` does not move with) and the group loop of a
    // reduction of `v` into the element at `index`; k is left at the number of loops outside them.
    Domain reduction_domain(const std::vector<Loop> &loops, const Expr &index, const Expr &v, DType vt, size_t &k);
    // Takes loops[k - 1] as the groups of `d` (k--) when every row of `v` it reads lies a padded row
    // of `d` after the last (a per-row scalar: the next element); the caller checks the destination.
    void group_rows(const std::vector<Loop> &loops, const Expr &v, DType vt, Domain &d, size_t &k);
    // A Tuple argmax or argmin (select_reductions.cpp): the loop body that keeps the index of the
    // first extreme element and its value, as Halide's argmax() and argmin() lower.
    struct ArgReduction {
        Opcode op;               // VREDARGMAX or VREDARGMIN
        const Store *index;      // I[i] = select(better, r, I[i])
        const Store *value;      // V[j] = select(better, x, V[j])
        Expr x, r;
    };
    std::optional<ArgReduction> arg_reduction_of(const Block *body);
    // A running sum along the innermost loop, acc[i] = acc[i - 1] + x (a scan along a row): the
    // value x added, when `st` is one (select_reductions.cpp).
    std::optional<Expr> scan_of(const std::vector<Loop> &loops, const Store *st);
    // One VSCANSUM per step of rows; false (nothing emitted) when VSCANSUM cannot take it (select_scans.cpp).
    bool emit_scan(const std::vector<Loop> &loops, const Store *st, const Expr &x);
    // Any other update reading only the element before the one it writes along the innermost loop
    // (the stick dimension): one element per iteration (select_scans.cpp).
    bool is_lane_scan(const std::vector<Loop> &loops, const Store *st);
    void emit_lane_scan(const std::vector<Loop> &loops, const Store *st);
    // Element `at` of each group of `v` (a temporary) into `s`, the other elements of s kept: two
    // VSELIDX, the first writing v.
    void keep_element(const Operand &s, const Operand &v, const Halide::Expr &at, DType t, int64_t sticks,
                      int64_t groups);
    // A store whose innermost loop does not run along the stick: one element per iteration.
    void emit_single_elements(const std::vector<Loop> &loops, const Store *st);
    // Asynchronous operations issued by the loop at code[start] over n iterations, when its body
    // never waits (emit_carried_loop bounds them by kMaxUnwaited).
    int64_t unwaited_issues(size_t start, int64_t n) const;
    // A reduction down columns of unvectorized loops (emit_nest trades its two inner loops).
    bool column_reduction(const std::vector<Loop> &loops, const Store *st);
    static constexpr int64_t kMaxUnwaited = 4096;
    void emit_arg_reduction(const std::vector<Loop> &loops, const ArgReduction &red);

    void emit_element_store(const std::vector<Loop> &loops, const Store *st);

    void reset_temps();

    // ---------------------------------------------------------------- DMA
    void emit_dma(const DmaCall &d, int tag, bool managed);

    // The LX address of a DMA's tile (registers it needs are appended to `regs`).
    Lx dma_lx(const DmaCall &d, std::vector<Reg> &regs);
    bool shared_by_cores(const Expr &dram_bytes) const;

    // The device-memory range each core reaches in each buffer, from the loops' extents.
    void record_span(const DmaCall &d, const BufferInfo &dev, int eb);
    std::optional<std::pair<int64_t, int64_t>> exact_span(const Halide::Expr &offset, int core) const;

public:
    // Throws if a core reaches more contiguous device memory in one buffer than the machine allows.
    void check_spans() const;

private:

    // Every core's partials are complete before the collective, which all cores join.
    void emit_ring_reduce(const RingReduceCall &rr);

    // ---------------------------------------------------------------- statements
    void emit(const Stmt &s);

    void emit_for(const For *op);
    void emit_dynamic_for(const For *op);

    // A loop whose iterations keep work in flight across the loop's back edge (emit_for): its
    // body is selected twice, the second time assuming what the first left in flight at its end.
    // `counted`: the trip count is op->extent at run time, at most n (emit_dynamic_for).
    void emit_carried_loop(const For *op, int64_t n, bool counted);
    // Each carried loop selects its body twice; nests deeper than this are selected as plain loops.
    static constexpr int kMaxCarriedDepth = 3;

    // Double-buffered loop: loads for the next iteration are issued before this one computes.
    void emit_pipeline(const For *op, int64_t n);

    // A load shared over runs of g cores outside any pipeline: the run's first core reads it, the
    // others receive it from the previous core; once it is in, every core but the last passes it on.
    // The forward stays pending on the tile, so the next write to it waits for it.
    void emit_shared_load(const DmaCall &d, int g);

    // A shared tile over the ring: received from the previous core into the tile's LX range (with
    // the load's tag), or sent from it to the next core. plan_ring_shares checked that the range is
    // contiguous.
    void emit_ring_tile(const DmaCall &d, int tag, bool send);

    // Constant during selection (run() writes the LX peak into the plan once it is done).
    KernelPlan &plan_;
    const int64_t sb_;
    const int32_t temp_base_;  // where the expression temporaries start in LX, above the buffers

    // What selection has decided so far (selection_state.h): saved and restored as one value.
    SelectionState st_;
    // st_'s builder and tracker by the short names every emission uses (st_ is assigned, never
    // replaced, so these stay bound to it).
    ProgramBuilder &b_ = st_.out.b;
    HazardTracker &hz_ = st_.out.hz;

    // Scoped around an emission: a body selected twice leaves every scope it enters, so these are
    // the same whenever st_ is saved and restored, and need no place in it.
    int pipe_depth_ = 0;     // pipelined loops around the statement being emitted (Nested)
    int carried_depth_ = 0;  // carried loops around it (Nested)
    // The conditions of the IfThenElse blocks around it (negated in an else), innermost last.
    std::vector<Expr> conditions_;

    // The tracker's indices of buffers outside LX. Not restored with st_: an index only ever gets
    // added, and the work a carried loop assumes in flight, kept across a restore, names buffers
    // by the indices the first selection gave them.
    std::map<std::string, int> buffer_ids_;
};

}  // namespace selection
}  // namespace spyre
