// The KTIR importer's lowering state (internal to backend/ktir): one Importer per function
// lowers its ops, in program order, into a ProgramBuilder. Its work is split by concern:
// ktir_import.cpp (the driver, buffers, arguments, scalar values and registers, control flow),
// ktir_import_memory.cpp (LX allocation and geometry, views, access tiles, loads, stores, DMA,
// vector-instruction emission) and ktir_import_tensor.cpp (tensor ops: elementwise, broadcasts,
// reshapes, reductions, matmul, transpose, ring collectives). The public entry is ktir_import.h.
#pragma once

#include <array>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "device/error.h"
#include "device/fp8.h"
#include "device/half.h"
#include "device/hazard_tracker.h"
#include "device/layout.h"
#include "device/lx_arena.h"
#include "device/loop_registers.h"
#include "device/program_builder.h"
#include "device/program_verify.h"
#include "ktir_import.h"
#include "ktir_ssa.h"

namespace spyre::ktir::lowering {

inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
inline int64_t wrap_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
inline int64_t wrap_mul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

struct Scalar {
    bool known = false;
    int64_t c = 0;
    Reg r;                  // the value when not known
    int buffer = -1;        // an HBM pointer: an element offset from this buffer's base
    bool is_float = false;  // a float constant (f)
    double f = 0;
    bool nonzero = false;   // the value is R[r] != 0, not yet normalised to 0 / 1
    int div_k = 0;          // the value is R[div_src] / div_k + div_add, exactly (an element address)
    Reg div_src;
    int64_t div_add = 0;
    bool lazy = false;      // only the div_* form exists: no register holds the value yet
};

struct View {
    bool hbm = true;
    int buffer = -1;
    Scalar off;  // elements: from the buffer base (HBM) or from LX address 0
    DType t = DType::F16;
    std::vector<int64_t> sizes, strides;
    bool elem_sticks = false;  // the buffer keeps each element in its own stick (BufInfo::elem_sticks)
    int dist = -1;             // a distributed view over several arguments (Importer::MultiDist), sizes global
    bool i64 = false;          // an i64 view as its i32 words, low first (Importer::i64_views_as_words)
};

struct IndirectTile;

struct Tile {
    View v;
    Scalar origin;  // elements from the view's offset
    std::vector<int64_t> shape;
    int64_t inner_start = -1;  // the innermost subscript when constant
    std::vector<Scalar> idx;       // a tile of a distributed view over several arguments: its subscripts
    std::vector<IExpr> idx_expr;   // the subscripts as written
    std::shared_ptr<const IndirectTile> ind;  // a ktdp.construct_indirect_access_tile's (v: the data view)
};

// A ktdp.construct_indirect_access_tile (ktir_import_indirect.cpp): element (v0, ..., vn-1) of the
// tile is the view's element at subscripts that are each either affine in the variables (direct)
// or an element of an index view at subscripts affine in them (ind(...)).
struct IndirectTile {
    struct Affine {  // base + sum of coef[i] * v_i; base a value of the function, held by the tile
        Scalar base;
        std::vector<int64_t> coef;
    };
    struct Index {  // ind(%idx[...]): the index view (i32, device memory) and its subscripts
        View v;
        std::vector<Affine> subs;
    };
    std::vector<int> ind;         // per dimension of the view: -1 (direct) or which Index
    std::vector<Affine> direct;   // per dimension (the direct ones)
    std::vector<Index> index;
    std::vector<std::string> vars;  // the intermediate variables' names, for messages
};

struct Tens {
    enum Kind { InLx, Splat, Bcast, Empty } kind = InLx;
    DType t = DType::F16;
    std::vector<int64_t> shape;
    Lx at;                         // InLx: byte address of element 0
    std::vector<int64_t> bstride;  // InLx: byte stride of each dim (innermost: the element size)
    double splat = 0;              // Splat
    Lx src;                        // Bcast: the elements broadcast (one per group, or one)
    bool uniform = false;          // Bcast: one element for all
    bool row = false;              // Bcast: one row (at src) for every row, read as a row operand
    int alloc = -1;                // InLx allocated by the importer: allocation id
    bool widened = false;          // InLx f16 read as f32: an arith.extf whose one user is a reduce
    bool negated = false;          // a mask (Importer::compare) that holds 1 where the condition fails
};

struct Val {
    enum Kind { None, S, V, T, X } k = None;
    Scalar s;
    View v;
    Tile tile;
    Tens x;
    std::vector<int> regs;  // registers this value holds a reference on
    bool released = false;
};

struct Geo {
    int64_t groups = 1, sticks = 1;
};

inline DType dtype_of(const Type &t, const Op &op) {
    Type::Kind k = t.shaped() ? t.elem : t.kind;
    if (k == Type::Float && t.bits == 16) return DType::F16;
    if (k == Type::Float && t.bits == 32) return DType::F32;
    if (k == Type::Int && t.bits == 32) return DType::I32;
    if (k == Type::Int && t.bits == 8) return DType::I8;  // signless; uitofp and extui read it as uint8
    throw_error("line ", op.line, ": ", op.name, ": element type ", t.text(),
                " has no device form (f16, f32, i32 and i8 do)");
}

class Importer {
public:
    Importer(const Function &f, const ImportOptions &o)
        : fn_(f), f_(fn_), opt_(o), m_(o.machine), sb_(o.machine.stick_bytes), b_(f.name, 1) {
        make_names_unique(fn_);
    }

