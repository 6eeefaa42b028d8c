#include "device/layout.h"

#include <gtest/gtest.h>

#include "device_test_util.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "device/error.h"

using namespace spyre;

namespace {

using device_testing::contains;
using device_testing::error_of;

constexpr int64_t kStick = 128;



int64_t product(const std::vector<int64_t> &v) {
    return std::accumulate(v.begin(), v.end(), int64_t(1), std::multiplies<int64_t>());
}

// Independent reference: the device dims written out explicitly (outermost first, lanes last) and a
// mixed-radix index into them, without DeviceGeometry's strides.
struct RefLayout {
    std::vector<int64_t> dims;  // device dims including lanes
    std::vector<int> order;
    int s;
    int64_t lanes;

    RefLayout(const DeviceLayout &l, const std::vector<int64_t> &shape, int eb) : s(l.stick_dim) {
        lanes = kStick / eb;
        order = l.order;
        if (order.empty())
            for (int d = int(shape.size()) - 1; d >= 0; d--) order.push_back(d);
        for (int e : order) dims.push_back(e == s ? (shape[s] + lanes - 1) / lanes : shape[e]);
        dims.push_back(lanes);
    }
    int64_t elem_index(const std::vector<int64_t> &c) const {
        int64_t idx = 0;
        for (size_t i = 0; i < order.size(); i++) idx = idx * dims[i] + (order[i] == s ? c[s] / lanes : c[order[i]]);
        return idx * lanes + c[s] % lanes;
    }
    int64_t total_elems() const { return product(dims); }
};

// Calls fn(coord, linear_host_index) for every element of `shape`, dim 0 fastest.
template <typename Fn>
void for_each_coord(const std::vector<int64_t> &shape, Fn fn) {
    std::vector<int64_t> c(shape.size(), 0);
    int64_t n = product(shape);
    for (int64_t i = 0; i < n; i++) {
        fn(c, i);
        for (size_t d = 0; d < shape.size(); d++) {
            if (++c[d] < shape[d]) break;
            c[d] = 0;
        }
    }
}

// Round-trips a distinct-valued array through stickify/unstickify and checks every element lands
// where the reference says and every padding byte is zero.
template <typename T>
void check_round_trip(const std::vector<int64_t> &shape, const DeviceLayout &layout, DType type) {
    SCOPED_TRACE(layout_to_string(layout) + " rank " + std::to_string(shape.size()) + " " + dtype_name(type));
    const int eb = dtype_bytes(type);
    ASSERT_EQ(int(sizeof(T)), eb);
    const int64_t n = product(shape);
    std::vector<T> host(n);
    // Values 1..n: never zero, so a zero in the image is padding.
    for (int64_t i = 0; i < n; i++) host[i] = T(i + 1);

    std::vector<uint8_t> dev = stickify(host.data(), shape, type, layout, kStick);
    RefLayout ref(layout, shape, eb);
    ASSERT_EQ(int64_t(dev.size()), ref.total_elems() * eb);

    DeviceGeometry g = device_geometry(layout, shape, type, kStick);
    EXPECT_EQ(g.total_bytes, int64_t(dev.size()));
    EXPECT_EQ(g.lanes, kStick / eb);

    std::vector<bool> used(ref.total_elems(), false);
    bool all_ok = true;
    for_each_coord(shape, [&](const std::vector<int64_t> &c, int64_t i) {
        int64_t e = ref.elem_index(c);
        if (g.offset_of(c, layout.stick_dim, eb) != e * eb) all_ok = false;
        T v;
        std::memcpy(&v, dev.data() + e * eb, eb);
        if (v != host[i]) all_ok = false;
        used[e] = true;
    });
    EXPECT_TRUE(all_ok) << "element placement differs from the reference";
    bool pad_zero = true;
    for (int64_t e = 0; e < ref.total_elems(); e++) {
        if (used[e]) continue;
        for (int b = 0; b < eb; b++) pad_zero &= dev[e * eb + b] == 0;
    }
    EXPECT_TRUE(pad_zero) << "padding lanes are not zero";

    std::vector<T> back(n, T(0));
    unstickify(dev, back.data(), shape, type, layout, kStick);
    EXPECT_EQ(back, host);
}

std::vector<std::vector<int>> all_orders(int rank) {
    std::vector<int> p(rank);
    std::iota(p.begin(), p.end(), 0);
    std::vector<std::vector<int>> out;
    do out.push_back(p);
    while (std::next_permutation(p.begin(), p.end()));
    return out;
}

}  // namespace

