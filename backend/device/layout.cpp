#include "layout.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "error.h"
#include "image_pool.h"

namespace spyre {

namespace {

std::string ints_to_string(const std::vector<int> &v) {
    std::ostringstream os;
    os << "{";
    for (size_t i = 0; i < v.size(); i++) os << (i ? "," : "") << v[i];
    os << "}";
    return os.str();
}

std::string shape_to_string(const std::vector<int64_t> &v) {
    std::ostringstream os;
    os << "{";
    for (size_t i = 0; i < v.size(); i++) os << (i ? "," : "") << v[i];
    os << "}";
    return os.str();
}

// The order with the empty default resolved.
std::vector<int> resolved_order(const DeviceLayout &layout, int rank) {
    if (!layout.order.empty()) return layout.order;
    return default_layout(rank).order;
}

int64_t checked_mul(int64_t a, int64_t b, const DeviceLayout &layout, const std::vector<int64_t> &shape) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        throw_error("layout ", layout_to_string(layout), " of shape ", shape_to_string(shape),
                    ": device image size overflows");
    return r;
}

// Device byte offset of the row (all of dim 0) at logical coordinate `coord` (coord[0] ignored).
int64_t row_offset(const DeviceGeometry &g, const std::vector<int64_t> &coord, int stick_dim, int eb) {
    int64_t off = 0;
    for (size_t d = 1; d < coord.size(); d++) {
        if (int(d) == stick_dim)
            off += (coord[d] / g.lanes) * g.stick_index_stride + (coord[d] % g.lanes) * eb;
        else
            off += coord[d] * g.dim_stride[d];
    }
    return off;
}

// Visits every row along dim 0: fn(host_row_index, device_row_offset). Rows are in host order, so the
// host offset is just row_index * shape[0].
template <typename Fn>
void for_each_row(const DeviceGeometry &g, const std::vector<int64_t> &shape, int stick_dim, int eb, Fn fn) {
    const size_t rank = shape.size();
    std::vector<int64_t> coord(rank, 0);
    int64_t row = 0;
    while (true) {
        fn(row, row_offset(g, coord, stick_dim, eb));
        row++;
        size_t d = 1;
        for (; d < rank; d++) {
            if (++coord[d] < shape[d]) break;
            coord[d] = 0;
        }
        if (d >= rank) break;
    }
}

// Copies between host and device one dim-0 row at a time. ToDevice selects the direction.
template <bool ToDevice, int EB>
void copy_all(uint8_t *dev, uint8_t *host, const DeviceGeometry &g, const std::vector<int64_t> &shape,
              int stick_dim) {
    const int64_t n0 = shape[0];
    for_each_row(g, shape, stick_dim, EB, [&](int64_t row, int64_t dev_row) {
        uint8_t *h = host + row * n0 * EB;
        uint8_t *d = dev + dev_row;
        if (stick_dim == 0) {
            // Dim 0 is contiguous within each stick: one memcpy per stick.
            for (int64_t i = 0, k = 0; i < n0; i += g.lanes, k++) {
                int64_t n = std::min<int64_t>(g.lanes, n0 - i) * EB;
                if (ToDevice)
                    std::memcpy(d + k * g.stick_index_stride, h + i * EB, n);
                else
                    std::memcpy(h + i * EB, d + k * g.stick_index_stride, n);
            }
        } else {
            const int64_t stride = g.dim_stride[0];
            for (int64_t i = 0; i < n0; i++) {
                if (ToDevice)
                    std::memcpy(d + i * stride, h + i * EB, EB);
                else
                    std::memcpy(h + i * EB, d + i * stride, EB);
            }
        }
    });
}

template <bool ToDevice>
void copy_dispatch(uint8_t *dev, uint8_t *host, const DeviceGeometry &g, const std::vector<int64_t> &shape,
                   int stick_dim, int eb) {
    // Fixed element sizes let the compiler turn the per-element memcpy into a single move.
    if (eb == 1)
        copy_all<ToDevice, 1>(dev, host, g, shape, stick_dim);
    else if (eb == 2)
        copy_all<ToDevice, 2>(dev, host, g, shape, stick_dim);
    else
        copy_all<ToDevice, 4>(dev, host, g, shape, stick_dim);
}

}  // namespace

