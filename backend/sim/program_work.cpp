#include "program_work.h"

#include <algorithm>
#include <array>
#include <sstream>
#include <vector>

#include "device/checked_math.h"
#include "device/error.h"
#include "op_cost.h"
#include "scalar_ops.h"

namespace spyre {

namespace {

struct Value {
    bool known = false;
    int64_t v = 0;
    bool per_core = false;  // derived from CORE_ID: differs between cores (program_traffic's replication test)
};
using Regs = std::array<Value, kNumRegs>;

// Per-core work of one pass over a block: counts, and the engines' busy cycles (the time bound's).
struct Work {
    int64_t instrs = 0, dma = 0, vec = 0, macs = 0, ring = 0;
    double vec_cycles = 0, pe_cycles = 0, load_work = 0, store_work = 0;
    CoreTraffic traffic;  // filled only by program_traffic's walk (Walker::detail)
    // Of load_work, the shared loads' (kDmaShared): a core that receives a copy moves none of it;
    // and their bytes, which a copy delivers.
    double shared_load_work = 0, shared_load_bytes = 0;
    void add(const Work &o) {
        traffic.add(o.traffic);
        instrs = sat_add(instrs, o.instrs);
        dma = sat_add(dma, o.dma);
        vec = sat_add(vec, o.vec);
        macs = sat_add(macs, o.macs);
        ring = sat_add(ring, o.ring);
        vec_cycles += o.vec_cycles;
        pe_cycles += o.pe_cycles;
        load_work += o.load_work;
        store_work += o.store_work;
        shared_load_work += o.shared_load_work;
        shared_load_bytes += o.shared_load_bytes;
    }
    Work times(int64_t n) const {
        const double k = double(n);
        return {sat_mul(instrs, n), sat_mul(dma, n), sat_mul(vec, n), sat_mul(macs, n), sat_mul(ring, n),
                vec_cycles * k, pe_cycles * k, load_work * k, store_work * k, traffic.times(n), shared_load_work * k,
                shared_load_bytes * k};
    }
    // Field by field: the costlier branch (`hi`) or the cheaper one.
    static Work pick(const Work &a, const Work &b, bool hi) {
        auto f = [hi](auto x, auto y) { return hi ? std::max(x, y) : std::min(x, y); };
        // The traffic detail goes with the branch that moves more device bytes (the costlier one).
        const CoreTraffic &t = (a.dma >= b.dma) == hi ? a.traffic : b.traffic;
        return {f(a.instrs, b.instrs),         f(a.dma, b.dma),           f(a.vec, b.vec),
                f(a.macs, b.macs),             f(a.ring, b.ring),         f(a.vec_cycles, b.vec_cycles),
                f(a.pe_cycles, b.pe_cycles),   f(a.load_work, b.load_work), f(a.store_work, b.store_work),
                t,                             f(a.shared_load_work, b.shared_load_work),
                f(a.shared_load_bytes, b.shared_load_bytes)};
    }
};

// Walks the program once per block (not per iteration). `lower`: what is not known counts at least
// (a loop of unknown count runs no iteration, an IF of unknown condition takes the cheaper branch),
// for a lower bound; otherwise at most, but a loop of unknown count is counted once and
// `counts_known` says so.
class Walker {
public:
    // `detail`: also record each core's traffic per buffer (program_traffic).
    Walker(const DeviceProgram &p, const MachineDesc &m, bool lower = false, bool detail = false)
        : p_(p), m_(m), lower_(lower), detail_(detail), match_(p.code.size(), 0) {
        // Block structure; verify_program has checked that it is balanced.
        std::vector<size_t> stack;
        for (size_t pc = 0; pc < p.code.size(); pc++) {
            Opcode op = p.code[pc].op;
            if (op == Opcode::LOOP || op == Opcode::IF) {
                stack.push_back(pc);
            } else if (op == Opcode::ELSE) {
                match_[stack.back()] = pc;  // IF -> ELSE
                stack.back() = pc;
            } else if (op == Opcode::ENDLOOP || op == Opcode::ENDIF) {
                match_[stack.back()] = pc;  // LOOP/IF/ELSE -> end
                stack.pop_back();
            }
        }
    }

    // One core's pass over the whole program, CORE_ID folded to `core` (-1: unknown).
    Work run(int64_t core) {
        core_ = core;
        Regs regs;
        regs[0] = Value{true, 0};
        return block(0, p_.code.size(), regs);
    }

