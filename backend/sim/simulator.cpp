#include "simulator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <queue>
#include <sstream>

#include "device/checked_math.h"
#include "device/error.h"
#include "device/image_pool.h"
#include "device/program_builder.h"
#include "device/program_verify.h"
#include "device/queues.h"
#include "dram_model.h"
#include "lx_access.h"
#include "op_cost.h"
#include "program_work.h"
#include "scalar_ops.h"
#include "trace_writer.h"
#include "vector_exec.h"
#include "lx_arena.h"

namespace spyre {

namespace {

struct Counters {
    int64_t instrs = 0, dram_r = 0, dram_w = 0, ring = 0, vsticks = 0, macs = 0;
    double work_r = 0, work_w = 0;  // channel time the transfers cost, in bytes at the peak (>= bytes)
    std::array<double, kNumAsyncEngines> busy{};
    std::array<double, kNumWaitCauses> waited{};

    Counters operator-(const Counters &o) const {
        Counters d = *this;
        d.instrs -= o.instrs, d.dram_r -= o.dram_r, d.dram_w -= o.dram_w, d.ring -= o.ring;
        d.vsticks -= o.vsticks, d.macs -= o.macs, d.work_r -= o.work_r, d.work_w -= o.work_w;
        for (int e = 0; e < kNumAsyncEngines; e++) d.busy[e] -= o.busy[e];
        for (int w = 0; w < kNumWaitCauses; w++) d.waited[w] -= o.waited[w];
        return d;
    }
    void add_scaled(const Counters &d, int64_t k) {
        instrs += k * d.instrs, dram_r += k * d.dram_r, dram_w += k * d.dram_w, ring += k * d.ring;
        vsticks += k * d.vsticks, macs += k * d.macs;
        work_r += double(k) * d.work_r, work_w += double(k) * d.work_w;
        for (int e = 0; e < kNumAsyncEngines; e++) busy[e] += double(k) * d.busy[e];
        for (int w = 0; w < kNumWaitCauses; w++) waited[w] += double(k) * d.waited[w];
    }
};

// A DMA whose end depends on the shared device memory.
struct DmaOp {
    size_t pc;
    int tag;
    double issue;
    double bytes;          // channel work: the bytes plus the run overheads, scaled for the working set
    double cap = 0;        // the most the channel gives it (bytes per cycle)
    double start = 0;
    int flow = -1;         // id in the DRAM model while moving
    double remaining = 0;  // bytes left while suspended by a loop summary
    bool suspended = false;
    // A shared load (kDmaShared): its entry in Simulator::shared_; a receiving core's op moves no
    // channel bytes and takes `deliver` cycles once the leading core's transfer has arrived.
    int shared = -1;
    bool receive = false;
    double deliver = 0;
};
// A DMA op that is moving without a channel flow (a shared load's receiving end).
constexpr int kReceiving = -2;

struct DmaQueue {
    std::deque<DmaOp> ops;  // front is moving or waiting to start
};

// An async op not yet covered by a WAIT: what it touches, for race detection.
struct Unwaited {
    size_t pc;
    int tag;
    Queue queue;  // ops on one queue are ordered by the hardware, on different ones only by WAIT
    LxAccess lx;
    int buf = -1;
    int64_t lo = 0, hi = 0;
    bool dram_write = false;
};

struct Snapshot {
    std::array<int64_t, kNumRegs> regs;
    double t;
    Counters ctr;
    // Work queued ahead of the control unit at the end of the iteration. A summary extrapolates
    // control time, which is only the loop's rate once this backlog stops growing.
    double vec_ahead = 0, pe_ahead = 0;
    std::array<size_t, 2> dma_queued{};
};

struct LoopFrame {
    size_t loop_pc = 0, end_pc = 0;
    int iv = 0;
    int64_t count = 0;
    int64_t iter = 0;
    bool summarise = false;  // eligible (timing-only, no ring or barrier inside)
    std::array<Snapshot, 3> snaps;
};

enum class Block { None, Wait, QueueFull, Barrier, Done };

struct Core {
    int id = 0;
    size_t pc = 0;
    std::array<int64_t, kNumRegs> regs{};
    double t = 0;
    std::vector<LoopFrame> loops;
    double vec_free = 0, pe_free = 0, ring_free = 0;
    double ring_busy_end = 0;  // end of the ring work counted as busy so far
    std::array<double, kNumTags> tag_end{};
    std::array<int, kNumTags> tag_pending{};
    std::array<int, kNumTags> tag_cause{};  // the WaitCause of the work last issued under each tag
    DmaQueue dma[2];
    int dma_active = 0;
    double dma_busy_since = 0;
    Block block = Block::None;
    uint32_t wait_mask = 0;
    int wait_queue = -1;
    double block_since = 0;
    size_t block_pc = 0;
    std::vector<Unwaited> unwaited;
    Counters ctr;
    int64_t lx_peak = 0;
    LxArena lx;  // numeric mode only
    int gen = 0;
    bool queued = false;  // has an entry in the ready queue
    std::vector<int> reservations;
    int64_t reduce_seq = 0;
};

// One side of a ring transfer waiting for its partner.
struct RingEnd {
    int core = -1;  // -1: a collective's part not yet issued
    size_t pc = 0;
    int tag = 0;
    double issue = 0;
    int64_t bytes = 0;
    int64_t lx_addr = 0;
    std::vector<uint8_t> data;  // sender's snapshot (functional mode)
};

struct Collective {
    int arrived = 0;
    std::vector<RingEnd> parts;
};

enum class EventKind { DmaStart, RingDone, BarrierRelease, Resume, ReservationEnd, DmaDelivered };

struct Event {
    double t;
    int64_t seq;
    EventKind kind;
    int core;
    int arg;
    int gen;
    bool operator>(const Event &o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct RingCompletion {
    std::vector<std::pair<int, int>> core_tag;  // ops completing together
    std::vector<size_t> pcs;
    double start;
};

std::string describe(const DeviceProgram &p, size_t pc) {
    std::ostringstream os;
    os << "instruction " << pc << " (" << op_info(p.code[pc].op).name << ")";
    return os.str();
}

class Simulator {
public:
    Simulator(const DeviceProgram &p, const MachineDesc &m, const SimOptions &o)
        : prog_(p), m_(m), opt_(o), numeric_(!o.timing_only),
          dram_(m.dram_bytes_per_ns / m.clock_ghz, m.dram_turnaround_ns_per_byte * m.clock_ghz),
          trace_(!o.trace_path.empty(), o.max_trace_events) {}

    SimResult run(std::vector<std::vector<uint8_t>> images);

private:
    void prepare(std::vector<std::vector<uint8_t>> images);
    bool shared_step(const Core &c) const;
    void run_core(Core &c, double horizon, double stop_at);
    bool step(Core &c);  // returns true if the instruction was scalar/control only
    void issue_vector(Core &c, const Instr &in);
    void issue_matmul(Core &c, const Instr &in);
    void issue_dma(Core &c, const Instr &in);
    void issue_ring(Core &c, const Instr &in);
    void issue_reduce(Core &c, const Instr &in);
    void do_wait(Core &c, uint32_t mask);
    void do_barrier(Core &c);
    void end_loop_iteration(Core &c);
    void summarise(Core &c, LoopFrame &f, int64_t k);

    void check_race(Core &c, Queue queue, const LxAccess &acc, int buf, int64_t lo, int64_t hi, bool dram_write,
                    int tag);
    void track_lx(Core &c, const LxAccess &acc);
    void schedule(double t, EventKind kind, int core, int arg, int gen);
    void start_dma(Core &c, int q, double now);
    void complete_dma(int core, int q, double now);
    void complete_tag(Core &c, int tag, double end);
    void maybe_unblock(Core &c, double now);
    // Ring transfers overlap (the hop latency of one hides under the next): count busy time once.
    static void add_ring_busy(Core &c, double start, double end) {
        double from = std::max(start, c.ring_busy_end);
        if (end > from) c.ctr.busy[kEngRing] += end - from;
        c.ring_busy_end = std::max(c.ring_busy_end, end);
    }
    void make_ready(Core &c) {
        if (c.queued) return;
        c.queued = true;
        ready_.push({c.t, c.id});
    }
    void handle_event(const Event &e);
    [[noreturn]] void deadlock();
    // The LX ranges of the instruction at c.pc; a range fault names the core as well.
    LxAccess access(const Core &c, const Instr &in) const {
        try {
            return lx_access(prog_, in, c.regs.data(), m_, c.pc);
        } catch (const Error &e) {
            throw e.reworded("core " + std::to_string(c.id) + ", " + e.what());
        }
    }
    // Functional work budget (SimOptions::max_work).
    void charge(const Core &c, int64_t units) {
        work_ = sat_add(work_, units);
        if (work_ > opt_.max_work)
            fault(c, "work budget of " + std::to_string(opt_.max_work) +
                         " (DMA bytes + vector bytes + MACs + ring bytes) exceeded; use timing-only mode for large runs, or raise "
                         "SimOptions::max_work");
    }
    [[noreturn]] void fault(const Core &c, const std::string &what) {
        throw_error("core ", c.id, ", ", describe(prog_, c.pc), ": ", what);
    }

    const DeviceProgram &prog_;
    const MachineDesc &m_;
    SimOptions opt_;
    bool numeric_;
    DramModel dram_;
    TraceWriter trace_;
    std::vector<Core> cores_;
    std::vector<std::vector<uint8_t>> mem_;  // device images
    std::vector<int64_t> buf_bytes_;
    std::vector<size_t> match_;   // LOOP->ENDLOOP, IF->ELSE/ENDIF, ELSE->ENDIF
    std::vector<char> no_summary_;  // LOOP pc: not summarised (ring or barrier ops, or a register-counted loop inside)
    // Replicated operand reads: DMA_LD pcs whose address is the same on every core, and the first
    // core that issued each (the others read bytes another core has read).
    std::vector<char> shared_load_;
    std::vector<int> first_loader_;
    // Shared loads (kDmaShared) by (pc, device address): the first core to issue one leads (its
    // transfer crosses the channel); the others that issue it for the same bytes receive a copy.
    struct SharedLoad {
        double end = -1;                 // when the leader's transfer arrived (-1: not yet)
        std::vector<char> served;        // cores that have this copy
        int served_count = 0;
        std::vector<std::pair<int, int>> waiters;  // receiving (core, queue) ops started before `end`
    };
    std::vector<SharedLoad> shared_;
    std::map<std::pair<size_t, int64_t>, int> shared_at_;
    void finish_shared(const DmaOp &op, double now);
    void mark_changing_paths();
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    int64_t event_seq_ = 0;
    using ReadyKey = std::pair<double, int>;
    std::priority_queue<ReadyKey, std::vector<ReadyKey>, std::greater<ReadyKey>> ready_;
    std::vector<std::pair<int, int>> flow_owner_;  // flow id -> (core, dma queue)
    std::vector<std::deque<RingEnd>> sends_, recvs_;  // per channel src * n + dst
    std::map<std::pair<int, int64_t>, Collective> collectives_;  // (group's first core, sequence)
    // Completions in flight, by slot; finished slots are reused (a model-size kernel makes millions
    // of transfers, and a growing table would cost more than the transfers' own bookkeeping).
    std::vector<RingCompletion> ring_done_;
    std::vector<int> ring_free_;
    int ring_slot() {
        if (ring_free_.empty()) {
            ring_done_.emplace_back();
            return int(ring_done_.size()) - 1;
        }
        const int i = ring_free_.back();
        ring_free_.pop_back();
        return i;
    }
    int barrier_arrived_ = 0;
    double barrier_max_ = 0;
    int64_t summarised_ = 0;
    int64_t executed_ = 0;
    int64_t work_ = 0;
    double dma_cap_, replicated_cap_, setup_;
};

void Simulator::prepare(std::vector<std::vector<uint8_t>> images) {
    verify_for_machine(prog_, m_);
    // A small file must not hold the simulator for long: refuse what it asks for before running.
    if (numeric_) check_work_limits(prog_, program_work(prog_, m_), opt_.max_instructions, opt_.max_work);
    size_t nb = prog_.buffers.size();
    buf_bytes_.resize(nb);
    for (size_t i = 0; i < nb; i++) buf_bytes_[i] = prog_.buffer_bytes(i, m_.stick_bytes);
    if (numeric_) {
        if (images.size() != nb)
            throw_error("kernel ", prog_.kernel_name, ": ", images.size(), " buffer images given, the program declares ",
                        nb);
        mem_.resize(nb);
        for (size_t i = 0; i < nb; i++) {
            const BufferDecl &b = prog_.buffers[i];
            if (images[i].empty() && b.kind == BufferKind::InOut)
                throw_error("buffer ", i, " '", b.name, "' (inout): no initial image given; an in-out buffer's "
                            "initial contents are an input of the run");
            if (images[i].empty() && b.kind != BufferKind::Input) {
                mem_[i] = take_image(size_t(buf_bytes_[i]));
            } else if (int64_t(images[i].size()) != buf_bytes_[i]) {
                throw_error("buffer ", i, " '", b.name, "' (", buffer_kind_name(b.kind), "): image has ",
                            images[i].size(), " bytes, its device layout needs ", buf_bytes_[i]);
            } else {
                mem_[i] = std::move(images[i]);
            }
        }
    }
    // Block structure (verified balanced by verify_program).
    size_t n = prog_.code.size();
    match_.assign(n, 0);
    no_summary_.assign(n, 0);
    std::vector<size_t> stack;
    for (size_t pc = 0; pc < n; pc++) {
        Opcode op = prog_.code[pc].op;
        // A loop whose count is a register's (a triangular loop: the key tiles a causal query
        // tile sees) does work that changes from one iteration of the loops around it to the next,
        // while their registers still move affinely: those loops are not summarised.
        if (op == Opcode::LOOP && prog_.code[pc].a[1] != 0)
            for (size_t s : stack)
                if (prog_.code[s].op == Opcode::LOOP) no_summary_[s] = 1;
        if (op == Opcode::LOOP || op == Opcode::IF) {
            stack.push_back(pc);
        } else if (op == Opcode::ELSE) {
            match_[stack.back()] = pc;
            stack.back() = pc;
        } else if (op == Opcode::ENDLOOP || op == Opcode::ENDIF) {
            match_[stack.back()] = pc;
            match_[pc] = stack.back();
            stack.pop_back();
        } else if (op == Opcode::RING_SEND || op == Opcode::RING_RECV || op == Opcode::RING_REDUCE ||
                   op == Opcode::BARRIER || (op == Opcode::DMA_LD && (prog_.code[pc].mode & kDmaShared))) {
            // Cores meet there (a shared load's copies pair cores' transfers of the same bytes): a
            // core summarised past them would leave the others to load alone.
            for (size_t s : stack)
                if (prog_.code[s].op == Opcode::LOOP) no_summary_[s] = 1;
        }
    }
    // ENDLOOP must point at its LOOP even if an IF/ELSE chain rewrote the stack entry: recompute.
    for (size_t pc = 0; pc < n; pc++)
        if (prog_.code[pc].op == Opcode::LOOP) match_[match_[pc]] = pc;
    mark_changing_paths();

    int nc = prog_.num_cores;
    cores_.resize(size_t(nc));
    for (int i = 0; i < nc; i++) {
        cores_[i].id = i;
        cores_[i].t = m_.ns_to_cycles(m_.kernel_launch_ns);  // the launch, before any core starts
        if (numeric_) cores_[i].lx = LxArena::acquire(size_t(m_.lx_bytes));
        make_ready(cores_[i]);
    }
    sends_.resize(size_t(nc) * nc);
    recvs_.resize(size_t(nc) * nc);
    dma_cap_ = m_.dma_core_bytes_per_ns / m_.clock_ghz;
    replicated_cap_ = std::min(dma_cap_, m_.dma_replicated_read_bytes_per_ns / m_.clock_ghz);
    shared_load_ = core_independent_loads(prog_, m_);
    first_loader_.assign(n, -1);
    setup_ = m_.dma_setup_cycles;
}

void Simulator::schedule(double t, EventKind kind, int core, int arg, int gen) {
    events_.push(Event{t, event_seq_++, kind, core, arg, gen});
}

void Simulator::track_lx(Core &c, const LxAccess &acc) {
    for (int i = 0; i < acc.num_reads; i++) c.lx_peak = std::max(c.lx_peak, acc.reads[i].end);
    for (int i = 0; i < acc.num_writes; i++) c.lx_peak = std::max(c.lx_peak, acc.writes[i].end);
}

void Simulator::check_race(Core &c, Queue queue, const LxAccess &acc, int buf, int64_t lo, int64_t hi,
                           bool dram_write, int tag) {
    if (!opt_.check_races) return;
    for (const Unwaited &u : c.unwaited) {
        if (u.queue == queue) continue;
        const char *what = nullptr;
        LxRange r{};
        for (int w = 0; w < u.lx.num_writes && !what; w++) {
            for (int i = 0; i < acc.num_reads && !what; i++)
                if (acc.reads[i].overlaps(u.lx.writes[w])) what = "reads", r = acc.reads[i];
            for (int i = 0; i < acc.num_writes && !what; i++)
                if (acc.writes[i].overlaps(u.lx.writes[w])) what = "writes", r = acc.writes[i];
        }
        for (int w = 0; w < acc.num_writes && !what; w++)
            for (int i = 0; i < u.lx.num_reads && !what; i++)
                if (acc.writes[w].overlaps(u.lx.reads[i])) what = "overwrites", r = acc.writes[w];
        if (what) {
            fault(c, "race: " + std::string(what) + " LX [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                         ") while " + describe(prog_, u.pc) + " on tag " + std::to_string(u.tag) +
                         " may still be using it; WAIT on that tag first");
        }
        if (buf >= 0 && u.buf == buf && lo < u.hi && u.lo < hi && (dram_write || u.dram_write)) {
            fault(c, "race: device-memory range [" + std::to_string(lo) + ", " + std::to_string(hi) + ") of buffer '" +
                         prog_.buffers[buf].name + "' overlaps " + describe(prog_, u.pc) + " on tag " +
                         std::to_string(u.tag) + " still in flight; WAIT on that tag first");
        }
    }
    if (c.unwaited.size() >= 4096)
        fault(c, "more than 4096 asynchronous operations issued without a WAIT covering them");
    Unwaited u{c.pc, tag, queue, acc, buf, lo, hi, dram_write};
    c.unwaited.push_back(u);
}

void Simulator::issue_vector(Core &c, const Instr &in) {
    LxAccess acc = access(c, in);
    track_lx(c, acc);
    check_race(c, queue_of(in.op), acc, -1, 0, 0, false, in.a[0]);
    if (numeric_) {
        charge(c, sat_mul(vector_sticks(in, m_), m_.stick_bytes));
        exec_vector(in, c.regs.data(), c.lx.data(), m_);
    }
    double dur = vector_cycles(in, m_);
    double start = std::max(c.t, c.vec_free);
    c.vec_free = start + dur;
    c.tag_end[in.a[0]] = std::max(c.tag_end[in.a[0]], c.vec_free);
    c.tag_cause[in.a[0]] = kWaitVector;
    c.ctr.busy[kEngVector] += dur;
    c.ctr.vsticks += vector_sticks(in, m_);
    trace_.span(c.id, kTrackVector, op_info(in.op).name, start, c.vec_free, int64_t(c.pc));
}

void Simulator::issue_matmul(Core &c, const Instr &in) {
    LxAccess acc = access(c, in);
    track_lx(c, acc);
    check_race(c, queue_of(in.op), acc, -1, 0, 0, false, in.a[0]);
    const MatmulDesc &d = prog_.mm[in.a[7]];
    if (numeric_) {
        charge(c, sat_mul(sat_mul(d.m, d.n), d.k));
        exec_matmul(in, d, c.regs.data(), c.lx.data());
    }
    double dur = matmul_cycles(d, m_, DType(in.dtype));
    double start = std::max(c.t, c.pe_free);
    c.pe_free = start + dur;
    c.tag_end[in.a[0]] = std::max(c.tag_end[in.a[0]], c.pe_free);
    c.tag_cause[in.a[0]] = kWaitPE;
    c.ctr.busy[kEngPE] += dur;
    c.ctr.macs += int64_t(d.m) * d.n * d.k;
    trace_.span(c.id, kTrackPE, "MATMUL", start, c.pe_free, int64_t(c.pc));
}

void Simulator::issue_dma(Core &c, const Instr &in) {
    bool store = in.op == Opcode::DMA_ST;
    int q = store ? 1 : 0;
    if (int64_t(c.dma[q].ops.size()) >= m_.dma_queue_depth) {
        c.block = Block::QueueFull;
        c.wait_queue = q;
        c.block_since = c.t;
        c.block_pc = c.pc;
        return;
    }
    LxAccess acc = access(c, in);
    track_lx(c, acc);
    const DmaDesc &d = prog_.dma[in.a[6]];
    int buf = in.a[1];
    int64_t sb = m_.stick_bytes;
    // Saturating: a register or stride from the file that overflows must fail the range check below,
    // not wrap into a range that passes it.
    int64_t base = sat_add(c.regs[in.a[2]], in.a[3]);
    if (base % sb != 0) fault(c, "device-memory address " + std::to_string(base) + " is not stick-aligned");
    int64_t lo = base, hi = sat_add(base, sat_mul(d.sticks, sb));
    for (int k = 0; k < 3; k++) {
        int64_t span = sat_mul(int64_t(d.count[k]) - 1, d.dram_stride[k]);
        if (span < 0) lo = sat_add(lo, span);
        else hi = sat_add(hi, span);
    }
    if (lo < 0 || hi > buf_bytes_[buf])
        fault(c, "device-memory range [" + std::to_string(lo) + ", " + std::to_string(hi) + ") is outside buffer '" +
                     prog_.buffers[buf].name + "' (" + std::to_string(buf_bytes_[buf]) + " bytes)");
    check_race(c, queue_of(in.op), acc, buf, lo, hi, store, in.a[0]);

    int64_t run = d.sticks * sb;
    int64_t total = run * d.count[0] * d.count[1] * d.count[2];
    if (numeric_) {
        charge(c, total);
        int64_t lx_base = wrap_add(c.regs[in.a[4]], in.a[5]);
        uint8_t *dev = mem_[buf].data();
        for (int i2 = 0; i2 < d.count[2]; i2++)
            for (int i1 = 0; i1 < d.count[1]; i1++)
                for (int i0 = 0; i0 < d.count[0]; i0++) {
                    int64_t doff = base + i0 * d.dram_stride[0] + i1 * d.dram_stride[1] + i2 * d.dram_stride[2];
                    int64_t loff = lx_base + int64_t(i0) * d.lx_stride[0] + int64_t(i1) * d.lx_stride[1] +
                                   int64_t(i2) * d.lx_stride[2];
                    if (store) std::memcpy(dev + doff, c.lx.data() + loff, size_t(run));
                    else std::memcpy(c.lx.data() + loff, dev + doff, size_t(run));
                }
    }
    int tag = in.a[0];
    c.tag_pending[tag]++;
    c.tag_cause[tag] = store ? kWaitDmaStore : kWaitDmaLoad;
    // A shared load of bytes another core leads and this one has not received yet: a copy, which
    // moves nothing over the channel and arrives over the ring's bandwidth once the leader's has.
    if (!store && (in.mode & kDmaShared) && prog_.num_cores > 1) {
        const auto key = std::make_pair(c.pc, base);
        auto it = shared_at_.find(key);
        if (it != shared_at_.end() && !shared_[size_t(it->second)].served[size_t(c.id)]) {
            SharedLoad &s = shared_[size_t(it->second)];
            s.served[size_t(c.id)] = 1;
            DmaOp op{c.pc, tag, c.t, 0, 0};
            op.shared = it->second;
            op.receive = true;
            op.deliver = double(total) / m_.ring_bytes_per_cycle;
            if (++s.served_count == prog_.num_cores) shared_at_.erase(it);
            c.dma[q].ops.push_back(op);
            if (c.dma[q].ops.size() == 1) schedule(c.t + setup_, EventKind::DmaStart, c.id, q, c.gen);
            return;
        }
        SharedLoad s;
        s.served.assign(size_t(prog_.num_cores), 0);
        s.served[size_t(c.id)] = 1;
        s.served_count = 1;
        shared_.push_back(std::move(s));
        shared_at_[key] = int(shared_.size()) - 1;
    }
    (store ? c.ctr.dram_w : c.ctr.dram_r) += total;
    double work = dma_channel_work(d, total, store, c.lx_peak, m_);
    (store ? c.ctr.work_w : c.ctr.work_r) += work;
    // A load of bytes that another core has already loaded at this instruction (the address is
    // the same on every core) is a replicated operand read: IBM measured such reads at a per-core
    // rate far below a fair share of the channel (docs/device_model.md).
    double cap = dma_cap_;
    if (!store && shared_load_[c.pc] && !(in.mode & kDmaShared)) {
        int &first = first_loader_[c.pc];
        if (first < 0) first = c.id;
        else if (first != c.id) cap = replicated_cap_;
    }
    DmaOp op{c.pc, tag, c.t, work, cap};
    if (!store && (in.mode & kDmaShared) && prog_.num_cores > 1) op.shared = int(shared_.size()) - 1;
    c.dma[q].ops.push_back(op);
    if (c.dma[q].ops.size() == 1) schedule(c.t + setup_, EventKind::DmaStart, c.id, q, c.gen);
}

void Simulator::start_dma(Core &c, int q, double now) {
    DmaOp &op = c.dma[q].ops.front();
    if (op.receive) {
        op.start = now;
        op.flow = kReceiving;
        if (c.dma_active++ == 0) c.dma_busy_since = now;
        const SharedLoad &s = shared_[size_t(op.shared)];
        if (s.end >= 0) schedule(now + op.deliver, EventKind::DmaDelivered, c.id, q, 0);
        else shared_[size_t(op.shared)].waiters.push_back({c.id, q});
        return;
    }
    double bytes = op.suspended ? op.remaining : op.bytes;
    if (!op.suspended) op.start = now;
    op.suspended = false;
    op.flow = dram_.add(now, q == 1, bytes, op.cap);
    if (int(flow_owner_.size()) <= op.flow) flow_owner_.resize(size_t(op.flow) + 1);
    flow_owner_[op.flow] = {c.id, q};
    if (c.dma_active++ == 0) c.dma_busy_since = now;
}

void Simulator::complete_tag(Core &c, int tag, double end) {
    c.tag_pending[tag]--;
    c.tag_end[tag] = std::max(c.tag_end[tag], end);
}

// The leader of a shared load has its bytes: every core that started receiving them gets its copy
// over the ring's bandwidth, from when it started.
void Simulator::finish_shared(const DmaOp &op, double now) {
    SharedLoad &s = shared_[size_t(op.shared)];
    s.end = now;
    for (auto [core, q] : s.waiters) {
        const DmaOp &r = cores_[size_t(core)].dma[q].ops.front();
        schedule(std::max(now, r.start + r.deliver), EventKind::DmaDelivered, core, q, 0);
    }
    s.waiters.clear();
}

void Simulator::complete_dma(int core, int q, double now) {
    Core &c = cores_[core];
    DmaOp op = c.dma[q].ops.front();
    c.dma[q].ops.pop_front();
    if (op.shared >= 0 && !op.receive) finish_shared(op, now);
    if (--c.dma_active == 0) c.ctr.busy[kEngDMA] += std::max(0.0, now - c.dma_busy_since);
    trace_.span(c.id, q ? kTrackDmaStore : kTrackDmaLoad, q ? "DMA_ST" : "DMA_LD", op.start, now, int64_t(op.pc));
    complete_tag(c, op.tag, now);
    if (!c.dma[q].ops.empty()) {
        const DmaOp &next = c.dma[q].ops.front();
        schedule(std::max(next.issue + setup_, now), EventKind::DmaStart, c.id, q, c.gen);
    }
    maybe_unblock(c, now);
}

void Simulator::maybe_unblock(Core &c, double now) {
    if (c.block == Block::QueueFull) {
        if (int64_t(c.dma[c.wait_queue].ops.size()) < m_.dma_queue_depth) {
            c.block = Block::None;
            c.t = std::max(c.t, now);
            c.ctr.waited[kWaitDmaQueue] += c.t - c.block_since;
            trace_.span(c.id, kTrackControl, "stall:dma-queue", c.block_since, c.t, int64_t(c.block_pc));
            make_ready(c);
        }
    } else if (c.block == Block::Wait) {
        double end = c.t;
        int cause = -1;
        for (int tg = 0; tg < kNumTags; tg++) {
            if (!(c.wait_mask & (1u << tg))) continue;
            if (c.tag_pending[tg] > 0) return;
            if (c.tag_end[tg] > end) end = c.tag_end[tg], cause = c.tag_cause[tg];
        }
        c.block = Block::None;
        if (cause >= 0 && end > c.block_since) c.ctr.waited[size_t(cause)] += end - c.block_since;
        c.t = end;
        trace_.span(c.id, kTrackControl, "WAIT", c.block_since, c.t, int64_t(c.block_pc));
        c.pc++;  // the WAIT retires
        c.unwaited.erase(std::remove_if(c.unwaited.begin(), c.unwaited.end(),
                                        [&](const Unwaited &u) { return (c.wait_mask >> u.tag) & 1u; }),
                         c.unwaited.end());
        make_ready(c);
    }
}

void Simulator::do_wait(Core &c, uint32_t mask) {
    c.block = Block::Wait;
    c.wait_mask = mask;
    c.block_since = c.t;
    c.block_pc = c.pc;
    maybe_unblock(c, c.t);  // retires at once when nothing under the mask is in flight
}

void Simulator::issue_ring(Core &c, const Instr &in) {
    LxAccess acc = access(c, in);
    track_lx(c, acc);
    check_race(c, queue_of(in.op), acc, -1, 0, 0, false, in.a[0]);
    int n = prog_.num_cores;
    bool send = in.op == Opcode::RING_SEND;
    int peer = ((c.id + in.a[1]) % n + n) % n;
    int64_t bytes = int64_t(in.a[4]) * m_.stick_bytes;
    int64_t addr = wrap_add(c.regs[in.a[2]], in.a[3]);
    RingEnd me{c.id, c.pc, in.a[0], c.t, bytes, addr, {}};
    if (send && numeric_) charge(c, bytes);
    if (send && numeric_) me.data.assign(c.lx.begin() + addr, c.lx.begin() + addr + bytes);
    c.tag_pending[in.a[0]]++;
    c.tag_cause[in.a[0]] = kWaitRing;
    size_t chan = send ? size_t(c.id) * n + peer : size_t(peer) * n + c.id;
    auto &mine = send ? sends_[chan] : recvs_[chan];
    auto &theirs = send ? recvs_[chan] : sends_[chan];
    if (theirs.empty()) {
        mine.push_back(std::move(me));
        return;
    }
    RingEnd other = std::move(theirs.front());
    theirs.pop_front();
    RingEnd &s = send ? me : other;
    RingEnd &r = send ? other : me;
    if (s.bytes != r.bytes) {
        fault(c, "ring transfer size mismatch: core " + std::to_string(s.core) + " " + describe(prog_, s.pc) +
                     " sends " + std::to_string(s.bytes) + " bytes, core " + std::to_string(r.core) + " " +
                     describe(prog_, r.pc) + " receives " + std::to_string(r.bytes));
    }
    Core &sc = cores_[s.core];
    double start = std::max({s.issue, r.issue, sc.ring_free});
    double end = start + ring_transfer_cycles(s.bytes, m_);
    sc.ring_free = start + double(s.bytes) / m_.ring_bytes_per_cycle;
    add_ring_busy(sc, start, end);
    sc.ctr.ring += s.bytes;
    if (numeric_) std::memcpy(cores_[r.core].lx.data() + r.lx_addr, s.data.data(), size_t(s.bytes));
    const int slot = ring_slot();
    RingCompletion &done = ring_done_[size_t(slot)];
    done.core_tag.assign({{s.core, s.tag}, {r.core, r.tag}});
    done.pcs.assign({s.pc, r.pc});
    done.start = start;
    schedule(end, EventKind::RingDone, -1, slot, 0);
}

void Simulator::issue_reduce(Core &c, const Instr &in) {
    LxAccess acc = access(c, in);
    track_lx(c, acc);
    check_race(c, queue_of(in.op), acc, -1, 0, 0, false, in.a[0]);
    // The core's group (isa.h): `n` cores `stride` apart from `base`; this core is member `k`.
    const int stride = in.a[5] > 0 ? std::max(1, in.a[6]) : 1;
    const int n = in.a[5] > 0 ? in.a[5] : prog_.num_cores;
    const int base = c.id - c.id % (n * stride) + c.id % stride, k = (c.id - base) / stride;
    int64_t bytes = int64_t(in.a[4]) * m_.stick_bytes;
    int64_t addr = wrap_add(c.regs[in.a[2]], in.a[3]);
    RingEnd me{c.id, c.pc, in.a[0], std::max(c.t, c.ring_free), bytes, addr, {}};
    if (numeric_) charge(c, bytes);
    if (numeric_) me.data.assign(c.lx.begin() + addr, c.lx.begin() + addr + bytes);
    c.tag_pending[in.a[0]]++;
    c.tag_cause[in.a[0]] = kWaitRing;
    const std::pair<int, int64_t> key{base, c.reduce_seq++};
    Collective &col = collectives_[key];
    if (col.parts.empty()) col.parts.resize(size_t(n));
    if (col.parts.size() != size_t(n) || col.parts[size_t(k)].core >= 0) {
        const RingEnd *other = nullptr;
        for (const RingEnd &p : col.parts)
            if (p.core >= 0) other = &p;
        fault(c, "RING_REDUCE mismatch: core " + std::to_string(c.id) + " " + describe(prog_, c.pc) +
                     " reduces over a group of " + std::to_string(n) + " cores " + std::to_string(stride) +
                     " apart, which another core's RING_REDUCE of the same turn " +
                     (other ? "(core " + std::to_string(other->core) + " " + describe(prog_, other->pc) + ") " : "") +
                     "does not form (size, type, operation or group)");
    }
    col.parts[size_t(k)] = std::move(me);
    if (++col.arrived < n) return;

    const RingEnd &p0 = col.parts[0];
    double start = 0;
    for (const RingEnd &p : col.parts) {
        const Instr &ip = prog_.code[p.pc], &i0 = prog_.code[p0.pc];
        if (p.bytes != p0.bytes || ip.dtype != i0.dtype || ip.a[1] != i0.a[1] || ip.a[5] != i0.a[5] ||
            (ip.a[5] > 0 && std::max(1, ip.a[6]) != std::max(1, i0.a[6])))
            fault(c, "RING_REDUCE mismatch: core " + std::to_string(p.core) + " " + describe(prog_, p.pc) +
                         " does not match core " + std::to_string(p0.core) + " " + describe(prog_, p0.pc) +
                         " (size, type, operation or group)");
        start = std::max(start, p.issue);
    }
    double end = start + ring_reduce_cycles(bytes, n, m_, stride);
    if (numeric_) {
        const Instr &i0 = prog_.code[p0.pc];
        std::vector<uint8_t> acc_bytes = col.parts[0].data;
        for (int k = 1; k < n; k++)
            combine_elements(RedOp(i0.a[1]), DType(i0.dtype), acc_bytes.data(), col.parts[k].data.data(), bytes);
        for (const RingEnd &p : col.parts)
            std::memcpy(cores_[p.core].lx.data() + p.lx_addr, acc_bytes.data(), size_t(bytes));
    }
    const int slot = ring_slot();
    RingCompletion &done = ring_done_[size_t(slot)];
    done.core_tag.clear();
    done.pcs.clear();
    done.start = start;
    for (const RingEnd &p : col.parts) {
        done.core_tag.push_back({p.core, p.tag});
        done.pcs.push_back(p.pc);
        Core &pc = cores_[p.core];
        pc.ring_free = end;
        add_ring_busy(pc, start, end);
        pc.ctr.ring += bytes;
    }
    collectives_.erase(key);
    schedule(end, EventKind::RingDone, -1, slot, 0);
}

// A loop whose body takes another path after its first iterations (an IF on its counter: a
// causal query tile's only key tile before the diagonal, at a few tiles per key tile) does work
// that the first iterations' steady state does not show: it is not summarised. The IFs' conditions
// are evaluated on the scalar code of the body for the counter's first two values and its
// second-to-last (a condition on an affine function of the counter flips at most once; one that
// flips at the last iteration is a pipeline's prefetch guard, which the summary allows for). Other
// registers take the values a core 0 that has just started would have (zero): an estimate, which is
// what a summary is.
void Simulator::mark_changing_paths() {
    const size_t n = prog_.code.size();
    for (size_t lp = 0; lp < n; lp++) {
        const Instr &loop = prog_.code[lp];
        if (loop.op != Opcode::LOOP || no_summary_[lp] || loop.a[1] != 0 || loop.a[2] < 3) continue;
        const size_t end = match_[lp];
        auto conditions = [&](int64_t k) {
            std::vector<int64_t> regs(size_t(kNumRegs), 0);
            regs[size_t(loop.a[0])] = k;
            std::vector<char> taken;
            for (size_t pc = lp + 1; pc < end; pc++) {
                const Instr &in = prog_.code[pc];
                if (is_scalar_op(in.op)) {
                    int64_t v = 0;
                    if (in.a[0] > 0 && in.a[0] < kNumRegs && eval_scalar(in, regs.data(), 0, prog_.num_cores, &v))
                        regs[size_t(in.a[0])] = v;
                } else if (in.op == Opcode::LDLX && in.a[0] > 0 && in.a[0] < kNumRegs) {
                    regs[size_t(in.a[0])] = 0;  // what a timing-only run reads
                } else if (in.op == Opcode::IF) {
                    taken.push_back(regs[size_t(in.a[0])] != 0);
                }
            }
            return taken;
        };
        const std::vector<char> first = conditions(0);
        if (first != conditions(1) || first != conditions(loop.a[2] - 2)) no_summary_[lp] = 1;
    }
}

void Simulator::do_barrier(Core &c) {
    c.block = Block::Barrier;
    c.block_since = c.t;
    c.block_pc = c.pc;
    barrier_max_ = std::max(barrier_max_, c.t);
    if (++barrier_arrived_ == prog_.num_cores) {
        schedule(barrier_max_ + m_.barrier_latency_cycles, EventKind::BarrierRelease, -1, 0, 0);
        barrier_arrived_ = 0;
        barrier_max_ = 0;
    }
}

// True when the engines' backlog was the same at the end of the last three iterations. While a
// loop issues asynchronous work faster than its engines drain it (no WAIT in the body, DMA queue not
// yet full), control time runs ahead of the work and is not the loop's rate.
bool backlog_steady(const LoopFrame &f) {
    auto same = [](double a, double b) {
        return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)});
    };
    for (int i = 0; i < 2; i++) {
        const Snapshot &a = f.snaps[size_t(i)], &b = f.snaps[size_t(i) + 1];
        if (a.dma_queued != b.dma_queued || !same(a.vec_ahead, b.vec_ahead) || !same(a.pe_ahead, b.pe_ahead))
            return false;
    }
    return true;
}