DeviceLayout default_layout(int rank) {
    DeviceLayout l;
    l.stick_dim = 0;
    for (int d = rank - 1; d >= 0; d--) l.order.push_back(d);
    return l;
}

void check_layout(const DeviceLayout &layout, const std::vector<int64_t> &shape, const std::string &what) {
    const int rank = int(shape.size());
    if (rank < 1 || rank > 4) throw_error(what, ": rank ", rank, " is not supported (1 to 4 dims)");
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 1) throw_error(what, ": extent of dim ", d, " is ", shape[d], " (must be >= 1)");
    }
    if (layout.stick_dim < 0 || layout.stick_dim >= rank)
        throw_error(what, ": layout stick dim ", layout.stick_dim, " is out of range for ", rank, " dims");
    if (!layout.order.empty()) {
        bool ok = int(layout.order.size()) == rank;
        std::vector<bool> seen(rank, false);
        for (int e : layout.order) {
            if (!ok) break;
            if (e < 0 || e >= rank || seen[e])
                ok = false;
            else
                seen[e] = true;
        }
        if (!ok)
            throw_error(what, ": layout order ", ints_to_string(layout.order), " is not a permutation of the ", rank,
                        " dims");
    }
}

int64_t DeviceGeometry::offset_of(const std::vector<int64_t> &coord, int stick_dim, int elem_bytes) const {
    int64_t off = 0;
    for (size_t d = 0; d < coord.size(); d++) {
        if (int(d) == stick_dim)
            off += (coord[d] / lanes) * stick_index_stride + (coord[d] % lanes) * elem_bytes;
        else
            off += coord[d] * dim_stride[d];
    }
    return off;
}

DeviceGeometry device_geometry(const DeviceLayout &layout, const std::vector<int64_t> &shape, DType type,
                               int64_t stick_bytes) {
    check_layout(layout, shape, "layout " + layout_to_string(layout) + " of shape " + shape_to_string(shape));
    const int eb = dtype_bytes(type);
    if (stick_bytes <= 0 || stick_bytes % eb != 0)
        throw_error("stick of ", stick_bytes, " bytes does not hold whole ", dtype_name(type), " elements");

    const int rank = int(shape.size());
    const int s = layout.stick_dim;
    DeviceGeometry g;
    g.lanes = stick_bytes / eb;
    g.sticks_along_stick_dim = (shape[s] + g.lanes - 1) / g.lanes;
    g.dim_stride.assign(rank, 0);

    // Walk device dims from innermost (just outside the lanes) outwards.
    const std::vector<int> order = resolved_order(layout, rank);
    int64_t stride = stick_bytes;
    for (int i = rank - 1; i >= 0; i--) {
        const int d = order[i];
        int64_t extent;
        if (d == s) {
            g.stick_index_stride = stride;
            extent = g.sticks_along_stick_dim;
        } else {
            g.dim_stride[d] = stride;
            extent = shape[d];
        }
        stride = checked_mul(stride, extent, layout, shape);
    }
    g.total_bytes = stride;
    return g;
}

std::vector<uint8_t> stickify(const void *host, const std::vector<int64_t> &shape, DType type,
                              const DeviceLayout &layout, int64_t stick_bytes) {
    DeviceGeometry g = device_geometry(layout, shape, type, stick_bytes);
    if (!host) throw_error("stickify: null host pointer");
    std::vector<uint8_t> dev = take_image(size_t(g.total_bytes));  // zero fill gives zero padding lanes
    copy_dispatch<true>(dev.data(), static_cast<uint8_t *>(const_cast<void *>(host)), g, shape, layout.stick_dim,
                        dtype_bytes(type));
    return dev;
}

