// HazardTracker (device/hazard_tracker.h): which pending work a new instruction waits for, and the
// WAITs it emits; and queue_of / queue_tag (device/queues.h).
#include <gtest/gtest.h>

#include "device/error.h"
#include "device/hazard_tracker.h"
#include "device/program_builder.h"

namespace {

using namespace spyre;

// The masks of the WAITs emitted so far.
std::vector<uint32_t> waits(const ProgramBuilder &b) {
    std::vector<uint32_t> m;
    for (const Instr &in : b.code())
        if (in.op == Opcode::WAIT) m.push_back(uint32_t(in.a[0]));
    return m;
}

Access reads(LxSpan r) {
    Access a;
    a.reads.push_back(r);
    return a;
}
Access writes(LxSpan w) {
    Access a;
    a.writes.push_back(w);
    return a;
}
Access copy(LxSpan from, LxSpan to) {
    Access a;
    a.reads.push_back(from);
    a.writes.push_back(to);
    return a;
}

const LxSpan kA{0, 128}, kB{128, 256}, kAB{64, 192}, kUnknown{};

struct Tracker {
    ProgramBuilder b{"k", 1};
    HazardTracker hz{b};
};

TEST(HazardTracker, ReadAfterWriteOnAnotherQueueWaitsForTheWritersTag) {
    Tracker t;
    t.hz.after(kTagLoad, QLoad, writes(kA));
    t.hz.before(QVec, copy(kA, kB));
    EXPECT_EQ(waits(t.b), std::vector<uint32_t>{1u << kTagLoad});
    EXPECT_TRUE(t.hz.pending().empty());
}

TEST(HazardTracker, SameQueueNeverWaitsItCompletesInOrder) {
    Tracker t;
    t.hz.after(kTagVec, QVec, writes(kA));
    t.hz.before(QVec, copy(kA, kA));
    EXPECT_TRUE(waits(t.b).empty());
    EXPECT_EQ(t.hz.pending().size(), 1u);
}

TEST(HazardTracker, WriteAfterReadWaits) {
    Tracker t;
    t.hz.after(kTagStore, QStore, reads(kA));
    t.hz.before(QVec, writes(kAB));
    EXPECT_EQ(waits(t.b), std::vector<uint32_t>{1u << kTagStore});
}

TEST(HazardTracker, WriteAfterWriteWaits) {
    Tracker t;
    t.hz.after(kTagPE, QPE, writes(kA));
    t.hz.before(QVec, writes(kA));
    EXPECT_EQ(waits(t.b), std::vector<uint32_t>{1u << kTagPE});
}

TEST(HazardTracker, ReadAfterReadAndDisjointRangesDoNotWait) {
    Tracker t;
    t.hz.after(kTagLoad, QLoad, writes(kA));
    t.hz.after(kTagPE, QPE, reads(kB));
    t.hz.before(QVec, reads(kB));
    t.hz.before(QStore, reads(kB));
    EXPECT_TRUE(waits(t.b).empty());
    EXPECT_EQ(t.hz.pending().size(), 2u);
}

TEST(HazardTracker, HalfOpenRangesThatOnlyTouchDoNotOverlap) {
    EXPECT_FALSE(overlap(kA, kB));
    EXPECT_TRUE(overlap(kA, kAB));
    EXPECT_TRUE(overlap(kAB, kB));
}

TEST(HazardTracker, AnUnknownRangeOverlapsEverything) {
    EXPECT_TRUE(overlap(kUnknown, kA));
    EXPECT_TRUE(overlap(kB, kUnknown));
    Tracker t;
    t.hz.after(kTagLoad, QLoad, writes(kA));
    t.hz.before(QVec, reads(kUnknown));
    EXPECT_EQ(waits(t.b), std::vector<uint32_t>{1u << kTagLoad});
    t.hz.after(kTagVec, QVec, writes(kUnknown));
    t.hz.before(QStore, reads(LxSpan{4096, 4224}));
    EXPECT_EQ(waits(t.b), (std::vector<uint32_t>{1u << kTagLoad, 1u << kTagVec}));
}

TEST(HazardTracker, DeviceBuffersConflictOnlyWithThemselves) {
    Tracker t;
    Access store;  // LX kA to device buffer 1
    store.reads.push_back(kA);
    store.dram_writes.insert(1);
    t.hz.after(kTagStore, QStore, store);
    Access load_other;  // device buffer 2 to LX kB
    load_other.dram_reads.insert(2);
    load_other.writes.push_back(kB);
    t.hz.before(QLoad, load_other);
    EXPECT_TRUE(waits(t.b).empty());
    Access load_same;  // device buffer 1 to LX kB: reads what the store writes
    load_same.dram_reads.insert(1);
    load_same.writes.push_back(kB);
    t.hz.before(QLoad, load_same);
    EXPECT_EQ(waits(t.b), std::vector<uint32_t>{1u << kTagStore});
}

TEST(HazardTracker, AWaitForgetsEveryPendingInstructionOfItsTags) {
    Tracker t;
    t.hz.after(kTagLoad, QLoad, writes(kA));
    t.hz.after(kTagLoad, QLoad, writes(kB));
    t.hz.after(kTagVec, QVec, writes(LxSpan{512, 640}));
    t.hz.before(QVec, reads(kA));  // waits for tag 5, which covers the load into kB too
    EXPECT_EQ(t.hz.pending().size(), 1u);
    t.hz.before(QStore, reads(kB));
    EXPECT_EQ(waits(t.b), std::vector<uint32_t>{1u << kTagLoad});
}

TEST(HazardTracker, DrainWaitsForEveryPendingTagInOneWait) {
    Tracker t;
    t.hz.drain();
    EXPECT_TRUE(waits(t.b).empty());
    t.hz.after(kTagLoad, QLoad, writes(kA));
    t.hz.after(kTagPE, QPE, writes(kB));
    t.hz.drain();
    EXPECT_EQ(waits(t.b), std::vector<uint32_t>{(1u << kTagLoad) | (1u << kTagPE)});
    EXPECT_TRUE(t.hz.pending().empty());
}

TEST(HazardTracker, TouchingCountsReadsAndWritesOnAnyQueue) {
    Tracker t;
    t.hz.after(kTagVec, QVec, reads(kA));
    t.hz.after(kTagPE, QPE, writes(LxSpan{1024, 2048}));
    EXPECT_EQ(t.hz.touching(reads(kAB)), 1u << kTagVec);  // read against read: touching, no conflict
    EXPECT_EQ(t.hz.conflicts(QLoad, reads(kAB)), 0u);
    EXPECT_EQ(t.hz.touching(reads(kUnknown)), (1u << kTagVec) | (1u << kTagPE));
}

TEST(HazardTracker, PendingCapWaitsForTheNewestTagWhenReached) {
    ProgramBuilder b{"k", 1};
    HazardTracker hz{b, 3};
    hz.after(kTagVec, QVec, writes(LxSpan{0, 128}));
    hz.after(kTagVec, QVec, writes(LxSpan{128, 256}));
    EXPECT_TRUE(waits(b).empty());
    hz.after(kTagVec, QVec, writes(LxSpan{256, 384}));
    EXPECT_EQ(waits(b), std::vector<uint32_t>{1u << kTagVec});
    EXPECT_TRUE(hz.pending().empty());
}

TEST(HazardTracker, NoCapByDefault) {
    Tracker t;
    for (int i = 0; i < 5000; i++) t.hz.after(kTagVec, QVec, writes(LxSpan{i * 128, i * 128 + 128}));
    EXPECT_TRUE(waits(t.b).empty());
    EXPECT_EQ(t.hz.pending().size(), 5000u);
}

TEST(HazardTracker, SavedPendingSetsCompareByWork) {
    Tracker t;
    t.hz.after(kTagLoad, QLoad, writes(kA));
    const PendingSet before = t.hz.pending();
    t.hz.after(kTagVec, QVec, copy(kA, kB));
    EXPECT_EQ(tags_not_in(t.hz.pending(), before), 1u << kTagVec);
    EXPECT_EQ(tags_not_in(before, t.hz.pending()), 0u);
    EXPECT_TRUE(holds(t.hz.pending(), PendingWork{kTagLoad, QLoad, writes(kA)}));
    EXPECT_FALSE(holds(t.hz.pending(), PendingWork{kTagStore, QLoad, writes(kA)}));
    t.hz.set_pending(before);
    EXPECT_EQ(t.hz.pending().size(), 1u);
}

TEST(Queues, EachAsyncOpcodeGoesToItsEnginesQueue) {
    EXPECT_EQ(queue_of(Opcode::VADD), QVec);
    EXPECT_EQ(queue_of(Opcode::VSELIDX), QVec);
    EXPECT_EQ(queue_of(Opcode::MATMUL), QPE);
    EXPECT_EQ(queue_of(Opcode::DMA_LD), QLoad);
    EXPECT_EQ(queue_of(Opcode::DMA_ST), QStore);
    EXPECT_EQ(queue_of(Opcode::RING_SEND), QRing);
    EXPECT_EQ(queue_of(Opcode::RING_REDUCE), QRing);
    EXPECT_THROW(queue_of(Opcode::WAIT), Error);
    EXPECT_THROW(queue_of(Opcode::ADD), Error);
}

TEST(Queues, AnOpcodeWithoutAQueueIsAnInternalErrorNamingIt) {
    try {
        queue_of(Opcode::WAIT);
        ADD_FAILURE() << "expected spyre::Error";
    } catch (const Error &e) {
        EXPECT_EQ(e.kind(), ErrorKind::Internal);
        EXPECT_NE(std::string(e.what()).find("WAIT goes to no engine queue"), std::string::npos) << e.what();
    }
}

TEST(Queues, TheGeneralPolicyGivesEachQueueItsOwnTag) {
    const Queue all[] = {QVec, QLoad, QStore, QPE, QRing};
    uint32_t seen = 0;
    for (Queue q : all) {
        const int tag = queue_tag(q);
        ASSERT_GE(tag, 0);
        ASSERT_LT(tag, kNumTags);
        EXPECT_FALSE((seen >> tag) & 1u) << "queue " << int(q) << " shares tag " << tag;
        seen |= 1u << tag;
    }
}

}  // namespace