    DeviceProgram run();

private:
    // ================================================================== preprocessing
    int grid_cores();

    // ------------------------------------------------------------------ buffers
    struct BufInfo {
        std::string name;
        BufferKind kind = BufferKind::Input;
        bool kind_fixed = false;
        DType t = DType::F16;
        std::vector<int64_t> shape;  // MLIR order (outermost first)
        int64_t const_addr = -1;     // a buffer at a constant address (no argument)
        int64_t elems = 0;
        bool elem_sticks = false;    // each element in a stick of its own: shape gets an innermost 1
    };

    static std::string strip(std::string n, std::initializer_list<const char *> suffixes);

    const Op *def_op(const std::string &name) const;

    static bool memory_space_hbm(const Op &op);
    // Row-major strides of a dense tensor of `sizes` (no padding).
    static std::vector<int64_t> dense_strides(const std::vector<int64_t> &sizes);
    // The device strides of an HBM view whose KTIR strides are dense: rows padded to whole sticks.
    void to_stick_layout(View &v, const Op &op);

    // Finds the function argument an HBM view's offset derives from (through addi / subi).
    std::string base_arg(const std::string &v, int depth = 0) const;

    void find_buffers();
    // An argument no view is constructed on directly: declares its buffer as the union of `views`
    // (its views at offsets) over every tile and loop iteration (ktir_infer_buffer.cpp). False,
    // with the reason in *why, when the offsets cannot be evaluated or the views do not tile rows.
    bool infer_buffer_view(const std::string &arg, const std::vector<const Op *> &views, std::string *why);
    std::deque<Op> inferred_views_;  // the declaring views infer_buffer_view made
    // Where an address is evaluated at import: `arg` counts as 0, `loop_of` maps the induction
    // variables that may be bound (to their scf.for).
    struct OffsetScope {
        const std::string &arg;
        const std::map<std::string, const Op *> &loop_of;
    };
    // The value of `name` at tile `core` with the loop variables in `ivs`: constants, tile ids,
    // `--arg` values and integer arithmetic of them. `need` collects loop variables `ivs` lacks
    // (the value is then a placeholder). False, with the reason in *why, otherwise.
    bool offset_value(const OffsetScope &scope, const std::string &name, int64_t core,
                      const std::map<std::string, int64_t> &ivs, std::set<std::string> *need, int64_t *out,
                      std::string *why, int depth = 0);

    int declare_buffer(const Op &v, const std::string &name, int64_t const_addr);
    void split_stick_layout(const Op &v, const std::vector<size_t> &order, const BufInfo &bi,
                            std::vector<int64_t> &halide, DeviceLayout &layout);