// Replaces iterations of a loop that has reached a steady state by their measured effect: time,
// counters and registers advance by k times the last iteration's delta, and the core's device
// memory traffic is kept on the shared channel as a constant-rate reservation for that span.
void Simulator::summarise(Core &c, LoopFrame &f, int64_t k) {
    const Snapshot &s0 = f.snaps[0], &s1 = f.snaps[1], &s2 = f.snaps[2];
    for (int r = 0; r < kNumRegs; r++)
        if (s2.regs[r] - s1.regs[r] != s1.regs[r] - s0.regs[r]) return;  // not affine: run it for real
    double dt = s2.t - s1.t;
    if (!(dt > 0)) return;
    Counters d = s2.ctr - s1.ctr;
    // A loop that issues no DMA of its own: any DMA busy time in its iterations was a transfer
    // from before the loop, which keeps moving through the span (below) and is booked for real.
    const bool loop_dma = d.work_r > 0 || d.work_w > 0;
    if (!loop_dma) d.busy[kEngDMA] = 0;
    double shift = double(k) * dt, now = c.t;

    for (int r = 0; r < kNumRegs; r++) c.regs[r] += k * (s2.regs[r] - s1.regs[r]);
    f.iter += k;
    c.ctr.add_scaled(d, k);
    summarised_ += k;
    trace_.span(c.id, kTrackControl, "loop summary", now, now + shift, int64_t(f.loop_pc));

    c.t += shift;
    if (c.vec_free > now) c.vec_free += shift;
    if (c.pe_free > now) c.pe_free += shift;
    for (double &e : c.tag_end)
        if (e > now) e += shift;
    // The loop's own DMAs pause for the summarised span; the reservation stands in for them. DMAs
    // issued before the loop (a prefetch of the next tile while this one computes) overlap the
    // whole span for real, so they keep their place and keep moving.
    c.gen++;
    auto in_loop = [&](const DmaOp &op) { return op.pc > f.loop_pc && op.pc < f.end_pc; };
    for (int q = 0; q < 2; q++) {
        for (DmaOp &op : c.dma[q].ops)
            if (in_loop(op)) op.issue += shift;
        if (c.dma[q].ops.empty()) continue;
        DmaOp &op = c.dma[q].ops.front();
        if (!in_loop(op)) {
            // The new generation drops its pending start; schedule it again.
            if (op.flow == -1) schedule(std::max(op.issue + setup_, now), EventKind::DmaStart, c.id, q, c.gen);
        } else if (op.flow >= 0) {
            op.remaining = dram_.remove(now, op.flow);
            op.flow = -1;
            op.suspended = true;
            op.start += shift;
            if (--c.dma_active == 0) c.ctr.busy[kEngDMA] += now - c.dma_busy_since;
        }
    }
    // Otherwise the iterations' counters (added above) include DMA busy time while such a transfer
    // moves; count its busy time again only past the span.
    if (loop_dma && c.dma_active > 0) {
        c.ctr.busy[kEngDMA] += now - c.dma_busy_since;
        c.dma_busy_since = now + shift;
    }
    if (d.work_r > 0) c.reservations.push_back(dram_.add(now, false, kInf, d.work_r / dt));
    if (d.work_w > 0) c.reservations.push_back(dram_.add(now, true, kInf, d.work_w / dt));
    for (int id : c.reservations) {
        if (int(flow_owner_.size()) <= id) flow_owner_.resize(size_t(id) + 1);
        flow_owner_[id] = {-1, -1};
    }
    schedule(now + shift, EventKind::ReservationEnd, c.id, 0, c.gen);
    schedule(now + shift, EventKind::Resume, c.id, 0, c.gen);
}

