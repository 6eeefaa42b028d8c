// Random KTIR kernels for differential testing of the importer (spyre-ktir-fuzz): a kernel is a
// small program over 1 x 64 fp16 row tiles (loads through access tiles, elementwise arithmetic,
// stores, buffers updated in place) inside one of several loop forms over each compute tile's
// block of rows (a plain loop, two nested loops, an index iter_arg carrying the row, a tensor
// iter_arg accumulating a sum), with constant splats as operands and rows of one or two tiles. It is written out as KTIR text for the importer and evaluated
// directly by a reference interpreter of the same semantics, row tiles as arrays. A tile's sum may
// be all-reduced across the tiles (the partials combined in tile order, rounded to fp16 each step).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace spyre::ktirfuzz {

// One statement of the loop body, run once per row r of the tile's block.
struct Stmt {
    enum Kind { Load, Bin, Unary, Const, Store } kind = Load;
    int buffer = 0;       // Load / Store
    bool mirror = false;  // Load / Store: row (2 * base + rows_per_tile - 1) - r instead of r
    int col = 0;          // Load / Store: first column (0 or kTile)
    int op = 0;           // Bin: index into kBinOps; Unary: into kUnaryOps; Const: into kConsts
    int a = 0, b = 0;     // Bin / Unary: earlier values; Store: the value stored
};

inline constexpr const char *kBinOps[] = {"arith.addf", "arith.subf", "arith.mulf", "arith.maximumf",
                                          "arith.minimumf"};
inline constexpr int kNumBinOps = 5;
inline constexpr const char *kUnaryOps[] = {"arith.negf", "math.absf"};
inline constexpr int kNumUnaryOps = 2;
inline constexpr const char *kConsts[] = {"0.5", "-1.0", "3.0", "0.0"};  // exact in fp16
inline constexpr int kNumConsts = 4;
inline constexpr int kTile = 64;  // columns of a tile: one fp16 stick

struct Kernel {
    int rows = 4, grid = 1;  // rows of each buffer; compute tiles (each takes rows / grid rows)
    int buffers = 2;         // b0, b1, ...: rows x cols fp16
    int cols = kTile;        // kTile or 2 * kTile
    enum Form { Plain, Nested, IndexIterArg } form = Plain;
    int sum_of = -1;         // >= 0: a tensor iter_arg sums this value over the rows into buffer "acc" (grid x 64)
    // >= 0 (with sum_of): the tiles' sums are all-reduced across the tiles with kBinOps[all_reduce]
    // (add, max or min: ktdp.inter_tile_produce and inter_tile_reduce) before each tile stores it.
    int all_reduce = -1;
    // The all-reduce's groups: `group` tiles each, adjacent (`strided` false: tiles g * group ...
    // g * group + group - 1) or every (grid / group)-th tile (tiles g, g + grid / group, ...).
    int group = 1;
    bool strided = false;
    std::vector<Stmt> body;
    // How IBM's tools may spell the same kernel: the access tile's short type `<1x64xindex>` in
    // loads and stores, ktir-cpu's `#ktdp.memory_space<global>`, `loc(...)` on every op with the
    // `#loc` aliases after the module, and the grid as [grid, 1] read with one tile id.
    bool short_types = false, global_space = false, locations = false, grid_2d = false;
    int values() const;      // number of values (Load and Bin statements)
};

Kernel random_kernel(uint32_t seed);
std::string ktir_text(const Kernel &k);

// Buffer contents by name (dense, row-major), fp16 bits.
using Images = std::map<std::string, std::vector<uint16_t>>;
// The initial contents of every buffer the kernel loads (random, from `seed`).
Images random_inputs(const Kernel &k, uint32_t seed);
// The reference: every buffer after the kernel (buffers never stored keep their inputs; stored
// buffers that are never loaded start as zeros, as device outputs do).
Images evaluate(const Kernel &k, const Images &inputs);

}  // namespace spyre::ktirfuzz