    void bind_args();

    // ================================================================== values and registers
    Val &val(const std::string &name, const Op &op);
    Scalar scalar(const std::string &name, const Op &op);
    Tens &tensor(const std::string &name, const Op &op);

    Reg new_reg(const Op &op);
    void hold(Val &v, Reg r);
    void hold_s(Val &v, const Scalar &s);
    void hold_scalar(Val &v) { hold_s(v, v.s); }
    void hold_tensor(Val &v);
    void unhold(int r) { --refs_[r]; }
    // Between ops: every register no value holds is free again (temporaries, dead values).
    void sweep();
    // A register holding the scalar (materialised; normalised to 0 / 1 if pending).
    Reg reg_of(const Scalar &s, const Op &op, Reg *temp);

    void define(const Op &op, size_t i, Val v);
    Val scalar_val(Scalar s);
    Val reg_val(Reg r);

    // Frees values whose last use is at or before `pos`.
    void release_dead(int pos);

    // ================================================================== LX allocation
    // The tensors' LX (device/lx_arena.h, the allocator the code generator uses too).
    int lx_alloc(int64_t bytes, const Op &op);
    void lx_free(int id) { lx_.free(id); }

    // A fresh LX tensor: rows (innermost dim) padded to `row_sticks` sticks (0: as few as fit).
    Tens new_tensor(DType t, const std::vector<int64_t> &shape, const Op &op, int64_t row_sticks = 0);

    // ================================================================== synchronisation
    LxSpan range_of(const Tens &x) const;
    LxSpan range_at(Lx at, int64_t bytes) const;
    // Automatic synchronisation only: an explicitly synchronised function carries its own waits.
    void before(Queue q, const Access &a);
    void after(int tag, Queue q, Access a);
    void drain() { hz_.drain(); }
    int tag_for(const Op &op, Queue q);

    // ================================================================== geometry
    // Groups of sticks back to back, as vector instructions address them.
    Geo geo(const Tens &x, const Op &op, const char *what) const;
    // Whether a tensor's elements are packed (each one eb after the last): per-group scalars.
    bool packed(const Tens &x) const;
    int64_t elements(const std::vector<int64_t> &shape) const;

    // LX byte address of a scalar element address (in elements of `eb` bytes).
    Lx lx_addr(const Scalar &s, DType t, const Op &op);
    // Memory views whose sizes are values (`sizes: [%n]`, `memref<?xf32>`; ktir-cpu's dynamic
    // kernels): each such size is resolved to the --arg it comes from (through index casts) or a
    // constant, and the view and every type of it made static, before anything else reads the
    // function: the kernel is specialised to that shape, as a compiler specialises a generic kernel.
    void specialise_dynamic_sizes();
    int64_t lx_attr(const std::string &name) const;  // a spyre.lx_offset attribute's bytes, or -1 (0 for the shared one)
    // Byte offset within an HBM buffer: register + immediate.
    std::pair<Reg, int32_t> dram_addr(const Scalar &s, int64_t eb, const Op &op);
    void free_temps();

    // ================================================================== scalar arithmetic
    Scalar add(const Scalar &a, const Scalar &b, const Op &op, bool sub = false);
    Scalar mul(const Scalar &a, const Scalar &b, const Op &op);
    Scalar binop(Opcode oc, const Scalar &a, const Scalar &b, const Op &op);
    static int64_t fold(Opcode oc, int64_t x, int64_t y);
    Scalar scalar_op(Opcode oc, const Scalar &a, const Scalar &b, const Op &op);
    Scalar not01(const Scalar &s, const Op &op) {  // 1 - s for s in {0, 1}
        if (s.known) {
            Scalar o;
            o.known = true;
            o.c = s.c == 0;
            return o;
        }
        Scalar z;
        z.known = true;
        return scalar_op(Opcode::CMPEQ, s, z, op);
    }
    Scalar eval(const IExpr &e, const Op &op, int depth = 0);
    Scalar apply_map(const IExpr &e, const std::vector<Scalar> &dims, const std::vector<Scalar> &syms,
        const Op &op, int depth = 0);

