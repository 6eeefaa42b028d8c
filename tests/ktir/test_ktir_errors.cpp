// Bad KTIR gets a clear error naming the op (or attribute, argument, buffer) and its line: one
// case per error path of the reader and the importer, each checking its message.
#include <gtest/gtest.h>

#include "device/error.h"
#include "ktir_export.h"
#include "ktir_import.h"
#include "ktir_reader.h"

namespace {

using namespace spyre;

struct BadCase {
    std::string name, text, want;
    std::map<std::string, std::string> args = {};
    std::string func = "";
};

void PrintTo(const BadCase &c, std::ostream *os) { *os << c.name; }

// A valid kernel (line 2 is the func.func line) with `body` inserted after the views (line 5 on).
std::string kernel(const std::string &body, const std::string &attrs = "", const std::string &extra_args = "") {
    return "// test kernel\n"
           "func.func @k(%x_ptr: index, %y_ptr: index" + extra_args + ")" + attrs + " {\n"
           "  %c0 = arith.constant 0 : index\n"
           "  %xv = ktdp.construct_memory_view %x_ptr, sizes: [4, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<4x64xf16>\n"
           "  %yv = ktdp.construct_memory_view %y_ptr, sizes: [4, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<4x64xf16>\n" +
           body + "  return\n}\n";
}
const std::string kLoad =
    "  %t = ktdp.construct_access_tile %xv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>\n"
    "  %v = ktdp.load %t : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>\n"
    "  %u = ktdp.construct_access_tile %yv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>\n";
// The loaded tile as one run (a shift's source), and a shift of it with the given attributes.
const std::string kFlat = "  %f = tensor.collapse_shape %v [[0, 1]] : tensor<4x64xf16> into tensor<256xf16>\n";
std::string shift_op(const std::string &attrs, const std::string &shape = "4x64") {
    return "  %w = \"spyre.shift\"(%f) {" + attrs + "} : (tensor<256xf16>) -> tensor<" + shape + "xf16>\n";
}
const std::string kStore = "  ktdp.store %w, %u : tensor<4x64xf16>, !ktdp.access_tile<4x64xindex>\n";

// An inter-tile produce of %v over the given tile sets and a reduce of it with `combiner`
// (lines 9-12 and 13-16 after kLoad): the dialect's all-reduce (ktir-mlir-frontend's ODS).
std::string inter_tile(const std::string &producers = "(i)[g] : (i >= 0, -i + 3 >= 0)",
                       const std::string &groups = "(g) : (g == 0)",
                       const std::string &combiner = "%s = arith.addf %l, %r : tensor<4x64xf16>",
                       const std::string &reduce_attrs = "", const std::string &result = "tensor<4x64xf16>",
                       const std::string &partial = "tensor<4x64xf16>") {
    const std::string fut = "!ktdp.tile_future<" + partial + ", groups = affine_set<" + groups + ">>";
    return kLoad + "  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<" + producers + "> -> " + fut +
           " {\n  ^bb0(%gid: index):\n    ktdp.yield_partial %v : " + partial + "\n  }\n"
           "  %w = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0)>, " + reduce_attrs +
           "identity(%v : tensor<4x64xf16>) : " + fut + " -> " + result +
           " {\n  ^bb0(%l: tensor<4x64xf16>, %r: tensor<4x64xf16>):\n    " + combiner + "\n    ktdp.yield_reduced %s : "
           "tensor<4x64xf16>\n  }\n";
}
const std::string kGrid4 = " attributes {grid = [4]}";
// `s` with every `from` replaced by `to`.
std::string subst(std::string s, const std::string &from, const std::string &to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}


// A kernel whose only view of %x_ptr is at `offset` (lines 3-4 hold `pre`, which defines it) inside
// the loop `loop` (an scf.for header, or empty): no view declares the argument's buffer directly.
std::string offset_kernel(const std::string &pre, const std::string &offset, const std::string &loop = "",
                          const std::string &view = "sizes: [1, 64], strides: [64, 1]", const std::string &args = "") {
    std::string m = "memref<1x64xf16>";
    return "// test kernel\nfunc.func @k(%x_ptr: index" + args + ") attributes {grid = [4]} {\n" + pre +
           "  %id = ktdp.get_compute_tile_id : index\n  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n" +
           (loop.empty() ? "" : loop + " {\n") + "  %xa = arith.addi %x_ptr, " + offset + " : index\n"
           "  %xv = ktdp.construct_memory_view %xa, " + view + " {memory_space = #ktdp.memory_space<global>} : " + m + "\n"
           "  %t = ktdp.construct_access_tile %xv[%c0, %c0] : " + m + " -> !ktdp.access_tile<1x64xindex>\n"
           "  %v = ktdp.load %t : !ktdp.access_tile<1x64xindex> -> tensor<1x64xf16>\n"
           "  ktdp.store %v, %t : tensor<1x64xf16>, !ktdp.access_tile<1x64xindex>\n" + (loop.empty() ? "" : "  }\n") +
           "  return\n}\n";
}
const std::string kNoView = "line 2: argument %x_ptr is used as an HBM address but no memory view is constructed directly "
                            "on it (its view gives the buffer's shape), and its views at offsets do not give it: ";

// A distributed view %d of two column halves %p0 (at %x_ptr) and %p1 (at `at1`) of a 4 x 128 tensor,
// with the given coordinate sets and strides (lines 4-8), loaded at [0, 0].
std::string dist_kernel(const std::string &at1 = "%x1", const std::string &set1 = "(d0 >= 0, -d0 + 3 >= 0, d1 - 64 >= 0, -d1 + 127 >= 0)",
                        const std::string &strides1 = "[128, 1]", const std::string &space1 = "global",
                        const std::string &extra = "") {
    return "// test kernel\nfunc.func @k(%x_ptr: index, %z_ptr: index) attributes {grid = [1]} {\n"
           "  %c64 = arith.constant 64 : index\n  %x1 = arith.addi %x_ptr, %c64 : index\n"
           "  %p0 = ktdp.construct_memory_view %x_ptr, sizes: [4, 64], strides: [128, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x64xf16>\n"
           "  %p1 = ktdp.construct_memory_view " + at1 + ", sizes: [4, 64], strides: " + strides1 + " {coordinate_set = affine_set<(d0, d1) : " + set1 + ">, memory_space = #ktdp.memory_space<" + space1 + ">} : memref<4x64xf16>\n" + extra +
           "  %d = ktdp.construct_distributed_memory_view (%p0, %p1 : memref<4x64xf16>, memref<4x64xf16>) : memref<4x128xf16>\n"
           "  %c0 = arith.constant 0 : index\n"
           "  %t = ktdp.construct_access_tile %d[%c0, %c0] : memref<4x128xf16> -> !ktdp.access_tile<4x128xindex>\n"
           "  %v = ktdp.load %t : !ktdp.access_tile<4x128xindex> -> tensor<4x128xf16>\n"
           "  ktdp.store %v, %t : tensor<4x128xf16>, !ktdp.access_tile<4x128xindex>\n  return\n}\n";
}

// The same with the halves in two arguments, %x_ptr and %z_ptr, each a dense 4 x 64 tensor.
std::string two_arg_dist_kernel(const std::string &set1 = "(d0 >= 0, -d0 + 3 >= 0, d1 - 64 >= 0, -d1 + 127 >= 0)",
                                const std::string &extra = "") {
    return subst(dist_kernel("%z_ptr", set1, "[64, 1]", "global", extra), "sizes: [4, 64], strides: [128, 1]",
                 "sizes: [4, 64], strides: [64, 1]");
}

// An indirect tile of %xv (4 x 64 f16) through the i32 index view %iv (2 x 64), of `shape` over
// variables %d0, %d1 bounded by `set`, with subscripts `subs` (line 7), then loaded (line 8) or,
// with `store`, stored from a load of %yv.
std::string indirect(const std::string &subs, const std::string &set = "(d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)",
                     const std::string &shape = "2x64", const std::string &extra = "", bool store = false,
                     const std::string &attrs = "", const std::string &view = "%xv") {
    const std::string tile = "!ktdp.access_tile<" + shape + "xindex>";
    std::string body =
        "  %iv = ktdp.construct_memory_view %i_ptr, sizes: [2, 64], strides: [64, 1] {memory_space = #ktdp.memory_space<global>} : memref<2x64xi32>\n"
        "  %w = ktdp.construct_indirect_access_tile intermediate_variables(%d0, %d1) " + view + "[" + subs +
        "] {variables_space_set = affine_set<(d0, d1) : " + set + ">" + extra + "} : memref<4x64xf16>, memref<2x64xi32> -> " +
        tile + "\n";
    if (!store) return kernel(body + "  %v = ktdp.load %w : " + tile + " -> tensor<" + shape + "xf16>\n", attrs, ", %i_ptr: index");
    return kernel(body + "  %s = ktdp.construct_access_tile %yv[%c0, %c0] : memref<4x64xf16> -> " + tile + "\n"
                  "  %v = ktdp.load %s : " + tile + " -> tensor<" + shape + "xf16>\n"
                  "  ktdp.store %v, %w : tensor<" + shape + "xf16>, " + tile + "\n", attrs, ", %i_ptr: index");
}

std::vector<BadCase> cases() {
    return {
        // ---- reader
        {"UnknownOp", kernel("  %w = arith.frobnicate %c0 : index\n"), "line 6: unsupported operation 'arith.frobnicate'"},
        {"NoOpName", kernel("  %w = 42\n"), "line 6: expected an operation name, found '42'"},
        {"UnsupportedDialectOp", kernel("  %w = vector.splat %c0 : index\n"), "line 6: unsupported operation 'vector.splat'"},
        {"IndirectTileWithoutVariables", kernel("  %w = ktdp.construct_indirect_access_tile %xv[%c0] : memref<4x64xf16>\n"),
         "line 6: expected 'intermediate_variables'"},
        // ---- indirect access tiles (lines 7 and 8, see indirect())
        {"IndirectInnermostSubscriptOfAStore", indirect("(%d0), ind(%iv[%d0, %d1])", "(d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)",
                                                         "2x64", "", true),
         "line 10: ktdp.store: indirect access: the innermost (stick) dimension's subscript is indirect; the device "
         "moves whole sticks by DMA, so indirect subscripts may select rows, not single elements (an element "
         "scatter: a store writes whole sticks)"},
        {"IndirectIndexViewNotI32", indirect("ind(%yv[%c0, %d0]), (%d1)"),
         "line 7: ktdp.construct_indirect_access_tile: index view %yv must be an i32 view of device memory (HBM) of "
         "one argument; it is of f16"},
        {"IndirectOfAnLxView", subst(indirect("ind(%iv[%c0, %d0]), (%d1)", "(d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)",
                                              "2x64", "", false, "", "%lv"), "  %iv =",
                                     "  %lv = ktdp.construct_memory_view %c0, sizes: [4, 64], strides: [64, 1] "
                                     "{memory_space = #ktdp.spyre_memory_space<LX>} : memref<4x64xf16>\n  %iv ="),
         "line 8: ktdp.construct_indirect_access_tile: %lv must be a view of device memory (HBM) of one argument; "
         "indirect access to LX is not supported"},
        {"IndirectWithoutVariablesSet", subst(indirect("ind(%iv[%c0, %d0]), (%d1)"), "variables_space_set", "other_set"),
         "line 7: ktdp.construct_indirect_access_tile: needs variables_space_set, an affine_set"},
        {"IndirectIndexSubscriptCount", indirect("ind(%iv[%d0]), (%d1)"),
         "line 7: ktdp.construct_indirect_access_tile: ind(%iv[...]) needs 2 subscripts, one per dimension of the "
         "index view"},
        {"I64ViewReadDirectly", kernel("  %iv = ktdp.construct_memory_view %i_ptr, sizes: [4], strides: [1] {memory_space = #ktdp.memory_space<global>} : memref<4xi64>\n"
                                       "  %w = ktdp.construct_access_tile %iv[%c0] : memref<4xi64> -> !ktdp.access_tile<4xindex>\n",
                                       "", ", %i_ptr: index"),
         "line 7: ktdp.construct_access_tile: %iv is an i64 view; i64 tensors have no device form, so an i64 view may "
         "only be the index view of an indirect access tile (ind(...))"},
        {"I64ViewStrided", kernel("  %iv = ktdp.construct_memory_view %x_ptr, sizes: [4], strides: [2] {memory_space = #ktdp.memory_space<global>} : memref<4xi64>\n"),
         "line 6: ktdp.construct_memory_view: an i64 view's innermost stride must be 1"},
        {"IndirectSymbols", subst(indirect("ind(%iv[%c0, %d0]), (%d1)"), "] {variables_space_set", "] symbols(%c0) {variables_space_set"),
         "line 7: ktdp.construct_indirect_access_tile: symbols(...) (a variables_space_set bounded by values: a tile "
         "whose size is known only at run time) is not supported"},
        {"TileExtentKnownAtRunTime", kernel("  %w = ktdp.construct_access_tile %xv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<?x64xindex>\n"),
         "line 6: ktdp.construct_access_tile: a tile extent known only at run time ('?' in !ktdp.access_tile<?x64xindex>) "
         "is not supported"},
        {"IndirectTypeCount", subst(indirect("ind(%iv[%c0, %d0]), (%d1)"), "memref<4x64xf16>, memref<2x64xi32> ->",
                                    "memref<4x64xf16> ->"),
         "line 7: ktdp.construct_indirect_access_tile: needs the view and each index view's type (2 operands, 1 types)"},
        {"IndirectDirectSubscriptSkipsItsVariableInAStore",
         indirect("ind(%iv[%c0, %d0]), (%c0)", "(d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)", "2x64", "", true),
         "line 10: ktdp.store: indirect access: %d1 runs over 64 values but dimension 1's subscript does not read it" " (an element scatter: a store writes whole sticks)"},
        {"IndirectFloorDiv", indirect("ind(%iv[%c0, %d0 floordiv 2]), (%d1)"),
         "line 7: ktdp.construct_indirect_access_tile: a subscript must be a sum of intermediate variables times "
         "constants plus values of the function (floordiv, mod and products of variables are not supported)"},
        {"IndirectSetNotTheTile", indirect("ind(%iv[%c0, %d0]), (%d1)", "(d0 >= 0, -d0 + 2 >= 0, d1 >= 0, -d1 + 63 >= 0)"),
         "line 7: ktdp.construct_indirect_access_tile: variables_space_set does not match the tile type: %d0 must run "
         "over 0..1"},
        {"IndirectSetNotABox", indirect("ind(%iv[%c0, %d0]), (%d1)", "(d0 >= 0, d1 - d0 >= 0)"),
         "line 7: ktdp.construct_indirect_access_tile: variables_space_set must bound each of the 2 variables by "
         "constants (a box)"},
        {"IndirectPermutedOrder", indirect("ind(%iv[%c0, %d0]), (%d1)", "(d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)",
                                           "2x64", ", variables_space_order = affine_map<(d0, d1) -> (d1, d0)>"),
         "line 7: ktdp.construct_indirect_access_tile: only the identity variables_space_order is supported"},
        {"IndirectTileRank", indirect("ind(%iv[%c0, %d0]), (%d1)", "(d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)", "128"),
         "line 7: ktdp.construct_indirect_access_tile: the view has 2 dimensions and 2 subscripts, the tile 1 "
         "dimensions and 2 intermediate variables; a subscript per dimension of the view and a variable (at least one) "
         "per dimension of the tile"},
        {"IndirectIndexOutsideItsView", indirect("ind(%iv[%c0, %d0 + 63]), (%d1)"),
         "line 8: ktdp.load: indirect access: the index subscript 64 of dimension 1 is outside the index view (size 64)"},
        {"IndirectVariableUnreadInAStore", indirect("ind(%iv[%c0, %c0]), (%d1)", "(d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)",
                                                     "2x64", "", true),
         "line 10: ktdp.store: indirect access: %d0 runs over 2 values but no subscript of dimension 0 reads it" " (an element scatter: a store writes whole sticks)"},
        {"IndirectVariableInAnotherDimensionInAStore",
         indirect("ind(%iv[%c0, %c0]), (%d1 + %d0)", "(d0 >= 0, -d0 + 0 >= 0, d1 >= 0, -d1 + 63 >= 0)", "1x64", "", true),
         "line 10: ktdp.store: indirect access: dimension 1's subscript reads %d0; a variable that no index reads must "
         "be the subscript of its own dimension (dimension 0), once" " (an element scatter: a store writes whole sticks)"},
        {"IndirectIndexReadsTheInnermostVariableInAStore",
         indirect("ind(%iv[%c0, %d1]), (%d1)", "(d0 >= 0, -d0 + 0 >= 0, d1 >= 0, -d1 + 63 >= 0)", "1x64", "", true),
         "line 10: ktdp.store: indirect access: an index reads %d1, the innermost variable; it must walk the rows' "
         "elements" " (an element scatter: a store writes whole sticks)"},
        {"IndirectTooManyBlocks", indirect("ind(%iv[%c0, %d0]), (%d1)", "(d0 >= 0, -d0 + 4096 >= 0, d1 >= 0, -d1 + 63 >= 0)",
                                           "4097x64"),
         "line 8: ktdp.load: indirect access: the indices choose 4097 blocks of rows, more than the 4096 a load or "
         "store may move (one DMA each)"},
        {"IndirectTooManyElements", indirect("(%d0), ind(%iv[%d0, %d1])", "(d0 >= 0, -d0 + 0 >= 0, d1 >= 0, -d1 + 4096 >= 0)",
                                             "1x4097"),
         "line 8: ktdp.load: indirect access: the innermost (stick) dimension's subscript is indirect; the device "
         "moves whole sticks by DMA, so indirect subscripts may select rows, not single elements: gathered one element "
         "at a time, the indices choose 4097 elements, more than the 4096 a load or store may move (one DMA each)"},
        {"ConstantAddressViewInsideABufferOfAnotherType",
         kernel("  %a0 = arith.constant 0 : index\n  %a64 = arith.constant 64 : index\n"
                "  %fv = ktdp.construct_memory_view %a0, sizes: [4, 64], strides: [64, 1] {memory_space = #ktdp.memory_space<global>} : memref<4x64xf16>\n"
                "  %iv = ktdp.construct_memory_view %a64, sizes: [4, 64], strides: [64, 1] {memory_space = #ktdp.memory_space<global>} : memref<4x64xi32>\n"),
         "line 9: ktdp.construct_memory_view: the i32 view at 64 lies inside buffer 'fv' (f16, elements 0 to 255); a "
         "constant address counts elements of the view's type (docs/ktir.md)"},
        {"StoreAtALoopValueOffAStickBoundary",
         kernel("  %c32 = arith.constant 32 : index\n  %c64 = arith.constant 64 : index\n"
                "  %zz = ktdp.construct_memory_view %i_ptr, sizes: [4, 128], strides: [128, 1] {memory_space = #ktdp.memory_space<global>} : memref<4x128xf16>\n"
                "  %t = ktdp.construct_access_tile %xv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>\n"
                "  %v = ktdp.load %t : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>\n"
                "  scf.for %k = %c0 to %c64 step %c32 {\n"
                "    %u = ktdp.construct_access_tile %zz[%c0, %k] : memref<4x128xf16> -> !ktdp.access_tile<4x64xindex>\n"
                "    ktdp.store %v, %u : tensor<4x64xf16>, !ktdp.access_tile<4x64xindex>\n  }\n", "", ", %i_ptr: index"),
         "line 13: ktdp.store: the tile starts at element 32 of its rows (%k = 32), not at a stick boundary (64 "
         "elements); a DMA moves whole sticks"},
        {"CompareWithoutAVectorPredicate", kernel(kLoad + "  %m = arith.cmpf one, %v, %v : tensor<4x64xf16>\n"),
         "line 9: arith.cmpf: predicate 'one' has no vector form (oeq, une, olt, ole, ogt, oge, ult, ule, ugt, uge; "
         "cmpi: eq, ne, slt, sle, sgt, sge and their unsigned forms)"},
        {"SelectInLxByARegisterCondition",
         kernel(kLoad + "  %c1 = arith.constant 1 : index\n  %m = arith.cmpi eq, %c0, %c1 : index\n"
                        "  %w = arith.select %m, %v, %v : tensor<4x64xf16>\n"),
         "line 11: arith.select: the condition %m is a register value but the operands are in LX; select by a "
         "compare of tensors or elements"},
        {"ElementToRegisterNotAtAStickStart",
         kernel(kLoad + "  %c1 = arith.constant 1 : index\n  %e = tensor.extract %v[%c0, %c1] : tensor<4x64xf16>\n"
                        "  %i = arith.fptosi %e : f16 to i32\n"),
         "line 11: arith.fptosi: %e is an element in LX that is not the first of its stick; a float element is "
         "converted at the start of a stick (a reduction's result, tensor.extract at [0])"},
        {"TensorIntoARegister", kernel(kLoad + "  %i = arith.fptosi %v : tensor<4x64xf16> to i32\n"),
         "line 9: arith.fptosi: %v is a tensor; an element read into a register is a float converted by fptosi / "
         "fptoui or an i32 element"},
        {"HalfStickStoreAtColumnsOfTheTileId",
         kernel("  %zz = ktdp.construct_memory_view %i_ptr, sizes: [4, 128], strides: [128, 1] {memory_space = #ktdp.memory_space<global>} : memref<4x128xf16>\n"
                "  %id = ktdp.get_compute_tile_id : index\n  %c32 = arith.constant 32 : index\n  %c64 = arith.constant 64 : index\n"
                "  %k = arith.muli %id, %c64 : index\n  %col = arith.addi %k, %c32 : index\n"
                "  %s = ktdp.construct_access_tile %zz[%c0, %col] : memref<4x128xf16> -> !ktdp.access_tile<4x32xindex>\n"
                "  %h = ktdp.load %s : !ktdp.access_tile<4x32xindex> -> tensor<4x32xf16>\n"
                "  %n = arith.negf %h : tensor<4x32xf16>\n"
                "  ktdp.store %n, %s : tensor<4x32xf16>, !ktdp.access_tile<4x32xindex>\n",
                " attributes {grid = [2]}", ", %i_ptr: index"),
         "line 15: ktdp.store: the tile's rows are part of a stick and its columns depend on the compute tile id: "
         "tiles of other cores could share its sticks, and a store rewrites whole sticks; give each compute tile "
         "whole sticks of a row, or its own rows"},
        {"GenerateOfAnotherBody",
         kernel("  %z = arith.constant 0.0 : f16\n  %w = tensor.generate {\n  ^bb0(%i: index, %j: index):\n"
                "    tensor.yield %z : f16\n  } : tensor<4x64xf16>\n"),
         "line 7: tensor.generate: its body is not a compare, a select and a yield; a generated tensor has a device "
         "form when it is 2-D and its body selects between two constants by a compare of its two indices "
         "(arith.cmpi, then arith.select, then tensor.yield: a causal mask)"},
        {"GenerateComparingForEquality",
         kernel("  %z = arith.constant 0.0 : f16\n  %o = arith.constant 1.0 : f16\n  %w = tensor.generate {\n"
                "  ^bb0(%i: index, %j: index):\n    %c = arith.cmpi eq, %i, %j : index\n"
                "    %v = arith.select %c, %o, %z : f16\n    tensor.yield %v : f16\n  } : tensor<4x64xf16>\n"),
         "line 8: tensor.generate: its compare's predicate is 'eq'; a generated tensor has a device form"},
        {"IndirectIndexSubscriptsLeftOver", indirect("ind(%iv[%c0, %d0, %d0]), (%d1)"),
         "line 7: ktdp.construct_indirect_access_tile: the ind(...) subscripts do not match the index views' dimensions"},
        {"IndirectRowsOutsideTheView", indirect("ind(%iv[%c0, %d0]), (%d1 + 32)"),
         "line 8: ktdp.load: indirect access: the rows' elements 32..95 lie outside the view's rows of 64"},
        {"CompareOfRegisterValueWithATensor",
         kernel(kLoad + "  %id = ktdp.get_compute_tile_id : index\n  %f = arith.index_cast %id : index to i32\n"
                        "  %m = arith.cmpi slt, %v, %f : tensor<4x64xf16>\n", kGrid4),
         "line 11: arith.cmpi: %f is a value in a register; a compare or select in LX takes tensors, elements in LX and "
         "constants"},
        {"GenerateComparingSomethingElse",
         kernel("  %z = arith.constant 0.0 : f16\n  %o = arith.constant 1.0 : f16\n  %w = tensor.generate {\n"
                "  ^bb0(%i: index, %j: index):\n    %c = arith.cmpi sge, %i, %c0 : index\n"
                "    %v = arith.select %c, %o, %z : f16\n    tensor.yield %v : f16\n  } : tensor<4x64xf16>\n"),
         "line 8: tensor.generate: its compare is not of its two indices; a generated tensor has a device form"},
        {"GenerateSelectingAnElementInLx",
         kernel(kLoad + "  %z = arith.constant 0.0 : f16\n  %e = tensor.extract %v[%c0, %c0] : tensor<4x64xf16>\n"
                        "  %w = tensor.generate {\n  ^bb0(%i: index, %j: index):\n    %c = arith.cmpi sge, %i, %j : index\n"
                        "    %s = arith.select %c, %e, %z : f16\n    tensor.yield %s : f16\n  } : tensor<4x64xf16>\n"),
         "line 11: tensor.generate: %e is not a constant; a generated tensor has a device form"},
        {"HalfStickRowsSpanningTwoSticks",
         kernel("  %c48 = arith.constant 48 : index\n  %yy = ktdp.construct_memory_view %i_ptr, sizes: [4, 128], strides: [128, 1] "
                "{memory_space = #ktdp.memory_space<global>} : memref<4x128xf16>\n"
                "  %t = ktdp.construct_access_tile %yy[%c0, %c48] : memref<4x128xf16> -> !ktdp.access_tile<4x32xindex>\n"
                "  %v = ktdp.load %t : !ktdp.access_tile<4x32xindex> -> tensor<4x32xf16>\n", "", ", %i_ptr: index"),
         "line 9: ktdp.load: the tile's rows of 32 elements start at lane 48 of a stick and so span 2 sticks, one more "
         "than they fill; a tile that starts inside a stick must end in the stick it would end in from lane 0"},
        {"IndirectScatterOfPartRows", indirect("ind(%iv[%c0, %d0]), (%d1)", "(d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 31 >= 0)",
                                               "2x32", "", true),
         "line 10: ktdp.store: indirect access: rows of 32 elements are not whole sticks and do not end at the view's "
         "row end; writing them would overwrite the elements after them"},
        {"IndirectExplicitSync", indirect("ind(%iv[%c0, %d0]), (%d1)", "(d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)",
                                          "2x64", "", false, " attributes {spyre.sync = \"explicit\"}"),
         "line 8: ktdp.load: indirect access: not supported in an explicitly synchronised function (spyre.sync)"},
        {"UnclosedRegion", "func.func @k() {\n  %c0 = arith.constant 0 : index\n", "region is not closed"},
        {"DynamicDim", kernel("  %w = tensor.empty() : tensor<?x64xf16>\n"), "line 6: dynamic dimension '?'"},
        {"UnknownElementType", kernel("  %w = tensor.empty() : tensor<4xq7>\n"), "unknown element type 'q7'"},
        {"UnknownAlias", kernel("  %w = ktdp.construct_access_tile %xv[%c0, %c0] {access_tile_set = #nope} : memref<4x64xf16> -> !ktdp.access_tile<1x64xindex>\n"),
         "line 6: unknown attribute alias '#nope'"},
        {"UnknownTypeAlias", kernel("  %w = tensor.empty() : !mytype\n"), "unknown type '!mytype'"},
        {"DynamicViewSizes", kernel("  %w = ktdp.construct_memory_view %x_ptr, sizes: [%c0, 64], strides: [64, 1] : memref<4x64xf16>\n"),
         // %c0 is a size given by a value, specialised at import: 0 rows, not the type's 4.
         "line 6: ktdp.construct_memory_view: sizes do not match the type memref<4x64xf16>"},
        {"DeepNesting", "#m = affine_map<(d0) -> (" + std::string(100, '(') + "d0" + std::string(100, ')') + ")>\n",
         "line 1: nesting deeper than 64 levels"},
        {"BadCharacter", kernel("  %w = arith.constant 0 : index ~\n"), "line 6: unexpected character '~'"},
        {"ConstantWithoutType", kernel("  %w = arith.constant 3\n  return\n"), "arith.constant: missing ': type'"},
        {"GenericOperandTypeCount", kernel("  %w = \"arith.addi\"(%c0, %c0) : (index) -> index\n"),
         "line 6: arith.addi has 2 operands but 1 operand types"},
        {"TileOfNonIndex", kernel("  %w = tensor.empty() : !ktdp.access_tile<4xf16>\n"), "must hold index"},
        // ---- importer: values and functions
        {"UndefinedValue", kernel("  %w = arith.addi %nope, %c0 : index\n"), "line 6: arith.addi: value %nope is not defined"},
        {"DefinedTwice", kernel("  %c0 = arith.constant 1 : index\n"), "line 6: value %c0 is defined twice"},
        {"NoSuchFunction", kernel(""), "no function @other (functions: k)", {}, "other"},
        {"MissingScalarArg", kernel("  %w = arith.addi %n, %c0 : index\n", "", ", %n: index"), "scalar argument %n (index) has no value; give --arg n=VALUE"},
        {"UnknownScalarArg", kernel(""), "--arg n: function @k has no scalar argument %n", {{"n", "3"}}},
        {"ScalarArgNotANumber", kernel("", "", ", %n: index"), "--arg n=abc: not an integer", {{"n", "abc"}}},
        {"ScalarArgOutOfRange", kernel("", "", ", %n: i8"), "--arg n=300: out of range for i8", {{"n", "300"}}},
        {"GridTooLarge", kernel("", " attributes {grid = [64]}"), "grid of 64 compute tiles does not fit the 32 cores"},
        {"TileIdRankMismatch", kernel("  %a, %b = ktdp.get_compute_tile_id : index, index\n", " attributes {grid = [4]}"),
         "line 6: ktdp.get_compute_tile_id returns 2 ids but the grid has 1 dimensions"},
        // ---- importer: views and tiles
        {"UnpaddedStrides",
         "func.func @k(%x_ptr: index) {\n  %xv = ktdp.construct_memory_view %x_ptr, sizes: [4, 100], strides: [120, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<4x100xf16>\n  return\n}\n",
         "line 2: ktdp.construct_memory_view of buffer 'x': strides must be row-major, dense or in the stick layout [128, 1]"},
        {"BadMemorySpace", kernel("  %w = ktdp.construct_memory_view %c0, sizes: [64], strides: [1] {memory_space = #ktdp.spyre_memory_space<DDR>} : memref<64xf16>\n"),
         "line 6: ktdp.construct_memory_view: memory_space 'DDR' is unknown"},
        {"OtherCoresLx", kernel("  %w = ktdp.construct_memory_view %c0, sizes: [64], strides: [1] {memory_space = #ktdp.spyre_memory_space<LX, core = 3>} : memref<64xf16>\n"),
         "the LX of another core ('LX, core = 3') is not supported"},
        {"OverlappingConstantBuffers",
         "func.func @k() {\n  %a = arith.constant 64 : index\n  %b = arith.constant 0 : index\n"
         "  %A = ktdp.construct_memory_view %a, sizes: [2, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<2x64xf16>\n"
         "  %B = ktdp.construct_memory_view %b, sizes: [2, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<2x64xf16>\n  return\n}\n",
         "line 5: view 'B' at 0 overlaps buffer 'A' at 64 (addresses in elements)"},
        {"TileRankMismatch", kernel("  %w = ktdp.construct_access_tile %xv[%c0] : memref<4x64xf16> -> !ktdp.access_tile<64xindex>\n"),
         "line 6: ktdp.construct_access_tile: the view has 2 dimensions, the tile 1 and 1 subscripts"},
        {"TileOutsideView", kernel("  %c3 = arith.constant 3 : index\n  %w = ktdp.construct_access_tile %xv[%c3, %c0] : memref<4x64xf16> -> !ktdp.access_tile<2x64xindex>\n"),
         "line 7: ktdp.construct_access_tile: subscript 3 of dimension 0 puts the tile outside the view"},
        {"NonBoxTileSet", kernel("  %w = ktdp.construct_access_tile %xv[%c0, %c0] {access_tile_set = affine_set<(d0, d1) : (d0 - d1 >= 0)>} : memref<4x64xf16> -> !ktdp.access_tile<1x64xindex>\n"),
         "line 6: access_tile_set: only rectangular tiles"},
        {"TileSetDisagreesWithType", kernel("  %w = ktdp.construct_access_tile %xv[%c0, %c0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>} : memref<4x64xf16> -> !ktdp.access_tile<1x64xindex>\n"),
         "access_tile_set does not match the tile type: dimension 0 must run over 0..0"},
        {"TileOrderNotIdentity", kernel("  %w = ktdp.construct_access_tile %xv[%c0, %c0] {access_tile_order = affine_map<(d0, d1) -> (d1, d0)>} : memref<4x64xf16> -> !ktdp.access_tile<1x64xindex>\n"),
         "only the identity access_tile_order is supported"},
        {"LoadTypeMismatch", kernel("  %t = ktdp.construct_access_tile %xv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>\n  %w = ktdp.load %t : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf32>\n"),
         "line 7: ktdp.load: result type tensor<4x64xf32> does not match the tile (f16)"},
        {"NotATile", kernel("  %w = ktdp.load %xv : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>\n"), "line 6: ktdp.load: %xv is not an access tile"},
        {"Bf16", kernel("  %w = tensor.empty() : tensor<4x64xbf16>\n  %z = math.exp %w : tensor<4x64xbf16>\n"),
         "line 6: tensor.empty: element type tensor<4x64xbf16> has no device form"},
        // ---- importer: compute
        {"ReduceOuterDimWidening", kernel(kLoad + "  %e = tensor.empty() : tensor<64xf32>\n  %w = linalg.reduce { arith.addf } ins(%v : tensor<4x64xf16>) outs(%e : tensor<64xf32>) dimensions = [0]\n"),
         "line 10: linalg.reduce: a reduction over the rows (dimensions = [0]) keeps its element type (f16 into f32)"},
        {"ReduceRowsInitShape", kernel(kLoad + "  %e = tensor.empty() : tensor<32xf16>\n  %w = linalg.reduce { arith.maximumf } ins(%v : tensor<4x64xf16>) outs(%e : tensor<32xf16>) dimensions = [0]\n"),
         "line 10: linalg.reduce: init shape does not match"},
        // The block arguments go in (...) or, after an empty (), in a ^bb0 label (what spyre-gen
        // writes): not both, as MLIR says, and not neither.
        {"ReduceArgumentsTwice", kernel(kLoad + "  %e = tensor.empty() : tensor<4xf32>\n  %w = linalg.reduce ins(%v : tensor<4x64xf16>) outs(%e : tensor<4xf32>) dimensions = [1]\n"
                                        "    (%a: f16, %b: f32) {\n    ^bb0(%a: f16, %b: f32):\n    %x = arith.extf %a : f16 to f32\n    %s = arith.addf %x, %b : f32\n    linalg.yield %s : f32\n  }\n"),
         "linalg.reduce: block arguments both in (...) and in a ^bb0 label"},
        {"ReduceNoArguments", kernel(kLoad + "  %e = tensor.empty() : tensor<4xf32>\n  %w = linalg.reduce ins(%v : tensor<4x64xf16>) outs(%e : tensor<4xf32>) dimensions = [1]\n"
                                     "    () {\n    %x = arith.constant 0.0 : f32\n    linalg.yield %x : f32\n  }\n"),
         "linalg.reduce: a region with no block arguments"},
        {"ReduceMul", kernel(kLoad + "  %e = tensor.empty() : tensor<4xf16>\n  %w = linalg.reduce { arith.mulf } ins(%v : tensor<4x64xf16>) outs(%e : tensor<4xf16>) dimensions = [1]\n"),
         "line 10: linalg.reduce: combining op 'arith.mulf' has no device form"},
        {"ShapeMismatch", kernel(kLoad + "  %s = tensor.empty() : tensor<4x32xf16>\n  %w = arith.addf %v, %s : tensor<4x64xf16>\n"),
         "line 10: arith.addf: operand shapes differ from the result's"},
        {"ReadEmpty", kernel(kLoad + "  %s = tensor.empty() : tensor<4x64xf16>\n  %w = arith.addf %v, %s : tensor<4x64xf16>\n" + kStore),
         "line 10: arith.addf: reads a tensor.empty value, which holds no data"},
        {"UnsupportedTensorOp", kernel(kLoad + "  %w = math.sin %v : tensor<4x64xf16>\n" + kStore), "line 9: unsupported operation 'math.sin' on tensors"},
        {"FloatScalarArgNotANumber", kernel("", "", ", %q: f32"), "--arg q=x1: not a number", {{"q", "x1"}}},
        {"TensorAsScalar", kernel(kLoad + "  %w = arith.addi %v, %c0 : index\n"), "line 9: arith.addi: %v is not a scalar"},
        {"MatmulShapes", kernel(kLoad + "  %e = tensor.empty() : tensor<4x4xf32>\n  %w = linalg.matmul ins(%v, %v : tensor<4x64xf16>, tensor<4x64xf16>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>\n"),
         "line 10: linalg.matmul: shapes must be MxK, KxN and MxN"},
        {"BroadcastKind", kernel(kLoad + "  %e = tensor.empty() : tensor<2x4x64x2xf16>\n  %w = linalg.broadcast ins(%v : tensor<4x64xf16>) outs(%e : tensor<2x4x64x2xf16>) dimensions = [0, 3]\n"),
         "line 10: linalg.broadcast: supported are broadcasts of one element"},
        {"CollapsePadded", kernel("  %t = ktdp.construct_access_tile %xv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x32xindex>\n  %v = ktdp.load %t : !ktdp.access_tile<4x32xindex> -> tensor<4x32xf16>\n  %w = tensor.collapse_shape %v [[0, 1]] : tensor<4x32xf16> into tensor<128xf16>\n"),
         "line 8: tensor.collapse_shape: dims 0 and 1 are not contiguous in LX"},
        {"RingReduceMode", kernel(kLoad + "  %w = ktdp.reduce %v {kind = #ktdp.reduce_kind<sum>, mode = #ktdp.reduce_mode<reduce_to_core<0>>, across = #ktdp.grid_axis<0>} : tensor<4x64xf16> -> tensor<4x64xf16>\n"),
         "line 9: ktdp.reduce: only mode all_reduce has a device form"},
        // ---- importer: control flow and synchronisation
        {"DynamicStep", kernel("  %s = ktdp.get_compute_tile_id : index\n  scf.for %i = %c0 to %c0 step %s {\n  }\n"),
         "line 7: scf.for: the step must be a positive constant"},
        {"YieldCount", kernel("  %c1 = arith.constant 1 : index\n  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %c0) -> (index) {\n    scf.yield %a, %a : index, index\n  }\n"),
         "line 8: scf.yield: yields 2 values, the loop carries 1"},
        {"IfTensorResult", kernel(kLoad + "  %b = arith.cmpi eq, %c0, %c0 : index\n  %w = scf.if %b -> (tensor<4x64xf16>) {\n    scf.yield %v : tensor<4x64xf16>\n  } else {\n    scf.yield %v : tensor<4x64xf16>\n  }\n"),
         "line 10: scf.if: only index and integer results are supported"},
        {"ExplicitSyncWithoutTag", kernel(kLoad + "  ktdp.store %v, %u : tensor<4x64xf16>, !ktdp.access_tile<4x64xindex>\n", " attributes {spyre.sync = \"explicit\"}"),
         "line 7: ktdp.load: the function synchronises explicitly (spyre.sync) but this op has no spyre.tag in 0..15"},
        {"EmptyStoredToDeviceMemory",
         kernel("  %w = tensor.empty() : tensor<4x64xf16>\n"
                "  %u = ktdp.construct_access_tile %yv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>\n"
                "  ktdp.store %w, %u : tensor<4x64xf16>, !ktdp.access_tile<4x64xindex>\n"),
         "line 8: ktdp.store: reads a tensor.empty value, which holds no data"},
        {"LxOffsetNotWholeSticks", kernel("", " attributes {spyre.lx_offset = 100 : i64}"),
         "func.func @k: spyre.lx_offset must be a whole number of 128-byte sticks in [0, 2097152) bytes"},
        {"LxOffsetPastLx", kernel("", " attributes {spyre.lx_offset = 2097152 : i64}"),
         "func.func @k: spyre.lx_offset must be a whole number of 128-byte sticks in [0, 2097152) bytes"},
        {"LxAddressBelowLxOffset",
         kernel(kLoad + "  %lv = ktdp.construct_memory_view %c0, sizes: [4, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<LX>} : memref<4x64xf16>\n"
                        "  %lt = ktdp.construct_access_tile %lv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>\n"
                        "  ktdp.store %v, %lt : tensor<4x64xf16>, !ktdp.access_tile<4x64xindex>\n",
                " attributes {spyre.lx_offset = 1024 : i64}"),
         "ktdp.store: LX address 0 lies below the function's spyre.lx_offset (1024 bytes), where its LX starts"},
        {"TypeLxOffsetNotWholeSticks", kernel("", " attributes {spyre.lx_offset_f32 = 100 : i64}"),
         "func.func @k: spyre.lx_offset_f32 must be a whole number of 128-byte sticks in [0, 2097152) bytes"},
        {"LxAddressBelowItsTypesLxOffset",
         kernel(kLoad + "  %lv = ktdp.construct_memory_view %c0, sizes: [4, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<LX>} : memref<4x64xf16>\n"
                        "  %lt = ktdp.construct_access_tile %lv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>\n"
                        "  ktdp.store %v, %lt : tensor<4x64xf16>, !ktdp.access_tile<4x64xindex>\n",
                " attributes {spyre.lx_offset = 4096 : i64, spyre.lx_offset_f16 = 1024 : i64}"),
         "ktdp.store: LX address 0 lies below the function's spyre.lx_offset_f16 (1024 bytes), where its LX starts"},
        {"IndexSelectMaskNotUle", kernel(kLoad + "  %ic = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]> : tensor<64xindex>\n"
                "  %ie = tensor.empty() : tensor<4x64xindex>\n"
                "  %il = linalg.broadcast ins(%ic : tensor<64xindex>) outs(%ie : tensor<4x64xindex>) dimensions = [0]\n\n"
                "  %c9 = arith.constant 9 : index\n"
                "  %ls = tensor.splat %c9 : tensor<4x64xindex>\n"
                "  %m = arith.cmpi slt, %il, %ls : tensor<4x64xindex>\n"
                "  %w = arith.select %m, %v, %v {spyre.index_select = 0 : i32} : tensor<4x64xi1>, tensor<4x64xf16>\n" + kStore),
         "arith.select: spyre.index_select needs its mask as the export writes it (docs/ktir.md, \"Index selects\"): the mask must be arith.cmpi ule"},
        {"IndexSelectAttributeNotZeroOrOne", kernel(kLoad + "  %ic = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]> : tensor<64xindex>\n"
                "  %ie = tensor.empty() : tensor<4x64xindex>\n"
                "  %il = linalg.broadcast ins(%ic : tensor<64xindex>) outs(%ie : tensor<4x64xindex>) dimensions = [0]\n\n"
                "  %c9 = arith.constant 9 : index\n"
                "  %ls = tensor.splat %c9 : tensor<4x64xindex>\n"
                "  %m = arith.cmpi ule, %il, %ls : tensor<4x64xindex>\n"
                "  %w = arith.select %m, %v, %v {spyre.index_select = 2 : i32} : tensor<4x64xi1>, tensor<4x64xf16>\n" + kStore),
         "arith.select: spyre.index_select needs its mask as the export writes it (docs/ktir.md, \"Index selects\"): spyre.index_select must be 0 or 1 (i32)"},
        {"IndexSelectLanesNotAnIota", kernel(kLoad + "  %ic = arith.constant dense<[1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]> : tensor<64xindex>\n"
                "  %ie = tensor.empty() : tensor<4x64xindex>\n"
                "  %il = linalg.broadcast ins(%ic : tensor<64xindex>) outs(%ie : tensor<4x64xindex>) dimensions = [0]\n\n"
                "  %c9 = arith.constant 9 : index\n"
                "  %ls = tensor.splat %c9 : tensor<4x64xindex>\n"
                "  %m = arith.cmpi ule, %il, %ls : tensor<4x64xindex>\n"
                "  %w = arith.select %m, %v, %v {spyre.index_select = 0 : i32} : tensor<4x64xi1>, tensor<4x64xf16>\n" + kStore),
         "arith.select: spyre.index_select needs its mask as the export writes it (docs/ktir.md, \"Index selects\"): %ic must be dense<[0, 1, ..., 63]>"},
        {"IndexSelectMaskUsedElsewhere", kernel(kLoad + "  %ic = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]> : tensor<64xindex>\n"
                "  %ie = tensor.empty() : tensor<4x64xindex>\n"
                "  %il = linalg.broadcast ins(%ic : tensor<64xindex>) outs(%ie : tensor<4x64xindex>) dimensions = [0]\n\n"
                "  %c9 = arith.constant 9 : index\n"
                "  %ls = tensor.splat %c9 : tensor<4x64xindex>\n"
                "  %m = arith.cmpi ule, %il, %ls : tensor<4x64xindex>\n"
                "  %w = arith.select %m, %v, %v {spyre.index_select = 0 : i32} : tensor<4x64xi1>, tensor<4x64xf16>\n"
                "  %w2 = arith.select %m, %v, %v : tensor<4x64xi1>, tensor<4x64xf16>\n" + kStore),
         "must have no other user"},
        {"DynamicSizeWithoutItsArgument",
         kernel("  %n = arith.index_cast %n_in : i32 to index\n"
                "  %dv = ktdp.construct_memory_view %x_ptr, sizes: [%n, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<?x64xf16>\n",
                "", ", %n_in: i32"),
         "line 7: ktdp.construct_memory_view: dynamic size %n_in comes from argument %n_in, which has no value: give --arg n_in=VALUE"},
        {"DynamicSizeFromAnotherOp",
         kernel("  %c2 = arith.constant 2 : index\n"
                "  %n = arith.divui %c2, %c2 : index\n"
                "  %dv = ktdp.construct_memory_view %x_ptr, sizes: [%n, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<?x64xf16>\n"),
         "line 8: ktdp.construct_memory_view: dynamic size %n comes from arith.divui (line 7)"},
        {"DynamicSizeArgumentNotAnInteger", kernel("  %n = arith.index_cast %n_in : i32 to index\n"
                "  %dv = ktdp.construct_memory_view %x_ptr, sizes: [%n, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<?x64xf16>\n",
                "", ", %n_in: i32"),
         "dynamic size %n_in comes from --arg n_in=abc, which is not an integer in [0, 2^40]", {{"n_in", "abc"}}},
        {"DynamicSizeTooLarge", kernel("  %n = arith.index_cast %n_in : i32 to index\n"
                "  %m = arith.constant 1048576 : index\n"
                "  %big = arith.muli %n, %m : index\n"
                "  %dv = ktdp.construct_memory_view %x_ptr, sizes: [%big, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<?x64xf16>\n",
                "", ", %n_in: i32"),
         "line 9: ktdp.construct_memory_view: dynamic size %big is too large", {{"n_in", "2097152"}}},
        {"DynamicDimensionOutsideAView",
         kernel("  %n = arith.index_cast %n_in : i32 to index\n"
                "  %dv = ktdp.construct_memory_view %x_ptr, sizes: [%n, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<?x64xf16>\n"
                "  %dd = ktdp.construct_distributed_memory_view (%dv, %dv : memref<?x64xf16>, memref<?x64xf16>) : memref<?x64xf16>\n",
                "", ", %n_in: i32"),
         "line 8: ktdp.construct_distributed_memory_view: dynamic dimension '?' in memref<?x64xf16> (only a memory view's own sizes and strides may be values, given by --arg)",
         {{"n_in", "4"}}},
        {"DynamicDimensionInATensor",
         kernel("  %w = tensor.empty() : tensor<?x64xf16>\n"),
         "dynamic dimension '?' in type '?x64xf16' is not supported"},
        {"BadWaitMask", kernel("  \"spyre.wait\"() {tags = 0 : i32} : () -> ()\n"), "line 6: spyre.wait needs tags = a non-zero 16-bit mask"},
        // ---- more importer paths
        {"ReturnValues", kernel("  return %c0 : index\n"), "line 6: return: a kernel returns no values"},
        {"YieldOutside", kernel("  scf.yield\n"), "line 6: scf.yield outside scf.for / scf.if"},
        {"ShiftNotConstant", kernel("  %p = ktdp.get_compute_tile_id : index\n  %w = arith.shli %p, %p : index\n"),
         "line 7: arith.shli: the shift must be a constant in 0..63"},
        {"CmpiPredicate", kernel("  %p = ktdp.get_compute_tile_id : index\n  %w = arith.cmpi foo, %p, %c0 : index\n"),
         "line 7: arith.cmpi: unknown predicate 'foo'"},
        {"CeilDivNotConstant", kernel("  %p = ktdp.get_compute_tile_id : index\n  %w = arith.ceildivsi %p, %p : index\n"),
         "line 7: arith.ceildivsi: needs a positive constant divisor"},
        {"AffineModByValue", kernel("  %p = ktdp.get_compute_tile_id : index\n  %w = affine.apply affine_map<(d0, d1) -> (d0 mod d1)>(%p, %p)\n"),
         "line 7: affine.apply: floordiv, ceildiv and mod need a positive constant"},
        {"AffineApplyOperands", kernel("  %w = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%c0)\n"),
         "line 6: affine.apply: the map takes 2 operands, not 1"},
        {"AffineApplyTwoResults", kernel("  %w = affine.apply affine_map<(d0) -> (d0, d0)>(%c0)\n"),
         "line 6: affine.apply: the map must have one result"},
        {"MultiplyHbmAddress", kernel("  %c2 = arith.constant 2 : index\n  %w = arith.muli %x_ptr, %c2 : index\n"),
         "line 7: arith.muli: multiplies an HBM address"},
        {"AddTwoHbmAddresses", kernel("  %w = arith.addi %x_ptr, %y_ptr : index\n"), "line 6: arith.addi: adds two HBM addresses"},
        {"HbmAddressAsLx", kernel("  %w = ktdp.construct_memory_view %x_ptr, sizes: [4, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<LX>} : memref<4x64xf16>\n"),
         "line 6: ktdp.construct_memory_view: an LX view on an HBM address"},
        {"HbmViewOnComputedAddress", kernel("  %p = ktdp.get_compute_tile_id : index\n  %w = ktdp.construct_memory_view %p, sizes: [64], strides: [1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<64xf16>\n"),
         "line 7: ktdp.construct_memory_view: an HBM view's address must be a function argument (plus an offset) or a constant"},
        {"ViewSizesDisagreeWithType", kernel("  %w = ktdp.construct_memory_view %c0, sizes: [64], strides: [1] {memory_space = #ktdp.spyre_memory_space<LX>} : memref<32xf16>\n"),
         "line 6: ktdp.construct_memory_view: sizes do not match the type"},
        {"ViewNotMemref", kernel("  %w = ktdp.construct_memory_view %c0, sizes: [64], strides: [1] {memory_space = #ktdp.spyre_memory_space<LX>} : tensor<64xf16>\n"),
         "line 6: ktdp.construct_memory_view: result must be a memref, not tensor<64xf16>"},
        {"MemorySpaceNotDialect", kernel("  %w = ktdp.construct_memory_view %c0, sizes: [64], strides: [1] {memory_space = 3} : memref<64xf16>\n"),
         "memory_space is not a ktdp memory space"},
        {"BadKindAttr",
         "func.func @k(%x_ptr: index) {\n  %xv = ktdp.construct_memory_view %x_ptr, sizes: [64], strides: [1] {spyre.kind = \"both\"} : memref<64xf16>\n  return\n}\n",
         "line 2: spyre.kind must be \"input\", \"output\", \"inout\" or \"temp\""},
        {"SameBufferName",
         "func.func @k(%x_ptr: index, %x: index) {\n  %a = ktdp.construct_memory_view %x_ptr, sizes: [64], strides: [1] : memref<64xf16>\n  %b = ktdp.construct_memory_view %x, sizes: [64], strides: [1] : memref<64xf16>\n  return\n}\n",
         "two buffers are named 'x'"},
        {"MemrefArgument", "func.func @k(%m: memref<4xf16>) {\n  return\n}\n",
         "argument %m of type memref<4xf16> is not supported (pass buffers as index addresses with a memory view)"},
        {"GridNotList", kernel("", " attributes {grid = \"big\"}"), "line 2: function @k: grid must be a list of integers"},
        {"GridEntryZero", kernel("", " attributes {grid = [2, 0]}"), "line 2: function @k: grid entries must be positive integers"},
        {"AccessTileOnTensor", kernel(kLoad + "  %w = ktdp.construct_access_tile %v[%c0, %c0] : tensor<4x64xf16> -> !ktdp.access_tile<1x64xindex>\n"),
         "line 9: ktdp.construct_access_tile: %v is not a memory view"},
        {"AccessTileBaseMap", kernel("  %w = ktdp.construct_access_tile %xv[%c0, %c0] {base_map = affine_map<(d0, d1) -> (d0, d1)>} : memref<4x64xf16> -> !ktdp.access_tile<1x64xindex>\n"),
         "line 6: ktdp.construct_access_tile: base_map is not supported"},
        {"TileLargerThanView", kernel("  %w = ktdp.construct_access_tile %xv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<8x64xindex>\n"),
         "line 6: ktdp.construct_access_tile: tile extent 8 of dimension 0 does not fit the view's 4"},
        {"TileResultNotTile", kernel("  %w = ktdp.construct_access_tile %xv[%c0, %c0] : memref<4x64xf16> -> tensor<1x64xf16>\n"),
         "line 6: ktdp.construct_access_tile: result must be !ktdp.access_tile<...>"},
        {"StoreShapeMismatch", kernel(kLoad + "  %h = ktdp.construct_access_tile %yv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<2x64xindex>\n  ktdp.store %v, %h : tensor<4x64xf16>, !ktdp.access_tile<2x64xindex>\n"),
         "line 10: ktdp.store: tensor tensor<4x64xf16> does not match the tile's shape and element type"},
        {"StridedHbmInnermost",
         kernel("  %sv = ktdp.construct_memory_view %x_ptr, sizes: [4, 32], strides: [64, 2] : memref<4x32xf16>\n  %t = ktdp.construct_access_tile %sv[%c0, %c0] : memref<4x32xf16> -> !ktdp.access_tile<4x32xindex>\n  %w = ktdp.load %t : !ktdp.access_tile<4x32xindex> -> tensor<4x32xf16>\n"),
         "line 8: ktdp.load: the innermost dimension of an HBM tile must be contiguous (stride 1), not 2"},
        {"LxTileNotContiguous",
         kernel("  %lv = ktdp.construct_memory_view %c0, sizes: [4, 32], strides: [64, 2] {memory_space = #ktdp.spyre_memory_space<LX>} : memref<4x32xf16>\n  %t = ktdp.construct_access_tile %lv[%c0, %c0] : memref<4x32xf16> -> !ktdp.access_tile<4x32xindex>\n  %w = ktdp.load %t : !ktdp.access_tile<4x32xindex> -> tensor<4x32xf16>\n"),
         "line 8: ktdp.load: the innermost dimension of an LX tile must be contiguous"},
        {"ExtractNotConstant", kernel(kLoad + "  %p = ktdp.get_compute_tile_id : index\n  %w = tensor.extract %v[%p, %c0] : tensor<4x64xf16>\n"),
         "line 10: tensor.extract: subscripts must be constants inside the tensor"},
        {"ExtractRank", kernel(kLoad + "  %w = tensor.extract %v[%c0] : tensor<4x64xf16>\n"), "line 9: tensor.extract: 1 subscripts for a rank 2 tensor"},
        {"SplatOfTensor", kernel(kLoad + "  %w = tensor.splat %v : tensor<4x64xf16>\n"),
         "line 9: tensor.splat: fills with a constant or a tensor.extract element only"},
        {"SplatOfDynamicIndex", kernel("  %p = ktdp.get_compute_tile_id : index\n  %w = tensor.splat %p : tensor<4x64xf16>\n"),
         "line 7: tensor.splat: the value must be a constant"},
        {"ReassociationCount", kernel(kLoad + "  %w = tensor.collapse_shape %v [[0], [1], [1]] : tensor<4x64xf16> into tensor<256xf16>\n"),
         "line 9: tensor.collapse_shape: 3 groups for 1 dims"},
        {"ReassociationProduct", kernel(kLoad + "  %w = tensor.expand_shape %v [[0, 1], [2]] : tensor<4x64xf16> into tensor<2x4x64xf16>\n"),
         "line 9: tensor.expand_shape: group 0 does not multiply to 4"},
        {"BroadcastRank", kernel(kLoad + "  %e = tensor.empty() : tensor<4x64xf16>\n  %w = linalg.broadcast ins(%v : tensor<4x64xf16>) outs(%e : tensor<4x64xf16>) dimensions = [1]\n"),
         "line 10: linalg.broadcast: input rank plus dimensions must be the result rank"},
        {"BroadcastTypes", kernel(kLoad + "  %e = tensor.empty() : tensor<4x64x2xf32>\n  %w = linalg.broadcast ins(%v : tensor<4x64xf16>) outs(%e : tensor<4x64x2xf32>) dimensions = [2]\n"),
         "line 10: linalg.broadcast: element types differ"},
        {"ReduceTwoInputs", kernel(kLoad + "  %e = tensor.empty() : tensor<4xf16>\n  %w = linalg.reduce { arith.addf } ins(%v, %v : tensor<4x64xf16>, tensor<4x64xf16>) outs(%e : tensor<4xf16>) dimensions = [1]\n"),
         "line 10: linalg.reduce: one input and one init are supported"},
        {"ReduceInitShape", kernel(kLoad + "  %e = tensor.empty() : tensor<8xf16>\n  %w = linalg.reduce { arith.addf } ins(%v : tensor<4x64xf16>) outs(%e : tensor<8xf16>) dimensions = [1]\n"),
         "line 10: linalg.reduce: init shape does not match"},
        {"ReduceRegionTwoOps", kernel(kLoad + "  %e = tensor.empty() : tensor<4xf16>\n  %w = linalg.reduce ins(%v : tensor<4x64xf16>) outs(%e : tensor<4xf16>) dimensions = [1]\n    (%a: f16, %b: f16) {\n      %s = arith.addf %a, %b : f16\n      %m = arith.mulf %s, %b : f16\n      linalg.yield %m : f16\n    }\n"),
         "line 13: linalg.reduce: the region must hold one combining op"},
        {"ReduceF32IntoF16", kernel("  %t = ktdp.construct_access_tile %xv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>\n  %v = ktdp.load %t : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>\n  %f = arith.extf %v : tensor<4x64xf16> to tensor<4x64xf32>\n  %e = tensor.empty() : tensor<4xf16>\n  %w = linalg.reduce { arith.addf } ins(%f : tensor<4x64xf32>) outs(%e : tensor<4xf16>) dimensions = [1]\n"),
         "line 10: linalg.reduce: f32 reduces into f32 or (from f16) f32, not f16"},
        {"ReduceInitUsedLater", kernel(kLoad + "  %la = arith.constant 0 : index\n  %lv = ktdp.construct_memory_view %la, sizes: [4], strides: [1] {memory_space = #ktdp.spyre_memory_space<LX>} : memref<4xf16>\n  %lt = ktdp.construct_access_tile %lv[%c0] : memref<4xf16> -> !ktdp.access_tile<4xindex>\n  %i = ktdp.load %lt : !ktdp.access_tile<4xindex> -> tensor<4xf16>\n  %w = linalg.reduce { arith.addf } ins(%v : tensor<4x64xf16>) outs(%i : tensor<4xf16>) dimensions = [1]\n  %z = arith.addf %i, %i : tensor<4xf16>\n"),
         "line 13: linalg.reduce: init %i is used after the reduction, which accumulates into it; copy it first"},
        {"MatmulF32Operands", kernel(kLoad + "  %f = arith.extf %v : tensor<4x64xf16> to tensor<4x64xf32>\n  %e = tensor.empty() : tensor<4x4xf32>\n  %g = tensor.empty() : tensor<64x4xf32>\n  %w = linalg.matmul ins(%f, %g : tensor<4x64xf32>, tensor<64x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>\n"),
         "line 12: linalg.matmul: the PE array multiplies f16 or i8 operands"},
        {"MatmulI8IntoF32", kernel(kLoad + "  %b = arith.constant 1 : i8\n  %f = tensor.splat %b : tensor<4x128xi8>\n  %g = tensor.splat %b : tensor<128x4xi8>\n  %e = tensor.empty() : tensor<4x4xf32>\n  %w = linalg.matmul ins(%f, %g : tensor<4x128xi8>, tensor<128x4xi8>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>\n"),
         "line 13: linalg.matmul: i8 operands accumulate into i32"},
        {"MatmulIns", kernel(kLoad + "  %e = tensor.empty() : tensor<4x4xf32>\n  %w = linalg.matmul ins(%v : tensor<4x64xf16>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>\n"),
         "line 10: linalg.matmul: expects ins(A, B) outs(C)"},
        {"TransposePermutation", kernel(kLoad + "  %e = tensor.empty() : tensor<4x64xf16>\n  %w = linalg.transpose ins(%v : tensor<4x64xf16>) outs(%e : tensor<4x64xf16>) permutation = [0, 1]\n"),
         "line 10: linalg.transpose: a permutation of 2 dimensions must be [1, 0]"},
        {"RingReduceKind", kernel(kLoad + "  %w = ktdp.reduce %v {kind = #ktdp.reduce_kind<prod>, mode = #ktdp.reduce_mode<all_reduce>, across = #ktdp.grid_axis<0>} : tensor<4x64xf16> -> tensor<4x64xf16>\n"),
         "line 9: ktdp.reduce: kind must be sum, max or min"},
        {"RingReduceAcross", kernel(kLoad + "  %w = ktdp.reduce %v {kind = #ktdp.reduce_kind<sum>, mode = #ktdp.reduce_mode<all_reduce>, across = #ktdp.grid_axis<1>} : tensor<4x64xf16> -> tensor<4x64xf16>\n"),
         "line 9: ktdp.reduce: only across grid_axis<0> is supported"},
        // ---- inter-tile communication (ktdp.inter_tile_produce / inter_tile_reduce)
        {"InterTileUnequalGroups", kernel(inter_tile("(i)[g] : (i - 3*g >= 0, -i + 3*g + 2 >= 0)", "(g) : (g >= 0, -g + 1 >= 0)"), kGrid4),
         "line 9: ktdp.inter_tile_produce: its 2 groups of tiles have no device form: RING_REDUCE groups are equal"},
        {"InterTileGroupsNumberedOtherwise", kernel(subst(inter_tile("(i)[g] : (i - 2 + 2*g >= 0, -i + 3 - 2*g >= 0)", "(g) : (g >= 0, -g + 1 >= 0)"),
             "    ktdp.yield_partial", "    %gg = arith.addi %gid, %gid : index\n    ktdp.yield_partial"), kGrid4),
         "line 9: ktdp.inter_tile_produce: the region reads %gid, and tile 0 is in group 1, not in group (tile / 2) * 1 + tile % 1 as the device numbers them"},
        {"InterTileGroupWithoutTiles", kernel(inter_tile("(i)[g] : (i >= 0, -i + 3 >= 0, -g >= 0)", "(g) : (g >= 0, -g + 1 >= 0)"), kGrid4),
         "line 9: ktdp.inter_tile_produce: group 1 has no producer tile"},
        {"InterTileTileInNoGroup", kernel(inter_tile("(i)[g] : (i >= 0, -i + 2 >= 0)"), kGrid4),
         "line 9: ktdp.inter_tile_produce: tile 3 of the grid's 4 produces for no group"},
        {"InterTileTileInTwoGroups", kernel(inter_tile("(i)[g] : (i >= 0)", "(g) : (g >= 0, -g + 1 >= 0)"), kGrid4),
         "line 9: ktdp.inter_tile_produce: tile 0 produces for groups 0 and 1"},
        {"InterTileSetReadsAValue", kernel(inter_tile("(i)[g] : (i - %c0 >= 0)"), kGrid4),
         "line 9: ktdp.inter_tile_produce: producer_tiles_per_group reads the SSA value %c0; tile sets must be constant"},
        {"InterTileSetWrongArity", kernel(inter_tile("(i, j) : (i >= 0)"), kGrid4),
         "line 9: ktdp.inter_tile_produce: producer_tiles_per_group must be affine_set<(i)[g] : ...>, it has 2 dimensions and 0 symbols"},
        {"InterTileDependencies", kernel(inter_tile("(i)[g] : (i >= 0, -i + 3 >= 0)", "(g) : (g == 0)",
             "%s = arith.addf %l, %r : tensor<4x64xf16>", "producer_dependency_per_consumer = affine_set<(p)[c] : (p - c == 0)>, "), kGrid4),
         "line 13: ktdp.inter_tile_reduce: producer_dependency_per_consumer (per-tile dependencies) has no device form"},
        {"InterTileGroupsSetWrongArity", kernel(inter_tile("(i)[g] : (i >= 0, -i + 3 >= 0)", "(g, h) : (g == 0)"), kGrid4),
         "line 9: ktdp.inter_tile_produce: the tile_future's groups must be affine_set<(g) : ...>, it has 2 dimensions and 0 symbols"},
        {"LinalgInsValuesAndTypesDiffer", kernel(kLoad + "  %w = linalg.add ins(%v, %v : tensor<4x64xf16>) outs(%v : tensor<4x64xf16>) -> tensor<4x64xf16>\n"),
         "line 9: linalg.add: ins has 2 values but 1 types"},
        {"InterTileProductCombiner", kernel(inter_tile("(i)[g] : (i >= 0, -i + 3 >= 0)", "(g) : (g == 0)",
             "%s = arith.mulf %l, %r : tensor<4x64xf16>"), kGrid4),
         "line 15: ktdp.inter_tile_reduce: the combiner arith.mulf has no device form (RING_REDUCE adds, takes the maximum or the minimum)"},
        {"InterTileCombinerOfOneArgument", kernel(inter_tile("(i)[g] : (i >= 0, -i + 3 >= 0)", "(g) : (g == 0)",
             "%s = arith.addf %l, %l : tensor<4x64xf16>"), kGrid4),
         "line 15: ktdp.inter_tile_reduce: arith.addf must combine the region's two arguments"},
        {"InterTileTwoCombiningOps", kernel(inter_tile("(i)[g] : (i >= 0, -i + 3 >= 0)", "(g) : (g == 0)",
             "%q = arith.addf %l, %r : tensor<4x64xf16>\n    %s = arith.addf %q, %r : tensor<4x64xf16>"), kGrid4),
         "line 16: ktdp.inter_tile_reduce: the combiner must hold one combining op (arith.addf and arith.addf)"},
        {"InterTileYieldsNotTheCombination", kernel(subst(inter_tile("(i)[g] : (i >= 0, -i + 3 >= 0)", "(g) : (g == 0)",
             "%s = arith.addf %l, %r : tensor<4x64xf16>\n    %t2 = tensor.empty() : tensor<4x64xf16>"), "ktdp.yield_reduced %s", "ktdp.yield_reduced %l"), kGrid4),
         "line 13: ktdp.inter_tile_reduce: the combiner must end in ktdp.yield_reduced of its combining op's result"},
        {"InterTileResultOfOtherElements", kernel(inter_tile("(i)[g] : (i >= 0, -i + 3 >= 0)", "(g) : (g == 0)",
             "%s = arith.addf %l, %r : tensor<4x64xf16>", "", "tensor<2x64xf16>"), kGrid4),
         "line 13: ktdp.inter_tile_reduce: the result tensor<2x64xf16> must hold the partial's elements (tensor<4x64xf16>)"},
        {"InterTileTwoPartials", kernel(subst(inter_tile("(i)[g] : (i >= 0, -i + 3 >= 0)", "(g) : (g == 0)",
             "%s = arith.addf %l, %r : tensor<4x64xf16>", "", "tensor<4x64xf16>", "(tensor<4x64xf16>, tensor<4x64xf16>)"),
             "ktdp.yield_partial %v : (tensor<4x64xf16>, tensor<4x64xf16>)", "ktdp.yield_partial %v, %v : tensor<4x64xf16>, tensor<4x64xf16>"), kGrid4),
         "line 9: ktdp.inter_tile_produce: one partial per tile is supported (the future carries 2)"},
        {"InterTileFutureWithoutGroups", kernel(kLoad + "  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0)> -> !ktdp.tile_future<tensor<4x64xf16>> {\n  }\n"),
         "line 9: ktdp.inter_tile_produce: the !ktdp.tile_future type has no groups = affine_set<...>"},
        {"InterTileOtherFutureType", kernel(kLoad + "  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0)> -> !ktdp.future<tensor<4x64xf16>> {\n  }\n"),
         "line 9: ktdp.inter_tile_produce: expected a !ktdp.tile_future type, found '!ktdp.future'"},
        {"InterTileProducersNotASet", kernel(kLoad + "  %f = ktdp.inter_tile_produce producer_tiles_per_group = 3 -> !ktdp.tile_future<tensor<4x64xf16>> {\n  }\n"),
         "line 9: ktdp.inter_tile_produce: producer_tiles_per_group must be an affine_set"},
        {"InterTilePartialNotATensor", kernel(kLoad + "  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0)> -> !ktdp.tile_future<index, groups = affine_set<(g) : (g == 0)>> {\n  }\n"),
         "line 9: ktdp.inter_tile_produce: a tile_future's partials must be tensors"},
        {"InterTileReduceOfAValue", kernel(kLoad + "  %w = ktdp.inter_tile_reduce(%v) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0)>, identity() : !ktdp.tile_future<tensor<4x64xf16>, groups = affine_set<(g) : (g == 0)>> -> tensor<4x64xf16> {\n  ^bb0(%l: tensor<4x64xf16>, %r: tensor<4x64xf16>):\n    %s = arith.addf %l, %r : tensor<4x64xf16>\n    ktdp.yield_reduced %s : tensor<4x64xf16>\n  }\n"),
         "line 9: ktdp.inter_tile_reduce: %v is not the result of a ktdp.inter_tile_produce"},
        {"InterTileNoConsumer", kernel(subst(inter_tile(), "consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0)>", "consumer_tiles_per_group = affine_set<(i)[g] : (i - 9 >= 0)>"), kGrid4),
         "line 13: ktdp.inter_tile_reduce: consumer_tiles_per_group holds no tile"},
        {"InterTileProducerRegionEndsOtherwise", kernel(subst(inter_tile(), "    ktdp.yield_partial %v : tensor<4x64xf16>\n", ""), kGrid4),
         "line 9: ktdp.inter_tile_produce: the region must end in ktdp.yield_partial of one tensor"},
        {"InterTilePartialNotStickWhole", kernel("  %one = arith.constant 1.0 : f16\n  %s1 = tensor.splat %one : tensor<1x80xf16>\n  %v = math.exp %s1 : tensor<1x80xf16>\n" +
             subst(inter_tile().substr(kLoad.size()), "tensor<4x64xf16>", "tensor<1x80xf16>"), kGrid4),
         "line 13: ktdp.inter_tile_reduce: the tensor must fill whole sticks, packed, or fit in one (RING_REDUCE combines whole sticks)"},
        // ---- float arithmetic on a run-time element (element_arith)
        {"ElementArithOnATensor", kernel(kLoad + "  %e = tensor.extract %v[%c0, %c0] : tensor<4x64xf16>\n  %w = arith.addf %e, %v : f16\n"),
         "line 10: arith.addf: %v is a tensor, the result a scalar"},
        {"ElementArithNotFirstOfItsStick", kernel(kLoad + "  %c1 = arith.constant 1 : index\n  %e = tensor.extract %v[%c0, %c1] : tensor<4x64xf16>\n  %w = math.rsqrt %e : f16\n"),
         "line 11: math.rsqrt: %e is an element in LX that is not the first of its stick"},
        {"ElementArithWithAnInteger", kernel(kLoad + "  %e = tensor.extract %v[%c0, %c0] : tensor<4x64xf16>\n  %w = arith.addf %e, %c0 : f16\n"),
         "line 10: arith.addf: %c0 must be a float constant or --arg value"},
        {"InterTileProduceGenericForm", kernel(kLoad + "  \"ktdp.inter_tile_produce\"() : () -> ()\n"),
         "line 9: ktdp.inter_tile_produce: takes no operands and has one result (the future) and one region"},
        {"InterTileReduceGenericForm", kernel(kLoad + "  \"ktdp.inter_tile_reduce\"() : () -> ()\n"),
         "line 9: ktdp.inter_tile_reduce: takes a future (and identities) and has one result and one region"},
        {"InterTileIdentitiesAndTypesDiffer", kernel(subst(inter_tile(), "identity(%v : ", "identity(%v, %v : "), kGrid4),
         "line 13: ktdp.inter_tile_reduce: identity has 2 values but 1 types"},
        {"InterTileProducerRegionTwoArguments", kernel(subst(inter_tile(), "^bb0(%gid: index)", "^bb0(%gid: index, %h: index)"), kGrid4),
         "line 9: ktdp.inter_tile_produce: the region takes one argument (%gid), not 2"},
        {"InterTileCombinerOneArgument", kernel(subst(subst(inter_tile(), "^bb0(%l: tensor<4x64xf16>, %r: tensor<4x64xf16>)", "^bb0(%l: tensor<4x64xf16>)"), "%l, %r", "%l, %l"), kGrid4),
         "line 13: ktdp.inter_tile_reduce: the combiner takes two arguments (%lhs, %rhs), not 1"},
        {"InterTileCombinerWithoutOp", kernel(subst(subst(inter_tile(), "    %s = arith.addf %l, %r : tensor<4x64xf16>\n", ""), "yield_reduced %s", "yield_reduced %l"), kGrid4),
         "line 13: ktdp.inter_tile_reduce: the combiner has no combining op"},
        {"InterTileYieldsAnIndex", kernel(subst(inter_tile(), "ktdp.yield_partial %v : tensor<4x64xf16>", "ktdp.yield_partial %c0 : index"), kGrid4),
         "line 11: ktdp.yield_partial: %c0 must be a tensor"},
        {"InterTileYieldValuesAndTypesDiffer", kernel(subst(inter_tile(), "ktdp.yield_partial %v : tensor<4x64xf16>", "ktdp.yield_partial %v, %v : tensor<4x64xf16>"), kGrid4),
         "line 11: ktdp.yield_partial: the yield has 2 values but 1 types"},
        {"InterTileResultNotATensor", kernel(subst(inter_tile(), "-> tensor<4x64xf16> {", "-> index {"), kGrid4),
         "line 13: ktdp.inter_tile_reduce: its result must be a tensor"},
        {"RingReduceResultOfOtherType", kernel(kLoad + "  %w = ktdp.reduce %v {kind = #ktdp.reduce_kind<sum>, mode = #ktdp.reduce_mode<all_reduce>, across = #ktdp.grid_axis<0>} : tensor<4x64xf16> -> tensor<4x64xf32>\n"),
         "line 9: ktdp.reduce: the result's element type differs from the input's"},
        // ---- an argument's buffer from its views at offsets (ktir_infer_buffer.cpp)
        {"OffsetFromAnUnevaluatedOp", offset_kernel("  %c9 = arith.constant 9 : index\n  %m = arith.maxsi %c9, %c9 : index\n", "%m"),
         kNoView + "%m comes from arith.maxsi, which the importer does not evaluate"},
        {"OffsetFromAScalarWithoutValue", offset_kernel("", "%n", "", "sizes: [1, 64], strides: [64, 1]", ", %n: index"),
         kNoView + "%n is not a constant, a tile id or a loop variable"},
        {"OffsetFromANonIntegerArgument", offset_kernel("", "%n", "", "sizes: [1, 64], strides: [64, 1]", ", %n: index"),
         kNoView + "argument %n is not an integer", {{"n", "1.5"}}},
        {"OffsetDividesByZero", offset_kernel("  %z = arith.constant 0 : index\n  %q = arith.divsi %z, %z : index\n", "%q"),
         kNoView + "the offset of a view divides by zero"},
        {"OffsetNotAtARow", offset_kernel("  %c3 = arith.constant 3 : index\n", "%c3"),
         kNoView + "the view at line 8 starts at element 3 for tile 0, not at a row of 64 elements"},
        {"OffsetViewNotDense", offset_kernel("", "%c0", "", "sizes: [1, 64], strides: [128, 1]"),
         kNoView + "the view at line 7 is not dense and row-major"},
        {"OffsetViewsDifferInInnerSizes", subst(offset_kernel("", "%c0"), "  return\n",
             "  %xb = arith.addi %x_ptr, %c1 : index\n  %xw = ktdp.construct_memory_view %xb, sizes: [1, 128], strides: [128, 1] {memory_space = #ktdp.memory_space<global>} : memref<1x128xf16>\n  return\n"),
         kNoView + "its views (lines 7 and 12) differ in more than their outermost size"},
        {"OffsetLoopBoundsNotConstant", offset_kernel("  %c9 = arith.constant 9 : index\n  %m = arith.maxsi %c9, %c9 : index\n", "%i",
             "  scf.for %i = %c0 to %m step %c1"),
         kNoView + "the bounds of the loop at line 8 around the view at line 10 are not constant"},
        {"OffsetLoopTooLong", offset_kernel("  %big = arith.constant 4000000 : index\n", "%i", "  scf.for %i = %c0 to %big step %c1"),
         kNoView + "the loop at line 7 runs too many iterations"},
        {"OffsetTakesTooManyValues", subst(subst(offset_kernel("  %k = arith.constant 1100 : index\n", "%s", "  scf.for %i = %c0 to %k step %c1 {\n  scf.for %j = %c0 to %k step %c1"),
             "  %xa = arith.addi %x_ptr, %s", "  %ij = arith.muli %i, %j : index\n  %s = arith.muli %ij, %c0 : index\n  %xa = arith.addi %x_ptr, %s"), "  }\n  return", "  }\n  }\n  return"),
         kNoView + "the offset of the view at line 12 takes over 1048576 values"},
        {"OffsetNestedTooDeeply", offset_kernel("  %o0 = arith.constant 0 : index\n  %k1 = arith.constant 1 : index\n  %o1 = arith.addi %o0, %k1 : index\n  %o2 = arith.addi %o1, %k1 : index\n  %o3 = arith.addi %o2, %k1 : index\n  %o4 = arith.addi %o3, %k1 : index\n  %o5 = arith.addi %o4, %k1 : index\n  %o6 = arith.addi %o5, %k1 : index\n  %o7 = arith.addi %o6, %k1 : index\n  %o8 = arith.addi %o7, %k1 : index\n  %o9 = arith.addi %o8, %k1 : index\n  %o10 = arith.addi %o9, %k1 : index\n  %o11 = arith.addi %o10, %k1 : index\n  %o12 = arith.addi %o11, %k1 : index\n  %o13 = arith.addi %o12, %k1 : index\n  %o14 = arith.addi %o13, %k1 : index\n  %o15 = arith.addi %o14, %k1 : index\n  %o16 = arith.addi %o15, %k1 : index\n  %o17 = arith.addi %o16, %k1 : index\n  %o18 = arith.addi %o17, %k1 : index\n  %o19 = arith.addi %o18, %k1 : index\n  %o20 = arith.addi %o19, %k1 : index\n  %o21 = arith.addi %o20, %k1 : index\n  %o22 = arith.addi %o21, %k1 : index\n  %o23 = arith.addi %o22, %k1 : index\n  %o24 = arith.addi %o23, %k1 : index\n  %o25 = arith.addi %o24, %k1 : index\n  %o26 = arith.addi %o25, %k1 : index\n  %o27 = arith.addi %o26, %k1 : index\n  %o28 = arith.addi %o27, %k1 : index\n  %o29 = arith.addi %o28, %k1 : index\n  %o30 = arith.addi %o29, %k1 : index\n  %o31 = arith.addi %o30, %k1 : index\n  %o32 = arith.addi %o31, %k1 : index\n  %o33 = arith.addi %o32, %k1 : index\n  %o34 = arith.addi %o33, %k1 : index\n  %o35 = arith.addi %o34, %k1 : index\n  %o36 = arith.addi %o35, %k1 : index\n  %o37 = arith.addi %o36, %k1 : index\n  %o38 = arith.addi %o37, %k1 : index\n  %o39 = arith.addi %o38, %k1 : index\n  %o40 = arith.addi %o39, %k1 : index\n  %o41 = arith.addi %o40, %k1 : index\n  %o42 = arith.addi %o41, %k1 : index\n  %o43 = arith.addi %o42, %k1 : index\n  %o44 = arith.addi %o43, %k1 : index\n  %o45 = arith.addi %o44, %k1 : index\n  %o46 = arith.addi %o45, %k1 : index\n  %o47 = arith.addi %o46, %k1 : index\n  %o48 = arith.addi %o47, %k1 : index\n  %o49 = arith.addi %o48, %k1 : index\n  %o50 = arith.addi %o49, %k1 : index\n  %o51 = arith.addi %o50, %k1 : index\n  %o52 = arith.addi %o51, %k1 : index\n  %o53 = arith.addi %o52, %k1 : index\n  %o54 = arith.addi %o53, %k1 : index\n  %o55 = arith.addi %o54, %k1 : index\n  %o56 = arith.addi %o55, %k1 : index\n  %o57 = arith.addi %o56, %k1 : index\n  %o58 = arith.addi %o57, %k1 : index\n  %o59 = arith.addi %o58, %k1 : index\n  %o60 = arith.addi %o59, %k1 : index\n  %o61 = arith.addi %o60, %k1 : index\n  %o62 = arith.addi %o61, %k1 : index\n  %o63 = arith.addi %o62, %k1 : index\n  %o64 = arith.addi %o63, %k1 : index\n  %o65 = arith.addi %o64, %k1 : index\n  %o66 = arith.addi %o65, %k1 : index\n  %o67 = arith.addi %o66, %k1 : index\n  %o68 = arith.addi %o67, %k1 : index\n  %o69 = arith.addi %o68, %k1 : index\n  %o70 = arith.addi %o69, %k1 : index\n", "%o70"),
         kNoView + "the offset of a view is nested too deeply"},
        // ---- distributed memory views (ktir_import_distributed.cpp)
        {"DistributedPartitionInLx", dist_kernel("%c64", "(d0 >= 0, -d0 + 3 >= 0, d1 - 64 >= 0, -d1 + 127 >= 0)", "[128, 1]", "ct_local"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1 is not in device memory; partitions in a core's LX"},
        // Partitions of two arguments (%x_ptr, %z_ptr) are read piece by piece; a store into them is not.
        {"DistributedStoreIntoPartitionsOfTwoArguments", two_arg_dist_kernel(),
         "line 11: ktdp.store: a store into a distributed view of several arguments is not supported (loads are)"},
        {"DistributedPartitionsOfTwoArgumentsOverlap", dist_kernel("%z_ptr", "(d0 >= 0, -d0 + 3 >= 0, d1 - 32 >= 0, -d1 + 95 >= 0)"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1 overlaps partition %p0"},
        {"DistributedPartitionsOfTwoArgumentsLeaveAGap", subst(dist_kernel("%z_ptr"), "memref<4x128xf16>", "memref<4x192xf16>"),
         "line 7: ktdp.construct_distributed_memory_view: its partitions do not cover memref<4x192xf16>"},
        {"DistributedTileAtATileIdAcrossTwoArguments",
         subst(subst(subst(two_arg_dist_kernel(), "grid = [1]", "grid = [2]"), "  %c0 = arith.constant 0 : index\n",
                     "  %c0 = arith.constant 0 : index\n  %id = ktdp.get_compute_tile_id : index\n  %o = arith.muli %id, %c64 : index\n"),
               "%d[%c0, %c0] : memref<4x128xf16> -> !ktdp.access_tile<4x128xindex>\n  %v = ktdp.load %t : !ktdp.access_tile<4x128xindex> -> tensor<4x128xf16>\n  ktdp.store %v, %t : tensor<4x128xf16>, !ktdp.access_tile<4x128xindex>",
               "%d[%c0, %o] : memref<4x128xf16> -> !ktdp.access_tile<4x64xindex>\n  %v = ktdp.load %t : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>"),
         "line 12: ktdp.load: subscript 1 of a tile of a distributed view of several arguments is a run-time value and its "
         "partitions split that dimension: it is not a loop variable (the import must know that each position is inside one partition)"},
        {"DistributedTwoArgumentsSplitInsideAStick",
         "func.func @k(%x_ptr: index, %z_ptr: index) {\n"
         "  %p0 = ktdp.construct_memory_view %x_ptr, sizes: [4, 32], strides: [32, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 31 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x32xf16>\n"
         "  %p1 = ktdp.construct_memory_view %z_ptr, sizes: [4, 96], strides: [96, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 - 32 >= 0, -d1 + 127 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x96xf16>\n"
         "  %d = ktdp.construct_distributed_memory_view (%p0, %p1 : memref<4x32xf16>, memref<4x96xf16>) : memref<4x128xf16>\n"
         "  %c0 = arith.constant 0 : index\n"
         "  %t = ktdp.construct_access_tile %d[%c0, %c0] : memref<4x128xf16> -> !ktdp.access_tile<4x128xindex>\n"
         "  %v = ktdp.load %t : !ktdp.access_tile<4x128xindex> -> tensor<4x128xf16>\n  return\n}\n",
         "line 7: ktdp.load: a partition's piece of the tile starts inside a stick of LX"},
        // The checks of a distributed view of several arguments (ktir_import_distributed.cpp, multi_dist).
        {"DistributedTwoArgumentsPartitionInLx",
         subst(two_arg_dist_kernel("(d0 >= 0, -d0 + 3 >= 0, d1 - 64 >= 0, -d1 + 127 >= 0)",
                                   "  %p2 = ktdp.construct_memory_view %c64, sizes: [4, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 - 128 >= 0, -d1 + 191 >= 0)>, memory_space = #ktdp.memory_space<ct_local>} : memref<4x64xf16>\n"),
               "(%p0, %p1 : memref<4x64xf16>, memref<4x64xf16>) : memref<4x128xf16>",
               "(%p0, %p1, %p2 : memref<4x64xf16>, memref<4x64xf16>, memref<4x64xf16>) : memref<4x192xf16>"),
         "line 8: ktdp.construct_distributed_memory_view: partition %p2 is not a ktdp.construct_memory_view in device memory"},
        {"DistributedTwoArgumentsPartitionType",
         subst(two_arg_dist_kernel(), "memory_space = #ktdp.memory_space<global>} : memref<4x64xf16>\n  %d",
               "memory_space = #ktdp.memory_space<global>} : memref<4x64xf32>\n  %d"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1 differs from the view memref<4x128xf16> in rank or element type"},
        {"DistributedTwoArgumentsPartitionWithoutCoordinates",
         subst(two_arg_dist_kernel(), "{coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 - 64 >= 0, -d1 + 127 >= 0)>, ", "{"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1 needs a coordinate_set of its 2 global coordinates"},
        {"DistributedTwoArgumentsPartitionNotABox", two_arg_dist_kernel("(d0 >= 0, -d0 + 3 >= 0, d1 - 64 - d0 >= 0, -d1 + 127 >= 0)"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1: its coordinate_set must be a box"},
        {"DistributedTwoArgumentsPartitionSizes", two_arg_dist_kernel("(d0 >= 0, -d0 + 3 >= 0, d1 - 32 >= 0, -d1 + 127 >= 0)"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1: its coordinate_set does not match its sizes inside memref<4x128xf16>"},
        {"DistributedTileAtALoopOfTooManyIterations",
         "func.func @k(%x_ptr: index, %z_ptr: index) {\n"
         "  %p0 = ktdp.construct_memory_view %x_ptr, sizes: [4, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x64xf16>\n"
         "  %p1 = ktdp.construct_memory_view %z_ptr, sizes: [4, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 - 64 >= 0, -d1 + 127 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x64xf16>\n"
         "  %d = ktdp.construct_distributed_memory_view (%p0, %p1 : memref<4x64xf16>, memref<4x64xf16>) : memref<4x128xf16>\n"
         "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n  %big = arith.constant 100000 : index\n"
         "  scf.for %off = %c0 to %big step %c1 {\n"
         "    %t = ktdp.construct_access_tile %d[%c0, %off] : memref<4x128xf16> -> !ktdp.access_tile<4x64xindex>\n"
         "    %v = ktdp.load %t : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>\n  }\n  return\n}\n",
         "line 10: ktdp.load: subscript 1 of a tile of a distributed view of several arguments is a run-time value and its "
         "partitions split that dimension: its loop runs too many times to check"},
        {"DistributedTileAtALoopOfRunTimeBounds",
         "func.func @k(%x_ptr: index, %z_ptr: index) {\n"
         "  %p0 = ktdp.construct_memory_view %x_ptr, sizes: [4, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x64xf16>\n"
         "  %p1 = ktdp.construct_memory_view %z_ptr, sizes: [4, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 - 64 >= 0, -d1 + 127 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x64xf16>\n"
         "  %d = ktdp.construct_distributed_memory_view (%p0, %p1 : memref<4x64xf16>, memref<4x64xf16>) : memref<4x128xf16>\n"
         "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n  %c2 = arith.constant 2 : index\n"
         "  %c64 = arith.constant 64 : index\n  %c128 = arith.constant 128 : index\n"
         "  scf.for %i = %c0 to %c2 step %c1 {\n"
         "    scf.for %off = %i to %c128 step %c64 {\n"
         "      %t = ktdp.construct_access_tile %d[%c0, %off] : memref<4x128xf16> -> !ktdp.access_tile<4x64xindex>\n"
         "      %v = ktdp.load %t : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>\n    }\n  }\n  return\n}\n",
         "line 13: ktdp.load: subscript 1 of a tile of a distributed view of several arguments is a run-time value and its "
         "partitions split that dimension: the bounds of its loop (line 11) are not constants"},
        {"DynamicViewSymbolsWithoutSizes",
         "func.func @k(%x_ptr: index, %n: index) {\n"
         "  %v = ktdp.construct_memory_view %x_ptr, sizes: [4, %n], strides: [%n, 1] {coordinate_set = affine_set<(d0, d1)[s0, s1] : (d0 >= 0, -d0 + 3 >= 0, d1 - s1 >= 0, -d1 + s0 - 1 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x?xf16>\n"
         "  return\n}\n",
         "line 2: ktdp.construct_memory_view: its coordinate_set has 2 symbols and the view 1 dynamic sizes to bind them to",
         {{"n", "64"}}},
        {"DistributedPartitionStrides", dist_kernel("%x1", "(d0 >= 0, -d0 + 3 >= 0, d1 - 64 >= 0, -d1 + 127 >= 0)", "[64, 1]"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1 has other strides than the first partition"},
        {"DistributedPartitionNotABox", dist_kernel("%x1", "(d0 >= 0, -d0 + 3 >= 0, d1 - 64 - d0 >= 0, -d1 + 127 >= 0)"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1: its coordinate_set must be a box"},
        {"DistributedPartitionSizes", dist_kernel("%x1", "(d0 >= 0, -d0 + 3 >= 0, d1 - 32 >= 0, -d1 + 127 >= 0)"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1: its coordinate_set does not match its sizes inside memref<4x128xf16>"},
        {"DistributedPartitionElsewhere", dist_kernel("%x_ptr"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1 does not start where the whole tensor's view puts its coordinates (64 elements from %x_ptr)"},
        {"DistributedPartitionAtATileOffset", subst(subst(dist_kernel("%xt"), "grid = [1]", "grid = [2]"), "  %x1 = arith.addi %x_ptr, %c64 : index\n",
             "  %id = ktdp.get_compute_tile_id : index\n  %xt = arith.addi %x_ptr, %id : index\n"),
         "line 8: ktdp.construct_distributed_memory_view: partition %p1's offset from %x_ptr is not one constant"},
        {"DistributedPartitionsOverlap", subst(dist_kernel("%x_ptr", "(d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)"), "memref<4x128xf16>", "memref<4x128xf16>"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1 overlaps another partition"},
        {"DistributedPartitionsLeaveAGap", subst(dist_kernel(), "memref<4x128xf16>", "memref<4x192xf16>"),
         "line 7: ktdp.construct_distributed_memory_view: its partitions do not cover memref<4x192xf16>"},
        {"DistributedPartitionWithoutCoordinates", subst(dist_kernel(), "{coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 - 64 >= 0, -d1 + 127 >= 0)>, ", "{"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p1 needs a coordinate_set of its 2 global coordinates"},
        {"DistributedPartitionNotAView", subst(dist_kernel(), "(%p0, %p1 :", "(%p0, %c64 :"),
         "line 7: ktdp.construct_distributed_memory_view: partition %c64 is not a ktdp.construct_memory_view"},
        {"DistributedPartitionOfOtherType", subst(dist_kernel(), ": memref<4x128xf16>\n  %c0", ": memref<4x128xf32>\n  %c0"),
         "line 7: ktdp.construct_distributed_memory_view: partition %p0 differs from the view memref<4x128xf32> in rank or element type"},
        {"DistributedPartitionTypesDiffer", subst(dist_kernel(), "(%p0, %p1 : memref<4x64xf16>, memref<4x64xf16>)", "(%p0, %p1 : memref<4x64xf16>)"),
         "line 7: ktdp.construct_distributed_memory_view: the partition list has 2 values but 1 types"},
        {"OffsetViewOfSizeZero", offset_kernel("", "%c0", "", "sizes: [1, 0], strides: [64, 1]"),
         kNoView + "the view at line 7 has a size of 0"},
        {"OffsetOfTheMostNegativeValueOverMinusOne", offset_kernel("  %h = arith.constant 4294967296 : index\n  %l = arith.constant 2147483648 : index\n"
             "  %m = arith.muli %h, %l : index\n  %n1 = arith.constant -1 : index\n  %q = arith.divsi %m, %n1 : index\n", "%q"),
         kNoView + "the view at line 12 starts at element -9223372036854775808 for tile 0"},
        {"InterTileSetOfTheMostNegativeValueOverMinusOne", kernel(inter_tile("(i)[g] : (((i * 4294967296) * 2147483648) floordiv -1 >= 0, -g >= 0)"), kGrid4),
         "line 9: ktdp.inter_tile_produce: tile 1 of the grid's 4 produces for no group"},
        {"RingReduceMissingKind", kernel(kLoad + "  %w = ktdp.reduce %v {mode = #ktdp.reduce_mode<all_reduce>} : tensor<4x64xf16> -> tensor<4x64xf16>\n"),
         "line 9: ktdp.reduce: needs kind = #ktdp....<...>"},
        // ---- shifted reads in tensor slices (docs/ktir.md, "Shifted reads")
        {"SliceReadOutsideAShift", kernel(kLoad + kFlat + "  %s = tensor.extract_slice %f[0] [256] [1] : tensor<256xf16> to tensor<256xf16>\n"
                                          "  %sh = arith.constant dense<[4, 64]> : tensor<2xindex>\n"
                                          "  %w = tensor.reshape %s(%sh) : (tensor<256xf16>, tensor<2xindex>) -> tensor<4x64xf16>\n" + kStore),
         "line 13: ktdp.store: %w is a slice of a shifted read or a lane select, which only the tensor.insert_slice that carries spyre.shift or spyre.lane_select"},
        {"SliceOfATwoDimensionalTensorOutsideALaneSelect", kernel(kLoad + "  %w = tensor.extract_slice %v[0, 0] [4, 64] [1, 1] : tensor<4x64xf16> to tensor<4x64xf16>\n" + kStore),
         "line 10: ktdp.store: %w is a slice of a shifted read or a lane select"},
        {"LaneSelectSlicesOfThreeSources",
         kernel(kLoad + "  %v2 = ktdp.load %t : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>\n"
                        "  %v3 = ktdp.load %t : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>\n"
                        "  %z = arith.constant 0.0 : f16\n  %r0 = tensor.splat %z : tensor<4x64xf16>\n"
                        "  %p1 = tensor.extract_slice %v[0, 0] [4, 1] [1, 1] : tensor<4x64xf16> to tensor<4x1xf16>\n"
                        "  %r1 = tensor.insert_slice %p1 into %r0[0, 0] [4, 1] [1, 1] : tensor<4x1xf16> into tensor<4x64xf16>\n"
                        "  %p2 = tensor.extract_slice %v2[0, 1] [4, 1] [1, 1] : tensor<4x64xf16> to tensor<4x1xf16>\n"
                        "  %r2 = tensor.insert_slice %p2 into %r1[0, 1] [4, 1] [1, 1] : tensor<4x1xf16> into tensor<4x64xf16>\n"
                        "  %p3 = tensor.extract_slice %v3[0, 2] [4, 1] [1, 1] : tensor<4x64xf16> to tensor<4x1xf16>\n"
                        "  %w = tensor.insert_slice %p3 into %r2[0, 2] [4, 1] [1, 1] : tensor<4x1xf16> into tensor<4x64xf16>\n" +
                kStore),
         "line 18: tensor.insert_slice: reads three sources (%v, %v2, %v3); a lane select has two"},
        {"SliceDynamicOffset", kernel(kLoad + kFlat + "  %s = tensor.extract_slice %f[%c0] [256] [1] : tensor<256xf16> to tensor<256xf16>\n"),
         "line 10: expected an integer"},
        // ---- spyre.shift (VSHIFT)
        {"ShiftEdge", kernel(kLoad + kFlat + shift_op("shift = 1 : i32, lo = 0 : i32, hi = 9 : i32, origin = 0 : i32, edge = \"mirror\"")),
         "line 10: spyre.shift: needs edge = \"none\", \"clamp\", \"zero\", \"mirror_image\" or \"mirror_interior\""},
        {"ShiftMissingAttr", kernel(kLoad + kFlat + shift_op("lo = 0 : i32, hi = 9 : i32, origin = 0 : i32, edge = \"none\"")),
         "line 10: spyre.shift: needs shift = <i32>"},
        {"ShiftEmptyWindow", kernel(kLoad + kFlat + shift_op("shift = 1 : i32, lo = 9 : i32, hi = 0 : i32, origin = 0 : i32, edge = \"clamp\"")),
         "line 10: spyre.shift: edge window [9, 0] is empty"},
        {"ShiftRowsNotSticks", kernel(kLoad + kFlat + shift_op("shift = 1 : i32, lo = 0 : i32, hi = 9 : i32, origin = 0 : i32, edge = \"clamp\"", "4x32")),
         "line 10: spyre.shift: rows of 32 elements are not whole sticks of 64"},
        {"ShiftReadsOutsideSource", kernel(kLoad + kFlat + shift_op("shift = -1 : i32, lo = 0 : i32, hi = 0 : i32, origin = 0 : i32, edge = \"none\"")),
         "line 10: spyre.shift: reads elements [-1, 254] of a source of 256"},
        {"ShiftBaseNotOnStick", kernel(kLoad + kFlat + shift_op("shift = 4 : i32, lo = 0 : i32, hi = 0 : i32, origin = 3 : i32, edge = \"none\"")),
         "line 10: spyre.shift: the rows' base (3 elements before the source) is not on a stick boundary"},
        {"ShiftSourceNot1D", kernel(kLoad + "  %f = tensor.collapse_shape %v [[0, 1]] : tensor<4x64xf16> into tensor<256xf16>\n"
                                    "  %w = \"spyre.shift\"(%v) {shift = 1 : i32, lo = 0 : i32, hi = 0 : i32, origin = 0 : i32, edge = \"none\"} : (tensor<4x64xf16>) -> tensor<4x64xf16>\n"),
         "line 10: spyre.shift: the source must be a packed 1-D tensor in LX"},
        // ---- spyre.to_fp8 / spyre.from_fp8 (VCVTF8)
        {"Fp8UnknownFormat", kernel(kLoad + "  %w = \"spyre.to_fp8\"(%v) {format = \"e3m4\"} : (tensor<4x64xf16>) -> tensor<4x64xi8>\n"),
         "line 9: spyre.to_fp8: needs format = \"e4m3\" or \"e5m2\""},
        {"Fp8MissingFormat", kernel(kLoad + "  %w = \"spyre.from_fp8\"(%v) : (tensor<4x64xf16>) -> tensor<4x64xf16>\n"),
         "line 9: spyre.from_fp8: needs format = \"e4m3\" or \"e5m2\""},
        {"Fp8DecodeOfFloats", kernel(kLoad + "  %w = \"spyre.from_fp8\"(%v) {format = \"e4m3\"} : (tensor<4x64xf16>) -> tensor<4x64xf16>\n"),
         "line 9: spyre.from_fp8: converts f16 to f16; it decodes i8 fp8 codes into f16 or f32 values"},
        {"Fp8EncodeToFloat", kernel(kLoad + "  %w = \"spyre.to_fp8\"(%v) {format = \"e5m2\"} : (tensor<4x64xf16>) -> tensor<4x64xf32>\n"),
         "line 9: spyre.to_fp8: converts f16 to f32; it encodes f16 or f32 values into i8 fp8 codes"},
        {"Fp8ShapeChange", kernel(kLoad + "  %w = \"spyre.to_fp8\"(%v) {format = \"e5m2\"} : (tensor<4x64xf16>) -> tensor<2x128xi8>\n"),
         "line 9: spyre.to_fp8: operand and result shapes differ"},
        // ---- spyre.lane_select (VLSEL)
        {"LaneSelectBlock", kernel(kLoad + "  %w = \"spyre.lane_select\"(%v, %v) {block = 0 : i32} : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>\n"),
         "line 9: spyre.lane_select: needs block = <positive i32>"},
        {"LaneSelectOneOperand", kernel(kLoad + "  %w = \"spyre.lane_select\"(%v) {block = 1 : i32} : (tensor<4x64xf16>) -> tensor<4x64xf16>\n"),
         "line 9: spyre.lane_select: takes two tensors and returns one"},
        {"LaneSelectShapes", kernel(kLoad + kFlat + "  %w = \"spyre.lane_select\"(%v, %f) {block = 1 : i32} : (tensor<4x64xf16>, tensor<256xf16>) -> tensor<4x64xf16>\n"),
         "line 10: spyre.lane_select: operand types or shapes differ from the result's"},
        // ---- spyre.index_select (VSELIDX)
        {"IndexSelectPerGroup", kernel(kLoad + "  %w = \"spyre.index_select\"(%v, %v, %c0) {per_group = 2 : i32} : (tensor<4x64xf16>, tensor<4x64xf16>, index) -> tensor<4x64xf16>\n"),
         "line 9: spyre.index_select: needs per_group = 0 or 1 (i32)"},
        {"IndexSelectNoLimit", kernel(kLoad + "  %w = \"spyre.index_select\"(%v, %v) {per_group = 1 : i32} : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>\n"),
         "line 9: spyre.index_select: takes two tensors and an index, and returns one tensor"},
        {"IndexSelectShapes", kernel(kLoad + kFlat + "  %w = \"spyre.index_select\"(%v, %f, %c0) {per_group = 0 : i32} : (tensor<4x64xf16>, tensor<256xf16>, index) -> tensor<4x64xf16>\n"),
         "line 10: spyre.index_select: the first operand must have the result's shape, the second that shape or one element per row"},
        {"IndexSelectFloatLimit", kernel(kLoad + "  %f = arith.constant 1.0 : f32\n  %w = \"spyre.index_select\"(%v, %v, %f) {per_group = 0 : i32} : (tensor<4x64xf16>, tensor<4x64xf16>, f32) -> tensor<4x64xf16>\n"),
         "line 10: spyre.index_select: a float value cannot be used as an index"},
        {"RingSendDirection", kernel(kLoad + "  \"spyre.ring_send\"(%v) {direction = 2 : i32} : (tensor<4x64xf16>) -> ()\n"),
         "line 9: spyre.ring_send: needs direction = 1 or -1"},
        {"ForBoundsHbm", kernel("  %c1 = arith.constant 1 : index\n  scf.for %i = %c0 to %x_ptr step %c1 {\n  }\n"),
         "line 7: scf.for: bounds are HBM addresses"},
        {"ForFloatIterArg", kernel("  %c1 = arith.constant 1 : index\n  %f = arith.constant 1.0 : f32\n  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %f) -> (f32) {\n    scf.yield %a : f32\n  }\n"),
         "line 8: scf.for: iter_arg 0 must be an index or integer value"},
        {"ForMissingYield", kernel("  %c1 = arith.constant 1 : index\n  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %c0) -> (index) {\n    %b = arith.addi %a, %c1 : index\n  }\n"),
         "line 7: scf.for: a loop with iter_args must end in scf.yield"},
        {"IfWithoutElse", kernel("  %p = ktdp.get_compute_tile_id : index\n  %b = arith.cmpi eq, %p, %c0 : index\n  %r = scf.if %b -> (index) {\n    scf.yield %c0 : index\n  }\n"),
         "line 8: scf.if with results needs an else"},
        {"IfYieldCount", kernel("  %p = ktdp.get_compute_tile_id : index\n  %b = arith.cmpi eq, %p, %c0 : index\n  %r = scf.if %b -> (index) {\n    scf.yield %c0 : index\n  } else {\n    scf.yield\n  }\n"),
         "line 8: scf.if: each branch must yield 1 values"},
        {"IfOnHbmAddress", kernel("  scf.if %x_ptr {\n  }\n"), "line 6: scf.if: the condition must be an i1 value"},
        {"YieldScalarForTensor", kernel(kLoad + "  %c1 = arith.constant 1 : index\n  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %v) -> (tensor<4x64xf16>) {\n    scf.yield %c0 : index\n  }\n"),
         "line 11: scf.yield: value 0 must be a tensor"},
        {"FloatAsIndex", kernel("  %f = arith.constant 1.0 : f32\n  %w = arith.addi %f, %c0 : index\n"), "line 7: arith.addi: mixes float and integer operands"},
        {"FloatScalarOp", kernel("  %f = arith.constant 1.0 : f32\n  %w = math.exp %f : f32\n"), "line 7: unsupported operation 'math.exp'"},
        {"F64Constant", kernel("  %f = arith.constant 1.0 : f64\n"), "line 6: arith.constant: type f64 is not supported"},
        {"HalfBitsOutOfRange", kernel("  %f = arith.constant 0x1FFFF : f16\n"), "line 6: f16 bit pattern out of range"},
        {"F64Argument", kernel("", "", ", %q: f64"), "argument %q: type f64 is not supported (f16, f32)", {{"q", "1"}}},
        {"NoFunction", "// nothing\n", "the module has no function"},
        {"TensorLargerThanLx",
         "func.func @k() {\n  %c0 = arith.constant 0 : index\n  %a = arith.constant 0 : index\n"
         "  %big = ktdp.construct_memory_view %a, sizes: [4096, 512], strides: [512, 1] : memref<4096x512xf16>\n"
         "  %t = ktdp.construct_access_tile %big[%c0, %c0] : memref<4096x512xf16> -> !ktdp.access_tile<4096x512xindex>\n"
         "  %v = ktdp.load %t : !ktdp.access_tile<4096x512xindex> -> tensor<4096x512xf16>\n  return\n}\n",
         "line 6: ktdp.load: tensor does not fit in LX"},
        {"LxFull",
         "func.func @k() {\n  %c0 = arith.constant 0 : index\n  %a = arith.constant 0 : index\n  %r1 = arith.constant 768 : index\n"
         "  %big = ktdp.construct_memory_view %a, sizes: [4096, 512], strides: [512, 1] : memref<4096x512xf16>\n"
         "  %t = ktdp.construct_access_tile %big[%c0, %c0] : memref<4096x512xf16> -> !ktdp.access_tile<768x512xindex>\n"
         "  %u = ktdp.construct_access_tile %big[%r1, %c0] : memref<4096x512xf16> -> !ktdp.access_tile<768x512xindex>\n"
         "  %v = ktdp.load %t : !ktdp.access_tile<768x512xindex> -> tensor<768x512xf16>\n"
         "  %w = ktdp.load %u : !ktdp.access_tile<768x512xindex> -> tensor<768x512xf16>\n"
         "  %s = arith.addf %v, %w : tensor<768x512xf16>\n  return\n}\n",
         "line 10: arith.addf: LX is full (786432 more bytes needed, 524288 free of 2097152)"},
        // fuzz finding: an LX view with more sizes than strides at a constant address (read past the strides)
        {"LxViewSizesStrides", kernel("  %w = ktdp.construct_memory_view %c0, sizes: [1, 1, 24], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<LX>} : memref<1x1x24xf16>\n"),
         "line 6: ktdp.construct_memory_view: needs as many sizes as strides (at least one)"},
        {"TooManyIndexValues",
         kernel([] {
             std::string b = "  %p = ktdp.get_compute_tile_id : index\n";
             for (int i = 0; i < 40; i++) b += "  %v" + std::to_string(i) + " = arith.addi %p, %p : index\n";
             b += "  %s = arith.addi %v0, %v1 : index\n";
             for (int i = 2; i < 40; i++) b += "  %s" + std::to_string(i) + " = arith.addi %s, %v" + std::to_string(i) + " : index\n";
             return b;
         }(), " attributes {grid = [2]}"),
         "more than 31 index values live at once"},
        // ---- IBM's spellings (docs/ktir.md, "Checked against IBM's files"): what stays refused
        {"DenseOfAString", kernel("  %w = arith.constant dense<\"x\"> : tensor<2xf16>\n"),
         "line 6: dense<...> holds a number or a list of numbers"},
        {"ShapeConstantOfFloats", kernel("  %s = arith.constant dense<[1.5, 2.0]> : tensor<2xindex>\n"),
         "line 6: arith.constant: shape values must be integers"},
        {"ShapeConstantCount", kernel("  %s = arith.constant dense<[1, 2, 3]> : tensor<2xindex>\n"),
         "line 6: arith.constant: 3 values for tensor<2xindex>"},
        {"ReshapeWithoutShape", kernel(kLoad + "  %w = \"tensor.reshape\"(%v) : (tensor<4x64xf16>) -> tensor<256xf16>\n"),
         "line 9: tensor.reshape: expected a tensor and a shape"},
        {"ReshapeRunTimeShape", kernel(kLoad + "  %w = \"tensor.reshape\"(%v, %v) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<256xf16>\n"),
         "line 9: tensor.reshape: the shape %v must be an arith.constant dense<[...]>"},
        {"ReshapeElementCount", kernel(kLoad + "  %s = arith.constant dense<[4, 32]> : tensor<2xindex>\n  %w = tensor.reshape %v(%s) : (tensor<4x64xf16>, tensor<2xindex>) -> tensor<4x32xf16>\n"),
         "line 10: tensor.reshape: 256 elements cannot become 128"},
        {"ReshapePaddedRows", kernel("  %t = ktdp.construct_access_tile %xv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x32xindex>\n  %v = ktdp.load %t : !ktdp.access_tile<4x32xindex> -> tensor<4x32xf16>\n  %s = arith.constant dense<[128]> : tensor<1xindex>\n  %w = tensor.reshape %v(%s) : (tensor<4x32xf16>, tensor<1xindex>) -> tensor<128xf16>\n"),
         "line 9: tensor.reshape: a reshape that changes the innermost dimension of a tensor whose rows are padded"},
        {"CollapseToRankZeroFromMany", kernel(kLoad + "  %w = tensor.collapse_shape %v [] : tensor<4x64xf16> into tensor<f16>\n"),
         "line 9: tensor.collapse_shape: a rank-0 tensor has one element, not 256"},
        {"BroadcastRepeatedDimension", kernel("  %t = ktdp.construct_access_tile %xv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<1x64xindex>\n  %r = ktdp.load %t : !ktdp.access_tile<1x64xindex> -> tensor<1x64xf16>\n  %v = tensor.collapse_shape %r [[0, 1]] : tensor<1x64xf16> into tensor<64xf16>\n  %e = tensor.empty() : tensor<2x2x64xf16>\n  %w = linalg.broadcast ins(%v : tensor<64xf16>) outs(%e : tensor<2x2x64xf16>) dimensions = [0, 0]\n"),
         "line 10: linalg.broadcast: dimension 0 is out of range or repeated"},
        {"BroadcastRowLength", kernel(kLoad + "  %e = tensor.empty() : tensor<4x2x32xf16>\n  %w = linalg.broadcast ins(%v : tensor<4x64xf16>) outs(%e : tensor<4x2x32xf16>) dimensions = [1]\n"),
         "line 10: linalg.broadcast: input dimension 1 (64) differs from result dimension 2 (32)"},
        {"BroadcastTooManyRows", kernel(kLoad + "  %e = tensor.empty() : tensor<4x20000x64xf16>\n  %w = linalg.broadcast ins(%v : tensor<4x64xf16>) outs(%e : tensor<4x20000x64xf16>) dimensions = [1]\n"),
         "line 10: linalg.broadcast: 80000 result rows are more than the 65536"},
        {"TransposeNotAPermutation", kernel(kLoad + "  %x = tensor.expand_shape %v [[0, 1], [2]] : tensor<4x64xf16> into tensor<2x2x64xf16>\n  %e = tensor.empty() : tensor<2x64x2xf16>\n  %w = linalg.transpose ins(%x : tensor<2x2x64xf16>) outs(%e : tensor<2x64x2xf16>) permutation = [2, 2, 1]\n"),
         "line 11: linalg.transpose: permutation is not a permutation of 0..2"},
        {"TransposeResultType", kernel(kLoad + "  %x = tensor.expand_shape %v [[0, 1], [2]] : tensor<4x64xf16> into tensor<2x2x64xf16>\n  %e = tensor.empty() : tensor<2x2x64xf16>\n  %w = linalg.transpose ins(%x : tensor<2x2x64xf16>) outs(%e : tensor<2x2x64xf16>) permutation = [0, 2, 1]\n"),
         "line 11: linalg.transpose: the result type tensor<2x2x64xf16> is not the permuted input shape"},
        {"InnermostStrideNotOne",
         "func.func @k(%x_ptr: index) {\n  %xv = ktdp.construct_memory_view %x_ptr, sizes: [64, 4], strides: [1, 64] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<64x4xf16>\n  return\n}\n",
         "line 2: ktdp.construct_memory_view of buffer 'x': strides must be row-major"},
        {"StickExtentOutsideItsSticks",
         "func.func @k(%x_ptr: index) {\n  %xv = ktdp.construct_memory_view %x_ptr, sizes: [8, 2, 64], strides: [64, 512, 1] {memory_space = #ktdp.spyre_memory_space<HBM>, spyre.stick_extent = 200 : i64} : memref<8x2x64xf16>\n  return\n}\n",
         "line 2: ktdp.construct_memory_view: spyre.stick_extent must be an integer in (64, 128], the elements of its 2 sticks"},
        {"StickDimOtherThanOne",
         "func.func @k(%x_ptr: index) {\n  %xv = ktdp.construct_memory_view %x_ptr, sizes: [8, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>, spyre.stick_dim = 2 : i64} : memref<8x64xf16>\n  return\n}\n",
         "line 2: ktdp.construct_memory_view: spyre.stick_dim must be 1, on a view of a 2-D tensor"},
        {"DenseViewOfPartRows",
         "func.func @k(%x_ptr: index) {\n  %xv = ktdp.construct_memory_view %x_ptr, sizes: [4, 100], strides: [100, 1] : memref<4x100xf16>\n  %pv = ktdp.construct_memory_view %x_ptr, sizes: [8, 50], strides: [50, 1] : memref<8x50xf16>\n  return\n}\n",
         "line 3: ktdp.construct_memory_view: a view with dense strides and rows of 50 elements (not whole sticks) must cover whole rows"},
        {"SitofpOfAFloat", kernel("  %f = arith.constant 1.0 : f32\n  %w = arith.sitofp %f : f32 to f16\n"),
         "line 7: arith.sitofp: expected an integer operand"},
        {"ReduceRegionYieldsAnArgument", kernel(kLoad + "  %e = tensor.empty() : tensor<4xf16>\n  %w = linalg.reduce ins(%v : tensor<4x64xf16>) outs(%e : tensor<4xf16>) dimensions = [1]\n    (%a: f16, %b: f16) {\n      %s = arith.addf %a, %b : f16\n      linalg.yield %a : f16\n    }\n"),
         "line 10: linalg.reduce: the region must yield its combining op's result"},
        {"ReduceRegionEmpty", kernel(kLoad + "  %e = tensor.empty() : tensor<4xf16>\n  %w = linalg.reduce ins(%v : tensor<4x64xf16>) outs(%e : tensor<4xf16>) dimensions = [1]\n    (%a: f16, %b: f16) {\n      linalg.yield %a : f16\n    }\n"),
         "line 10: linalg.reduce: the region has no combining op"},
    };
}

class KtirBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(KtirBadInput, FailsWithAMessageNamingTheProblem) {
    const BadCase &c = GetParam();
    ktir::ImportOptions o;
    o.args = c.args;
    o.func = c.func;
    try {
        ktir::import_ktir(ktir::read_ktir(c.text), o);
        FAIL() << "no error; expected: " << c.want;
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find(c.want), std::string::npos) << "message: " << e.what() << "\nwanted: " << c.want;
    }
}

INSTANTIATE_TEST_SUITE_P(Ktir, KtirBadInput, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<BadCase> &i) { return i.param.name; });

TEST(KtirBadInput, FileErrorsNameTheFile) {
    try {
        ktir::import_ktir_file("/nonexistent/k.ktir", {});
        FAIL();
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("cannot open KTIR file '/nonexistent/k.ktir'"), std::string::npos) << e.what();
    }
}

TEST(KtirBadInput, SeveralFunctionsNeedAChoice) {
    std::string two = "func.func @a() {\n  return\n}\nfunc.func @b() {\n  return\n}\n";
    try {
        ktir::import_ktir(ktir::read_ktir(two), {});
        FAIL();
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("the module has several functions (a, b...); choose one with --func"),
                  std::string::npos)
            << e.what();
    }
    ktir::ImportOptions o;
    o.func = "b";
    EXPECT_EQ(ktir::import_ktir(ktir::read_ktir(two), o).kernel_name, "b");
}

TEST(KtirExport, OpcodeWithoutKtirFormIsNamed) {
    // VFMA has no KTIR form (its rounding differs from math.fma's), nor have the data select's
    // comparisons and VSELM yet: the export names each.
    for (Opcode op : {Opcode::VFMA, Opcode::VCMPLT, Opcode::VSELM}) {
        DeviceProgram p;
        p.kernel_name = "k";
        Instr in;
        in.op = op;
        in.a = {0, 0, 0, 0, 128, 0, 256, 1, 1, 0};
        p.code.push_back(in);
        try {
            ktir::export_ktir(p);
            FAIL();
        } catch (const Error &e) {
            EXPECT_NE(std::string(e.what()).find(std::string("instruction 0 (") + op_info(op).name + ", f16): no KTIR form"),
                      std::string::npos)
                << e.what();
        }
    }
}

}  // namespace

namespace {

TEST(KtirBadInput, StoreOverATileStillReadIsAnError) {
    // %a is read from LX after the store overwrites its tile: refused rather than silently wrong.
    std::string k = kernel(
        "  %t = ktdp.construct_access_tile %xv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>\n"
        "  %v = ktdp.load %t : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>\n"
        "  %la = arith.constant 0 : index\n"
        "  %lv = ktdp.construct_memory_view %la, sizes: [4, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<LX>} : memref<4x64xf16>\n"
        "  %lt = ktdp.construct_access_tile %lv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>\n"
        "  ktdp.store %v, %lt : tensor<4x64xf16>, !ktdp.access_tile<4x64xindex>\n"
        "  %a = ktdp.load %lt : !ktdp.access_tile<4x64xindex> -> tensor<4x64xf16>\n"
        "  %n = arith.negf %v : tensor<4x64xf16>\n"
        "  ktdp.store %n, %lt : tensor<4x64xf16>, !ktdp.access_tile<4x64xindex>\n"
        "  %u = ktdp.construct_access_tile %yv[%c0, %c0] : memref<4x64xf16> -> !ktdp.access_tile<4x64xindex>\n"
        "  ktdp.store %a, %u : tensor<4x64xf16>, !ktdp.access_tile<4x64xindex>\n");
    try {
        ktir::import_ktir(ktir::read_ktir(k), {});
        FAIL();
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("line 14: ktdp.store: overwrites LX that %a still holds"), std::string::npos)
            << e.what();
    }
}

}  // namespace
