// ProgramBuilder's shared emission services: the descriptor interner both emitters use (an equal
// descriptor is the same table entry, a different one a new entry) and the register allocator the
// KTIR importer counts references on (the lowest free register; none past 31).
#include <gtest/gtest.h>

#include "device/program_builder.h"

namespace spyre {
namespace {

TEST(ProgramBuilderInterner, EqualDmaDescriptorsShareAnEntryAndAnyDifferingFieldMakesANewOne) {
    ProgramBuilder b("k", 1);
    DmaDesc d;
    d.sticks = 4;
    d.count = {8, 1, 1};
    d.dram_stride = {1024, 0, 0};
    d.lx_stride = {512, 0, 0};
    const int first = b.intern_dma_desc(d);
    EXPECT_EQ(b.intern_dma_desc(d), first);
    DmaDesc other = d;
    other.lx_stride[0] = 640;
    const int second = b.intern_dma_desc(other);
    EXPECT_NE(second, first);
    other = d;
    other.dram_stride[1] = 8;
    EXPECT_NE(b.intern_dma_desc(other), first);
    EXPECT_EQ(b.intern_dma_desc(d), first);
    // dma_desc itself always appends (hand-built programs number their own descriptors).
    EXPECT_NE(b.dma_desc(d), first);
}

TEST(ProgramBuilderInterner, EqualMatmulDescriptorsShareAnEntry) {
    ProgramBuilder b("k", 1);
    MatmulDesc m;
    m.m = 8, m.n = 64, m.k = 64, m.lda = 128, m.ldb = 128, m.ldc = 256;
    const int first = b.intern_mm_desc(m);
    EXPECT_EQ(b.intern_mm_desc(m), first);
    m.ldc = 512;
    EXPECT_NE(b.intern_mm_desc(m), first);
}

TEST(ProgramBuilderRegisters, TryAllocGivesTheLowestFreeRegisterAndNoneWhenAll31AreTaken) {
    ProgramBuilder b("k", 1);
    std::vector<Reg> held;
    for (int i = 1; i < kNumRegs; i++) {
        std::optional<Reg> r = b.try_alloc();
        ASSERT_TRUE(r.has_value());
        EXPECT_EQ(r->id, i);
        EXPECT_TRUE(b.allocated(*r));
        held.push_back(*r);
    }
    EXPECT_FALSE(b.try_alloc().has_value());
    b.release(held[4]);
    EXPECT_FALSE(b.allocated(held[4]));
    EXPECT_EQ(b.try_alloc()->id, held[4].id);
    EXPECT_FALSE(b.allocated(kZero));
}

}  // namespace
}  // namespace spyre