    // ================================================================== regions
    bool pure_between(const Op &op, const Op &user);
    // The single ktdp.store of result `res` of `op` into an LX access tile: where the op may write
    // its result directly. Null if there is none.
    const Op *lx_store_of(const Op &op, const std::string &res);
    // Where op's tensor result goes: the LX tile of the ktdp.store that stores it, when that tile
    // is packed (the store is then skipped and *tag_op becomes it), else a new tensor.
    Tens packed_result(const Op &op, DType t, const std::vector<int64_t> &shape, const Op **tag_op);
    Tens tile_tensor(const Tile &t, const Op &op);

    void lower_region(const Region &r, bool top);

    // ================================================================== ops
    void lower(const Op &op);

    void constant(const Op &op);
    // A float constant of type t (hex literals are bit patterns of the type).
    static double const_value(const Attr &a, DType t, const Op &op);

    void tile_id(const Op &op);

    void affine_apply(const Op &op);

    void scalar_arith(const Op &op);

    void float_arith(const Op &op, const std::vector<Scalar> &a);

    // ------------------------------------------------------------------ views and tiles
    void memory_view(const Op &op);

    void access_tile(const Op &op);

    // The access_tile_set must be the box [0, extent) of the tile's type.
    void check_box(const Attr &a, const std::vector<int64_t> &shape, const Op &op);
    static bool linear(const IExpr &e, int64_t scale, std::vector<int64_t> &coef, int64_t &c, int depth = 0);
    // Whether an attribute is the identity affine_map (an access_tile_order, a variables_space_order).
    static bool identity_map(const Attr &a);
    // The box [lo, hi] (inclusive, per dimension) an integer set of one bound per constraint
    // describes; returns the index of the first constraint that is not such a bound, else -1.
    static int box_bounds(const IntegerSet &s, std::vector<int64_t> &lo, std::vector<int64_t> &hi);

    // ------------------------------------------------------------------ distributed views
    // (ktir_import_distributed.cpp) A ktdp.construct_distributed_memory_view whose partitions are
    // device-memory views that tile one argument's tensor, each where a view of the whole tensor
    // would put it: that whole view. Declares the argument's buffer with the global shape.
    void distributed_views(const std::vector<const Op *> &dist);
    std::map<const Op *, Op> dist_views_;  // distributed view -> the view of the whole tensor
    // A distributed view whose partitions are views of different arguments (ktir-cpu's
    // distributed-view-copy examples: two arguments as the halves of one tensor): a tile reads from
    // each partition it overlaps, at a constant position the pieces it overlaps, at a run-time one
    // (a loop variable) the partition holding it, chosen by IF; the import checks that every value
    // of the loop puts the tile inside one partition.
    struct MultiDist {
        std::vector<std::string> parts;              // the partitions' views
        std::vector<std::vector<int64_t>> lo, hi;    // each partition's box of global coordinates
        std::vector<int64_t> shape;
    };
    std::vector<MultiDist> multi_dists_;
    std::map<const Op *, int> multi_dist_of_;
    std::map<std::string, const Op *> loop_of_iv_;  // induction variable -> its scf.for
    void multi_dist(const Op &d);  // checks and records one (distributed_views)
    void multi_dist_view(const Op &op, int id);
    void multi_dist_dma(const Op &op, const Tile &t, const Tens &lx);
    // The values a run-time subscript of a distributed tile takes: an scf.for induction variable
    // whose bounds the import evaluates. False, with the reason, otherwise.
    bool subscript_values(const IExpr &e, std::vector<int64_t> *values, std::string *why);

    // ------------------------------------------------------------------ loads and stores
    Tile tile_of(const std::string &name, const Op &op);

