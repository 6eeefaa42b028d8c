// The barrier-agreement check (backend/compiler/check_barriers.h) on hand-built programs: paths
// that meet as many barriers pass; an IF whose branches disagree, and a loop counted by a register
// around a barrier, are refused with messages that name the instruction. (A phased schedule it
// refuses: CompileErrors.DmaPhasesWithUnevenCoreSharesIsRefused.)
#include <gtest/gtest.h>

#include <string>

#include "check_barriers.h"
#include "device/error.h"
#include "device/program_builder.h"

namespace spyre::testing {
namespace {

std::string check(const DeviceProgram &p) {
    try {
        check_barriers(p, "k");
    } catch (const Error &e) {
        return e.what();
    }
    return "(no error)";
}

// IF (core is 0) { 2 x { BARRIER } } ELSE { BARRIER BARRIER }, then `tail` more barriers under an
// IF with no ELSE.
DeviceProgram branches(int loop_count, bool tail) {
    ProgramBuilder b("k", 4);
    Reg core = b.alloc(), i = b.alloc();
    b.core_id(core);
    b.op3(Opcode::CMPEQ, core, core, kZero);
    b.if_(core);
    b.loop(i, loop_count);
    b.barrier();
    b.end_loop();
    b.else_();
    b.barrier();
    b.barrier();
    b.end_if();
    if (tail) {
        b.if_(core);
        b.barrier();
        b.end_if();
    }
    return b.finish();
}

TEST(CheckBarriers, BranchesThatMeetAsManyBarriersPass) { EXPECT_EQ(check(branches(2, false)), "(no error)"); }

TEST(CheckBarriers, BranchesThatDisagreeAreNamed) {
    EXPECT_EQ(check(branches(3, false)),
              "kernel k: the cores that take the IF at instruction 2 meet 3 barrier(s) and the others 2; a barrier "
              "waits for every core, so they would wait forever (a dma_phases loop that some cores run fewer times "
              "than others?)");
    EXPECT_NE(check(branches(2, true)).find("meet 1 barrier(s) and the others 0"), std::string::npos);
}

TEST(CheckBarriers, ALoopCountedByARegisterAroundABarrierIsRefused) {
    ProgramBuilder b("k", 2);
    Reg n = b.alloc(), i = b.alloc();
    b.li(n, 3);
    b.loop(i, 0, n);
    b.barrier();
    b.end_loop();
    EXPECT_NE(check(b.finish()).find("kernel k: the loop at instruction 1 runs a number of times held in a register "
                                     "and meets barriers"),
              std::string::npos);
}

}  // namespace
}  // namespace spyre::testing