    bool counts_known = true;
    // When set (one entry per instruction), marks the loads whose device address no core id went
    // into (core_independent_loads).
    std::vector<char> *shared_loads = nullptr;
    // When set, the walk takes every loop's first iteration (counters at 0) and records each shared
    // load's device address there (INT64_MIN: not known), for shared_load_groups.
    std::vector<int64_t> *first_addresses = nullptr;
    // When set (one entry per instruction), the cores that share each shared load's bytes with this
    // core: the detail walk counts this core's part of them.
    const std::vector<int> *group_sizes = nullptr;

private:
    Work block(size_t begin, size_t end, Regs &r) {
        Work w;
        for (size_t pc = begin; pc < end;) {
            const Instr &in = p_.code[pc];
            if (in.op == Opcode::LOOP) {
                pc = loop(pc, r, w);
            } else if (in.op == Opcode::IF) {
                pc = branch(pc, r, w);
            } else {
                w.add(leaf(in, r));
                pc++;
            }
        }
        return w;
    }

    Work leaf(const Instr &in, Regs &r) {
        Work w;
        w.instrs = 1;
        const int64_t sb = m_.stick_bytes;
        switch (op_info(in.op).engine) {
        case Engine::Control:
            if (is_scalar_op(in.op)) scalar(in, r);
            // A value read from LX: unknown here, and it may differ between cores (a gathered row's
            // address is not a replicated read).
            if (in.op == Opcode::LDLX && in.a[0] > 0 && in.a[0] < kNumRegs) r[size_t(in.a[0])] = Value{false, 0, true};
            break;
        case Engine::Vector:
            w.vec = sat_mul(vector_sticks(in, m_), sb);
            w.vec_cycles = vector_cycles(in, m_);
            if (detail_ && (in.op == Opcode::VREDSUM || in.op == Opcode::VREDMAX || in.op == Opcode::VREDMIN))
                w.traffic.reduce_sticks = vector_sticks(in, m_);
            if (detail_ && in.op == Opcode::VTRANSPOSE) w.traffic.transpose_sticks = vector_sticks(in, m_);
            break;
        case Engine::PE: {
            const MatmulDesc &d = p_.mm[size_t(in.a[7])];
            w.macs = sat_mul(sat_mul(d.m, d.n), d.k);
            w.pe_cycles = matmul_cycles(d, m_, DType(in.dtype));
            if (detail_) w.traffic.matmuls[{d.m, d.n, d.k}] = 1;
            break;
        }
        case Engine::DMA: {
            const DmaDesc &d = p_.dma[size_t(in.a[6])];
            w.dma = sat_mul(sat_mul(sat_mul(sat_mul(d.sticks, sb), d.count[0]), d.count[1]), d.count[2]);
            // Channel work without the LX working-set factor, which only ever adds.
            const bool store = in.op == Opcode::DMA_ST;
            (store ? w.store_work : w.load_work) = dma_channel_work(d, w.dma, store, 0, m_);
            if (!store && (in.mode & kDmaShared) && p_.num_cores > 1) {
                w.shared_load_work = w.load_work;
                w.shared_load_bytes = double(w.dma);
            }
            if (detail_) record_dma(in, w, store, r);
            if (first_addresses && !store && (in.mode & kDmaShared)) {
                int64_t &a = (*first_addresses)[size_t(&in - p_.code.data())];
                const Value base = in.a[2] == 0 ? Value{true, 0} : r[size_t(in.a[2])];
                if (a == INT64_MIN && base.known) a = wrap_add(base.v, in.a[3]);
            }
            if (shared_loads && !store && (in.a[2] == 0 || !r[size_t(in.a[2])].per_core))
                (*shared_loads)[size_t(&in - p_.code.data())] = 1;
            break;
        }
        case Engine::Ring:
            if (in.op != Opcode::RING_RECV) w.ring = sat_mul(in.a[4], sb);
            if (detail_ && in.op == Opcode::RING_RECV) w.traffic.ring_recv_bytes = sat_mul(in.a[4], sb);
            break;
        default: break;
        }
        return w;
    }