    // ------------------------------------------------------------------ indirect access
    // (ktir_import_indirect.cpp) ktdp.construct_indirect_access_tile: the tile's subscripts, split
    // into affine forms of its variables. A load or store of it (a gather or a scatter of rows)
    // copies each index view into LX, reads each index it needs into a register (LDLX) and moves
    // one block of rows per combination of the variables the indices read, by a DMA at the address
    // they give: the device's data-dependent DMA.
    void indirect_access_tile(const Op &op);
    // Before anything reads the function: each i64 memory view (torch's int64 indices: an embedding's
    // token ids, a KV cache's slot mapping) becomes a view of its i32 words, low word first, twice
    // as many along the innermost dimension; its buffer is declared so. Only an indirect tile may
    // read it, as an index of 64 bits (two LDLX); any other access is refused by name.
    void i64_views_as_words();
    std::set<const Op *> i64_views_;
    IndirectTile::Affine var_affine(const IExpr &e, const IndirectTile &it, const Op &op, int depth = 0);
    void indirect_dma(const Op &op, bool store_to_hbm, const Tile &t, const Tens &lx);

    // ------------------------------------------------------------------ rows inside sticks
    // (ktir_import_partial.cpp) The lane (mod the stick's lanes) a value, a subscript and a tile's
    // rows start at, when the import knows it for every value they take.
    bool value_residue(const std::string &name, int64_t lanes, int64_t *r, int depth = 0);
    bool subscript_residue(const IExpr &e, int64_t lanes, int64_t *r, int depth = 0);
    bool row_start_lane(const Tile &t, int64_t *rho);
    // Whether a value, or a subscript, depends on the compute tile id (through its operands and loop
    // bounds); true when too deep to tell.
    bool reads_tile_id(const std::string &name, int depth = 0);
    bool subscript_reads_tile_id(const IExpr &e, int depth = 0);
    // A load of rows that start at lane rho (> 0) of a stick: the sticks holding them, VSHIFT down;
    // a store of rows that start at lane rho or end inside a stick: the sticks read, the rows merged
    // in (VSHIFT up, VSELIDX twice) and written back.
    void partial_rows(const Op &op, bool store_to_hbm, const Tile &t, const Tens &lx, int64_t rho);
    // The lanes a tile's rows start at over every value of its innermost subscript, a loop variable
    // (spyre-kernels' matmul: 32-column tiles at k = 0, 32, 64, 96 start at lanes 0 and 32).
    bool row_start_lanes(const Tile &t, std::set<int64_t> *rhos);
    // A load at such lanes: the lane computed at run time, one IF per lane with that lane's load.
    void load_at_lanes(const Op &op, const Tile &t, const Tens &lx, const std::set<int64_t> &rhos);

    // DMA between an HBM tile and an LX tensor laid out like it.
    void dma(const Op &op, bool store_to_hbm, const Tile &t, const Tens &lx);
    bool shared_load(const Op &op) const;

    void load(const Op &op);

    void store(const Op &op);

    // Instructions write whole sticks: a tile written in memory must have rows of whole sticks, or
    // end where the view's rows end (the rest of the stick is padding), else the write would spill
    // into the elements after it.
    void check_row_end(const Tile &t, const Op &op);
    bool rows_end_cleanly(const Tile &t);  // what check_row_end checks

    // A store into LX must not overwrite a tensor that is still to be read there (KTIR values are
    // immutable; a loaded LX tile is read in place).
    void check_clobber(const Tens &dst, const Op &op, const std::string &stored);

    // Puts a Splat / Bcast / InLx tensor into LX at `into` (or a fresh tensor).
    Tens materialize(const Tens &x, const Op &op, const Tens *into);

    // One vector instruction, with its hazards. src1_elems > 0: src1 holds that many elements
    // (one per group) rather than sticks.
    void vec_emit(const Op &op, Opcode oc, DType t, const Tens &dst, const Tens *a, const Tens *b2, Geo g,
        uint8_t mode = 0, int32_t aux = 0, double fill = 0, int64_t src0_elems = 0, int64_t src1_elems = 0,
        int64_t dst_elems = 0, DType dst_t = DType::F16);

