// Device layouts: how a logical tensor is stored in device memory as sticks. One logical dimension
// (the stick dimension) is padded to whole sticks and its lanes are the innermost device dimension;
// the remaining device dimensions (the other logical dims and the stick-count of the stick dim)
// follow `order`, outermost first. Stickify/unstickify convert between a dense logical host array
// and the device image; padding lanes are zero.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dtype.h"

namespace spyre {

struct DeviceLayout {
    int stick_dim = 0;       // logical dim (Halide order: 0 is innermost) held in sticks
    std::vector<int> order;  // outer device dims, outermost first; each logical dim once (the
                             // stick dim's entry places its stick-count dimension). Empty = default
                             // row-major order: rank-1, ..., 1, 0.

    bool operator==(const DeviceLayout &o) const { return stick_dim == o.stick_dim && order == o.order; }
    bool operator!=(const DeviceLayout &o) const { return !(*this == o); }
};

// Default row-major layout of a tensor of `rank` dims sticked on dim 0.
DeviceLayout default_layout(int rank);

// Throws spyre::Error naming `what` if the layout does not fit the shape (bad stick dim, order not a
// permutation of the dims, non-positive extent).
void check_layout(const DeviceLayout &layout, const std::vector<int64_t> &shape, const std::string &what);

// The resolved geometry of a layout for one shape and element type.
struct DeviceGeometry {
    int64_t lanes = 0;                 // elements per stick
    int64_t sticks_along_stick_dim = 0;
    std::vector<int64_t> dim_stride;   // per logical dim: device byte stride of one step (stick dim: 0, see below)
    int64_t stick_index_stride = 0;    // device byte stride of one stick along the stick dim
    int64_t total_bytes = 0;           // size of the device image

    // Byte offset of a logical coordinate (Halide order) in the device image.
    int64_t offset_of(const std::vector<int64_t> &coord, int stick_dim, int elem_bytes) const;
};

DeviceGeometry device_geometry(const DeviceLayout &layout, const std::vector<int64_t> &shape, DType type,
                               int64_t stick_bytes);

// Dense logical host data (Halide order: dim 0 has stride 1) -> device image, and back.
// `host` holds product(shape) elements of dtype_bytes(type) bytes each.
std::vector<uint8_t> stickify(const void *host, const std::vector<int64_t> &shape, DType type,
                              const DeviceLayout &layout, int64_t stick_bytes);
void unstickify(const std::vector<uint8_t> &device, void *host, const std::vector<int64_t> &shape, DType type,
                const DeviceLayout &layout, int64_t stick_bytes);

std::string layout_to_string(const DeviceLayout &layout);

// The layout Halide indexes a buffer through: the same order with the stick count moved innermost,
// so that an element's index is affine in its coordinates. A layout whose stick count is elsewhere
// (torch-spyre's default puts it outermost) is reached by remapping each transfer
// (backend/compiler/layout_dma.h).
DeviceLayout halide_view(const DeviceLayout &layout, int rank);
bool stick_count_innermost(const DeviceLayout &layout, int rank);

// torch-spyre's default layout of a tensor of `rank` dims, sticked on dim 0 (PyTorch's last): for a
// PyTorch shape [d0, ..., d_{r-1}] the device size is [d1, ..., d_{r-2}, d_{r-1}/64, d0, 64], so PyTorch's
// first dim (a batch) sits just outside the stick. (1024, 256) fp16 -> (4, 1024, 64); [B, M, K] ->
// [M, K/64, B, 64] (torch-spyre csrc/spyre_tensor_impl.cpp, get_generic_stick_layout).
DeviceLayout torch_spyre_default_layout(int rank);

// A layout of a tensor of `rank` dims from text: "row_major" (default_layout), "torch_spyre"
// (torch_spyre_default_layout), or the device dims outermost first with the stick dim's stick count
// written "s": "d2,s,d1" is {0, {2, 0, 1}} (dims in Halide order, d0 innermost; the stick dim d0),
// and "d1:d0,s" is sticked on d1 instead, {1, {0, 1}}. Throws spyre::Error naming `what` and the text.
DeviceLayout parse_layout(const std::string &text, int rank, const std::string &what);

}  // namespace spyre
