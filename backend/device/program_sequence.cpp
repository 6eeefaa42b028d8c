#include "program_sequence.h"

#include <algorithm>

#include "error.h"

namespace spyre {

namespace {

// A part that runs on fewer cores than the program: its code runs on the first `cores` only, in
// segments between its top-level barriers, which every core meets. `guard` is a register the part
// never touches.
void append_guarded(std::vector<Instr> &out, const std::vector<Instr> &code, int cores, int guard, int scratch,
                    const std::string &what) {
    auto instr = [](Opcode op, std::initializer_list<int32_t> a) {
        Instr in;
        in.op = op;
        size_t i = 0;
        for (int32_t v : a) in.a[i++] = v;
        return in;
    };
    out.push_back(instr(Opcode::CORE_ID, {guard}));
    out.push_back(instr(Opcode::LI, {scratch, cores, 0}));
    out.push_back(instr(Opcode::CMPLT, {guard, guard, scratch}));
    int depth = 0;
    bool open = false;
    for (const Instr &in : code) {
        if (in.op == Opcode::BARRIER && depth == 0) {
            if (open) out.push_back(instr(Opcode::ENDIF, {}));
            open = false;
            out.push_back(in);
            continue;
        }
        if (in.op == Opcode::BARRIER) throw_error(what, ": a barrier inside a loop or condition");
        if (!open) out.push_back(instr(Opcode::IF, {guard}));
        open = true;
        if (in.op == Opcode::LOOP || in.op == Opcode::IF) depth++;
        if (in.op == Opcode::ENDLOOP || in.op == Opcode::ENDIF) depth--;
        out.push_back(in);
    }
    if (open) out.push_back(instr(Opcode::ENDIF, {}));
}

}  // namespace

DeviceProgram sequence_programs(const std::string &kernel_name, std::vector<BufferDecl> buffers,
                                const std::vector<ProgramPart> &parts) {
    DeviceProgram out;
    out.kernel_name = kernel_name;
    out.buffers = std::move(buffers);
    if (parts.empty()) throw_error("kernel ", kernel_name, ": no programs to run in sequence");
    for (const ProgramPart &part : parts) out.num_cores = std::max(out.num_cores, part.program->num_cores);
    for (size_t k = 0; k < parts.size(); k++) {
        const DeviceProgram &p = *parts[k].program;
        const std::string what = "kernel " + kernel_name + ": part " + std::to_string(k) + " ('" + p.kernel_name + "')";
        if (parts[k].buffer_map.size() != p.buffers.size())
            throw_error(what, " has ", p.buffers.size(), " buffers, its map ", parts[k].buffer_map.size());
        for (int b : parts[k].buffer_map)
            if (b < 0 || size_t(b) >= out.buffers.size())
                throw_error(what, " maps a buffer to ", b, ", outside the ", out.buffers.size(), " buffers");
        const int dma0 = int(out.dma.size()), mm0 = int(out.mm.size());
        out.dma.insert(out.dma.end(), p.dma.begin(), p.dma.end());
        out.mm.insert(out.mm.end(), p.mm.begin(), p.mm.end());
        if (k > 0) {
            // The previous part's transfers complete and every core arrives before this part starts.
            Instr wait;
            wait.op = Opcode::WAIT;
            wait.a[0] = 0xFFFF;
            Instr barrier;
            barrier.op = Opcode::BARRIER;
            out.code.push_back(wait);
            out.code.push_back(barrier);
        }
        std::vector<Instr> code;
        std::vector<bool> used(32, false);
        for (Instr in : p.code) {
            const OpInfo &info = op_info(in.op);
            for (size_t s = 0; s < kNumOperands; s++) {
                switch (info.operands[s]) {
                case Operand::Buffer: in.a[s] = parts[k].buffer_map.at(size_t(in.a[s])); break;
                case Operand::DmaDesc: in.a[s] += dma0; break;
                case Operand::MmDesc: in.a[s] += mm0; break;
                case Operand::RegDst:
                case Operand::RegSrc:
                    if (in.a[s] >= 0 && in.a[s] < 32) used[size_t(in.a[s])] = true;
                    break;
                default: break;
                }
            }
            code.push_back(in);
        }
        if (p.num_cores == out.num_cores) {
            out.code.insert(out.code.end(), code.begin(), code.end());
            continue;
        }
        std::vector<int> free;
        for (int r = 31; r >= 1 && free.size() < 2; r--)
            if (!used[size_t(r)]) free.push_back(r);
        if (free.size() < 2) throw_error(what, ": no two registers free to keep its ", p.num_cores, " cores apart");
        append_guarded(out.code, code, p.num_cores, free[0], free[1], what);
    }
    return out;
}

}  // namespace spyre
