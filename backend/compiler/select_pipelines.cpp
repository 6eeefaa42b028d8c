// Instruction selection: double-buffered loops (the next tiles' DMA in flight while this one
// computes) and ring-shared tiles (loaded by a run's first core and forwarded core to core).
#include "selector.h"

namespace spyre {
namespace selection {

namespace {

// Piece `var` (a loop variable in [0, pieces)) of a load: the outermost of its dimensions whose
// steps divide into `pieces` equal parts cut so (any one dimension cut gives a box of the same
// kind), or, for a single run, the run cut into whole sticks of `lanes` elements each. None when
// nothing divides.
std::optional<DmaCall> dma_piece(const DmaCall &d, int64_t pieces, const std::string &var, int64_t lanes) {
    DmaCall part = d;
    const Expr k = Variable::make(Int(32), var);
    bool has_dims = false;
    for (size_t i = d.dims.size(); i-- > 0;) {
        const DmaDim &dim = d.dims[i];
        has_dims |= dim.count > 1;
        if (dim.count <= 1 || dim.count % pieces) continue;
        const int64_t steps = dim.count / pieces;
        part.dims[i].count = steps;
        part.dram_offset = simplify(d.dram_offset + k * Expr(int32_t(steps * dim.dram_stride)));
        part.lx_offset = simplify(d.lx_offset + k * Expr(int32_t(steps * dim.lx_stride)));
        return part;
    }
    if (has_dims || d.run % (pieces * lanes)) return std::nullopt;
    part.run = d.run / pieces;
    part.dram_offset = simplify(d.dram_offset + k * Expr(int32_t(part.run)));
    part.lx_offset = simplify(d.lx_offset + k * Expr(int32_t(part.run)));
    return part;
}

}  // namespace

void Selector::emit_pipeline(const For *op, int64_t n) {
    const std::vector<std::string> &tiles = plan_.pipelines.at(op);
    auto is_tile = [&](const std::string &b) { return std::find(tiles.begin(), tiles.end(), b) != tiles.end(); };
    std::vector<std::string> doubled;  // the tiles with a copy per parity (not loaded in place)
    for (const std::string &t : tiles)
        if (!plan_.in_place_tiles.count(t) && plan_.buffer(t).copies == 2) doubled.push_back(t);
    // A tile of one copy (plan_pipelines: read only before an inner pipelined loop) is loaded
    // again once its readers are done.
    auto reload = [&](const DmaCall &d) {
        if (!plan_.in_place_tiles.count(d.lx) && plan_.buffer(d.lx).copies == 1) before(QLoad, {d.dram}, {d.lx});
    };
    std::vector<Stmt> seq = body_sequence(op->body);
    std::vector<DmaCall> loads, stores;
    std::set<size_t> issued_here;  // positions in seq of the DMAs this function issues
    for (size_t i : prefetched_loads(seq, is_tile, !plan_.extended_pipelines)) {
        loads.push_back(*as_dma(seq[i]));
        issued_here.insert(i);
    }
    size_t last = seq.size();
    while (last > 0 && !issued_here.count(last - 1)) {
        auto d = as_dma(seq[last - 1]);
        if (!d || !d->store || !is_tile(d->lx)) break;
        stores.insert(stores.begin(), *d);
        last--;
        issued_here.insert(last);
    }
    bool stores_loaded_tile = false;
    for (const DmaCall &st : stores)
        for (const DmaCall &ld : loads) stores_loaded_tile |= st.lx == ld.lx;
    // dma_phases: the stores of an iteration wait until every core's loads are done and the next
    // loads until every core's stores are, so device memory never mixes reads and writes; the
    // loads still overlap the compute.
    const bool phased = plan_.loops.dma_phases(op->name);
    // Tags by iteration parity. A pipeline inside another (plan_pipelines: under one that only
    // loads) takes load tags of its own; the stores' are free there.
    const int depth = pipe_depth_;
    const int load_tag[2] = {depth ? kTagInnerLoad : 0, depth ? kTagInnerLoad + 1 : 1}, store_tag[2] = {3, 4};
    auto share_it = plan_.ring_shares.find(op);
    if (depth && (phased || share_it != plan_.ring_shares.end()))
        throw_internal("kernel ", plan_.kernel_name, ": internal: a pipelined loop inside another is phased or ring-shared");
    // Work in flight before the loop (the previous output tile's store) may go on during it, unless
    // it uses the loop's tags or its tiles' LX: the loop's own DMA is issued without hazard checks.
    {
        uint32_t own = (1u << load_tag[0]) | (1u << load_tag[1]) | (1u << store_tag[0]) | (1u << store_tag[1]) |
                       (3u << kTagForward) | (3u << kTagShared);
        uint32_t mask = hz_.touching(access(std::set<std::string>(tiles.begin(), tiles.end()), {}));
        // Nor may it write device memory the loop's loads read or its stores write (a Func stored
        // to device memory just before a loop that prefetches it back).
        std::set<std::string> read_dram, written_dram;
        for (const DmaCall &d : loads) read_dram.insert(d.dram);
        for (const DmaCall &d : stores) written_dram.insert(d.dram);
        mask |= hz_.conflicts(QLoad, access(read_dram, {})) | hz_.conflicts(QStore, access({}, written_dram));
        for (const PendingWork &p : hz_.pending())
            if (phased || ((own >> p.tag) & 1u)) mask |= 1u << p.tag;
        wait(mask);
    }
    const PendingSet before_loop = hz_.pending();
    // What this loop issued; what was in flight before it may stay.
    auto drain_own = [&] { wait(tags_not_in(hz_.pending(), before_loop)); };
    Reg i = b_.alloc(), next = b_.alloc(), pair = b_.alloc(), cond = b_.alloc();
    Reg guard;  // an odd count's last iteration runs under it
    if (n % 2) guard = b_.alloc();
    // Ring sharing (plan_ring_shares): `head` is set on the first core of each run, which reads
    // the shared tiles; `forward` on every core but the last of a run, which passes them on.
    const KernelPlan::RingShare *share = share_it == plan_.ring_shares.end() ? nullptr : &share_it->second;
    // Whether a pipelined loop runs inside this one (plan_pipelines: never around a shared one).
    const bool inner = !share && holds_pipeline(op->body, plan_, op);
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
    // With `piece_var`, piece `piece_var` of `pieces` of each load (dma_piece), or the whole load
    // at piece 0 when it does not divide.
    auto issue_loads = [&](Reg at, int parity, const std::string &piece_var = "", int64_t pieces = 1) {
        st_.vars[op->name] = at;
        for (const std::string &t : doubled) st_.parity[t] = parity;
        if (!piece_var.empty() && pieces > 1) {
            for (const DmaCall &d : loads) {
                reload(d);
                if (auto part = dma_piece(d, pieces, piece_var, sb_ / dtype_bytes(plan_.buffer(d.lx).type))) {
                    emit_dma(*part, load_tag[parity], true);
                    continue;
                }
                Reg first = b_.alloc();
                b_.op3(Opcode::CMPEQ, first, st_.vars.at(piece_var), kZero);
                b_.if_(first);
                emit_dma(d, load_tag[parity], true);
                b_.end_if();
                b_.release(first);
            }
            return;
        }
        // The tile this parity's copy held two iterations ago must have left for the next core.
        if (share) b_.wait(1u << (kTagForward + parity));
        if (rotate) rotate_roles(at, true);
        for (const DmaCall &d : loads) {
            if (!share || !share->tiles.count(d.lx)) {
                reload(d);
                emit_dma(d, load_tag[parity], true);
                continue;
            }
            b_.if_(head);
            emit_dma(d, kTagShared + parity, true);
            b_.else_();
            emit_ring_tile(d, kTagShared + parity, /*send=*/false);
            b_.end_if();
        }
    };
    st_.extents[op->name] = n;
    // The enclosing pipeline's next loads, in pieces, one per iteration of this loop after this
    // loop's own next tile: a core's loads run in order, and this loop's tiles would otherwise wait
    // behind the whole of them.
    std::function<void(const std::string &, int64_t)> outer_loads = std::move(st_.deferred_prefetch);
    st_.deferred_prefetch = nullptr;
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
        auto prefetch = [&, p](const std::string &piece_var, int64_t pieces) {
            // A tile stored from the LX it was loaded into (a Func kept in LX that is only copied
            // out): the next load into the other copy waits for the previous iteration's store
            // from it.
            if (stores_loaded_tile) b_.wait(1u << store_tag[1 - p]);
            b_.addi(next, i, 1);
            b_.li(cond, n);
            b_.op3(Opcode::CMPLT, cond, next, cond);
            b_.if_(cond);
            issue_loads(next, 1 - p, piece_var, pieces);
            b_.end_if();
            st_.vars[op->name] = i;
            for (const std::string &t : doubled) st_.parity[t] = p;
        };
        // Around a pipelined loop, that loop issues the next iteration's loads (outer_loads above).
        if (!loads.empty() && inner) st_.deferred_prefetch = prefetch;
        else if (!loads.empty()) prefetch("", 1);
        st_.vars[op->name] = i;
        for (const std::string &t : doubled) st_.parity[t] = p;
        if (outer_loads) outer_loads(op->name, n);
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
        b_.wait((1u << load_tag[p]) | (1u << store_tag[p]));
        // The body in its own structure, so that a buffer allocated inside it is released before
        // another takes its LX (which then waits for its readers); the tiles' DMAs are issued here
        // instead.
        for (size_t s : issued_here) st_.skip.insert(seq[s].get());
        {
            Nested in_pipeline(pipe_depth_);
            emit(op->body);
        }
        if (st_.deferred_prefetch) {  // no inner loop took it
            auto f = std::move(st_.deferred_prefetch);
            st_.deferred_prefetch = nullptr;
            f("", 1);
        }
        for (const Stmt &st : seq) st_.skip.erase(st.get());
        drain_own();
        if (phased) {
            if (!loads.empty()) b_.wait(1u << load_tag[1 - p]);  // the next iteration's loads
            phase_barrier();
        }
        for (const DmaCall &d : stores) emit_dma(d, store_tag[p], true);
        if (phased) {
            b_.wait(1u << store_tag[p]);
            phase_barrier();
        }
        if (guard_this) b_.end_if();
    }
    b_.end_loop();
    b_.wait((1u << store_tag[0]) | (1u << store_tag[1]) | forward_tags);
    for (const std::string &t : doubled) st_.parity.erase(t);
    st_.vars.erase(op->name);
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
