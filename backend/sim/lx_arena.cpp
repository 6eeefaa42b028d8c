#include "lx_arena.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

namespace spyre {

namespace {

// Enough for a 32-core run and a second one in flight (parallel searches); beyond that, free.
constexpr size_t kMaxPooledBytes = size_t(160) << 20;

struct Pool {
    std::mutex mu;
    std::vector<LxArena> free;
    size_t bytes = 0;
};

Pool &pool() {
    static Pool *p = new Pool;  // never destroyed: arenas may be released during static teardown
    return *p;
}

}  // namespace

LxArena LxArena::acquire(size_t bytes) {
    {
        Pool &p = pool();
        std::lock_guard<std::mutex> lock(p.mu);
        for (size_t i = 0; i < p.free.size(); i++) {
            if (p.free[i].size_ != bytes) continue;
            LxArena a = std::move(p.free[i]);
            p.free[i] = std::move(p.free.back());
            p.free.pop_back();
            p.bytes -= bytes;
            return a;
        }
    }
    LxArena a;
    a.data_.reset(static_cast<uint8_t *>(std::calloc(bytes ? bytes : 1, 1)));
    if (!a.data_) throw std::bad_alloc();
    a.size_ = bytes;
    return a;
}

void LxArena::release(LxArena &&arena, size_t dirty_bytes) {
    if (!arena.data_) return;
    std::memset(arena.data(), 0, std::min(dirty_bytes, arena.size_));
    Pool &p = pool();
    std::lock_guard<std::mutex> lock(p.mu);
    if (p.bytes + arena.size_ > kMaxPooledBytes) return;  // `arena` is freed by its owner
    p.bytes += arena.size_;
    p.free.push_back(std::move(arena));
}

}  // namespace spyre
