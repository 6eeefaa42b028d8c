// sequence_programs: parts joined into one program in order, their buffers, descriptors and tags
// remapped, a wait and a barrier between parts; a part on fewer cores runs guarded between its
// top-level barriers; what cannot be joined is refused by name.
#include "device/program_sequence.h"

#include <gtest/gtest.h>

#include "device/error.h"

using namespace spyre;

namespace {

Instr seq_instr(Opcode op, std::initializer_list<int32_t> a) {
    Instr in;
    in.op = op;
    size_t i = 0;
    for (int32_t v : a) in.a[i++] = v;
    return in;
}

BufferDecl decl(const std::string &name, BufferKind kind) {
    BufferDecl b;
    b.name = name, b.kind = kind, b.type = DType::F16, b.shape = {64};
    return b;
}

// One DMA load of buffer 0 into LX with descriptor 0, then a barrier.
DeviceProgram part(const std::string &name, int cores) {
    DeviceProgram p;
    p.kernel_name = name;
    p.num_cores = cores;
    p.buffers = {decl(name + "_in", BufferKind::Input)};
    p.dma = {DmaDesc{}};
    p.code = {seq_instr(Opcode::LI, {1, 0, 0}), seq_instr(Opcode::DMA_LD, {0, 0, 1, 0, 0, 0, 0}), seq_instr(Opcode::WAIT, {1}),
              seq_instr(Opcode::BARRIER, {})};
    return p;
}

std::string sequence_error(const std::function<void()> &f) {
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    return "no error";
}

TEST(ProgramSequence, PartsRunInOrderWithTheirBuffersAndDescriptorsRemapped) {
    const DeviceProgram a = part("a", 4), b = part("b", 4);
    const DeviceProgram p = sequence_programs("k", {decl("x", BufferKind::Input), decl("y", BufferKind::Input)},
                                              {{&a, {1}}, {&b, {0}}});
    EXPECT_EQ(p.num_cores, 4);
    ASSERT_EQ(p.dma.size(), 2u);
    ASSERT_EQ(p.code.size(), 4u + 2u + 4u);
    EXPECT_EQ(p.code[1].a[1], 1);  // a's buffer 0 is y
    EXPECT_EQ(p.code[1].a[6], 0);
    EXPECT_EQ(p.code[4].op, Opcode::WAIT);
    EXPECT_EQ(p.code[5].op, Opcode::BARRIER);
    EXPECT_EQ(p.code[7].a[1], 0);  // b's buffer 0 is x
    EXPECT_EQ(p.code[7].a[6], 1);  // b's descriptor 0 follows a's
}

TEST(ProgramSequence, APartOnFewerCoresRunsGuardedAndEveryCoreMeetsItsBarriers) {
    const DeviceProgram a = part("a", 2), b = part("b", 4);
    const DeviceProgram p = sequence_programs("k", {decl("x", BufferKind::Input)}, {{&a, {0}}, {&b, {0}}});
    EXPECT_EQ(p.num_cores, 4);
    // CORE_ID, LI, CMPLT, IF, a's three instructions, ENDIF, a's BARRIER outside the IF.
    ASSERT_GE(p.code.size(), 9u);
    EXPECT_EQ(p.code[0].op, Opcode::CORE_ID);
    EXPECT_EQ(p.code[1].op, Opcode::LI);
    EXPECT_EQ(p.code[1].a[1], 2);
    EXPECT_EQ(p.code[2].op, Opcode::CMPLT);
    EXPECT_EQ(p.code[3].op, Opcode::IF);
    EXPECT_EQ(p.code[7].op, Opcode::ENDIF);
    EXPECT_EQ(p.code[8].op, Opcode::BARRIER);
    EXPECT_NE(p.code[0].a[0], 1) << "the guard must not be a register the part uses";
}

TEST(ProgramSequence, WhatCannotBeJoinedIsRefusedByName) {
    const DeviceProgram a = part("a", 4);
    EXPECT_EQ(sequence_error([&] { sequence_programs("k", {}, {}); }), "kernel k: no programs to run in sequence");
    EXPECT_EQ(sequence_error([&] { sequence_programs("k", {decl("x", BufferKind::Input)}, {{&a, {}}}); }),
              "kernel k: part 0 ('a') has 1 buffers, its map 0");
    EXPECT_EQ(sequence_error([&] { sequence_programs("k", {decl("x", BufferKind::Input)}, {{&a, {3}}}); }),
              "kernel k: part 0 ('a') maps a buffer to 3, outside the 1 buffers");
    DeviceProgram looped = part("l", 2);
    looped.code = {seq_instr(Opcode::LOOP, {1, 0, 4}), seq_instr(Opcode::BARRIER, {}), seq_instr(Opcode::ENDLOOP, {})};
    EXPECT_EQ(sequence_error([&] { sequence_programs("k", {decl("x", BufferKind::Input)}, {{&looped, {0}}, {&a, {0}}}); }),
              "kernel k: part 0 ('l'): a barrier inside a loop or condition");
    DeviceProgram crowded = part("c", 2);
    crowded.code.clear();
    for (int r = 1; r < 32; r++) crowded.code.push_back(seq_instr(Opcode::LI, {r, 0, 0}));
    EXPECT_EQ(sequence_error([&] { sequence_programs("k", {decl("x", BufferKind::Input)}, {{&crowded, {0}}, {&a, {0}}}); }),
              "kernel k: part 0 ('c'): no two registers free to keep its 2 cores apart");
}

}  // namespace