void Simulator::end_loop_iteration(Core &c) {
    LoopFrame &f = c.loops.back();
    f.iter++;
    // The last three iterations give two deltas to compare; the last iteration always runs for real.
    int64_t left = f.count - 1 - f.iter;
    if (f.summarise && left >= 2) {
        Snapshot s{c.regs, c.t, c.ctr};
        // DMA busy time is booked when the engine goes idle; count the open period too.
        if (c.dma_active > 0) s.ctr.busy[kEngDMA] += std::max(0.0, c.t - c.dma_busy_since);
        s.vec_ahead = std::max(0.0, c.vec_free - c.t);
        s.pe_ahead = std::max(0.0, c.pe_free - c.t);
        s.dma_queued = {c.dma[0].ops.size(), c.dma[1].ops.size()};
        f.snaps[0] = f.snaps[1];
        f.snaps[1] = f.snaps[2];
        f.snaps[2] = s;
        if (f.iter >= 3 && backlog_steady(f)) summarise(c, f, left);
    }
    if (f.iter < f.count) {
        c.regs[f.iv] = f.iter;
        c.pc = f.loop_pc + 1;
    } else {
        c.loops.pop_back();
        c.pc++;
    }
}

// Executes one instruction at the core's current time. Returns true when it can neither create
// events nor block, so the caller may keep going without consulting the event queue.
bool Simulator::step(Core &c) {
    const Instr &in = prog_.code[c.pc];
    auto &R = c.regs;
    c.ctr.instrs++;
    if (++executed_ > opt_.max_instructions)
        fault(c, "instruction budget of " + std::to_string(opt_.max_instructions) +
                     " exceeded (SimOptions::max_instructions)" +
                     (numeric_ ? "; timing-only mode summarises loops" : ""));
    c.t += m_.scalar_op_cycles;
    auto set = [&](int r, int64_t v) { R[r] = v; };
    switch (in.op) {
    case Opcode::NOP: break;
    case Opcode::LI:
    case Opcode::MOV:
    case Opcode::ADD:
    case Opcode::SUB:
    case Opcode::MUL:
    case Opcode::DIV:
    case Opcode::REM:
    case Opcode::MIN:
    case Opcode::MAX:
    case Opcode::ADDI:
    case Opcode::MULI:
    case Opcode::SHLI:
    case Opcode::SHRI:
    case Opcode::CMPLT:
    case Opcode::CMPEQ:
    case Opcode::SEL:
    case Opcode::CORE_ID:
    case Opcode::NUM_CORES: {
        int64_t v;
        if (!eval_scalar(in, R.data(), c.id, prog_.num_cores, &v))
            fault(c, "division by zero (r" + std::to_string(in.a[2]) + " is 0)");
        set(in.a[0], v);
        break;
    }
    case Opcode::LOOP: {
        int64_t count = wrap_add(R[in.a[1]], in.a[2]);
        if (count <= 0) {
            c.pc = match_[c.pc] + 1;
            return true;
        }
        LoopFrame f;
        f.loop_pc = c.pc;
        f.end_pc = match_[c.pc];
        f.iv = in.a[0];
        f.count = count;
        f.summarise = opt_.timing_only && opt_.summarize_loops && !no_summary_[c.pc];
        c.loops.push_back(f);
        R[in.a[0]] = 0;
        break;
    }
    case Opcode::LDLX: {
        // A read at issue: whatever writes those bytes must have been waited for. Timing-only runs
        // hold no LX data and read 0 (a gathered row's DMA costs the same whichever row it is).
        const LxAccess acc = access(c, in);
        track_lx(c, acc);
        if (opt_.check_races)
            for (const Unwaited &u : c.unwaited)
                for (int w = 0; w < u.lx.num_writes; w++)
                    if (acc.reads[0].overlaps(u.lx.writes[w]))
                        fault(c, "race: LDLX reads LX [" + std::to_string(acc.reads[0].begin) + ", " +
                                     std::to_string(acc.reads[0].end) + ") while " + describe(prog_, u.pc) + " on tag " +
                                     std::to_string(u.tag) + " may still be writing it; WAIT on that tag first");
        int32_t v = 0;
        if (numeric_) std::memcpy(&v, c.lx.data() + acc.reads[0].begin, sizeof v);
        set(in.a[0], v);
        break;
    }
    case Opcode::ENDLOOP: end_loop_iteration(c); return true;
    case Opcode::IF:
        if (!R[in.a[0]]) {
            c.pc = match_[c.pc] + 1;  // past the ELSE (into its block) or the ENDIF
            return true;
        }
        break;
    case Opcode::ELSE: c.pc = match_[c.pc] + 1; return true;  // end of a taken IF block
    case Opcode::ENDIF: break;
    case Opcode::MATMUL: issue_matmul(c, in); break;
    case Opcode::DMA_LD:
    case Opcode::DMA_ST:
        issue_dma(c, in);
        if (c.block != Block::None) {
            c.t -= m_.scalar_op_cycles;  // re-issued when the queue has room
            c.ctr.instrs--;
            executed_--;
            return false;
        }
        c.pc++;
        return false;
    case Opcode::RING_SEND:
    case Opcode::RING_RECV: issue_ring(c, in); c.pc++; return false;
    case Opcode::RING_REDUCE: issue_reduce(c, in); c.pc++; return false;
    case Opcode::WAIT: do_wait(c, uint32_t(in.a[0])); return false;
    case Opcode::BARRIER: do_barrier(c); return false;
    default: issue_vector(c, in); break;
    }
    c.pc++;
    return true;
}

