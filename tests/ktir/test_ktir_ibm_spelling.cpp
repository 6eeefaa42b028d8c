// KTIR as IBM's tools write it: small kernels of our own, each written in the spelling and with the
// constructs of torch-spyre's Inductor output (spyre-kernels) or ktir-cpu's examples, checked on
// the simulator against values computed here from the ops' semantics. Together they cover every
// construct of the IBM files listed in docs/ktir.md ("Checked against IBM's files").
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "device/error.h"
#include "device/half.h"
#include "ktir_import.h"
#include "ktir_reader.h"
#include "ktir_test_util.h"
#include "run_halves.h"
#include "test_paths.h"

namespace {

using namespace spyre;
using namespace spyre::ktir_testing;

// A kernel of tests/ktir/kernels (also seeds of the KTIR fuzzer).
std::string kernel_text(const std::string &file) {
    std::ifstream f(std::string(KTIR_KERNELS) + "/" + file);
    EXPECT_TRUE(f.good()) << file;
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

using ktir_testing::lower;

uint16_t mul_f16(uint16_t a, uint16_t b) { return float_to_half(half_to_float(a) * half_to_float(b)); }

// `text` with its first `from` replaced by `to`.
std::string replaced(std::string text, const std::string &from, const std::string &to) {
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

std::string import_error(const std::string &text, std::map<std::string, std::string> args = {}) {
    try {
        lower(text, std::move(args));
    } catch (const Error &e) {
        return e.what();
    }
    return "(imported)";
}

TEST(KtirIbmSpelling, TorchSpyreLocationsShortTileTypesReshapeAndMiddleBroadcast) {
    DeviceProgram p = lower(kernel_text("torch_spyre_mul.ktir"));  // %arg3 is never read: no --arg needed
    Halves x = random_halves(3 * 8 * 64, 1), w = random_halves(3 * 64, 2);
    auto out = run(p, {{"arg0", x}, {"arg1", w}});
    const Halves &y = out.at("arg2");
    for (int b = 0; b < 3; b++)
        for (int r = 0; r < 8; r++)
            for (int c = 0; c < 64; c++) {
                size_t i = size_t((b * 8 + r) * 64 + c);
                ASSERT_EQ(y[i], mul_f16(x[i], w[size_t(b * 64 + c)])) << b << "," << r << "," << c;
            }
}

// ktir-cpu's form: `#ktdp.memory_space<global>`, a grid of [4, 1] read with one tile id, `//`
// comments after arguments, the block size as an index argument, and the full type
// `!ktdp.access_tile<...>`.
const char *kKtirCpuAdd = R"(module {
  func.func @add_kernel(
      %x_ptr: index, // 256 x f16
      %y_ptr: index,
      %output_ptr: index,
      %BLOCK_SIZE: index // 64
  ) attributes {grid = [4, 1]} {
    %core_id = ktdp.get_compute_tile_id : index
    %offset = arith.muli %core_id, %BLOCK_SIZE : index
    %x_view = ktdp.construct_memory_view %x_ptr, sizes: [256], strides: [1] {
      coordinate_set = affine_set<(d0) : (d0 >= 0, -d0 + 255 >= 0)>, memory_space = #ktdp.memory_space<global>
    } : memref<256xf16>
    %y_view = ktdp.construct_memory_view %y_ptr, sizes: [256], strides: [1] {
      coordinate_set = affine_set<(d0) : (d0 >= 0, -d0 + 255 >= 0)>, memory_space = #ktdp.memory_space<global>
    } : memref<256xf16>
    %o_view = ktdp.construct_memory_view %output_ptr, sizes: [256], strides: [1] {
      coordinate_set = affine_set<(d0) : (d0 >= 0, -d0 + 255 >= 0)>, memory_space = #ktdp.memory_space<global>
    } : memref<256xf16>
    %x_tile = ktdp.construct_access_tile %x_view[%offset] {
      access_tile_set = affine_set<(d0) : (d0 >= 0, -d0 + 63 >= 0)>, access_tile_order = affine_map<(d0) -> (d0)>
    } : memref<256xf16> -> !ktdp.access_tile<64xindex>
    %y_tile = ktdp.construct_access_tile %y_view[%offset] {
      access_tile_set = affine_set<(d0) : (d0 >= 0, -d0 + 63 >= 0)>, access_tile_order = affine_map<(d0) -> (d0)>
    } : memref<256xf16> -> !ktdp.access_tile<64xindex>
    %x = ktdp.load %x_tile : !ktdp.access_tile<64xindex> -> tensor<64xf16>
    %y = ktdp.load %y_tile : !ktdp.access_tile<64xindex> -> tensor<64xf16>
    %sum = arith.addf %x, %y : tensor<64xf16>
    %o_tile = ktdp.construct_access_tile %o_view[%offset] {
      access_tile_set = affine_set<(d0) : (d0 >= 0, -d0 + 63 >= 0)>, access_tile_order = affine_map<(d0) -> (d0)>
    } : memref<256xf16> -> !ktdp.access_tile<64xindex>
    ktdp.store %sum, %o_tile : tensor<64xf16>, !ktdp.access_tile<64xindex>
    return
  }
})";

TEST(KtirIbmSpelling, KtirCpuGlobalMemorySpaceAndOneTileIdOfATwoDimensionalGrid) {
    DeviceProgram p = lower(kKtirCpuAdd, {{"BLOCK_SIZE", "64"}});
    EXPECT_EQ(p.num_cores, 4);
    Halves x = random_halves(256, 3), y = random_halves(256, 4);
    auto out = run(p, {{"x", x}, {"y", y}});
    for (size_t i = 0; i < 256; i++) ASSERT_EQ(out.at("output")[i], add_f16(x[i], y[i])) << i;
}

TEST(KtirIbmSpelling, FourDimensionalTransposeSwapsBlocksAndTransposesEach) {
    Halves x = random_halves(2 * 192 * 64, 5);
    auto out = run(lower(kernel_text("torch_spyre_relayout.ktir")), {{"arg0", x}});
    const Halves &y = out.at("arg1");
    // y4[b, a, i, j] = x4[a, b, j, i]; x4[a, b, j, i] = x[a, b*64 + j, i]; y4 is y's [b, a*64 + i, j].
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int i = 0; i < 64; i++)
                for (int j = 0; j < 64; j++)
                    ASSERT_EQ(y[size_t((b * 128 + a * 64 + i) * 64 + j)], x[size_t((a * 192 + b * 64 + j) * 64 + i)])
                        << a << "," << b << "," << i << "," << j;
}