TEST(Layout, DefaultLayout) {
    EXPECT_EQ(default_layout(1).order, (std::vector<int>{0}));
    EXPECT_EQ(default_layout(3).order, (std::vector<int>{2, 1, 0}));
    EXPECT_EQ(default_layout(3).stick_dim, 0);
}

// torch-spyre's default for every rank (csrc/spyre_tensor_impl.cpp, get_generic_stick_layout, and its
// tests/tensor/test_tensor_layout.py): PyTorch [d0, ..., d_{r-1}] -> [d1, ..., d_{r-2}, n, d0, 64],
// the first PyTorch dim (a batch) just outside the stick.
TEST(Layout, TorchSpyreDefaultPutsFirstPyTorchDimJustOutsideTheStick) {
    EXPECT_EQ(torch_spyre_default_layout(1), (DeviceLayout{0, {0}}));
    EXPECT_EQ(torch_spyre_default_layout(2), (DeviceLayout{0, {0, 1}}));
    EXPECT_EQ(torch_spyre_default_layout(3), (DeviceLayout{0, {1, 0, 2}}));
    EXPECT_EQ(torch_spyre_default_layout(4), (DeviceLayout{0, {2, 1, 0, 3}}));
    // torch-spyre's test: [512, 8, 240] fp16 -> device [8, 4, 512, 64].
    std::vector<int64_t> shape{240, 8, 512};  // Halide order
    DeviceGeometry g = device_geometry(torch_spyre_default_layout(3), shape, DType::F16, kStick);
    EXPECT_EQ(g.sticks_along_stick_dim, 4);
    EXPECT_EQ(g.dim_stride[2], 128);                  // d0 (512): next stick
    EXPECT_EQ(g.stick_index_stride, 512 * 128);       // n: past the 512 of d0
    EXPECT_EQ(g.dim_stride[1], 4 * 512 * 128);        // d1 (8): outermost
    EXPECT_EQ(g.total_bytes, 8 * 4 * 512 * 128);
    // The docs' [128, 256, 512] -> [256, 8, 128, 64] with stride_map [512, 64, 131072, 1].
    DeviceGeometry d = device_geometry(torch_spyre_default_layout(3), {512, 256, 128}, DType::F16, kStick);
    EXPECT_EQ(d.dim_stride[2], 128);
    EXPECT_EQ(d.stick_index_stride, 128 * 128);
    EXPECT_EQ(d.dim_stride[1], 8 * 128 * 128);
    // IBM's Llama-3.1-8B KTIR (spyre-kernels, torch.neg.1): [1, 32, 12, 64] is device_size
    // [32, 12, 1, 1, 64], its memory view strides [24576, 768, 64, 1] elements.
    DeviceGeometry k = device_geometry(torch_spyre_default_layout(4), {64, 12, 32, 1}, DType::F16, kStick);
    EXPECT_EQ(k.dim_stride[2], 768 * 2);
    EXPECT_EQ(k.dim_stride[1], 64 * 2);
    EXPECT_EQ(k.total_bytes, 32 * 12 * 64 * 2);
}

// torch-spyre's example: a torch (1024, 256) fp16 tensor is stored as (4, 1024, 64).
TEST(Layout, TorchSpyreExampleStickCountOutermost) {
    std::vector<int64_t> shape{256, 1024};  // Halide order
    DeviceLayout l{0, {0, 1}};
    EXPECT_EQ(torch_spyre_default_layout(2), l);
    DeviceGeometry g = device_geometry(l, shape, DType::F16, kStick);
    EXPECT_EQ(g.lanes, 64);
    EXPECT_EQ(g.sticks_along_stick_dim, 4);
    EXPECT_EQ(g.total_bytes, 4 * 1024 * 64 * 2);
    EXPECT_EQ(g.dim_stride[0], 0);
    EXPECT_EQ(g.dim_stride[1], 128);               // next row: next stick
    EXPECT_EQ(g.stick_index_stride, 1024 * 128);  // next stick of a row: past all 1024 rows
    EXPECT_EQ(g.offset_of({0, 0}, 0, 2), 0);
    EXPECT_EQ(g.offset_of({1, 0}, 0, 2), 2);
    EXPECT_EQ(g.offset_of({63, 0}, 0, 2), 126);
    EXPECT_EQ(g.offset_of({64, 0}, 0, 2), 131072);
    EXPECT_EQ(g.offset_of({70, 3}, 0, 2), 131072 + 3 * 128 + 6 * 2);
    EXPECT_EQ(g.offset_of({255, 1023}, 0, 2), g.total_bytes - 2);
}