// Whether the instruction at the core's pc touches what other cores or events change: device
// memory, the ring, tags that events complete, a barrier, or (an ENDLOOP that may summarise) the
// DMA queues and the shared channel. The others touch only the core's own registers and engines,
// so they may run ahead of the other cores' time without changing any result.
bool Simulator::shared_step(const Core &c) const {
    const Opcode op = prog_.code[c.pc].op;
    if (op == Opcode::ENDLOOP) return !c.loops.empty() && c.loops.back().summarise;
    const Engine e = op_info(op).engine;
    return e == Engine::DMA || e == Engine::Ring || e == Engine::Sync;
}

// Runs the core while it is the earliest: a step that touches shared state runs only up to
// `horizon` (the next event or the next ready core), one that does not up to `stop_at`. Ordering
// only the shared steps in time keeps the results, and saves switching between 32 cores that
// interleave a scalar instruction at a time.
void Simulator::run_core(Core &c, double horizon, double stop_at) {
    while (c.block == Block::None) {
        if (c.pc >= prog_.code.size()) {
            c.block = Block::Done;
            return;
        }
        if (c.t > (shared_step(c) ? horizon : stop_at)) break;
        bool plain = step(c);
        if (c.block != Block::None) return;
        if (!plain) break;
    }
    if (c.block == Block::None) make_ready(c);
}