    // Where an op producing tensor `res` of type t / shape writes it: the LX tile it is stored to
    // next (that store is then done), else a fresh tensor with rows of `row_sticks` sticks.
    Tens destination(const Op &op, const std::string &res, DType t, const std::vector<int64_t> &shape,
        int64_t row_sticks, bool need_geo = true, Geo want = Geo{},
        bool exact_elements = false);

    void splat(const Op &op);

    void extract(const Op &op);

    void reshape(const Op &op);
    Val general_reshape(const Op &op, const Tens &x, const std::vector<int64_t> &out);
    void extend_life(const std::string &from, const std::string &to);
    bool widens_into_a_reduce(const Op &op, const Tens &x, DType to) const;
    bool widens_into_a_matmul(const Op &op, const Tens &x, DType to) const;
    // A fill or broadcast first stored into LX and after that only stored to device memory or
    // reshaped: from that store on it is the LX tile it was stored to.
    bool kept_where_stored(const std::string &value) const;

    void broadcast(const Op &op);
    Val row_broadcast(const Op &op, const Tens &s, const Type &rt);
    // `row` (one row of `sticks` sticks in LX) into each of the `rows` rows of `dst`: one copy, then
    // copies of the rows already written, log2(rows) copies instead of one per row.
    void copy_row_to_rows(const Op &op, const Tens &row, const Tens &dst, int64_t rows, int64_t sticks);
    // Whether `value`'s one user is an element-wise op of two tensors (which reads a broadcast row as
    // its row operand, kSrc1Row, instead of a copy per row).
    bool row_operand_user(const std::string &value) const;

    // Elementwise arith / math / named linalg ops on tensors.
    void tensor_op(const Op &op);
    // A float scalar op with an operand that is an element in LX (a tensor.extract, or such an op's
    // result): done by tensor_op on one stick, the element at its start and float constants as
    // splats; the result is such an element (which tensor.splat broadcasts).
    bool element_arith(const Op &op);
    // arith.fptosi / fptoui of an element in LX, or an integer cast of an i32 element: the value
    // into a register (VCVT to i32 when it is a float, truncating toward zero as fptosi does, then
    // LDLX once the conversion is done): a slot index read from data (spyre-kernels'
    // reshape_and_cache). False when the operand is not such an element.
    bool element_to_register(const Op &op);

    void binary(const Op &op, Opcode oc, Tens x, Tens y, DType t);

    // (ktir_import_compare.cpp) arith.cmpf, and arith.cmpi on float or i32 values, of tensors or of
    // elements in LX: a mask in the operands' type, 1 where the condition holds (VCMPLT, VCMPLE,
    // VCMPEQ; a predicate that is the negation of one of these keeps its mask and marks it negated).
    // arith.select by such a mask: VSELM. `compares_in_lx` says whether `op` is such a compare or
    // select (else it is scalar arithmetic on registers).
    bool compares_in_lx(const Op &op);
    void compare(const Op &op);
    void mask_select(const Op &op);
    // tensor.generate of a 2-D tensor whose element (i, j) is a select, by a compare of i and j, of
    // two constants (a causal mask, spyre-kernels' prefill_attention): two fills and one VSELIDX
    // whose limit grows with the row. Any other body is refused by name.
    void generate(const Op &op);
    // An operand of a compare or select: a tensor, or a float or integer constant as a splat of type t.
    Tens operand_or_splat(const std::string &name, DType t, const Op &op);

    // VCVT, or with `fp8` a format code (device/fp8.h) VCVTF8 between byte codes and floats.
    void convert(const Op &op, Tens x, DType to, int fp8 = -1);

    // "spyre.to_fp8" / "spyre.from_fp8" {format = "e4m3" | "e5m2"}: VCVTF8 (docs/ktir.md).
    void fp8_convert(const Op &op);

    // Combining op of a linalg.reduce: its short form or the one arith op of its region.
    std::string combiner(const Op &op);

    // The init (outs) of a reduction or matmul: empty, a splat, or a tensor in LX consumed here.
    enum class Init { None, Splat, InPlace };

