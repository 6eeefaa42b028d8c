// Instruction selection: double-buffered loops (the next tiles' DMA in flight while this one
// computes) and ring-shared tiles (loaded by a run's first core and forwarded core to core).
#include "selector.h"

namespace spyre {
namespace selection {

void Selector::emit_pipeline(const For *op, int64_t n) {
    const std::vector<std::string> &tiles = plan_.pipelines.at(op);
    auto is_tile = [&](const std::string &b) { return std::find(tiles.begin(), tiles.end(), b) != tiles.end(); };
    std::vector<Stmt> seq = body_sequence(op->body);
    std::vector<DmaCall> loads, stores;
    size_t first = 0, last = seq.size();
    while (first < seq.size()) {
        auto d = as_dma(seq[first]);
        if (!d || d->store || !is_tile(d->lx)) break;
        loads.push_back(*d);
        first++;
    }
    while (last > first) {
        auto d = as_dma(seq[last - 1]);
        if (!d || !d->store || !is_tile(d->lx)) break;
        stores.insert(stores.begin(), *d);
        last--;
    }
    // dma_phases: the stores of an iteration wait until every core's loads are done and the next
    // loads until every core's stores are, so device memory never mixes reads and writes; the
    // loads still overlap the compute.
    const bool phased = ends_with(op->name, kDmaPhasesSuffix);
    // Work in flight before the loop (the previous output tile's store) may go on during it, unless
    // it uses the loop's tags or its tiles' LX: the loop's own DMA is issued without hazard checks.
    {
        uint32_t own = (1u << 0) | (1u << 1) | (1u << 3) | (1u << 4) | (3u << kTagForward) | (3u << kTagShared);
        std::set<std::string> tile_set(tiles.begin(), tiles.end());
        uint32_t mask = 0;
        for (const Pending &p : pending_) {
            bool hit = phased || ((own >> p.tag) & 1u);
            for (const std::set<std::string> *names : {&p.reads, &p.writes})
                for (const std::string &n : *names) hit |= tile_set.count(n) || reuses(n, {}, tile_set);
            if (hit) mask |= 1u << p.tag;
        }
        wait(mask);
    }
    const std::vector<Pending> before_loop = pending_;
    auto drain_own = [&] {  // what this loop issued; what was in flight before it may stay
        uint32_t mask = 0;
        for (const Pending &p : pending_)
            if (!holds_work(before_loop, p)) mask |= 1u << p.tag;
        wait(mask);
    };
    Reg i = b_.alloc(), next = b_.alloc(), pair = b_.alloc(), cond = b_.alloc();
    Reg guard;  // an odd count's last iteration runs under it
    if (n % 2) guard = b_.alloc();
    // Ring sharing (plan_ring_shares): `head` is set on the first core of each run, which reads
    // the shared tiles; `forward` on every core but the last of a run, which passes them on.
    auto share_it = plan_.ring_shares.find(op);
    const KernelPlan::RingShare *share = share_it == plan_.ring_shares.end() ? nullptr : &share_it->second;
    // A run of every core of the program is a closed ring, so the run's head rotates: iteration i's
    // tiles are read by core i mod G and passed on around the ring to the core before it. Every
    // core then reads 1/G of the shared tiles besides its own, instead of one core reading them
    // all through its one load queue while the others wait for it.
    const bool rotate = share && share->group > 1 && share->group == plan_.num_cores;
    Reg head, forward, pos;
    if (share) {
        head = b_.alloc();
        forward = b_.alloc();
        pos = b_.alloc();
        b_.core_id(pos);
        b_.li(forward, share->group);
        b_.op3(Opcode::REM, pos, pos, forward);  // position in the run
        b_.li(forward, share->group - 1);
        b_.op3(Opcode::CMPLT, forward, pos, forward);
        b_.op3(Opcode::CMPEQ, head, pos, kZero);
    }
    // Rotating: this core heads iteration `at` when at mod G is its position, and forwards it
    // unless it is the core before that head.
    auto rotate_roles = [&](Reg at, bool heads) {
        if (heads) {
            b_.li(head, share->group);
            b_.op3(Opcode::REM, head, at, head);
            b_.op3(Opcode::CMPEQ, head, head, pos);
            return;
        }
        b_.addi(forward, at, share->group - 1);
        Reg g = b_.alloc();
        b_.li(g, share->group);
        b_.op3(Opcode::REM, forward, forward, g);
        b_.op3(Opcode::CMPEQ, forward, forward, pos);
        b_.li(g, 1);
        b_.op3(Opcode::SUB, forward, g, forward);
        b_.release(g);
    };
    const uint32_t forward_tags = share ? (3u << kTagForward) : 0;
    auto issue_loads = [&](Reg at, int parity) {
        vars_[op->name] = at;
        for (const std::string &t : tiles) parity_[t] = parity;
        // The tile this parity's copy held two iterations ago must have left for the next core.
        if (share) b_.wait(1u << (kTagForward + parity));
        if (rotate) rotate_roles(at, true);
        for (const DmaCall &d : loads) {
            if (!share || !share->tiles.count(d.lx)) {
                emit_dma(d, parity, true);
                continue;
            }
            b_.if_(head);
            emit_dma(d, kTagShared + parity, true);
            b_.else_();
            emit_ring_tile(d, kTagShared + parity, /*send=*/false);
            b_.end_if();
        }
    };
    extents_[op->name] = n;
    b_.li(i, 0);
    issue_loads(i, 0);
    b_.loop(pair, int32_t((n + 1) / 2));
    for (int p = 0; p < 2; p++) {
        b_.muli(i, pair, 2);
        if (p) b_.addi(i, i, 1);
        bool guard_this = p == 1 && n % 2;
        if (guard_this) {
            b_.li(guard, n);
            b_.op3(Opcode::CMPLT, guard, i, guard);
            b_.if_(guard);
        }
        // dma_phases: the barriers stay outside the guard of an odd count's last iteration, so that
        // a core whose share is one tile short (the last core of an uneven split) meets as many
        // barriers as the others (check_barriers.h).
        auto phase_barrier = [&] {
            if (guard_this) b_.end_if();
            b_.barrier();
            if (guard_this) b_.if_(guard);
        };
        if (!loads.empty()) {
            b_.addi(next, i, 1);
            b_.li(cond, n);
            b_.op3(Opcode::CMPLT, cond, next, cond);
            b_.if_(cond);
            issue_loads(next, 1 - p);
            b_.end_if();
        }
        vars_[op->name] = i;
        for (const std::string &t : tiles) parity_[t] = p;
        if (share) {
            // The shared tiles go on as soon as they arrive, before this core's own tiles do: the
            // cores down the run wait for them, not for this core's loads.
            b_.wait(1u << (kTagShared + p));
            if (rotate) rotate_roles(i, false);
            b_.if_(forward);
            for (const DmaCall &d : loads)
                if (share->tiles.count(d.lx)) emit_ring_tile(d, kTagForward + p, /*send=*/true);
            b_.end_if();
        }
        b_.wait((1u << p) | (1u << (3 + p)));
        // The body in its own structure, so that a buffer allocated inside it is released before
        // another takes its LX (which then waits for its readers); the tiles' DMAs are issued here
        // instead.
        for (size_t s = 0; s < seq.size(); s++)
            if (s < first || s >= last) skip_.insert(seq[s].get());
        emit(op->body);
        for (const Stmt &st : seq) skip_.erase(st.get());
        drain_own();
        if (phased) {
            if (!loads.empty()) b_.wait(1u << (1 - p));  // the next iteration's loads
            phase_barrier();
        }
        for (const DmaCall &d : stores) emit_dma(d, 3 + p, true);
        if (phased) {
            b_.wait(1u << (3 + p));
            phase_barrier();
        }
        if (guard_this) b_.end_if();
    }
    b_.end_loop();
    b_.wait((1u << 3) | (1u << 4) | forward_tags);
    for (const std::string &t : tiles) parity_.erase(t);
    vars_.erase(op->name);
    for (Reg r : {i, next, pair, cond}) b_.release(r);
    if (n % 2) b_.release(guard);
    if (share) {
        b_.release(head);
        b_.release(forward);
        b_.release(pos);
    }
}

void Selector::emit_shared_load(const DmaCall &d, int g) {
    const std::set<std::string> reads{d.dram}, writes{d.lx};
    before(QLoad, reads, writes);
    before(QRing, reads, writes);
    Reg pos = b_.alloc(), flag = b_.alloc();
    b_.core_id(pos);
    b_.li(flag, g);
    b_.op3(Opcode::REM, pos, pos, flag);
    b_.op3(Opcode::CMPEQ, flag, pos, kZero);
    b_.if_(flag);
    emit_dma(d, kTagLoad, true);
    b_.else_();
    emit_ring_tile(d, kTagLoad, /*send=*/false);
    b_.end_if();
    b_.wait_tag(kTagLoad);
    b_.li(flag, g - 1);
    b_.op3(Opcode::CMPLT, flag, pos, flag);
    b_.if_(flag);
    emit_ring_tile(d, kTagForward, /*send=*/true);
    b_.end_if();
    b_.release(pos);
    b_.release(flag);
    after(kTagForward, QRing, {d.lx}, {});
}

void Selector::emit_ring_tile(const DmaCall &d, int tag, bool send) {
    const BufferInfo &lx = plan_.buffer(d.lx);
    const int64_t eb = dtype_bytes(lx.type);
    int64_t bytes = (d.run * eb + sb_ - 1) / sb_ * sb_;
    for (const DmaDim &dim : d.dims) bytes *= dim.count;
    std::vector<Reg> regs;
    Lx la = dma_lx(d, regs);
    if (send) b_.ring_send(tag, +1, la, int32_t(bytes / sb_));
    else b_.ring_recv(tag, -1, la, int32_t(bytes / sb_));
    for (Reg r : regs) b_.release(r);
}

}  // namespace selection
}  // namespace spyre
