// Each core's LX image in numeric mode: a zeroed byte array, recycled across simulations. A run
// touches only part of its 2 MiB per core (it tracks how much: the LX peak), so a finished run hands
// its arenas back with that prefix re-zeroed, and the next run on this process starts on resident,
// already-zero pages instead of zero-filling and faulting in 64 MiB for 32 cores.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace spyre {

class LxArena {
public:
    LxArena() = default;
    // An all-zero arena of `bytes`, from the pool when one of that size is free.
    static LxArena acquire(size_t bytes);
    // Returns the arena to the pool; the caller guarantees that no byte at or past `dirty_bytes`
    // was written. Arenas that are not released (a run that threw) are simply freed.
    static void release(LxArena &&arena, size_t dirty_bytes);

    uint8_t *data() { return data_.get(); }
    const uint8_t *data() const { return data_.get(); }
    size_t size() const { return size_; }
    uint8_t *begin() { return data_.get(); }
    uint8_t *end() { return data_.get() + size_; }

private:
    struct Free {
        void operator()(uint8_t *p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t, Free> data_;
    size_t size_ = 0;
};

}  // namespace spyre