TEST(Layout, TorchSpyreExampleRowMajor) {
    std::vector<int64_t> shape{256, 1024};
    for (DeviceLayout l : {DeviceLayout{0, {1, 0}}, DeviceLayout{0, {}}}) {
        DeviceGeometry g = device_geometry(l, shape, DType::F16, kStick);  // (1024, 4, 64)
        EXPECT_EQ(g.total_bytes, 1024 * 4 * 64 * 2);
        EXPECT_EQ(g.stick_index_stride, 128);
        EXPECT_EQ(g.dim_stride[1], 4 * 128);
        EXPECT_EQ(g.offset_of({70, 3}, 0, 2), 3 * 512 + 128 + 12);
    }
}

TEST(Layout, PaddedStickDimAndFp32) {
    // 100 fp32 along the stick dim: 4 sticks of 32 lanes, 28 padding lanes in the last.
    std::vector<int64_t> shape{100, 3};
    DeviceGeometry g = device_geometry(DeviceLayout{0, {}}, shape, DType::F32, kStick);
    EXPECT_EQ(g.lanes, 32);
    EXPECT_EQ(g.sticks_along_stick_dim, 4);
    EXPECT_EQ(g.total_bytes, 3 * 4 * 128);

    // Stick dim not innermost in Halide order: sticked on dim 1.
    g = device_geometry(DeviceLayout{1, {0, 1}}, shape, DType::F32, kStick);  // (100, 1, 32)
    EXPECT_EQ(g.sticks_along_stick_dim, 1);
    EXPECT_EQ(g.dim_stride[0], 128);
    EXPECT_EQ(g.dim_stride[1], 0);
    EXPECT_EQ(g.total_bytes, 100 * 128);
    EXPECT_EQ(g.offset_of({5, 2}, 1, 4), 5 * 128 + 2 * 4);
}

TEST(Layout, RoundTripRank1) {
    for (int64_t n : {1, 63, 64, 65, 200}) {
        check_round_trip<uint16_t>({n}, DeviceLayout{0, {}}, DType::F16);
        check_round_trip<float>({n}, DeviceLayout{0, {0}}, DType::F32);
    }
}

TEST(Layout, RoundTripRank2AllOrdersAndStickDims) {
    std::vector<int64_t> shape{70, 5};
    for (int s = 0; s < 2; s++) {
        for (const auto &o : all_orders(2)) {
            check_round_trip<uint16_t>(shape, DeviceLayout{s, o}, DType::F16);
            check_round_trip<float>(shape, DeviceLayout{s, o}, DType::F32);
        }
    }
    check_round_trip<int32_t>({33, 2}, DeviceLayout{0, {}}, DType::I32);
    // Bytes: 128 lanes to a stick (values stay below 256, so none is zero).
    for (int s = 0; s < 2; s++)
        for (const auto &o : all_orders(2)) check_round_trip<uint8_t>({130, 1}, DeviceLayout{s, o}, DType::U8);
    check_round_trip<int8_t>({70, 1}, DeviceLayout{0, {}}, DType::I8);
}

TEST(Layout, RoundTripRank3AllOrdersAndStickDims) {
    std::vector<int64_t> shape{37, 3, 66};
    for (int s = 0; s < 3; s++) {
        for (const auto &o : all_orders(3)) {
            check_round_trip<uint16_t>(shape, DeviceLayout{s, o}, DType::F16);
            check_round_trip<float>(shape, DeviceLayout{s, o}, DType::F32);
        }
    }
}

TEST(Layout, RoundTripRank4) {
    std::vector<int64_t> shape{65, 2, 3, 33};
    for (int s = 0; s < 4; s++) {
        for (const auto &o : {std::vector<int>{}, std::vector<int>{3, 2, 1, 0}, std::vector<int>{0, 1, 2, 3},
                              std::vector<int>{2, 0, 3, 1}, std::vector<int>{1, 3, 0, 2}}) {
            check_round_trip<uint16_t>(shape, DeviceLayout{s, o}, DType::F16);
            check_round_trip<float>(shape, DeviceLayout{s, o}, DType::F32);
        }
    }
}