    // Folds a scalar op when every register it reads is known; CORE_ID only when the walk is a
    // core's. A result is per-core when CORE_ID or a per-core register went into it.
    void scalar(const Instr &in, Regs &r) {
        const OpInfo &info = op_info(in.op);
        int64_t vals[kNumRegs] = {};
        bool known = in.op != Opcode::CORE_ID || core_ >= 0;
        bool per_core = in.op == Opcode::CORE_ID;
        for (int s = 0; s < kNumOperands; s++) {
            if (info.operands[s] != Operand::RegSrc) continue;
            int reg = in.a[s];
            if (reg == 0) continue;
            known = known && r[reg].known;
            per_core = per_core || r[reg].per_core;
            vals[reg] = r[reg].v;
        }
        Value out;
        out.known = known && eval_scalar(in, vals, std::max<int64_t>(core_, 0), p_.num_cores, &out.v);
        out.per_core = per_core;
        r[in.a[0]] = out;
    }

    // A DMA's bytes against its buffer; a load whose device address no core id went into reads
    // the same bytes on every core that issues it (replicated).
    void record_dma(const Instr &in, Work &w, bool store, const Regs &r) {
        const size_t buf = size_t(in.a[1]);
        CoreTraffic &t = w.traffic;
        t.load_bytes.assign(p_.buffers.size(), 0);
        t.store_bytes.assign(p_.buffers.size(), 0);
        t.loads.assign(p_.buffers.size(), 0);
        t.replicated_load_bytes.assign(p_.buffers.size(), 0);
        t.shared_load_bytes.assign(p_.buffers.size(), 0);
        t.transfers[w.dma] = 1;
        if (store) {
            t.store_bytes[buf] = w.dma;
        } else {
            t.load_bytes[buf] = w.dma;
            t.loads[buf] = 1;
            if (in.a[2] == 0 || !r[in.a[2]].per_core)
                ((in.mode & kDmaShared) ? t.shared_load_bytes : t.replicated_load_bytes)[buf] = w.dma;
            else if ((in.mode & kDmaShared) && group_sizes)  // this core's part of a group's bytes
                t.load_bytes[buf] = w.dma / std::max(1, (*group_sizes)[size_t(&in - p_.code.data())]);
        }
    }

    // LOOP at pc: 1 issue, then per iteration the body and its ENDLOOP.
    size_t loop(size_t pc, Regs &r, Work &w) {
        const Instr &in = p_.code[pc];
        const size_t end = match_[pc];
        Value count{in.a[1] == 0 || r[in.a[1]].known, 0};
        if (count.known) count.v = wrap_add(in.a[1] == 0 ? 0 : r[in.a[1]].v, in.a[2]);
        // A register the body writes holds a different value on later iterations: unknown (but in
        // a walk of first iterations, where the counter starts at 0).
        if (!first_addresses) forget_written(pc, end, r);
        r[in.a[0]] = first_addresses ? Value{true, 0} : Value{};
        Work body = block(pc + 1, end, r);
        body.instrs = sat_add(body.instrs, 1);  // ENDLOOP
        forget_written(pc, end, r);
        int64_t n = lower_ ? 0 : 1;
        if (!count.known) counts_known = false;
        else n = std::max<int64_t>(count.v, 0);
        Work total = body.times(n);
        total.instrs = sat_add(total.instrs, 1);  // LOOP
        w.add(total);
        return end + 1;
    }

    // IF at pc (optional ELSE): the taken branch when the condition is known, else the costlier.
    size_t branch(size_t pc, Regs &r, Work &w) {
        const Instr &in = p_.code[pc];
        size_t mid = match_[pc];  // ELSE or ENDIF
        bool has_else = p_.code[mid].op == Opcode::ELSE;
        size_t endif = has_else ? match_[mid] : mid;
        Regs rt = r, re = r;
        Work then_w = block(pc + 1, mid, rt);
        then_w.instrs = sat_add(then_w.instrs, 1);  // ELSE, or ENDIF
        Work else_w;
        if (has_else) {
            else_w = block(mid + 1, endif, re);
            else_w.instrs = sat_add(else_w.instrs, 1);  // ENDIF
        }
        Value cond = in.a[0] == 0 ? Value{true, 0} : r[in.a[0]];
        Work taken;
        if (cond.known) {
            taken = cond.v ? then_w : else_w;
            r = cond.v ? rt : re;
        } else {
            taken = Work::pick(then_w, else_w, !lower_);
            for (int i = 0; i < kNumRegs; i++)
                r[i] = rt[i].known && re[i].known && rt[i].v == re[i].v
                           ? rt[i]
                           : Value{false, 0, rt[i].per_core || re[i].per_core};
        }
        taken.instrs = sat_add(taken.instrs, 1);  // IF
        w.add(taken);
        return endif + 1;
    }

