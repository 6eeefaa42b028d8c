// One core's LX as an allocator of byte ranges, the one both emitters use: the code generator's
// allocate_lx (buffers by the statement's nesting, each freed where its scope ends) and the KTIR
// importer (tensors in program order, each freed after its last use). A request takes the first
// freed block it fits (split, the rest freed after the others), else the bytes above everything
// handed out. With reclaim_top, a freed block at the top lowers the top (and the free blocks then
// at the top with it), so that allocations freed in reverse order behave as a stack.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace spyre {

class LxArena {
public:
    explicit LxArena(int64_t base = 0, bool reclaim_top = false) : top_(base), peak_(base), reclaim_top_(reclaim_top) {}

    // The block of `bytes` (a freed one it fits, else at the top); none when it would take the top
    // past `limit`.
    std::optional<int> alloc(int64_t bytes, int64_t limit = INT64_MAX);
    void free(int id);  // with reclaim_top, the ids of blocks freed at the top are handed out again
    int64_t offset(int id) const { return blocks_[size_t(id)].lo; }
    // One past the highest byte ever handed out at once, and now.
    int64_t peak() const { return peak_; }
    int64_t top() const { return top_; }

private:
    struct Block {
        int64_t lo, hi;
        bool used;
    };
    std::vector<Block> blocks_;
    int64_t top_, peak_;
    bool reclaim_top_;
};

}  // namespace spyre