    void reduce(const Op &op);
    // A linalg.reduce of a 2-D tensor over its rows (dimensions = [0]), `red` the reduction its
    // combiner names and `ident` that reduction's identity: one fold over the rows (kFoldGroups)
    // into the init's row.
    void fold_rows(const Op &op, Tens x, Tens init, Opcode red, double ident);

    void matmul(const Op &op);

    void transpose(const Op &op);
    void batched_transpose(const Op &op);

    // ------------------------------------------------------------------ ring
    void ring_reduce(const Op &op);

    void ring_transfer(const Op &op);
    // RING_REDUCE of the tensor `in` (whole sticks, packed) into op's result of element type `t`
    // (and of `shape`, the same elements, when given).
    void ring_reduce_of(const Op &op, const std::string &in, RedOp ro, DType t, const std::vector<int64_t> *shape,
                        int32_t group_size = 0, int32_t group_stride = 0);

    // ------------------------------------------------------------------ inter-tile communication
    // (ktir_import_inter_tile.cpp) ktdp.inter_tile_produce: lowers the producer region and records
    // the future; ktdp.inter_tile_reduce: RING_REDUCE of the future's partial (BARRIER when only
    // its synchronisation is used).
    struct Future {
        std::string partial;  // the tensor each tile yields
        Type type;            // its type as the future declares it
        const Op *produce = nullptr;
        int32_t group_size = 0, group_stride = 0;  // RING_REDUCE's group (0: every core)
    };
    std::map<std::string, Future> futures_;
    void inter_tile_produce(const Op &op);
    void inter_tile_reduce(const Op &op);
    // The RedOp of an inter_tile_reduce's combiner region (one add, max or min of its arguments).
    RedOp tile_combiner(const Op &op);

    // ------------------------------------------------------------------ shifted stick access
    // "spyre.shift": VSHIFT of a 1-D LX tensor (the elements read) into rows (docs/ktir.md).
    void shift(const Op &op);
    // The same VSHIFT spelt in ops ktir-cpu runs (docs/ktir.md, "Shifted reads"): tensor.insert_slice,
    // extract_slice and reshape of the 1-D source and of zero splats, the last insert_slice carrying
    // the instruction's operands as spyre.shift, spyre.lo, spyre.hi, spyre.origin and spyre.edge.
    // Each part is kept as the element of the source each element reads (-1: zero) and emits
    // nothing; the last op checks that the parts compute what its attributes say.
    // A lane select (VLSEL) is spelt so too, from two sources, its block on the last insert_slice
    // as spyre.lane_select: the elements of the second source are kSecondRoot + their index.
    struct ShiftPart {
        std::string root;   // the source's SSA name ("" while only zeros)
        std::string root2;  // a second source (lane selects only)
        DType t = DType::F16;
        std::vector<int64_t> shape, map;
    };
    static constexpr int64_t kSecondRoot = int64_t(1) << 40;
    // The VLSEL the parts of `r` spell, checked element by element against its block.
    void emit_lane_select_slices(const Op &op, const ShiftPart &r);
    std::map<std::string, ShiftPart> shift_parts_;
    ShiftPart shift_part(const std::string &name, const Op &op);
    void keep_source_alive(const std::string &root, const std::string &part);
    void slice(const Op &op);
    // VSHIFT of `src` into op's result, its operands from the attributes `prefix` + "shift" etc.;
    // `map`, when given, must be what the instruction reads (the parts' map).
    void emit_shift(const Op &op, const std::string &prefix, const std::string &src, const std::vector<int64_t> *map);
    // "spyre.lane_select": VLSEL of two LX tensors of the same rows, by lane block (docs/ktir.md).
    void lane_select(const Op &op);
    void lane_select_of(const Op &op, const std::string &a, const std::string &b, int64_t block);
    // "spyre.index_select": VSELIDX of two LX tensors (the second may be one element per row) by
    // lane index against an index value (docs/ktir.md).
    void index_select(const Op &op);
    void index_select_of(const Op &op, const std::string &x, const std::string &y, const std::string &limit,
                         int64_t per_group);
    // VSELIDX as the export spells it in standard ops (docs/ktir.md, "Index selects"): an arith.select
    // carrying spyre.index_select of a mask that compares lane indices with a limit. Before lowering,
    // find_index_selects() checks each such mask and marks the ops that build it (and the second
    // operand's broadcast along the rows) to be skipped; the select lowers to one VSELIDX.
    struct IndexSelectOps {
        std::string x, y, limit;  // the two sources and the limit's index value
        int64_t per_group = 0;
    };
    std::map<const Op *, IndexSelectOps> index_selects_;
    void find_index_selects();
    void index_select_ops(const Op &op);
    // The result tensor of a two-source vector select and its hazards around `emit`, which issues
    // the instruction (with the tag it is given) into the result's LX address.
    void two_source_select(const Op &op, DType t, const Type &rt, const Tens &x, const Tens &y, const Geo &g,
                           const std::function<void(int tag, Lx dst)> &emit);