// A weight read through a view that lists its dimensions out of memory order (torch-spyre's
// `sizes: [4096, 64, 64], strides: [64, 262144, 1]`): the buffer is [2, 8, 64] in memory and
// the view [8, 2, 64] reads w[k, n, :] = mem[n, k, :]. y = the view's [8, 2, 64] tile, in order.
const char *kPermutedView = R"(func.func @k(%arg0: index, %arg1: index) {
  %c0 = arith.constant 0 : index
  %w = ktdp.construct_memory_view %arg0, sizes: [8, 2, 64], strides: [64, 512, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<8x2x64xf16>
  %y = ktdp.construct_memory_view %arg1, sizes: [8, 2, 64], strides: [128, 64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<8x2x64xf16>
  %t = ktdp.construct_access_tile %w[%c0, %c0, %c0] : memref<8x2x64xf16> -> !ktdp.access_tile<8x2x64xindex>
  %x = ktdp.load %t : <8x2x64xindex> -> tensor<8x2x64xf16>
  %u = ktdp.construct_access_tile %y[%c0, %c0, %c0] : memref<8x2x64xf16> -> !ktdp.access_tile<8x2x64xindex>
  ktdp.store %x, %u : tensor<8x2x64xf16>, <8x2x64xindex>
  return
})";

// torch-spyre's spelling of an (8, 128) tensor with its stick count outermost: the logical dims with
// the stick dim split into stick count and lanes. The buffer is that tensor in that layout, so its
// host data is the logical tensor; the kernel copies it into a row-major one unchanged.
TEST(KtirIbmSpelling, ViewWithDimensionsOutOfMemoryOrderReadsThroughItsStrides) {
    DeviceProgram p = lower(kPermutedView);
    ASSERT_EQ(p.buffers[0].shape, (std::vector<int64_t>{128, 8}));
    EXPECT_EQ(p.buffers[0].layout, (DeviceLayout{0, {0, 1}}));
    EXPECT_EQ(p.buffers[1].shape, (std::vector<int64_t>{64, 2, 8}));  // row-major: the view in memory order
    Halves m = random_halves(2 * 8 * 64, 6);
    auto out = run(p, {{"arg0", m}});
    for (int k = 0; k < 8; k++)
        for (int j = 0; j < 128; j++) ASSERT_EQ(out.at("arg1")[size_t(k * 128 + j)], m[size_t(k * 128 + j)]) << k << "," << j;
}

