// loop_head_writes: which writes in a loop's body hit a register the body reads before writing it
// in the same iteration (a value live across the back edge).
#include <gtest/gtest.h>

#include "device/error.h"
#include "device/loop_registers.h"
#include "device/program_builder.h"

namespace {

using namespace spyre;

struct Code {
    ProgramBuilder b{"k", 1};
    Reg r1{1}, r2{2}, r3{3}, r4{4};
    std::vector<Instr> code() const { return b.code(); }
};

TEST(LoopHeadWrites, ReportsAWriteToARegisterReadBeforeItInTheBody) {
    Code c;
    c.b.li(c.r1, 5);           // 0: a value from before the loop
    c.b.loop(c.r2, 4);         // 1
    c.b.add(c.r3, c.r1, c.r2); // 2: reads r1 (live across the back edge)
    c.b.muli(c.r1, c.r3, 64);  // 3: overwrites it
    c.b.end_loop();            // 4
    std::vector<LoopHeadWrite> w = loop_head_writes(c.code(), 1);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].reg, 1);
    EXPECT_EQ(w[0].pc, 3u);
}

TEST(LoopHeadWrites, TemporariesWrittenBeforeTheirReadAndTheInductionRegisterAreNotReported) {
    Code c;
    c.b.loop(c.r2, 4);         // 0
    c.b.muli(c.r3, c.r2, 64);  // 1: r3 written before it is read
    c.b.addi(c.r3, c.r3, 1);   // 2
    c.b.addi(c.r2, c.r3, 0);   // 3: the induction register, reset by the loop each iteration
    c.b.end_loop();
    EXPECT_TRUE(loop_head_writes(c.code(), 0).empty());
}

TEST(LoopHeadWrites, AWriteInOneBranchOrANestedLoopIsNotASureWrite) {
    Code c;
    c.b.li(c.r4, 1);
    c.b.loop(c.r2, 4);         // 1
    c.b.if_(c.r4);             // 2
    c.b.li(c.r3, 7);           // 3: only when r4 != 0
    c.b.end_if();
    c.b.loop(c.r1, 0, c.r4);   // 5: may run no iteration
    c.b.li(c.r1, 2);
    c.b.end_loop();
    c.b.add(c.r4, c.r3, c.r1); // 8: reads r3 (maybe from the last iteration) and r1
    c.b.end_loop();
    std::vector<LoopHeadWrite> w = loop_head_writes(c.code(), 1);
    // r3 (pc 3) and r4 (pc 8) are read before any sure write; r1 is the nested loop's induction
    // register, written by it at pc 5 and 6 but read after a loop that may not run.
    std::vector<std::pair<int, size_t>> got;
    for (const LoopHeadWrite &x : w) got.push_back({x.reg, x.pc});
    std::vector<std::pair<int, size_t>> want = {{3, 3}, {1, 5}, {1, 6}, {4, 8}};
    EXPECT_EQ(got, want);
}

TEST(LoopHeadWrites, WritesInBothBranchesAndAPositiveConstantCountAreSure) {
    Code c;
    c.b.li(c.r4, 1);
    c.b.loop(c.r2, 4);         // 1
    c.b.if_(c.r4);
    c.b.li(c.r3, 7);
    c.b.else_();
    c.b.li(c.r3, 8);
    c.b.end_if();
    c.b.loop(c.r1, 3);         // runs at least once
    c.b.li(c.r1, 2);
    c.b.end_loop();
    c.b.add(c.r3, c.r3, c.r1);
    c.b.end_loop();
    EXPECT_TRUE(loop_head_writes(c.code(), 1).empty());
}

TEST(LoopHeadWrites, RejectsAPcThatIsNotALoop) {
    Code c;
    c.b.li(c.r1, 1);
    EXPECT_THROW(loop_head_writes(c.code(), 0), Error);
}

}  // namespace
