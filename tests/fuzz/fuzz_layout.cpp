// libFuzzer: shapes and device layouts (as a machine file or a program's buffer table would give
// them). check_layout must reject a bad one with a spyre::Error; for a good one, stickify then
// unstickify must give back the host data exactly.
#include <cstdint>
#include <cstring>
#include <vector>

#include "device/error.h"
#include "device/layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace spyre;
    if (size < 3) return 0;
    size_t at = 0;
    auto next = [&]() -> int { return at < size ? data[at++] : 0; };
    const int rank = 1 + next() % 4;
    const DType type = DType(next() % 3);
    std::vector<int64_t> shape;
    int64_t elems = 1;
    for (int d = 0; d < rank; d++) {
        shape.push_back(int64_t(next() % 80) - 2);  // a few non-positive extents on purpose
        elems *= std::max<int64_t>(shape.back(), 1);
    }
    DeviceLayout layout;
    layout.stick_dim = next() % 6 - 1;
    const int order_len = next() % 6;
    for (int i = 0; i < order_len; i++) layout.order.push_back(next() % 6 - 1);
    const int64_t stick_bytes = int64_t(4) << (next() % 6);  // 4 .. 128
    try {
        check_layout(layout, shape, "fuzz");
    } catch (const Error &) {
        return 0;
    }
    const size_t bytes = size_t(elems) * size_t(dtype_bytes(type));
    std::vector<uint8_t> host(bytes), back(bytes);
    for (size_t i = 0; i < bytes; i++) host[i] = uint8_t(i * 131 + 7);
    std::vector<uint8_t> dev;
    try {
        dev = stickify(host.data(), shape, type, layout, stick_bytes);
        unstickify(dev, back.data(), shape, type, layout, stick_bytes);
    } catch (const Error &) {
        return 0;
    }
    if (host != back) __builtin_trap();
    return 0;
}