TEST(KtirIbmSpelling, DenseStridesOfShortRowsAndOneElementStoresFromManyCores) {
    DeviceProgram p = lower(kernel_text("row_means.ktir"), {{"N", "5"}});
    // Each element of Mean in a stick of its own: a row of one element, [70] -> [70, 1].
    ASSERT_EQ(p.buffers[1].shape, (std::vector<int64_t>{1, 70}));
    Halves x(70 * 5);
    for (size_t i = 0; i < x.size(); i++) x[i] = float_to_half(float(int(i * 7 % 23) - 11) * 0.25f);
    auto out = run(p, {{"X", x}});
    for (int r = 0; r < 70; r++) {
        float s = 0;
        for (int c = 0; c < 5; c++) s += half_to_float(x[size_t(r * 5 + c)]);  // exact: quarters
        ASSERT_EQ(out.at("Mean")[size_t(r)], float_to_half(half_to_float(float_to_half(s)) / 5.0f)) << r;
    }
}

// torch-spyre's zeros: one row broadcast to 8192 rows (dimensions = [1, 2]), and two rows each
// repeated 4096 times (dimensions = [1]): more row copies than a core may leave unwaited.
const char *kManyRows = R"(func.func @rows(%arg0: index, %arg1: index, %arg2: index) {
  %c0 = arith.constant 0 : index
  %a = ktdp.construct_memory_view %arg0, sizes: [2, 64], strides: [64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<2x64xf16>
  %o1 = ktdp.construct_memory_view %arg1, sizes: [1, 64, 128, 64], strides: [524288, 8192, 64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<1x64x128x64xf16>
  %o2 = ktdp.construct_memory_view %arg2, sizes: [2, 4096, 64], strides: [262144, 64, 1] {memory_space = #ktdp.spyre_memory_space<HBM>} : memref<2x4096x64xf16>
  %t = ktdp.construct_access_tile %a[%c0, %c0] : memref<2x64xf16> -> !ktdp.access_tile<2x64xindex>
  %x = ktdp.load %t : <2x64xindex> -> tensor<2x64xf16>
  %t1 = ktdp.construct_access_tile %a[%c0, %c0] : memref<2x64xf16> -> !ktdp.access_tile<1x64xindex>
  %x1 = ktdp.load %t1 : <1x64xindex> -> tensor<1x64xf16>
  %e1 = tensor.empty() : tensor<1x64x128x64xf16>
  %b1 = linalg.broadcast ins(%x1 : tensor<1x64xf16>) outs(%e1 : tensor<1x64x128x64xf16>) dimensions = [1, 2]
  %u1 = ktdp.construct_access_tile %o1[%c0, %c0, %c0, %c0] : memref<1x64x128x64xf16> -> !ktdp.access_tile<1x64x128x64xindex>
  ktdp.store %b1, %u1 : tensor<1x64x128x64xf16>, <1x64x128x64xindex>
  %e2 = tensor.empty() : tensor<2x4096x64xf16>
  %b2 = linalg.broadcast ins(%x : tensor<2x64xf16>) outs(%e2 : tensor<2x4096x64xf16>) dimensions = [1]
  %u2 = ktdp.construct_access_tile %o2[%c0, %c0, %c0] : memref<2x4096x64xf16> -> !ktdp.access_tile<2x4096x64xindex>
  ktdp.store %b2, %u2 : tensor<2x4096x64xf16>, <2x4096x64xindex>
  return
})";

TEST(KtirIbmSpelling, RowBroadcastsToThousandsOfRows) {
    Halves a = random_halves(2 * 64, 7);
    auto out = run(lower(kManyRows), {{"arg0", a}});
    const Halves &o1 = out.at("arg1"), &o2 = out.at("arg2");
    for (size_t i = 0; i < o1.size(); i++) ASSERT_EQ(o1[i], a[i % 64]) << i;
    for (size_t i = 0; i < o2.size(); i++) ASSERT_EQ(o2[i], a[(i / (4096 * 64)) * 64 + i % 64]) << i;
}

// ktir-cpu's reduce_multiop form: max as a compare and a select in the reduce region (the select's
// operands in either order), and its scalar_broadcast form: a collapse to a rank-0 tensor with an
// empty reassociation `[]`, broadcast to every element. y[r, :] = max or min of x[r, :], then
// z = x[0, 0] everywhere.
std::string reduce_kernel(const std::string &cmp_select) {
    return R"(func.func @k(%x_ptr: index, %y_ptr: index, %z_ptr: index) {
  %c0 = arith.constant 0 : index
  %xv = ktdp.construct_memory_view %x_ptr, sizes: [2, 64], strides: [64, 1] {memory_space = #ktdp.memory_space<global>} : memref<2x64xf16>
  %yv = ktdp.construct_memory_view %y_ptr, sizes: [2, 64], strides: [64, 1] {memory_space = #ktdp.memory_space<global>} : memref<2x64xf16>
  %zv = ktdp.construct_memory_view %z_ptr, sizes: [2, 64], strides: [64, 1] {memory_space = #ktdp.memory_space<global>} : memref<2x64xf16>
  %xt = ktdp.construct_access_tile %xv[%c0, %c0] : memref<2x64xf16> -> !ktdp.access_tile<2x64xindex>
  %x = ktdp.load %xt : !ktdp.access_tile<2x64xindex> -> tensor<2x64xf16>
  %lo = arith.constant 0xFC00 : f16
  %e = tensor.empty() : tensor<2xf16>
  %init = linalg.fill ins(%lo : f16) outs(%e : tensor<2xf16>) -> tensor<2xf16>
  %m = linalg.reduce ins(%x : tensor<2x64xf16>) outs(%init : tensor<2xf16>) dimensions = [1]
    (%in: f16, %out: f16) {
)" + cmp_select + R"(
    }
  %e2 = tensor.empty() : tensor<2x64xf16>
  %mb = linalg.broadcast ins(%m : tensor<2xf16>) outs(%e2 : tensor<2x64xf16>) dimensions = [1]
  %yt = ktdp.construct_access_tile %yv[%c0, %c0] : memref<2x64xf16> -> !ktdp.access_tile<2x64xindex>
  ktdp.store %mb, %yt : tensor<2x64xf16>, !ktdp.access_tile<2x64xindex>
  %x11t = ktdp.construct_access_tile %xv[%c0, %c0] : memref<2x64xf16> -> !ktdp.access_tile<1x1xindex>
  %x11 = ktdp.load %x11t : !ktdp.access_tile<1x1xindex> -> tensor<1x1xf16>
  %s = tensor.collapse_shape %x11 [] : tensor<1x1xf16> into tensor<f16>
  %e3 = tensor.empty() : tensor<2x64xf16>
  %sb = linalg.broadcast ins(%s : tensor<f16>) outs(%e3 : tensor<2x64xf16>) dimensions = [0, 1]
  %zt = ktdp.construct_access_tile %zv[%c0, %c0] : memref<2x64xf16> -> !ktdp.access_tile<2x64xindex>
  ktdp.store %sb, %zt : tensor<2x64xf16>, !ktdp.access_tile<2x64xindex>
  return
})";
}

TEST(KtirIbmSpelling, CompareAndSelectReduceRegionsAndARankZeroBroadcast) {
    const std::string max_region = "      %c = arith.cmpf ogt, %in, %out : f16\n"
                                   "      %r = arith.select %c, %in, %out : f16\n      linalg.yield %r : f16";
    const std::string min_region = "      %c = arith.cmpf ogt, %in, %out : f16\n"
                                   "      %r = arith.select %c, %out, %in : f16\n      linalg.yield %r : f16";
    Halves x = random_halves(2 * 64, 8);
    for (bool is_max : {true, false}) {
        SCOPED_TRACE(is_max ? "max" : "min");
        std::string k = reduce_kernel(is_max ? max_region : min_region);
        if (!is_max) k = replaced(k, "0xFC00", "0x7C00");  // +inf: min's identity
        auto out = run(lower(k), {{"x", x}});
        for (int r = 0; r < 2; r++) {
            float m = is_max ? -INFINITY : INFINITY;
            for (int c = 0; c < 64; c++) {
                float v = half_to_float(x[size_t(r * 64 + c)]);
                m = is_max ? std::max(m, v) : std::min(m, v);
            }
            for (int c = 0; c < 64; c++) ASSERT_EQ(out.at("y")[size_t(r * 64 + c)], float_to_half(m)) << r << "," << c;
        }
        for (uint16_t z : out.at("z")) ASSERT_EQ(z, x[0]);
    }
    // A region whose op does not combine its two arguments is refused, not read as a sum.
    std::string twice = "      %r = arith.addf %in, %in : f16\n      linalg.yield %r : f16";
    EXPECT_NE(import_error(reduce_kernel(twice)).find("arith.addf must combine the two region arguments"),
              std::string::npos)
        << import_error(reduce_kernel(twice));
    std::string eq = "      %c = arith.cmpf oeq, %in, %out : f16\n"
                     "      %r = arith.select %c, %in, %out : f16\n      linalg.yield %r : f16";
    EXPECT_NE(import_error(reduce_kernel(eq)).find("predicate 'oeq' is not a max or min"), std::string::npos)
        << import_error(reduce_kernel(eq));
}

TEST(KtirIbmSpelling, UnsupportedMemorySpacesAndShapesAreNamed) {
    std::string view = R"(func.func @k(%a: index) {
  %c0 = arith.constant 0 : index
  %v = ktdp.construct_memory_view %a, sizes: [64], strides: [1] {memory_space = SPACE} : memref<64xf16>
  %t = ktdp.construct_access_tile %v[%c0] : memref<64xf16> -> !ktdp.access_tile<64xindex>
  %x = ktdp.load %t : <64xindex> -> tensor<64xf16>
  return
})";
    auto with = [&](const std::string &space) { return import_error(replaced(view, "SPACE", space)); };
    EXPECT_NE(with("#ktdp.memory_space<ct_local, ct_id = 1>").find("the LX of another core"), std::string::npos);
    EXPECT_NE(with("#ktdp.spyre_memory_space<L0>").find("memory space L0"), std::string::npos);
    EXPECT_NE(with("#ktdp.memory_space<far>").find("'far' is unknown"), std::string::npos);
    EXPECT_NE(with("#gpu.address_space<global>").find("not a ktdp memory space"), std::string::npos);

    // A transpose that moves the innermost dimension somewhere other than next to it.
    std::string k = replaced(replaced(kernel_text("torch_spyre_relayout.ktir"), "permutation = [1, 0, 3, 2]", "permutation = [3, 1, 2, 0]"), "outs(%e : tensor<3x2x64x64xf16>)",
                             "outs(%e : tensor<64x3x64x2xf16>)");
    EXPECT_NE(import_error(k).find("swap the two innermost dimensions are supported"), std::string::npos)
        << import_error(k);
    // A reshape's shape must be a constant, and match the result type.
    k = replaced(kernel_text("torch_spyre_relayout.ktir"), "dense<[2, 3, 64, 64]>", "dense<[2, 3, 32, 128]>");
    EXPECT_NE(import_error(k).find("tensor.reshape: the shape operand and the result type"), std::string::npos)
        << import_error(k);
    // A dense constant of several float values is not a device value.
    k = replaced(kernel_text("torch_spyre_relayout.ktir"), "dense<[3, 128, 64]> : tensor<3xindex>", "dense<[3.0, 1.0, 2.0]> : tensor<3xf16>");
    EXPECT_NE(import_error(k).find("a dense constant of several values is only supported"), std::string::npos)
        << import_error(k);
}

TEST(KtirIbmSpelling, AFloatFromARunTimeIntegerIsRefusedWithItsReason) {
    std::string k = R"(func.func @k(%a: index) attributes {grid = [2]} {
  %id = ktdp.get_compute_tile_id : index
  %i = arith.index_cast %id : index to i32
  %f = arith.sitofp %i : i32 to f16
  return
})";
    EXPECT_NE(import_error(k).find("arith.sitofp: a float scalar computed from run-time values is not supported"),
              std::string::npos)
        << import_error(k);
}

}  // namespace
