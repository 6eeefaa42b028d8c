#include "image_pool.h"

#include <algorithm>
#include <mutex>

namespace spyre {

namespace {

// A few runs' worth of large buffers (several processes' searches run side by side; each bounds its own).
constexpr size_t kMaxPooledBytes = size_t(256) << 20;
// Smaller images come and go through malloc's own free lists without faults.
constexpr size_t kMinPooledBytes = size_t(1) << 20;

struct Pool {
    std::mutex mu;
    std::vector<std::vector<uint8_t>> free;
    size_t bytes = 0;
};

Pool &pool() {
    static Pool *p = new Pool;  // never destroyed: images may come back during static teardown
    return *p;
}

}  // namespace

std::vector<uint8_t> take_image(size_t bytes) {
    std::vector<uint8_t> v;
    if (bytes >= kMinPooledBytes) {
        Pool &p = pool();
        std::lock_guard<std::mutex> lock(p.mu);
        // The smallest pooled image that holds `bytes`.
        auto best = p.free.end();
        for (auto it = p.free.begin(); it != p.free.end(); ++it)
            if (it->capacity() >= bytes && (best == p.free.end() || it->capacity() < best->capacity())) best = it;
        if (best != p.free.end()) {
            v = std::move(*best);
            p.bytes -= v.capacity();
            *best = std::move(p.free.back());
            p.free.pop_back();
        }
    }
    v.assign(bytes, 0);  // within capacity: no reallocation, the pages stay resident
    return v;
}

void give_back_images(std::vector<std::vector<uint8_t>> &images) {
    Pool &p = pool();
    std::lock_guard<std::mutex> lock(p.mu);
    for (std::vector<uint8_t> &v : images) {
        if (v.capacity() >= kMinPooledBytes && p.bytes + v.capacity() <= kMaxPooledBytes) {
            p.bytes += v.capacity();
            p.free.push_back(std::move(v));
        }
        std::vector<uint8_t>().swap(v);
    }
}

}  // namespace spyre