void Simulator::handle_event(const Event &e) {
    switch (e.kind) {
    case EventKind::DmaStart: {
        Core &c = cores_[e.core];
        if (e.gen != c.gen || c.dma[e.arg].ops.empty() || c.dma[e.arg].ops.front().flow != -1) return;
        start_dma(c, e.arg, e.t);
        break;
    }
    case EventKind::RingDone: {
        // By index: unblocking a core can issue ring work, which may grow the table.
        for (size_t i = 0; i < ring_done_[size_t(e.arg)].core_tag.size(); i++) {
            const RingCompletion &done = ring_done_[size_t(e.arg)];
            Core &c = cores_[done.core_tag[i].first];
            trace_.span(c.id, kTrackRing, op_info(prog_.code[done.pcs[i]].op).name, done.start, e.t,
                        int64_t(done.pcs[i]));
            const int tag = done.core_tag[i].second;
            complete_tag(c, tag, e.t);
            maybe_unblock(c, e.t);
        }
        ring_free_.push_back(e.arg);
        break;
    }
    case EventKind::BarrierRelease:
        for (Core &c : cores_) {
            if (c.block != Block::Barrier) continue;
            trace_.span(c.id, kTrackControl, "BARRIER", c.block_since, e.t, int64_t(c.block_pc));
            c.ctr.waited[kWaitBarrier] += e.t - c.block_since;
            c.block = Block::None;
            c.t = e.t;
            c.pc++;
            make_ready(c);
        }
        break;
    case EventKind::ReservationEnd: {
        Core &c = cores_[e.core];
        if (e.gen != c.gen) return;
        for (int id : c.reservations) dram_.remove(e.t, id);
        c.reservations.clear();
        break;
    }
    case EventKind::DmaDelivered: {
        // Not tied to a generation: a copy in flight completes whatever the core's loops do.
        complete_dma(e.core, e.arg, e.t);
        break;
    }
    case EventKind::Resume: {
        Core &c = cores_[e.core];
        if (e.gen != c.gen) return;
        for (int q = 0; q < 2; q++) {
            if (c.dma[q].ops.empty()) continue;
            DmaOp &op = c.dma[q].ops.front();
            if (op.suspended) start_dma(c, q, e.t);
            else schedule(std::max(op.issue + setup_, e.t), EventKind::DmaStart, c.id, q, c.gen);
        }
        break;
    }
    }
}

