// LxArena, the one LX allocator of the code generator and the KTIR importer: first fit among freed
// blocks (the rest of a split block freed after the others), else the top; a limit on the top; and
// with reclaim_top, blocks freed in reverse order give their bytes back as a stack does.
#include <gtest/gtest.h>

#include "device/lx_arena.h"

namespace spyre {
namespace {

TEST(LxArena, AFreedBlockIsReusedFirstFitAndItsRestAfterTheOthers) {
    LxArena lx(256);
    const int a = *lx.alloc(512), b = *lx.alloc(256), c = *lx.alloc(256);
    EXPECT_EQ(lx.offset(a), 256);
    EXPECT_EQ(lx.offset(b), 768);
    EXPECT_EQ(lx.offset(c), 1024);
    lx.free(a);
    lx.free(c);
    const int d = *lx.alloc(256);  // a's block, split: its second half is freed after c's block
    EXPECT_EQ(lx.offset(d), 256);
    EXPECT_EQ(lx.offset(*lx.alloc(256)), 1024);  // c's block comes first in the search
    EXPECT_EQ(lx.offset(*lx.alloc(256)), 512);   // then the rest of a's
    EXPECT_EQ(lx.top(), 1280);                   // without reclaim_top the top never falls
    EXPECT_EQ(lx.peak(), 1280);
}

TEST(LxArena, TheLimitStopsOnlyTheTop) {
    LxArena lx(0);
    const int a = *lx.alloc(1024, 2048);
    EXPECT_TRUE(lx.alloc(1024, 2048).has_value());
    EXPECT_FALSE(lx.alloc(256, 2048).has_value());
    lx.free(a);
    EXPECT_TRUE(lx.alloc(256, 2048).has_value());  // from the freed block, under the limit
}

TEST(LxArena, WithReclaimTopBlocksFreedInReverseOrderAreAStack) {
    LxArena lx(0, /*reclaim_top=*/true);
    const int a = *lx.alloc(100), b = *lx.alloc(50);
    lx.free(b);
    EXPECT_EQ(lx.top(), 100);
    const int c = *lx.alloc(80);  // where b was, though b was smaller
    EXPECT_EQ(lx.offset(c), 100);
    lx.free(c);
    lx.free(a);
    EXPECT_EQ(lx.top(), 0);
    EXPECT_EQ(lx.peak(), 180);
    // A block freed below the top waits until the blocks above it go, then goes with them.
    const int d = *lx.alloc(64), e = *lx.alloc(64);
    lx.free(d);
    EXPECT_EQ(lx.top(), 128);
    lx.free(e);
    EXPECT_EQ(lx.top(), 0);
    // Out of order, with a freed block split in between: the top still falls to what is live.
    const int f = *lx.alloc(64), g = *lx.alloc(64);
    lx.free(f);
    const int h = *lx.alloc(32);  // f's block, its second half free after g
    EXPECT_EQ(lx.offset(h), 0);
    lx.free(g);
    EXPECT_EQ(lx.top(), 32);
}

}  // namespace
}  // namespace spyre
