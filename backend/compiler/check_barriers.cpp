#include "check_barriers.h"

#include <algorithm>
#include <cstdint>

#include "device/error.h"

namespace spyre {

namespace {

class Counter {
public:
    Counter(const DeviceProgram &p, const std::string &kernel) : code_(p.code), kernel_(kernel) {}

    // Barriers met from `pc` up to the instruction that closes the enclosing block (ELSE, ENDIF,
    // ENDLOOP or the end), which is returned in `pc`. Counts saturate: agreement is all that matters.
    int64_t block(size_t &pc) {
        int64_t n = 0;
        while (pc < code_.size()) {
            const Instr &in = code_[pc];
            if (in.op == Opcode::ELSE || in.op == Opcode::ENDIF || in.op == Opcode::ENDLOOP) return n;
            if (in.op == Opcode::BARRIER) {
                n = add(n, 1);
                pc++;
            } else if (in.op == Opcode::LOOP) {
                const size_t at = pc++;
                const int64_t body = block(pc);
                if (body > 0 && in.a[1] != 0)
                    throw_error("kernel ", kernel_, ": the loop at instruction ", at,
                                " runs a number of times held in a register and meets barriers; every core must "
                                "meet the same barriers, which cannot be checked");
                n = add(n, mul(body, std::max<int64_t>(in.a[2], 0)));
                pc++;  // ENDLOOP
            } else if (in.op == Opcode::IF) {
                const size_t at = pc++;
                const int64_t then_n = block(pc);
                int64_t else_n = 0;
                if (pc < code_.size() && code_[pc].op == Opcode::ELSE) {
                    pc++;
                    else_n = block(pc);
                }
                if (then_n != else_n)
                    throw_error("kernel ", kernel_, ": the cores that take the IF at instruction ", at, " meet ",
                                then_n, " barrier(s) and the others ", else_n,
                                "; a barrier waits for every core, so they would wait forever (a dma_phases loop "
                                "that some cores run fewer times than others?)");
                n = add(n, then_n);
                pc++;  // ENDIF
            } else {
                pc++;
            }
        }
        return n;
    }

private:
    static constexpr int64_t kCap = int64_t(1) << 60;
    static int64_t add(int64_t a, int64_t b) { return std::min(kCap, a + b); }
    static int64_t mul(int64_t a, int64_t b) { return a == 0 || b == 0 ? 0 : (a > kCap / b ? kCap : a * b); }
    const std::vector<Instr> &code_;
    const std::string &kernel_;
};

}  // namespace

void check_barriers(const DeviceProgram &program, const std::string &kernel) {
    size_t pc = 0;
    Counter(program, kernel).block(pc);
}

}  // namespace spyre