TEST(Layout, CheckLayoutRejections) {
    std::string msg = error_of([] { check_layout(DeviceLayout{0, {0, 0}}, {4, 4}, "buffer 'x'"); });
    EXPECT_EQ(msg, "buffer 'x': layout order {0,0} is not a permutation of the 2 dims");

    msg = error_of([] { check_layout(DeviceLayout{0, {1, 0, 2}}, {4, 4}, "buffer 'x'"); });
    EXPECT_TRUE(contains(msg, "buffer 'x'")) << msg;
    EXPECT_TRUE(contains(msg, "not a permutation")) << msg;

    msg = error_of([] { check_layout(DeviceLayout{0, {2, 0}}, {4, 4}, "buffer 'x'"); });
    EXPECT_TRUE(contains(msg, "not a permutation")) << msg;

    msg = error_of([] { check_layout(DeviceLayout{0, {-1, 0}}, {4, 4}, "buffer 'x'"); });
    EXPECT_TRUE(contains(msg, "not a permutation")) << msg;

    msg = error_of([] { check_layout(DeviceLayout{2, {}}, {4, 4}, "buffer 'y'"); });
    EXPECT_TRUE(contains(msg, "buffer 'y'")) << msg;
    EXPECT_TRUE(contains(msg, "stick dim 2")) << msg;

    msg = error_of([] { check_layout(DeviceLayout{-1, {}}, {4}, "buffer 'y'"); });
    EXPECT_TRUE(contains(msg, "stick dim -1")) << msg;

    msg = error_of([] { check_layout(DeviceLayout{0, {}}, {4, 0}, "buffer 'z'"); });
    EXPECT_TRUE(contains(msg, "buffer 'z'")) << msg;
    EXPECT_TRUE(contains(msg, "dim 1")) << msg;

    msg = error_of([] { check_layout(DeviceLayout{0, {}}, {4, -2}, "buffer 'z'"); });
    EXPECT_TRUE(contains(msg, "-2")) << msg;

    msg = error_of([] { check_layout(DeviceLayout{0, {}}, {}, "buffer 'r'"); });
    EXPECT_TRUE(contains(msg, "buffer 'r'")) << msg;
    EXPECT_TRUE(contains(msg, "rank 0")) << msg;

    msg = error_of([] { check_layout(DeviceLayout{0, {}}, {1, 1, 1, 1, 1}, "buffer 'r'"); });
    EXPECT_TRUE(contains(msg, "rank 5")) << msg;

    EXPECT_NO_THROW(check_layout(DeviceLayout{1, {0, 1}}, {4, 4}, "ok"));
    EXPECT_NO_THROW(check_layout(DeviceLayout{3, {}}, {1, 2, 3, 4}, "ok"));
}

TEST(Layout, GeometryAndStickifyReject) {
    std::string msg = error_of([] { device_geometry(DeviceLayout{0, {1}}, {4, 4}, DType::F16, kStick); });
    EXPECT_TRUE(contains(msg, "not a permutation")) << msg;

    std::vector<uint16_t> host(64 * 2, 1);
    std::vector<uint8_t> dev = stickify(host.data(), {64, 2}, DType::F16, DeviceLayout{0, {}}, kStick);
    dev.pop_back();
    msg = error_of([&] { unstickify(dev, host.data(), {64, 2}, DType::F16, DeviceLayout{0, {}}, kStick); });
    EXPECT_TRUE(contains(msg, "unstickify")) << msg;
    EXPECT_TRUE(contains(msg, "255")) << msg;
    EXPECT_TRUE(contains(msg, "256")) << msg;
}

TEST(Layout, ToString) {
    EXPECT_EQ(layout_to_string(DeviceLayout{0, {1, 0}}), "sticks(d0) order[d1,d0]");
    EXPECT_EQ(layout_to_string(DeviceLayout{1, {0, 2, 1}}), "sticks(d1) order[d0,d2,d1]");
    EXPECT_EQ(layout_to_string(DeviceLayout{0, {}}), "sticks(d0) order[default]");
}

// parse_layout: the named layouts, device dims with the stick count, another stick dim, and what is
// refused, by name.
TEST(Layout, ParseLayoutTextForms) {
    EXPECT_EQ(spyre::parse_layout("row_major", 3, "a"), spyre::default_layout(3));
    EXPECT_EQ(spyre::parse_layout("torch_spyre", 2, "a"), (spyre::DeviceLayout{0, {0, 1}}));
    EXPECT_EQ(spyre::parse_layout("d2,s,d1", 3, "a"), (spyre::DeviceLayout{0, {2, 0, 1}}));
    EXPECT_EQ(spyre::parse_layout("d1:s,d0", 2, "a"), (spyre::DeviceLayout{1, {1, 0}}));
    auto error = [](const std::string &text, int rank) {
        try {
            spyre::parse_layout(text, rank, "w");
        } catch (const spyre::Error &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(error("d5:d0,s", 2), "w: layout 'd5:d0,s': 'd5' is not a dim of the tensor's 2 to stick on");
    EXPECT_EQ(error("d1:d1,s", 2), "w: layout 'd1:d1,s': d1 is the stick dim, held in sticks; write its stick count 's'");
    EXPECT_EQ(error("d1", 2), "w: layout 'd1' names 1 dims; the tensor has 2 (its stick count s and its other dims)");
}