void Simulator::deadlock() {
    std::ostringstream os;
    os << "deadlock: no core can make progress";
    for (const Core &c : cores_) {
        if (c.block == Block::Done) continue;
        os << "; core " << c.id << " ";
        switch (c.block) {
        case Block::Wait: os << "waits at " << describe(prog_, c.block_pc) << " for a ring transfer or reduction"; break;
        case Block::Barrier: os << "waits at " << describe(prog_, c.block_pc) << " for cores that finished"; break;
        default: os << "is stuck at " << describe(prog_, c.pc); break;
        }
    }
    for (size_t ch = 0; ch < sends_.size(); ch++) {
        if (!sends_[ch].empty())
            os << "; core " << sends_[ch].front().core << " " << describe(prog_, sends_[ch].front().pc)
               << " was never received by core " << ch % size_t(prog_.num_cores);
        if (!recvs_[ch].empty())
            os << "; core " << recvs_[ch].front().core << " " << describe(prog_, recvs_[ch].front().pc)
               << " was never sent to by core " << ch / size_t(prog_.num_cores);
    }
    throw Error(os.str());
}

SimResult Simulator::run(std::vector<std::vector<uint8_t>> images) {
    prepare(std::move(images));
    const double stop_at =
        opt_.timing_only && opt_.stop_after_us > 0 ? opt_.stop_after_us * 1000.0 * m_.clock_ghz : kInf;
    bool stopped = false;
    for (;;) {
        int fid = -1;
        double t_flow = dram_.next_completion(&fid);
        double t_evt = events_.empty() ? kInf : events_.top().t;
        double t_next = std::min(t_flow, t_evt);
        if (std::min(t_next, ready_.empty() ? kInf : ready_.top().first) > stop_at) {
            stopped = t_next != kInf || !ready_.empty();
            break;
        }
        if (!ready_.empty() && ready_.top().first <= t_next) {
            int id = ready_.top().second;
            ready_.pop();
            Core &c = cores_[id];
            c.queued = false;
            if (c.block != Block::None) continue;
            double horizon = std::min(t_next, stop_at);
            if (!ready_.empty()) horizon = std::min(horizon, ready_.top().first);
            run_core(c, horizon, stop_at);
            continue;
        }
        if (t_next == kInf) break;
        if (t_flow <= t_evt) {
            for (int id : dram_.take_finished(t_flow)) {
                auto [core, q] = flow_owner_[id];
                if (core >= 0) {
                    cores_[core].dma[q].ops.front().flow = -1;
                    complete_dma(core, q, t_flow);
                }
            }
        } else {
            Event e = events_.top();
            events_.pop();
            dram_.advance(e.t);
            handle_event(e);
        }
    }
    if (!stopped) {
        for (const Core &c : cores_)
            if (c.block != Block::Done) deadlock();
        for (size_t ch = 0; ch < sends_.size(); ch++)
            if (!sends_[ch].empty() || !recvs_[ch].empty()) deadlock();
    }

    SimResult res;
    res.stopped = stopped;
    SimStats &st = res.stats;
    st.clock_ghz = m_.clock_ghz;
    for (Core &c : cores_) {
        CoreStats cs;
        double finish = std::max({c.t, c.vec_free, c.pe_free});
        for (double e : c.tag_end) finish = std::max(finish, e);
        cs.finish_cycles = finish;
        cs.busy_cycles = c.ctr.busy;
        cs.wait_cycles = c.ctr.waited;
        cs.instructions = c.ctr.instrs;
        cs.lx_peak_bytes = c.lx_peak;
        cs.dram_read_bytes = c.ctr.dram_r;
        cs.dram_write_bytes = c.ctr.dram_w;
        cs.ring_bytes_sent = c.ctr.ring;
        st.cycles = std::max(st.cycles, finish);
        st.instructions += c.ctr.instrs;
        st.dram_read_bytes += c.ctr.dram_r;
        st.dram_write_bytes += c.ctr.dram_w;
        st.ring_bytes += c.ctr.ring;
        st.vector_sticks += c.ctr.vsticks;
        st.pe_macs += c.ctr.macs;
        st.lx_peak_bytes = std::max(st.lx_peak_bytes, c.lx_peak);
        st.cores.push_back(cs);
    }
    if (stopped) st.cycles = std::max(st.cycles, stop_at);
    st.us = m_.cycles_to_us(st.cycles);
    st.summarised_iterations = summarised_;
    st.stepped_instructions = executed_;
    if (!opt_.trace_path.empty()) trace_.write(opt_.trace_path, m_.clock_ghz, prog_.num_cores);
    res.buffers = std::move(mem_);
    // Every LX access was range-checked and counted in lx_peak before it executed.
    for (Core &c : cores_) LxArena::release(std::move(c.lx), size_t(c.lx_peak));
    return res;
}

}  // namespace

SimResult simulate(const DeviceProgram &program, const MachineDesc &machine, std::vector<std::vector<uint8_t>> images,
                   const SimOptions &options) {
    machine.validate();
    Simulator sim(program, machine, options);
    return sim.run(std::move(images));
}

}  // namespace spyre
