#include "lx_arena.h"

#include <algorithm>

namespace spyre {

std::optional<int> LxArena::alloc(int64_t bytes, int64_t limit) {
    for (size_t i = 0; i < blocks_.size(); i++)
        if (!blocks_[i].used && blocks_[i].hi - blocks_[i].lo >= bytes && blocks_[i].hi > blocks_[i].lo) {
            blocks_[i].used = true;
            if (blocks_[i].hi - blocks_[i].lo > bytes) {
                blocks_.push_back({blocks_[i].lo + bytes, blocks_[i].hi, false});
                blocks_[i].hi = blocks_[i].lo + bytes;
            }
            return int(i);
        }
    if (top_ > limit - bytes) return std::nullopt;
    blocks_.push_back({top_, top_ + bytes, true});
    top_ += bytes;
    peak_ = std::max(peak_, top_);
    return int(blocks_.size() - 1);
}

void LxArena::free(int id) {
    blocks_[size_t(id)].used = false;
    if (!reclaim_top_) return;
    // Freed in reverse order (the code generator's scopes), the top block is the last one handed
    // out: drop it and the free ones under it, so the list holds only what is live below the top.
    while (!blocks_.empty() && !blocks_.back().used && blocks_.back().hi == top_) {
        top_ = blocks_.back().lo;
        blocks_.pop_back();
    }
    // Freed out of order, a free block elsewhere in the list may still end at the top: lower the top
    // past it too (emptied: it is never handed out again).
    for (bool lowered = true; lowered;) {
        lowered = false;
        for (Block &b : blocks_)
            if (!b.used && b.hi == top_ && b.hi > b.lo) {
                top_ = b.lo;
                b.hi = b.lo;
                lowered = true;
            }
    }
}

}  // namespace spyre