    void forget_written(size_t loop_pc, size_t end, Regs &r) {
        for (size_t pc = loop_pc; pc < end; pc++) {
            const Instr &in = p_.code[pc];
            const OpInfo &info = op_info(in.op);
            for (int s = 0; s < kNumOperands; s++)
                if (info.operands[s] == Operand::RegDst) r[in.a[s]] = Value{false, 0, r[in.a[s]].per_core};
        }
    }

    const DeviceProgram &p_;
    const MachineDesc &m_;
    int64_t core_ = -1;
    const bool lower_;
    const bool detail_;
    std::vector<size_t> match_;
};

}  // namespace

namespace {
void add_into(std::vector<int64_t> &a, const std::vector<int64_t> &b) {
    if (b.empty()) return;
    if (a.empty()) a.assign(b.size(), 0);
    for (size_t i = 0; i < b.size(); i++) a[i] = sat_add(a[i], b[i]);
}
std::vector<int64_t> scaled(const std::vector<int64_t> &a, int64_t n) {
    std::vector<int64_t> out(a.size());
    for (size_t i = 0; i < a.size(); i++) out[i] = sat_mul(a[i], n);
    return out;
}
}  // namespace

void CoreTraffic::add(const CoreTraffic &o) {
    add_into(load_bytes, o.load_bytes);
    add_into(store_bytes, o.store_bytes);
    add_into(loads, o.loads);
    add_into(replicated_load_bytes, o.replicated_load_bytes);
    add_into(shared_load_bytes, o.shared_load_bytes);
    ring_recv_bytes = sat_add(ring_recv_bytes, o.ring_recv_bytes);
    reduce_sticks = sat_add(reduce_sticks, o.reduce_sticks);
    transpose_sticks = sat_add(transpose_sticks, o.transpose_sticks);
    for (const auto &[shape, count] : o.matmuls) matmuls[shape] = sat_add(matmuls[shape], count);
    for (const auto &[bytes, count] : o.transfers) transfers[bytes] = sat_add(transfers[bytes], count);
}

CoreTraffic CoreTraffic::times(int64_t n) const {
    CoreTraffic t;
    t.load_bytes = scaled(load_bytes, n);
    t.store_bytes = scaled(store_bytes, n);
    t.loads = scaled(loads, n);
    t.replicated_load_bytes = scaled(replicated_load_bytes, n);
    t.shared_load_bytes = scaled(shared_load_bytes, n);
    t.ring_recv_bytes = sat_mul(ring_recv_bytes, n);
    t.reduce_sticks = sat_mul(reduce_sticks, n);
    t.transpose_sticks = sat_mul(transpose_sticks, n);
    for (const auto &[shape, count] : matmuls) t.matmuls[shape] = sat_mul(count, n);
    for (const auto &[bytes, count] : transfers) t.transfers[bytes] = sat_mul(count, n);
    return t;
}

int64_t CoreTraffic::total(const std::vector<int64_t> &per_buffer) {
    int64_t s = 0;
    for (int64_t v : per_buffer) s = sat_add(s, v);
    return s;
}

std::vector<std::vector<int>> shared_load_groups(const DeviceProgram &program, const MachineDesc &machine) {
    const size_t n = program.code.size();
    std::vector<std::vector<int64_t>> first(size_t(program.num_cores), std::vector<int64_t>(n, INT64_MIN));
    Walker walker(program, machine);
    for (int64_t core = 0; core < program.num_cores; core++) {
        walker.first_addresses = &first[size_t(core)];
        walker.run(core);
    }
    std::vector<std::vector<int>> groups(size_t(program.num_cores), std::vector<int>(n, 1));
    for (size_t pc = 0; pc < n; pc++) {
        std::map<int64_t, int> count;
        for (const auto &f : first)
            if (f[pc] != INT64_MIN) count[f[pc]]++;
        for (size_t c = 0; c < first.size(); c++)
            if (first[c][pc] != INT64_MIN) groups[c][pc] = count[first[c][pc]];
    }
    return groups;
}

std::vector<CoreTraffic> program_traffic(const DeviceProgram &program, const MachineDesc &machine) {
    Walker walker(program, machine, /*lower=*/false, /*detail=*/true);
    const std::vector<std::vector<int>> groups = shared_load_groups(program, machine);
    std::vector<CoreTraffic> cores;
    for (int64_t core = 0; core < program.num_cores; core++) {
        walker.group_sizes = &groups[size_t(core)];
        CoreTraffic t = walker.run(core).traffic;
        for (auto *v : {&t.load_bytes, &t.store_bytes, &t.loads, &t.replicated_load_bytes, &t.shared_load_bytes})
            v->resize(program.buffers.size(), 0);
        cores.push_back(std::move(t));
    }
    return cores;
}

std::vector<char> core_independent_loads(const DeviceProgram &program, const MachineDesc &machine) {
    std::vector<char> shared(program.code.size(), 0);
    if (program.num_cores < 2) return shared;
    Walker walker(program, machine);
    walker.shared_loads = &shared;
    walker.run(-1);
    return shared;
}

int64_t ProgramWork::data_work() const { return sat_add(sat_add(sat_add(dma_bytes, vector_bytes), macs), ring_bytes); }

std::string ProgramWork::to_string() const {
    std::ostringstream os;
    os << instructions << " instructions, " << dma_bytes << " DMA bytes, " << vector_bytes << " vector bytes, " << macs
       << " MACs, " << ring_bytes << " ring bytes";
    if (!counts_known) os << " (some loop counts known only at run time)";
    return os.str();
}

ProgramWork program_work(const DeviceProgram &program, const MachineDesc &machine) {
    Walker walker(program, machine);
    Work core = walker.run(-1).times(program.num_cores);
    ProgramWork w;
    w.instructions = core.instrs;
    w.dma_bytes = core.dma;
    w.vector_bytes = core.vec;
    w.macs = core.macs;
    w.ring_bytes = core.ring;
    w.counts_known = walker.counts_known;
    return w;
}

double time_lower_bound_us(const DeviceProgram &program, const MachineDesc &machine) {
    const double launch = machine.ns_to_cycles(machine.kernel_launch_ns);
    const double dma_cap = machine.dma_core_bytes_per_ns / machine.clock_ghz;
    const double dram_peak = machine.dram_bytes_per_ns / machine.clock_ghz;
    double busiest = 0, dram_work = 0;
    Walker walker(program, machine, true);
    // A shared load keeps a core's queue busy at least for its bytes at the faster of the ring
    // (a copy) and the core's own DMA (leading it, which also pays the runs).
    const double copy_rate = std::max(dma_cap, machine.ring_bytes_per_cycle);
    for (int64_t core = 0; core < program.num_cores; core++) {
        const Work w = walker.run(core);
        // Each engine runs its operations one at a time: vector unit, PE array, and each DMA
        // direction at the core's cap (its first transfer waits for the setup too).
        double dma_setup = w.load_work + w.store_work > 0 ? machine.dma_setup_cycles : 0;
        const double own_loads = w.load_work - w.shared_load_work;
        busiest = std::max({busiest, w.vec_cycles, w.pe_cycles,
                            dma_setup + own_loads / dma_cap + w.shared_load_bytes / copy_rate,
                            dma_setup + w.store_work / dma_cap});
        // A shared load crosses device memory once for the cores that share it, at most all of them.
        dram_work += own_loads + w.shared_load_work / double(program.num_cores) + w.store_work;
    }
    // All cores' transfers share device memory, which moves at most its peak.
    return machine.cycles_to_us(launch + std::max(busiest, dram_work / dram_peak));
}

void check_work_limits(const DeviceProgram &program, const ProgramWork &work, int64_t max_instructions,
                       int64_t max_data_work) {
    if (max_instructions > 0 && work.instructions > max_instructions)
        throw_error("kernel '", program.kernel_name, "' issues ", work.instructions,
                    " instructions over its cores, above the limit of ", max_instructions,
                    " (SimOptions::max_instructions): ", work.to_string());
    if (max_data_work > 0 && work.data_work() > max_data_work)
        throw_error("kernel '", program.kernel_name, "' asks for ", work.data_work(),
                    " units of functional work (DMA + vector bytes + MACs + ring bytes), above the limit of ",
                    max_data_work, " (SimOptions::max_work; a timing-only run does no data work): ",
                    work.to_string());
}

}  // namespace spyre
