#include "loop_registers.h"

#include <bitset>

#include "error.h"

namespace spyre {

namespace {

using Regs = std::bitset<kNumRegs>;

struct Walk {
    const std::vector<Instr> &code;
    Regs exposed;  // read before a sure write in the iteration
    std::vector<LoopHeadWrite> writes;

    // Walks a block from `pc` to its closing ELSE / ENDIF / ENDLOOP; `sure` holds the registers
    // surely written so far in this iteration and is updated. Returns the closing instruction's pc.
    size_t block(size_t pc, Regs &sure) {
        for (; pc < code.size(); pc++) {
            const Instr &in = code[pc];
            switch (in.op) {
            case Opcode::ELSE:
            case Opcode::ENDIF:
            case Opcode::ENDLOOP: return pc;
            case Opcode::IF: {
                read(in.a[0], sure);
                Regs then_sure = sure;
                size_t end = block(pc + 1, then_sure);
                Regs else_sure = sure;
                if (code[end].op == Opcode::ELSE) end = block(end + 1, else_sure);
                sure = then_sure & else_sure;
                pc = end;
                break;
            }
            case Opcode::LOOP: {
                read(in.a[1], sure);
                Regs body = sure;
                body.set(size_t(in.a[0]));
                record_write(in.a[0], pc);
                size_t end = block(pc + 1, body);
                // A count known to be positive runs the body at least once.
                if (in.a[1] == 0 && in.a[2] > 0) sure = body;
                pc = end;
                break;
            }
            default: {
                const OpInfo &info = op_info(in.op);
                for (int s = 0; s < kNumOperands; s++)
                    if (info.operands[size_t(s)] == Operand::RegSrc) read(in.a[size_t(s)], sure);
                for (int s = 0; s < kNumOperands; s++)
                    if (info.operands[size_t(s)] == Operand::RegDst) {
                        record_write(in.a[size_t(s)], pc);
                        sure.set(size_t(in.a[size_t(s)]));
                    }
            }
            }
        }
        throw_error("loop_head_writes: block at instruction ", pc, " is never closed");
    }

    void read(int r, const Regs &sure) {
        if (r > 0 && r < kNumRegs && !sure.test(size_t(r))) exposed.set(size_t(r));
    }
    void record_write(int r, size_t pc) {
        if (r > 0 && r < kNumRegs) writes.push_back({r, pc});
    }
};

}  // namespace

std::vector<LoopHeadWrite> loop_head_writes(const std::vector<Instr> &code, size_t loop_pc) {
    if (loop_pc >= code.size() || code[loop_pc].op != Opcode::LOOP)
        throw_error("loop_head_writes: instruction ", loop_pc, " is not a LOOP");
    Walk w{code, {}, {}};
    Regs sure;
    sure.set(size_t(code[loop_pc].a[0]));  // the induction register: set at each iteration's start
    size_t end = w.block(loop_pc + 1, sure);
    if (code[end].op != Opcode::ENDLOOP)
        throw_error("loop_head_writes: the LOOP at instruction ", loop_pc, " is closed by instruction ", end,
                    ", not an ENDLOOP");
    std::vector<LoopHeadWrite> out;
    for (const LoopHeadWrite &x : w.writes)
        if (w.exposed.test(size_t(x.reg))) out.push_back(x);
    return out;
}

}  // namespace spyre
