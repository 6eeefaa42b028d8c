// Instruction selection: the statement walk, and the pass's entry point (select_instructions.h).
#include "select_instructions.h"

#include <algorithm>

#include "selector.h"

namespace spyre {
namespace selection {

void Selector::run(const Stmt &s) {
    if (uses_core_id(s)) {
        Reg r = b_.alloc();
        b_.core_id(r);
        st_.vars[kCoreIdVar] = r;
    }
    emit(s);
    drain();
    int64_t peak = temp_base_ + st_.temp_peak;
    plan_.lx_peak_bytes = std::max<int64_t>(plan_.lx_peak_bytes, peak);
    if (peak > plan_.machine.lx_usable_bytes)
        throw_error_of(ErrorKind::LxOverflow, "kernel ", plan_.kernel_name, ": LX overflow: buffers need ", temp_base_,
                    " bytes and expression temporaries ", st_.temp_peak, " more, the usable LX is ",
                    plan_.machine.lx_usable_bytes, " bytes; tile the Funcs (split) so that each step is smaller");
}

void Selector::emit(const Stmt &s) {
    if (!s.defined()) return;
    if (const Block *op = s.as<Block>()) {
        if (!defer_zero_fill(op->first, op->rest)) emit(op->first);
        emit(op->rest);
    } else if (const ProducerConsumer *op = s.as<ProducerConsumer>()) {
        emit(op->body);
    } else if (const Allocate *op = s.as<Allocate>()) {
        emit(op->body);
        release_buffer(op->name);
    } else if (s.as<Free>()) {
    } else if (const Evaluate *op = s.as<Evaluate>()) {
        if (st_.skip.count(op)) return;  // a pipeline issues it itself
        if (auto d = as_dma(s)) {
            auto shared = plan_.ring_shared_loads.find(op);
            if (shared != plan_.ring_shared_loads.end()) emit_shared_load(*d, shared->second);
            else emit_dma(*d, d->store ? kTagStore : kTagLoad, false);
        }
        else if (auto rr = as_ring_reduce(s)) emit_ring_reduce(*rr);
        else if (is_barrier(s)) {
            drain();
            b_.barrier();
        } else if (!is_const(op->value)) {
            throw_error("kernel ", plan_.kernel_name, ": unsupported statement ", s);
        }
    } else if (const IfThenElse *op = s.as<IfThenElse>()) {
        Reg c = eval(op->condition);
        b_.if_(c);
        b_.release(c);
        // Each branch starts from what was in flight before the IF: the then-branch's waits do not
        // run when the else-branch does.
        const PendingSet before_if = hz_.pending();
        conditions_.push_back(op->condition);
        emit(op->then_case);
        conditions_.pop_back();
        drain();
        if (op->else_case.defined()) {
            b_.else_();
            hz_.set_pending(before_if);
            conditions_.push_back(!op->condition);
            emit(op->else_case);
            conditions_.pop_back();
            drain();
        } else {
            // Skipped, the branch waits for nothing: what was in flight before the IF still is.
            hz_.set_pending(before_if);
        }
        b_.end_if();
    } else if (const Store *op = s.as<Store>()) {
        emit_nest({}, op);
    } else if (const For *op = s.as<For>()) {
        emit_for(op);
    } else {
        throw_error("kernel ", plan_.kernel_name, ": unsupported statement ", s);
    }
}

void Selector::emit_for(const For *op) {
    if (st_.deferred_for && op != st_.deferred_for) flush_deferred_fill();
    auto ext = const_int(op->extent);
    if (!ext) return emit_dynamic_for(op);
    if (plan_.pipelines.count(op)) return emit_pipeline(op, *ext);
    // dma_phases on a loop that is not double-buffered: each iteration waits for its DMA and meets
    // the other cores at a barrier.
    // (Every core must meet its barriers as often as the others: check_barriers.h, on the program.)
    const bool phased = plan_.loops.dma_phases(op->name);
    std::vector<Loop> loops;
    Stmt cur = Stmt(op);
    while (const For *f = cur.as<For>()) {
        auto e = const_int(f->extent);
        if (phased || !e || plan_.pipelines.count(f)) break;
        loops.push_back(Loop{f->name, *e});
        cur = f->body;
    }
    if (const Store *st = cur.as<Store>()) return emit_nest(loops, st);
    if (const Block *b = cur.as<Block>(); b && !loops.empty())
        if (auto arg = arg_reduction_of(b)) return emit_arg_reduction(loops, *arg);
    if (*ext >= 2 && !phased && carried_depth_ < kMaxCarriedDepth) return emit_carried_loop(op, *ext, false);
    // A general loop.
    Reg r = b_.alloc();
    b_.loop(r, int32_t(*ext));
    st_.vars[op->name] = r;
    st_.extents[op->name] = *ext;
    emit(op->body);
    drain();
    if (phased) b_.barrier();
    b_.end_loop();
    st_.vars.erase(op->name);
    b_.release(r);
}

// The work an iteration leaves in flight at its end (the state update of one key tile while the
// next tile's scores MATMUL starts) stays in flight into the next iteration instead of being
// waited for at the back edge. The body is selected once to learn what it leaves in flight, then
// again assuming that is in flight when it starts (besides what was before the loop): its waits
// then cover the previous iteration's work. What the second selection leaves in flight beyond that
// assumption is waited for at its end, so the assumption holds for every iteration. Nests deeper
// than kMaxCarriedDepth carried loops are selected as plain loops, which bounds selection time.
void Selector::emit_carried_loop(const For *op, int64_t n, bool counted) {
    const PendingSet entry = hz_.pending();
    auto body = [&](Reg r) {
        if (counted) {
            Reg c = eval(op->extent);
            b_.loop(r, 0, c);
            b_.release(c);
        } else {
            b_.loop(r, int32_t(n));
        }
        st_.vars[op->name] = r;
        st_.extents[op->name] = n;
        emit(op->body);
    };
    Nested in_carried_loop(carried_depth_);
    const SelectionState before = st_;
    Reg r = b_.alloc();
    body(r);
    // Pending on LX ranges, the work left in flight is still found when the next iteration's
    // buffers take the LX of those whose scope ended.
    PendingSet assumed = hz_.pending();
    st_ = before;
    // What was in flight before the loop and the first iteration waits for is waited for before
    // the loop, not in every iteration (the queries a tile's first MATMUL reads, say).
    wait(tags_not_in(entry, assumed));
    for (const PendingWork &p : hz_.pending())
        if (!holds(assumed, p)) assumed.push_back(p);
    hz_.set_pending(assumed);
    r = b_.alloc();
    const size_t start = b_.size();
    body(r);
    wait(tags_not_in(hz_.pending(), assumed));
    // A body that never waits leaves every operation it issues in flight, iteration after
    // iteration: where the loop would issue more than a core records unwaited (the simulator's
    // 4096), each iteration waits for its work at its end.
    if (unwaited_issues(start, n) + int64_t(hz_.pending().size()) >= kMaxUnwaited) drain();
    b_.end_loop();
    st_.vars.erase(op->name);
    b_.release(r);
    // A counted loop may run no iteration: then what was assumed in flight still is.
    if (counted) {
        PendingSet now = hz_.pending();
        for (const PendingWork &p : assumed)
            if (!holds(now, p)) now.push_back(p);
        hz_.set_pending(std::move(now));
    }
}

// The asynchronous operations a loop of n iterations, whose LOOP is at code[start], issues when its
// body has no WAIT (each weighted by the counts of the loops inside it, a register count taken as
// kMaxUnwaited); 0 when it waits somewhere.
int64_t Selector::unwaited_issues(size_t start, int64_t n) const {
    const std::vector<Instr> &code = b_.code();
    std::vector<int64_t> weight{std::max<int64_t>(n, 1)};
    int64_t total = 0;
    for (size_t i = start + 1; i < code.size(); i++) {
        const Instr &in = code[i];
        if (in.op == Opcode::WAIT) return 0;
        if (in.op == Opcode::LOOP) {
            const int64_t k = in.a[1] ? kMaxUnwaited : std::max<int32_t>(in.a[2], 1);
            weight.push_back(std::min(weight.back() * k, kMaxUnwaited));
        } else if (in.op == Opcode::ENDLOOP && weight.size() > 1) {
            weight.pop_back();
        } else {
            const auto &ops = op_info(in.op).operands;
            if (std::find(ops.begin(), ops.end(), ::spyre::Operand::Tag) != ops.end()) total = std::min(total + weight.back(), kMaxUnwaited);
        }
    }
    return total;
}

// A loop whose trip count depends on the loops around it (Halide tightens an RDom to its
// predicate, e.g. the key tiles a causal query tile sees): LOOP takes the count from a register.
// Its largest count, over the ranges of the loops around it, bounds what it reaches.
void Selector::emit_dynamic_for(const For *op) {
    Scope<Interval> scope;
    for (auto &[name, extent] : st_.extents)
        if (st_.vars.count(name)) scope.push(name, Interval(Expr(int32_t(0)), Expr(int32_t(extent - 1))));
    // A core's share of a ring split that does not divide (the last cores take fewer rows, or none).
    if (!scope.contains(kCoreIdVar))
        scope.push(kCoreIdVar, Interval(Expr(int32_t(0)), Expr(int32_t(std::max(plan_.num_cores, 1) - 1))));
    Interval range = bounds_of_expr_in_scope(op->extent, scope);
    std::optional<int64_t> most = range.has_upper_bound() ? const_int(simplify(range.max)) : std::nullopt;
    // Invariants, not user errors: Halide clamps a tightened RDom by its extent, and dma_phases
    // and double buffering only take loops of constant extent (plan_pipelines).
    if (!most || *most > INT32_MAX)
        throw_internal("kernel ", plan_.kernel_name, ": internal: loop ", op->name, " runs a number of times (",
                    op->extent, ") with no constant bound over the loops around it");
    // dma_phases is the schedule's: a loop whose count differs from core to core (the tiles of an
    // uneven core share, 7 rows on 2 cores in tiles of 2) cannot keep its phases' barriers in step.
    if (plan_.loops.dma_phases(op->name))
        throw_error("kernel ", plan_.kernel_name, ": dma_phases: ", op->name,
                    " runs a number of times that differs from core to core or from one iteration of the loops "
                    "around it to the next, and every core must meet the same phase barriers; split the rows "
                    "so that each core's share is a whole number of tiles, or drop dma_phases");
    if (plan_.pipelines.count(op))
        throw_internal("kernel ", plan_.kernel_name, ": internal: loop ", op->name,
                    " runs a number of times that varies, which double buffering needs constant");
    // What the loop reaches is bounded again with its count's expression where the largest count
    // reaches too far (record_span).
    st_.dynamic_extents[op->name] = op->extent;
    if (carried_depth_ < kMaxCarriedDepth) {
        emit_carried_loop(op, std::max<int64_t>(*most, 0), true);
        st_.dynamic_extents.erase(op->name);
        return;
    }
    // The loop may run no iteration, and with it none of the WAITs its body issues: whatever is
    // in flight is waited for first, so that nothing after the loop relies on them.
    drain();
    Reg n = eval(op->extent);
    Reg r = b_.alloc();
    b_.loop(r, 0, n);
    b_.release(n);
    st_.vars[op->name] = r;
    st_.extents[op->name] = std::max<int64_t>(*most, 0);
    emit(op->body);
    drain();
    b_.end_loop();
    st_.vars.erase(op->name);
    st_.dynamic_extents.erase(op->name);
    b_.release(r);
}

}  // namespace selection

DeviceProgram select_instructions(const Halide::Internal::Stmt &s, KernelPlan &plan, const std::vector<std::string> &input_order,
                                  const std::vector<std::string> &outputs) {
    ProgramBuilder b(plan.kernel_name, plan.num_cores);
    // Halide makes Func names unique per process ("softmax$1"); the program shows the name the
    // author wrote unless two buffers of this kernel would then share it.
    std::map<std::string, int> base_count;
    auto base = [](const std::string &n) { return n.substr(0, n.find('$')); };
    for (auto &kv : plan.buffers)
        if (kv.second.in_device_memory()) base_count[base(kv.first)]++;
    auto add = [&](const std::string &name, BufferKind kind) {
        BufferInfo &bi = plan.buffer(name);
        std::string shown = base_count[base(name)] == 1 ? base(name) : name;
        bi.program_buffer = b.buffer(shown, kind, bi.type, bi.allocated_shape(), bi.layout);
    };
    for (const std::string &n : input_order) add(n, BufferKind::Input);
    for (const std::string &o : outputs) add(o, BufferKind::Output);
    for (auto &kv : plan.buffers)
        if (kv.second.place == Place::DeviceTemp) add(kv.first, BufferKind::Temp);
    selection::Selector sel(plan, std::move(b));
    sel.run(s);
    sel.check_spans();
    return sel.finish();
}

}  // namespace spyre