    // ------------------------------------------------------------------ control flow
    const Op *terminator(const Region &r) const;
    // Lowers a region's ops up to its scf.yield (not included); returns the terminator.
    const Op *lower_body(const Region &r);

    void for_loop(const Op &op);

    // Which values hold each register ("%a, %b"), to name them in check_back_edge.
    std::map<int, std::string> register_holders() const;
    // After the LOOP at loop_pc is closed: no register the body reads before writing it may be
    // written in the body, except the loop's carried (iter_args) registers. A violation is the
    // importer's own register-allocation error: it throws naming the register, its values on
    // entry (`holders`), the loop and the instruction, rather than run a silently wrong program.
    void check_back_edge(const Op &op, size_t loop_pc, const std::vector<Val> &carried,
                         const std::map<int, std::string> &holders) const;

    // scf.yield: moves yielded values into the carried registers / LX places.
    void yield_into(const Op &y, const std::vector<Val> &carried);

    void if_op(const Op &op);

    // ================================================================== state
    Function fn_;  // the function with unique value names
    const Function &f_;
    const ImportOptions &opt_;
    MachineDesc m_;
    int64_t sb_;
    ProgramBuilder b_;
    bool explicit_ = false;
    int num_cores_ = 1;
    std::vector<int64_t> grid_;

    SsaInfo ssa_;
    std::map<const Op *, OpPosition> &info_ = ssa_.ops;
    std::map<std::string, ValueUses> &du_ = ssa_.values;
    std::map<std::string, const Op *> defs_;

    std::set<std::string> pointer_args_;
    std::map<std::string, const Op *> arg_view_;
    std::map<const Op *, std::string> arg_of_view_;            // the view that declares an argument's buffer
    std::map<std::string, std::vector<int64_t>> tile_inner_;  // per argument: its tiles' innermost extents
    std::map<std::string, int> arg_buffer_;
    std::vector<BufInfo> bufs_;
    std::set<int> stored_, loaded_;  // buffers the kernel stores to / loads from

    std::map<std::string, Val> vals_;
    std::map<std::string, std::vector<int64_t>> shape_consts_;  // 1-D dense index constants (reshape shapes)
    int refs_[kNumRegs] = {};  // references on each register the builder allocated (b_.alloc)
    std::vector<Reg> temps_;
    std::set<const Op *> skip_;

    LxArena lx_;
    int64_t lx_base_ = 0;
    // The function's spyre.lx_offset: bytes our exporter added to every LX address (ExportOptions).
    int64_t lx_offset_ = 0;
    // The offset of each element type's LX (spyre.lx_offset_<type>; lx_offset_ where none is given).
    std::array<int64_t, kNumDTypes> lx_offsets_{};

    // A core records a bounded number of unwaited instructions (the simulator faults past 4096): a
    // long run of independent ones waits now and then.
    static constexpr size_t kMaxPending = 1024;
    HazardTracker hz_{b_, kMaxPending};

public:
    std::vector<BufInfo> &bufs() { return bufs_; }
    std::set<int> &stored() { return stored_; }
};

}  // namespace spyre::ktir::lowering