void unstickify(const std::vector<uint8_t> &device, void *host, const std::vector<int64_t> &shape, DType type,
                const DeviceLayout &layout, int64_t stick_bytes) {
    DeviceGeometry g = device_geometry(layout, shape, type, stick_bytes);
    if (int64_t(device.size()) != g.total_bytes)
        throw_error("unstickify: device image is ", device.size(), " bytes but layout ", layout_to_string(layout),
                    " of ", dtype_name(type), " shape ", shape_to_string(shape), " needs ", g.total_bytes);
    if (!host) throw_error("unstickify: null host pointer");
    // copy_all only reads from dev when ToDevice is false.
    copy_dispatch<false>(const_cast<uint8_t *>(device.data()), static_cast<uint8_t *>(host), g, shape,
                         layout.stick_dim, dtype_bytes(type));
}

DeviceLayout halide_view(const DeviceLayout &layout, int rank) {
    DeviceLayout v;
    v.stick_dim = layout.stick_dim;
    for (int d : resolved_order(layout, rank))
        if (d != layout.stick_dim) v.order.push_back(d);
    v.order.push_back(layout.stick_dim);
    return v;
}

bool stick_count_innermost(const DeviceLayout &layout, int rank) {
    const std::vector<int> o = resolved_order(layout, rank);
    return !o.empty() && o.back() == layout.stick_dim;
}

DeviceLayout torch_spyre_default_layout(int rank) {
    // torch-spyre's get_generic_stick_layout (csrc/spyre_tensor_impl.cpp): PyTorch [d0, ..., d_{r-1}]
    // -> [d1, ..., d_{r-2}, n, d0, 64]. In Halide order (h_i = d_{r-1-i}): h_{r-2}, ..., h1, the
    // stick count of h0, then h_{r-1}.
    DeviceLayout l;
    l.stick_dim = 0;
    for (int d = rank - 2; d >= 1; d--) l.order.push_back(d);
    l.order.push_back(0);
    if (rank >= 2) l.order.push_back(rank - 1);
    return l;
}

DeviceLayout parse_layout(const std::string &text, int rank, const std::string &what) {
    if (text == "row_major") return default_layout(rank);
    if (text == "torch_spyre") return torch_spyre_default_layout(rank);
    auto dim_of = [&](const std::string &item) {
        if (item.size() >= 2 && item.size() <= 3 && item[0] == 'd' &&
            item.find_first_not_of("0123456789", 1) == std::string::npos)
            return std::stoi(item.substr(1));
        return -1;
    };
    DeviceLayout l;
    l.stick_dim = 0;
    std::string dims = text;
    const size_t colon = text.find(':');
    if (colon != std::string::npos) {  // "d1:d0,s": sticked on d1
        l.stick_dim = dim_of(text.substr(0, colon));
        if (l.stick_dim < 0 || l.stick_dim >= std::max(rank, 1))
            throw_error(what, ": layout '", text, "': '", text.substr(0, colon), "' is not a dim of the tensor's ", rank,
                        " to stick on");
        dims = text.substr(colon + 1);
    }
    std::stringstream ss(dims);
    for (std::string item; std::getline(ss, item, ',');) {
        int d = item == "s" ? l.stick_dim : dim_of(item);
        if (d < 0)
            throw_error(what, ": layout '", text, "': '", item,
                        "' is not a dim (d1, d2, ...) or the stick count (s); or give row_major or torch_spyre");
        if (item != "s" && d == l.stick_dim)
            throw_error(what, ": layout '", text, "': d", d, " is the stick dim, held in sticks; write its stick count 's'");
        l.order.push_back(d);
    }
    if (int(l.order.size()) != rank)
        throw_error(what, ": layout '", text, "' names ", l.order.size(), " dims; the tensor has ", rank,
                    " (its stick count s and its other dims)");
    check_layout(l, std::vector<int64_t>(size_t(rank), 1), what + ": layout '" + text + "'");
    return l;
}

std::string layout_to_string(const DeviceLayout &layout) {
    std::ostringstream os;
    os << "sticks(d" << layout.stick_dim << ") order[";
    if (layout.order.empty()) {
        os << "default";
    } else {
        for (size_t i = 0; i < layout.order.size(); i++) os << (i ? "," : "") << "d" << layout.order[i];
    }
    os << "]";
    return os.str();
}

}  // namespace spyre
