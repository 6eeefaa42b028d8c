// place_dma on its own: a transfer of a buffer's Halide view carried over to the buffer's layout
// moves exactly the elements the view's transfer names, each between the same LX byte and the
// device byte where the layout keeps it (checked element by element against the layout's geometry),
// and what it cannot prove is refused with the Func and layout named.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "capture_stmt.h"
#include "compiler_test_util.h"
#include "device/layout.h"
#include "layout_dma.h"

namespace spyre::testing {
namespace {

using namespace Halide;
using namespace Halide::Internal;
using Moves = std::set<std::pair<int64_t, int64_t>>;  // (device byte, LX byte) of each element

constexpr int64_t kStick = 128, kEb = 2, kLanes = kStick / kEb;

BufferInfo buffer(const std::vector<int64_t> &shape, const DeviceLayout &layout) {
    BufferInfo b;
    b.name = b.func = "t";
    b.type = DType::F16;
    b.place = Place::DeviceInput;
    b.shape = shape;
    b.layout = layout;
    return b;
}

// What the view's transfer moves: view element index -> logical coordinate (the view's order, the
// stick dim padded to whole sticks) -> the layout's byte offset.
Moves view_moves(const DmaCall &d, const BufferInfo &b) {
    const int rank = int(b.shape.size());
    const DeviceLayout view = halide_view(b.layout, rank);
    const DeviceGeometry g = device_geometry(b.layout, b.shape, b.type, kStick);
    const int64_t row = (b.shape[0] + kLanes - 1) / kLanes * kLanes;
    const int64_t o = *as_const_int(d.dram_offset), lx0 = *as_const_int(d.lx_offset);
    const int64_t run = (d.run + kLanes - 1) / kLanes * kLanes;
    std::vector<DmaDim> dims = d.dims;
    dims.resize(3);
    Moves m;
    for (int64_t i2 = 0; i2 < std::max<int64_t>(dims[2].count, 1); i2++)
        for (int64_t i1 = 0; i1 < std::max<int64_t>(dims[1].count, 1); i1++)
            for (int64_t i0 = 0; i0 < std::max<int64_t>(dims[0].count, 1); i0++)
                for (int64_t e = 0; e < run; e++) {
                    const int64_t v = o + e + i0 * dims[0].dram_stride + i1 * dims[1].dram_stride + i2 * dims[2].dram_stride;
                    const int64_t l = lx0 + e + i0 * dims[0].lx_stride + i1 * dims[1].lx_stride + i2 * dims[2].lx_stride;
                    std::vector<int64_t> coord(size_t(rank), 0);
                    coord[0] = v % row;
                    int64_t rest = v / row;
                    for (int k = rank - 2; k >= 0; k--) {  // the view's order, innermost outer dim first
                        const int dim = view.order[size_t(k)];
                        coord[size_t(dim)] = rest % b.shape[size_t(dim)];
                        rest /= b.shape[size_t(dim)];
                    }
                    m.insert({g.offset_of(coord, 0, int(kEb)), l * kEb});
                }
    return m;
}

Moves placed_moves(const std::vector<PlacedDma> &ps) {
    Moves m;
    for (const PlacedDma &p : ps) {
        const int64_t base = *as_const_int(simplify(p.dram_bytes)), lx0 = *as_const_int(simplify(p.lx_offset)) * kEb;
        const DmaDesc &d = p.desc;
        for (int64_t i2 = 0; i2 < d.count[2]; i2++)
            for (int64_t i1 = 0; i1 < d.count[1]; i1++)
                for (int64_t i0 = 0; i0 < d.count[0]; i0++)
                    for (int64_t b = 0; b < d.sticks * kStick; b += kEb)
                        m.insert({base + i0 * d.dram_stride[0] + i1 * d.dram_stride[1] + i2 * d.dram_stride[2] + b,
                                  lx0 + i0 * d.lx_stride[0] + i1 * d.lx_stride[1] + i2 * d.lx_stride[2] + b});
    }
    return m;
}

DmaCall call(int64_t offset, int64_t run, std::vector<DmaDim> dims) {
    DmaCall d;
    d.dram = "t", d.lx = "t_lx";
    d.dram_offset = Expr(int32_t(offset));
    d.lx_offset = Expr(0);
    d.run = run;
    d.dims = std::move(dims);
    return d;
}

struct Case {
    std::string name;
    std::vector<int64_t> shape;
    DeviceLayout layout;
    DmaCall dma;
    size_t descriptors;  // how many transfers it becomes
};
void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class PlaceDma : public ::testing::TestWithParam<Case> {};

TEST_P(PlaceDma, MovesTheViewsElementsToWhereTheLayoutKeepsThem) {
    const Case &c = GetParam();
    const BufferInfo b = buffer(c.shape, c.layout);
    ASSERT_TRUE(needs_placement(b));
    const std::vector<PlacedDma> ps = place_dma(c.dma, b, kStick, Scope<Interval>::empty_scope(), CoreRuns{});
    EXPECT_EQ(ps.size(), c.descriptors);
    const Moves want = view_moves(c.dma, b), got = placed_moves(ps);
    EXPECT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want);
}

const int64_t kRow = 128;  // rows of 128 fp16 elements: two sticks

INSTANTIATE_TEST_SUITE_P(
    Layouts, PlaceDma,
    ::testing::Values(
        // Rows 2..4 of slab z = 1, the stick count between z and y (6 rows inside it).
        Case{"rows_inside_a_slab", {128, 6, 4}, {0, {2, 0, 1}}, call((1 * 6 + 2) * kRow, kRow, {{3, kRow, kRow}}), 1},
        // torch-spyre's default (24 rows inside the stick count): all rows of each z as one run.
        Case{"whole_rows_stick_count_outermost", {128, 6, 4}, {0, {0, 2, 1}}, call(0, 6 * kRow, {{4, 6 * kRow, 6 * kRow}}), 1},
        // Twelve rows from a slab's start: the rows of each slab, then the slabs.
        Case{"rows_across_two_slabs", {128, 6, 4}, {0, {2, 0, 1}}, call(0, kRow, {{12, kRow, kRow}}), 1},
        // Two sticks from the middle of a padded row (100 columns of 2 sticks... 192 of 3 here).
        Case{"sticks_inside_a_row", {192, 10}, {0, {0, 1}}, call(3 * 192 + 64, 128, {}), 1},
        // A row of 100 elements padded to two sticks, rows 1..3.
        Case{"padded_rows", {100, 5}, {0, {0, 1}}, call(1 * 128, 100, {{3, 128, 128}}), 1},
        // Four steps that do not chain in LX (a tile with gaps): the outermost becomes two transfers.
        Case{"more_dims_than_a_descriptor", {128, 3, 4, 2}, {0, {0, 3, 2, 1}},
             call(0, kRow, {{3, kRow, 256}, {4, 3 * kRow, 1024}, {2, 12 * kRow, 8192}}), 2}),
    [](const ::testing::TestParamInfo<Case> &i) { return i.param.name; });

TEST(PlaceDmaErrors, WhatCannotBeProvedIsRefusedNamingTheFuncAndLayout) {
    const BufferInfo b = buffer({128, 6, 4}, {0, {2, 0, 1}});
    auto error = [&](const DmaCall &d) {
        return error_of([&] { place_dma(d, b, kStick, Scope<Interval>::empty_scope(), CoreRuns{}); });
    };
    DmaCall unknown_row = call(0, 64, {{4, kRow, kRow}});
    unknown_row.dram_offset = Variable::make(Int(32), "v") * int32_t(kRow);
    EXPECT_EQ(error(unknown_row), "Func t: device layout sticks(d0) order[d2,d0,d1]: a transfer's rows may run past the "
                                  "6 rows the layout keeps inside its stick count; tile those dimensions by divisors "
                                  "of their extents");
    EXPECT_EQ(error(call(3, 64, {})), "Func t: device layout sticks(d0) order[d2,d0,d1]: a transfer starts at an element "
                                      "the compiler cannot prove is the first of a stick; in this layout a transfer "
                                      "moves whole sticks of the stick dimension");
    EXPECT_EQ(error(call(64, 3 * 64, {})), "Func t: device layout sticks(d0) order[d2,d0,d1]: a run of 192 elements "
                                           "crosses rows without starting at one or ending at one's end; stage whole "
                                           "rows or whole sticks of a row");
    EXPECT_EQ(error(call(0, 64, {{2, 96, 96}})), "Func t: device layout sticks(d0) order[d2,d0,d1]: a transfer steps 96 "
                                                 "elements, not whole sticks or whole rows");
    EXPECT_EQ(error(call(0, 64, {{2, 8 * kRow, 8 * kRow}})),
              "Func t: device layout sticks(d0) order[d2,d0,d1]: a transfer steps 8 rows, which is neither inside nor a "
              "multiple of the 6 rows the layout keeps inside its stick count");
    EXPECT_EQ(error(call(64, 64, {{2, 64, 64}})),
              "Func t: device layout sticks(d0) order[d2,d0,d1]: a transfer reaching 128 elements along the stick "
              "dimension may cross into the next row; split the stick dimension by a divisor of its sticks");
    // Four steps that do not chain, the outermost 300 long: 300 transfers would be needed.
    const BufferInfo wide = buffer({128, 2, 2, 300}, {0, {3, 0, 2, 1}});
    EXPECT_EQ(error_of([&] {
                  place_dma(call(0, kRow, {{2, kRow, 256}, {2, 2 * kRow, 1024}, {300, 4 * kRow, 8192}}), wide, kStick,
                            Scope<Interval>::empty_scope(), CoreRuns{});
              }),
              "Func t: device layout sticks(d0) order[d3,d0,d2,d1]: a transfer would need 300 descriptors (its "
              "dimensions scatter over more than three strides); stage a smaller tile");
}

// The back end takes arguments sticked on dim 0 only; the DSL restickifies the others around it
// (restickify_arguments.h), so only a caller of the back end itself meets this.
TEST(PlaceDmaErrors, TheBackEndRefusesAnArgumentStickedOnAnotherDim) {
    ImageParam in(Float(16), 2, "in");
    EXPECT_EQ(error_of([&] { fix_device_shape(in, ArgSpec{"in", {64, 64}, DeviceLayout{1, {0, 1}}}, MachineDesc{}, "input 'in'"); }),
              "input 'in': layout sticks(d1) order[d0,d1] is not supported by the compiler yet: the stick dimension "
              "must be dim 0 (the innermost in Halide's order; PyTorch's last)");
}

}  // namespace
}  // namespace spyre::testing
