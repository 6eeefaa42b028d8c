#include "infer_dma.h"
#include "user_terms.h"

#include <algorithm>
#include <tuple>

#include "affine.h"
#include "carried_reads.h"
#include "layout_dma.h"
#include "map_cores.h"
#include "strided_stick_reads.h"
#include "device/dtype_host.h"
#include "device/error.h"
#include "device/isa.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

struct Access {
    std::string buf;
    Expr base;  // element index of lane 0
    int lanes = 1;
    int index_lanes = 1;  // the lanes of the index (a clamped vector's too, whose lanes is 1)
    int64_t lane_stride = 1;  // a strided vector (a transposed read): its lanes are a dimension
    bool store = false;
    std::optional<ShiftCall> shift;  // a shifted read of this (home) access: its halo is staged too
    // Extents of the constant loops around the access inside the visited statement: a tile loop
    // and its tail share a name, so an extent is a property of the access, not of the name.
    std::map<std::string, int64_t> loop_ext;
};

// What to do about an access that starts inside a stick. The usual cause: vectors covering part of
// a stick of a narrower type (an fp32 accumulator of fp16 data) because the Func is vectorized by
// its own stick, which a wider stick_vectorize fixes.
std::string whole_stick_advice(const Access &a, int64_t lanes_t, bool vectorized) {
    // A clamped vector (a boundary condition's min/max of a ramp) is as wide as its index.
    const int lanes = a.lanes > 1 ? a.lanes : a.index_lanes;
    if (lanes > 1 && lanes < lanes_t && lanes_t % lanes == 0)
        return "its vectors are " + std::to_string(lanes) + " elements and a stick of " + a.buf + " holds " +
               std::to_string(lanes_t) + ": stick_vectorize(x, " + std::to_string(lanes_t / lanes) +
               ") on this Func makes each vector a whole stick of " + a.buf;
    // A Func without a vectorized loop (no vector access at this level) reads one element at a time.
    if (a.lanes == 1 && a.index_lanes == 1 && !a.store && !vectorized)
        return "the Func reads " + a.buf + " one element at a time (it has no stick_vectorize): stick_vectorize "
               "its innermost dimension, or copy " + a.buf + " into each core's LX with stage_all_in_lx(" + a.buf +
               ", <output>, Var::outermost()) (the compiler does for an input of at most 64 KiB)";
    if (a.lanes == 1 && a.index_lanes == 1 && !a.store)
        return "one element of " + a.buf + " is read for a whole vector: where " + a.buf + " is a broadcast "
               "parameter (a scale per row), copy it into each core's LX once with stage_all_in_lx(" + a.buf +
               ", <output>, Var::outermost()) (the compiler does for a 1-D input of at most 64 KiB); otherwise "
               "stick_vectorize or tile it in whole sticks";
    return "stick_vectorize or tile it in whole sticks";
}

class CollectAccesses : public IRVisitor {
public:
    explicit CollectAccesses(const KernelPlan &p) : plan(p) {}
    const KernelPlan &plan;
    std::vector<Access> device, all;
    bool complex = false;  // holds allocations, blocks or conditions: not a plain nest
    using IRVisitor::visit;
    void add(const std::string &name, const Expr &index, bool store) {
        Access a;
        a.buf = name;
        a.store = store;
        a.index_lanes = index.type().lanes();
        if (const Ramp *r = index.as<Ramp>()) {
            a.base = r->base;
            a.lanes = r->lanes;
            if (!is_const_one(r->stride)) {
                auto st = as_const_int(r->stride);
                if (st && *st > 1) a.lane_stride = *st;
                else a.lanes = -1;  // strided vectors are not sticks
            }
        } else {
            a.base = index;
        }
        a.loop_ext = loop_ext;
        a.shift = shift_;
        shift_.reset();
        all.push_back(a);
        if (plan.has(name) && plan.buffer(name).in_device_memory()) device.push_back(a);
    }
    void visit(const For *op) override {
        auto e = const_int(op->extent);
        if (!e) return IRVisitor::visit(op);
        auto saved = loop_ext;
        loop_ext[op->name] = *e;
        IRVisitor::visit(op);
        loop_ext = saved;
    }
    std::map<std::string, int64_t> loop_ext;
    std::optional<ShiftCall> shift_;  // set while visiting a shifted read's home load
    void visit(const Call *op) override {
        if (auto s = as_shift(Expr(op))) {
            shift_ = s;
            s->home.accept(this);
            for (size_t i = 1; i < op->args.size(); i++) op->args[i].accept(this);
            return;
        }
        IRVisitor::visit(op);
    }
    void visit(const Load *op) override {
        add(op->name, op->index, false);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        IRVisitor::visit(op);  // the value's loads happen before the store
        add(op->name, op->index, true);
    }
};

bool has_device_access(const Stmt &s, const KernelPlan &plan) {
    CollectAccesses c(plan);
    s.accept(&c);
    return !c.device.empty();
}

struct Loop {
    std::string name;
    int64_t extent;
};

// The name of the dimension a strided vector's lanes make in a footprint (no loop has it).
const char *const kLanesDim = "$lanes";

// How one group of accesses to a device buffer is moved at a staging level.
struct Footprint {
    std::string buf;
    bool load = false, store = false;
    bool first_store = false;  // first touched by a store over the whole footprint: no copy in
    int lanes = 1;
    int64_t lane_stride = 1;               // > 1: the lanes walk rows (a transposed read)
    std::map<std::string, int64_t> coeff;  // inner-variable coefficients (the group's identity)
    std::map<std::string, int64_t> ext;    // the extents of those variables' loops (identity too)
    Expr rest;                             // device element offset of the footprint's origin
    // A load at a constant offset into a stick (in[r + 1] of a running sum): the footprint starts
    // `skew` elements early, at the stick, so that the DMA does; key_rest is the accesses' own
    // offset (rest + skew), which identifies the group.
    Expr key_rest;
    int64_t skew = 0;
    int64_t run = 1;                       // contiguous elements
    std::vector<std::string> run_vars;     // inner variables merged into the run
    std::vector<std::pair<std::string, DmaDim>> outer;  // strided dimensions, innermost first
    int64_t front = 0, back = 0;           // halo sticks before and after each run (shifted reads)
    // A shift without an edge window reaching back before its home run: its reads there are elements
    // the program asked for, in the row before a home that starts one (a vector past the end of its
    // row, whose lanes shift back into it: concat's tail tile), not padding.
    bool plain_back_shift = false;
    int64_t lanes_per_stick = 1;
    // What the DMA moves of the run with its halo: a halo beyond the ends of the device rows is
    // read only by the padding lanes of the output (Halide keeps valid reads inside the input's
    // rows), so it is left out of the transfer, which stays inside the buffer.
    int64_t dma_front = 0, dma_run = 0;
    int64_t lx_elems = 0;
    std::string stage;                     // LX staging buffer
    // Whole padded rows of the device image, [rest, rest + run), copied to LX as they lie, so that
    // every access keeps its offset from the box's first element (box_footprint).
    bool box = false;
};

struct Level {
    bool ok = false;
    std::string why;
    std::string box_why;  // why a written buffer could not be staged as a box (box_footprint)
    bool transpose_hint = false;  // why says how to reorder a transposed read's loops
    bool internal = false;        // why is a broken invariant of the compiler, not the schedule's
    std::vector<Footprint> groups;
    int64_t bytes = 0;
};

class InferDma : public IRMutator {
public:
    InferDma(KernelPlan &p, int64_t budget) : plan_(p), budget_(budget) {}
    using IRMutator::visit;

    Stmt visit(const For *op) override { return nest(Stmt(op)); }
    Stmt visit(const Store *op) override { return nest(Stmt(op)); }

    // The conditions around a nest bound the iterations it runs (a tail `for t in [0, 2): if (t*64 +
    // 128 <= 129)` runs t = 0 alone; an else branch the iterations its condition leaves out), and so
    // where its reads fall in their rows (offsets_in_row).
    Stmt visit(const IfThenElse *op) override {
        path_.push_back(op->condition);
        Stmt then_case = mutate(op->then_case);
        path_.back() = !op->condition;
        Stmt else_case = op->else_case.defined() ? mutate(op->else_case) : Stmt();
        path_.pop_back();
        return IfThenElse::make(op->condition, then_case, else_case);
    }

    // LX held by enclosing allocations shrinks what a staging level may use.
    Stmt visit(const Allocate *op) override {
        int64_t bytes = 0;
        if (plan_.has(op->name) && plan_.buffer(op->name).place == Place::LX) bytes = plan_.buffer(op->name).bytes();
        live_ += bytes;
        Stmt s = IRMutator::visit(op);
        live_ -= bytes;
        return s;
    }

    // A Func produced by several nests (an init and an update) is staged once around all of them
    // when it fits, so the update does not read back what the init just wrote.
    Stmt visit(const ProducerConsumer *op) override {
        bool several = op->body.as<Block>() != nullptr;  // one nest alone is handled as a nest
        if (op->is_producer && several && plain_body(op->body) && has_device_access(op->body, plan_)) {
            Stmt staged = choose(op->body, {}, {}, op->body, op->name, false);
            if (staged.defined()) return ProducerConsumer::make(op->name, true, staged);
        }
        return IRMutator::visit(op);
    }

private:
    // A gather's fetch of one element's stick (lower_gathers), placed before the store that reads
    // it: part of the nest, its LX stick read in place.
    static bool element_fetch(const Evaluate *e) {
        const std::optional<DmaCall> d = as_dma(Stmt(e));
        return d && !d->store && reads_memory(d->dram_offset);
    }

    // A body of loop nests and stores only (no allocations, conditions or DMA yet, but an
    // element's fetch; with allocations, LX buffers computed inside it: allocations_ok).
    static bool plain_body(const Stmt &s, bool allocations_ok = false) {
        class V : public IRVisitor {
        public:
            bool ok = true, allocations_ok = false;
            using IRVisitor::visit;
            void visit(const Allocate *a) override {
                ok &= allocations_ok;
                IRVisitor::visit(a);
            }
            void visit(const IfThenElse *) override { ok = false; }
            void visit(const Evaluate *e) override {
                if (!is_const(e->value) && !element_fetch(e)) ok = false;
            }
        } v;
        v.allocations_ok = allocations_ok;
        s.accept(&v);
        return v.ok;
    }

    // Halide names the Func of an inline reduction after it (sum, sum$1, maximum, ...). One that a
    // nest cannot stage is usually computed inside a consumer's reduction loop, once per element,
    // because the Func that holds it has no schedule and was inlined (Halide's default).
    std::string inline_reduction_hint(const std::string &func) const {
        const std::string base = func.substr(0, func.find('$'));
        for (const char *r : {"sum", "product", "maximum", "minimum", "argmax", "argmin"})
            if (base == r)
                return "; " + base + " is an inline reduction, computed wherever its Func is used: a Func "
                       "with no schedule is inlined (Halide's default), so a reduction inside it is "
                       "recomputed for every element that reads it; give that Func device_root() or "
                       "scratchpad_root()";
        // A Func of the user's with an update and no schedule (a running sum left to Halide's default).
        for (const std::string &f : plan_.per_element_updates)
            if (f == func || f.substr(0, f.find('$')) == base)
                return "; " + base + " has an update definition and no schedule, so Halide computes it inside the "
                       "innermost loop of its consumer, all of it again for every element the consumer reads; give "
                       + base + " device_root(), scratchpad_root() or scratchpad_store_at(consumer, loop)";
        return "";
    }

    static bool only_stores(const Stmt &s) {
        if (const Block *b = s.as<Block>()) return only_stores(b->first) && only_stores(b->rest);
        const Evaluate *e = s.as<Evaluate>();
        return s.as<Store>() != nullptr || (e && element_fetch(e));
    }

    // Splits s into a chain of perfectly nested loops and the statement inside them.
    static void chain(const Stmt &s, std::vector<Loop> &loops, Stmt &leaf, std::vector<const For *> &fors) {
        Stmt cur = s;
        while (const For *f = cur.as<For>()) {
            auto e = const_int(f->extent);
            if (!e || f->for_type != ForType::Serial) break;
            loops.push_back(Loop{f->name, *e});
            fors.push_back(f);
            cur = f->body;
        }
        leaf = cur;
    }

    Stmt nest(const Stmt &s) {
        if (!has_device_access(s, plan_)) return s;
        std::vector<Loop> loops;
        std::vector<const For *> fors;
        Stmt leaf;
        chain(s, loops, leaf, fors);
        if (!leaf.as<Store>()) {
            // Several nests in one loop body: stage them together when their accesses fit one
            // level; otherwise each nest on its own.
            if (!fors.empty() && plain_body(leaf)) {
                // Stores with no loop between them (a Tuple update, argmax's index and value) are
                // one nest: staged somewhere even over the budget, as a single store would be.
                // The Func of the loop, for an error's "Func <name>": the loop names no Func.
                Stmt staged = choose(s, loops, fors, leaf, func_of_loop(fors.back()->name), only_stores(leaf));
                if (staged.defined()) return staged;
            }
            if (fors.empty()) return IRMutator::visit(s.as<For>());
            auto each_nest = [&] {
                for (const Loop &l : loops) outer_extent_[l.name] = l.extent;
                Stmt body = mutate(leaf);
                for (const Loop &l : loops) outer_extent_.erase(l.name);
                for (size_t i = fors.size(); i-- > 0;)
                    body = For::make(fors[i]->name, 0, fors[i]->extent, fors[i]->for_type, fors[i]->device_api, body);
                return body;
            };
            if (plain_body(leaf) || !plain_body(leaf, true)) return each_nest();
            // A body that computes LX buffers (a row's statistic at scratchpad_store_at) beside an
            // element it stores: where its nests cannot be staged one by one (the element is no
            // stick of its own: out(y) = sum(in(r, y) - m(y)), unvectorized), staged around the
            // loops as one, the LX buffers inside it.
            const KernelPlan saved_plan = plan_;
            const auto saved_extent = outer_extent_;
            const int64_t saved_live = live_;
            try {
                return each_nest();
            } catch (const Error &e) {
                if (e.kind() != ErrorKind::Refused) throw;
                plan_ = saved_plan;
                outer_extent_ = saved_extent;
                live_ = saved_live;
                allocations_inside_ = true;
                Stmt staged = choose(s, loops, fors, leaf, func_of_loop(fors.back()->name), false);
                allocations_inside_ = false;
                if (staged.defined()) return staged;
                throw;
            }
        }
        const Store *st = leaf.as<Store>();
        if (auto direct = direct_copy(loops, st)) return *direct;
        return choose(s, loops, fors, leaf, st->name, true);
    }

    // Picks the staging level of a nest (or of a loop whose body holds several nests).
    Stmt choose(const Stmt &s, const std::vector<Loop> &loops, const std::vector<const For *> &fors, const Stmt &leaf,
                const std::string &func, bool must) {

        std::string last_why, box_why;
        bool transpose_hint = false, last_internal = false;
        int chosen = -1, fallback = -1;
        // Half of what is free (the other half for the next iteration's copy), within the budget.
        const int64_t budget = std::min(budget_, (plan_.machine.lx_usable_bytes - live_) / 2);
        std::vector<Level> levels(loops.size() + 1);
        for (size_t l = 0; l <= loops.size(); l++) {
            levels[l] = analyse(loops, l, leaf, false);
            // Only where the footprints per access shape fail: the buffers written through
            // several shapes, staged as boxes (box_groups).
            if (!levels[l].ok) {
                Level boxed = analyse(loops, l, leaf, true);
                if (boxed.ok && boxed.bytes <= budget) levels[l] = boxed;
                else if (box_why.empty()) box_why = boxed.box_why;  // the outermost level's reason
            }
            if (!levels[l].ok) {
                // The transpose hint says what to change; a deeper level's stick error would not.
                if (!transpose_hint)
                    last_why = levels[l].why, transpose_hint = levels[l].transpose_hint, last_internal = levels[l].internal;
                continue;
            }
            if (levels[l].bytes <= budget) {
                chosen = int(l);
                break;
            }
            if (fallback < 0 || levels[l].bytes < levels[fallback].bytes) fallback = int(l);
        }
        // Grouping several nests is only worth it within the budget; a single nest must be staged somewhere.
        if (chosen < 0 && must) chosen = fallback;
        if (chosen < 0) {
            if (!must) return Stmt();
            const std::string name = plan_.has(func) ? plan_.buffer(func).func : func;
            // A buffer written through several shapes that could have been one box says why it
            // was not (the per-shape footprints' error would blame a stick boundary).
            throw_error_of(box_why.empty() && last_internal ? ErrorKind::Internal : ErrorKind::Refused, "Func ", name,
                           ": ", box_why.empty() ? last_why : box_why, inline_reduction_hint(name));
        }
        return stage(fors, size_t(chosen), levels[chosen], leaf, func);
    }

    // Footprints of every device access when staging inside loops[0..l-1] (around loops[l..]).
    Level analyse(const std::vector<Loop> &loops, size_t l, const Stmt &leaf, bool boxes) {
        Level lv;
        std::map<std::string, int64_t> extent;
        std::set<std::string> inner;
        for (size_t i = l; i < loops.size(); i++) {
            extent[loops[i].name] = loops[i].extent;
            inner.insert(loops[i].name);
        }
        // Loops inside a multi-statement body count as inner loops too.
        class InnerLoops : public IRVisitor {
        public:
            std::map<std::string, int64_t> *extent;
            std::set<std::string> *inner;
            bool ok = true;
            using IRVisitor::visit;
            void visit(const For *f) override {
                auto e = const_int(f->extent);
                if (!e || f->for_type != ForType::Serial) {
                    ok = false;
                } else {
                    (*extent)[f->name] = *e, inner->insert(f->name);
                }
                IRVisitor::visit(f);
            }
            bool allocations_ok = false;
            void visit(const Allocate *a) override {
                ok &= allocations_ok;
                IRVisitor::visit(a);
            }
            void visit(const IfThenElse *) override { ok = false; }
        } il;
        il.allocations_ok = allocations_inside_;
        il.extent = &extent;
        il.inner = &inner;
        leaf.accept(&il);
        if (!il.ok) {
            lv.why = "internal: staging body with allocations or conditions";
            lv.internal = true;
            return lv;
        }
        CollectAccesses acc(plan_);
        leaf.accept(&acc);
        const bool vectorized =
            std::any_of(acc.all.begin(), acc.all.end(), [](const Access &a) { return a.lanes != 1 || a.index_lanes != 1; });
        const std::set<std::string> boxed =
            boxes ? box_groups(acc.device, loops, l, extent, lv) : std::set<std::string>{};
        for (const Access &a : acc.device) {
            if (boxed.count(a.buf)) continue;
            const BufferInfo &bi = plan_.buffer(a.buf);
            int64_t lanes_t = plan_.lanes(bi.type);
            if (a.lanes < 0) {
                lv.why = "accesses " + a.buf + " with a strided vector; stick_vectorize the dimension of stride 1";
                return lv;
            }
            auto af = affine_in(a.base, inner);
            if (!af) {
                lv.why = "index of " + a.buf + " is not affine in its loops";
                return lv;
            }
            Footprint f;
            f.buf = a.buf;
            f.lanes = a.lanes;
            f.lane_stride = a.lane_stride;
            if (a.lane_stride > 1 && a.store) {
                lv.why = "stores " + a.buf + " with a strided vector; stick_vectorize the dimension of stride 1";
                return lv;
            }
            f.coeff = af->coeff;
            f.rest = simplify(af->rest);
            f.key_rest = f.rest;
            // A plain load at a constant offset into a stick starts its footprint at the stick.
            if (!a.store && !a.shift && a.lanes == 1 && !provably_multiple(f.rest, lanes_t)) {
                auto m = const_int(simplify(f.rest % int(lanes_t)));
                if (m && *m > 0 && *m < lanes_t && provably_multiple(simplify(f.rest - int(*m)), lanes_t)) {
                    f.skew = *m;
                    f.rest = simplify(f.rest - int(*m));
                }
            }
            for (auto &kv : af->coeff) {
                auto it = a.loop_ext.find(kv.first);
                f.ext[kv.first] = it != a.loop_ext.end() ? it->second : extent[kv.first];
            }
            // Dimensions sorted by stride: the lanes (stride 1), then loop variables.
            std::vector<std::tuple<int64_t, int64_t, std::string>> dims;  // coeff, extent, var
            // The lanes of a strided (transposed) read are a dimension of their own, kLanesDim.
            if (a.lanes > 1) dims.emplace_back(a.lane_stride, a.lanes, a.lane_stride > 1 ? kLanesDim : "");
            for (auto &kv : af->coeff) {
                if (kv.second < 0) {
                    lv.why = "walks " + a.buf + " backwards";
                    return lv;
                }
                dims.emplace_back(kv.second, f.ext[kv.first], kv.first);
            }
            std::sort(dims.begin(), dims.end());
            size_t i = 0;
            if (!dims.empty() && std::get<0>(dims[0]) == 1) {
                f.run = std::get<1>(dims[0]);
                if (!std::get<2>(dims[0]).empty()) f.run_vars.push_back(std::get<2>(dims[0]));
                i = 1;
                while (i < dims.size() && std::get<0>(dims[i]) == f.run && std::get<2>(dims[i]) != kLanesDim) {
                    f.run *= std::get<1>(dims[i]);
                    f.run_vars.push_back(std::get<2>(dims[i]));
                    i++;
                }
            }
            f.run += f.skew;
            if (f.run < lanes_t && !(a.lanes == 1 && dims.empty())) {
                // Runs shorter than a stick cannot be moved on their own.
            }
            int64_t run_pad = (f.run + lanes_t - 1) / lanes_t * lanes_t;
            int64_t lx_stride = run_pad;
            for (; i < dims.size(); i++) {
                auto [c, e, v] = dims[i];
                DmaDim d;
                d.count = e;
                d.dram_stride = c;
                d.lx_stride = lx_stride;
                lx_stride *= e;
                f.outer.emplace_back(v, d);
            }
            f.lx_elems = lx_stride;
            if (f.outer.size() > 3) {
                lv.why = "access to " + a.buf + " needs more than 4 DMA dimensions at this level";
                return lv;
            }
            for (auto &od : f.outer) {
                if (od.first == kLanesDim && od.second.dram_stride < lanes_t) {
                    // Not a transpose: the lanes pick every n-th element of each stick.
                    lv.why = strided_stick_read_refusal(a.buf, od.second.dram_stride);
                    return lv;
                }
                if (od.second.dram_stride % lanes_t) {
                    lv.why = "rows of " + a.buf + " do not start on a stick boundary";
                    return lv;
                }
            }
            if (!provably_multiple(f.rest, lanes_t)) {
                lv.why = "access to " + a.buf + " does not start on a stick boundary (" +
                         std::to_string(lanes_t) + " elements); " + whole_stick_advice(a, lanes_t, vectorized);
                return lv;
            }
            f.lanes_per_stick = lanes_t;
            if (a.shift) halo(*a.shift, a.lanes, af->coeff, f, lanes_t);
            // Merge with an existing group of the same shape.
            bool merged = false;
            for (Footprint &g : lv.groups) {
                if (g.buf == f.buf && g.coeff == f.coeff && g.ext == f.ext && g.lanes == f.lanes &&
                    g.lane_stride == f.lane_stride && equal(g.key_rest, f.key_rest)) {
                    if (a.store && g.skew) {
                        lv.why = "access to " + a.buf + " does not start on a stick boundary (" +
                                 std::to_string(lanes_t) + " elements); " + whole_stick_advice(a, lanes_t, vectorized);
                        return lv;
                    }
                    (a.store ? g.store : g.load) = true;
                    g.front = std::max(g.front, f.front);
                    g.back = std::max(g.back, f.back);
                    merged = true;
                    break;
                }
            }
            if (!merged) {
                // A group first written in full needs no copy in: its old contents are never read.
                (a.store ? f.store : f.load) = true;
                f.first_store = a.store;
                lv.groups.push_back(f);
            }
        }
        // A nest that reads a tile transposed writes rows of its output from the input's rows, and
        // the restickify (a VTRANSPOSE) writes its output rows back to back in LX: every loop merged
        // into a written run must be either a row of the transpose or the next sticks of a row
        // (the next input rows after those the run's elements so far cover), a loop inside the
        // rows' loop, so that one VTRANSPOSE covers whole output rows.
        std::map<std::string, size_t> depth;
        for (size_t i = 0; i < loops.size(); i++) depth[loops[i].name] = i;
        auto inside_rows = [&](const Footprint &t, const std::string &v) {
            if (!depth.count(v)) return false;
            for (auto &kv : t.coeff)
                if (kv.second == 1 && depth.count(kv.first) && depth.at(kv.first) > depth.at(v)) return false;
            return true;
        };
        for (const Footprint &g : lv.groups)
            for (const Footprint &t : lv.groups) {
                if (!g.store || t.lane_stride <= 1) continue;
                bool rows_back_to_back = true;
                int64_t covered = std::max(1, g.lanes);  // output elements of the run so far
                for (const std::string &v : g.run_vars) {
                    if (v.empty()) continue;
                    const int64_t c = t.coeff.count(v) ? t.coeff.at(v) : 0;
                    if (c != 1 && !(c == covered * t.lane_stride && inside_rows(t, v))) rows_back_to_back = false;
                    covered *= g.ext.count(v) ? g.ext.at(v) : 1;
                }
                if (!rows_back_to_back) {
                    lv.transpose_hint = true;
                    lv.why = "reads a tile across its sticks (a transpose) while writing rows of " + g.buf +
                             " longer than one stick; split the output's stick dimension by one stick and put "
                             "that loop outside its rows (split(x, xo, xi, lanes).reorder(xi, y, xo))";
                    return lv;
                }
            }
        // A written buffer must be reached through one group only, and its padded runs must not
        // overwrite neighbouring data.
        for (const Footprint &g : lv.groups) {
            const BufferInfo &bi = plan_.buffer(g.buf);
            int64_t lanes_t = plan_.lanes(bi.type);
            int n = 0;
            for (const Footprint &h : lv.groups)
                if (h.buf == g.buf) n++;
            bool written = false;
            for (const Footprint &h : lv.groups)
                if (h.buf == g.buf && h.store) written = true;
            if (written && n > 1) {
                lv.why = g.buf + " is written and read at different places in one loop nest";
                if (auto loop = carrying_loop(lv.groups, g.buf, loops)) {
                    const std::string f = bi.func.substr(0, bi.func.find('$'));
                    lv.why = "its update reads " + f + " where earlier iterations of loop " + user_loop_name(*loop) +
                             " wrote it (a scan), and " + f + " is in device memory, staged through LX in pieces "
                             "that would not hold those values; keep " + f + " in LX for the scan "
                             "(scratchpad_store_at or scratchpad_root)";
                }
                return lv;
            }
            if (!g.store) continue;
            int64_t run_pad = (g.run + lanes_t - 1) / lanes_t * lanes_t;
            bool whole = g.run % lanes_t == 0;
            // A run ending at the end of a padded row writes only padding beyond it.
            bool row_end = !bi.shape.empty() && g.run == bi.shape[0] &&
                           (bi.shape.size() == 1 || provably_multiple(g.rest, run_pad));
            // So does the tail of a one-dimensional buffer (the last 6 of 70 row maxima).
            bool buffer_end = bi.shape.size() == 1 && g.outer.empty() && provably_multiple(g.rest, lanes_t) &&
                              can_prove(g.rest + int(g.run) == int(bi.shape[0]));
            // A group copied in before it is written back stores the padding it loaded: a run of
            // 100 of a row padded to 128 writes the row's own 28 padding elements back unchanged.
            bool round_trip = g.load && !g.first_store && provably_multiple(g.rest, lanes_t);
            if (!whole && !row_end && !buffer_end && !round_trip) {
                lv.why = "stores runs of " + std::to_string(g.run) + " elements of " + g.buf +
                         ", not whole sticks of " + std::to_string(lanes_t);
                return lv;
            }
            for (auto &od : g.outer) {
                if (od.second.dram_stride < run_pad) {
                    lv.why = "stores overlapping rows of " + g.buf;
                    return lv;
                }
            }
        }
        for (Footprint &g : lv.groups) {
            const BufferInfo &bi = plan_.buffer(g.buf);
            const int64_t lanes_t = plan_.lanes(bi.type);
            const int64_t row = bi.shape.empty() ? 0 : (bi.shape[0] + lanes_t - 1) / lanes_t * lanes_t;
            g.dma_run = g.run;
            // Halide allows no update to read its own Func shifted along a vectorized pure variable.
            if (g.store && (g.front || g.back)) {
                lv.why = "internal: " + g.buf + " is read shifted and written in one loop nest";
                lv.internal = true;
                return lv;
            }
            if (row == 0) continue;
            if (g.store) {
                // A stored run reaching past the end of its padded row (a vector of int8 width over
                // fp16 rows) writes only padding lanes there, and those sticks are the next row's
                // (or past the buffer, for the last): moved up to the row's end, where every
                // iteration the DMA serves ends its row at the same place.
                // Rows without padding (elements as wide as their sticks): a dense vector past a row's
                // end is the next row's elements (a fused loop's vector), never padding.
                bool merged = bi.shape[0] >= row;
                for (const std::string &v : g.run_vars) merged |= !v.empty() && g.coeff.count(v) && g.coeff.at(v) >= row;
                std::optional<int64_t> end;
                bool uniform = true, past = false;
                if (auto os = offsets_in_row(g.rest, row, std::vector<Loop>(loops.begin(), loops.begin() + l)); os && !merged)
                    for (int64_t o : *os) {
                        const int64_t e = std::min(g.run, row - o);
                        past |= e < g.run;
                        uniform &= !end || *end == e;
                        end = e;
                    }
                // Where only some of the iterations the DMA serves reach past their row's end (the
                // last vector of 2 sticks over rows of 3), one transfer cannot stop at every row's
                // end, and the part past it would overwrite the next row's elements.
                if (past && !uniform) {
                    const std::string f = bi.func.substr(0, bi.func.find('$'));
                    lv.why = "vectors of " + std::to_string(g.run) + " elements of " + f + " run past the end of its rows of " +
                             std::to_string(bi.shape[0]) + " elements (" + std::to_string(row / lanes_t) +
                             " sticks), and with the rows looped inside the vectors' loop, a row's last vector would "
                             "overwrite the next row's first elements; stick_vectorize by a number of sticks that "
                             "divides " + std::to_string(row / lanes_t) + ", or keep the vectorized loop innermost";
                    return lv;
                }
                if (end && *end > 0 && *end < g.run) g.dma_run = *end;
                continue;
            }
            // The halo widens each run: the LX rows keep the device rows' element offsets.
            const int64_t home_run = g.run;
            g.run += (g.front + g.back) * lanes_t;
            g.dma_front = g.front, g.dma_run = g.run;
            if (g.front || g.back) {
                int64_t lx_stride = (g.run + lanes_t - 1) / lanes_t * lanes_t;
                for (auto &od : g.outer) {
                    od.second.lx_stride = lx_stride;
                    lx_stride *= od.second.count;
                }
                g.lx_elems = lx_stride;
            }
            // A run from a row's start moves nothing past the row's end (or, with whole rows merged
            // into it, past the last row's) nor before its start: only padding lanes read there.
            // A run longer than a row without padding covers whole rows (a fused loop's vector).
            bool rows_merged = home_run > row && bi.shape[0] >= row;
            for (const std::string &v : g.run_vars) rows_merged |= !v.empty() && g.coeff.count(v) && g.coeff.at(v) >= row;
            int64_t start = -g.front * lanes_t, end = home_run + g.back * lanes_t;  // relative to rest
            // o: where rest lies in its row (0 when rest is a row's start; a tail's second stick at 64).
            // The clip must be the same wherever the nest runs, as the DMA is.
            std::optional<std::pair<int64_t, int64_t>> clip;
            if (auto os = offsets_in_row(g.rest, row, std::vector<Loop>(loops.begin(), loops.begin() + l))) {
                for (int64_t o : *os) {
                    if (o != 0 && rows_merged) {
                        clip.reset();
                        break;
                    }
                    // The row the read starts in: the one holding rest, or a later one when the read
                    // begins past it (a clamped read shifted back across a row boundary: rest is rounded
                    // down into the previous row, and the elements read are all in the next).
                    const int64_t row_lo = (start + o > 0 ? (start + o) / row * row : 0) - o;
                    // A plain shift back from a home at a row boundary reads the previous row's end:
                    // kept (seed 5 case 963: dropping it left the tail's valid lanes reading stale LX).
                    // Lane 0 of a vector that runs is valid and reads there, so the home is past the end
                    // of that row (a column Halide rounded up): only padding lanes read it, and for the
                    // last row it lies past the buffer. Not moved.
                    const bool keep_front = g.plain_back_shift && o == 0 && !rows_merged && start < 0;
                    const std::pair<int64_t, int64_t> c =
                        keep_front ? std::pair<int64_t, int64_t>{start, 0}
                                   : std::pair<int64_t, int64_t>{std::max<int64_t>(start, row_lo),
                                                                 std::min(end, row_lo + (rows_merged ? home_run : row))};
                    if (clip && *clip != c) {
                        clip.reset();
                        break;
                    }
                    clip = c;
                }
            }
            if (clip) std::tie(start, end) = *clip;
            g.dma_front = -start / lanes_t;
            g.dma_run = end - start;
        }
        for (Footprint &g : lv.groups) lv.bytes += g.lx_elems * dtype_bytes(plan_.buffer(g.buf).type);
        lv.ok = true;
        return lv;
    }

    // A buffer the nest writes and reaches through accesses of different shapes (a scan's element
    // r - 1 and element r, an init and an update over other loops) or writes from inside a stick
    // has no one footprint per access shape that holds what the others wrote. It is staged as one
    // box instead: the whole padded rows its accesses touch, copied in before and out after, laid
    // out in LX as in device memory (box_footprint). The buffers so staged are returned and their
    // groups added to lv.
    std::set<std::string> box_groups(const std::vector<Access> &accesses, const std::vector<Loop> &loops, size_t l,
                                     const std::map<std::string, int64_t> &extent, Level &lv) const {
        std::map<std::string, std::vector<const Access *>> by_buf;
        for (const Access &a : accesses) by_buf[a.buf].push_back(&a);
        std::set<std::string> boxed;
        for (const auto &[buf, list] : by_buf) {
            const int64_t lanes_t = plan_.lanes(plan_.buffer(buf).type);
            bool stored = false, unaligned_store = false, shapes = false;
            for (const Access *a : list) {
                if (!a->store) continue;
                stored = true;
                if (!provably_multiple(a->base, lanes_t)) unaligned_store = true;
            }
            for (const Access *a : list)
                if (a->lanes != list[0]->lanes || !equal(simplify(a->base - list[0]->base), make_zero(a->base.type())))
                    shapes = true;
            if (!stored || (!unaligned_store && !shapes)) continue;
            if (std::optional<Footprint> f = box_footprint(buf, list, loops, l, extent, lv.box_why)) {
                lv.groups.push_back(*f);
                boxed.insert(buf);
            }
        }
        return boxed;
    }

    // The box of `list`'s accesses to `buf` when staging inside loops[0..l-1]: from the padded row
    // holding the first element any of them touches to the end of the row holding the last, when
    // those bounds are a constant distance apart, the buffer lies in rows (its default layout), and
    // the boxes of different iterations of the loops outside (and of different cores) do not
    // overlap, so that no iteration's copy in can miss another's copy out.
    std::optional<Footprint> box_footprint(const std::string &buf, const std::vector<const Access *> &list,
                                           const std::vector<Loop> &loops, size_t l,
                                           const std::map<std::string, int64_t> &extent, std::string &why) const {
        const BufferInfo &bi = plan_.buffer(buf);
        // In another layout the box's rows are placed one by one (layout_dma.h): rows of a
        // rank-2 buffer only.
        if (bi.shape.empty() || (needs_placement(bi) && bi.shape.size() > 2)) return std::nullopt;
        const int64_t lanes_t = plan_.lanes(bi.type);
        const int64_t row = (bi.shape[0] + lanes_t - 1) / lanes_t * lanes_t;
        Expr lo0;
        int64_t dmin = 0, dmax = 0;
        for (const Access *a : list) {
            if (a->shift || a->lanes < 1 || a->lane_stride != 1) return std::nullopt;
            Scope<Interval> scope;
            for (const auto &[v, e] : extent) {
                auto own = a->loop_ext.find(v);
                scope.push(v, Interval(Expr(0), Expr(int32_t((own != a->loop_ext.end() ? own->second : e) - 1))));
            }
            const Interval lo = bounds_of_expr_in_scope(a->base, scope);
            const Interval hi = bounds_of_expr_in_scope(simplify(a->base + (a->lanes - 1)), scope);
            if (!lo.has_lower_bound() || !hi.has_upper_bound()) return std::nullopt;
            if (!lo0.defined()) lo0 = simplify(lo.min);
            auto dl = const_int(simplify(lo.min - lo0)), dh = const_int(simplify(hi.max - lo0));
            if (!dl || !dh) return std::nullopt;
            dmin = std::min(dmin, *dl), dmax = std::max(dmax, *dh);
        }
        const Expr start = simplify(lo0 + int(dmin));
        auto into_row = const_int(simplify(start % int(row)));
        if (!into_row) return std::nullopt;
        const Expr base = simplify(start - int(*into_row));
        if (!provably_multiple(base, row)) return std::nullopt;
        const int64_t elems = (dmax - dmin + 1 + *into_row + row - 1) / row * row;
        // Each iteration of the loops outside the staging level, and each core, has a box of its
        // own: the base steps by at least the box along each of them. (A box another core's nest
        // also writes, as a ring split's tail on the last core writes the same row as the others,
        // would go back over their elements with the values it loaded before they wrote them.)
        std::set<std::string> outside;
        for (size_t i = 0; i < l; i++) outside.insert(loops[i].name);
        // A nest under `core == c` (map_cores' device-memory writers outside ring splits, between
        // barriers) runs on that core alone: its box is nobody else's while it runs.
        if (plan_.num_cores > 1 && !on_one_core()) outside.insert(kCoreIdVar);
        auto step = affine_in(base, outside);
        if (!step) return std::nullopt;
        for (const std::string &v : outside) {
            if (std::llabs(step->of(v)) >= elems) continue;
            const std::string f = bi.func.substr(0, bi.func.find('$'));
            why = f + " is written and read in device memory through accesses of different shapes (a scan, or an "
                  "update reading what another stage wrote), which the back end stages as whole rows only when "
                  "each " + std::string(v == kCoreIdVar ? "core" : "iteration of loop " + user_loop_name(v)) +
                  " has rows of its own; here " +
                  (v == kCoreIdVar ? "the nest's rows are not its core's own (an update that is not split over the "
                                     "cores as the pure definition is runs on core 0, over rows other cores wrote)"
                                   : "the iterations share rows") +
                  "; compute the scan in a Func kept in LX (scratchpad_store_at or scratchpad_root) and copy it to " + f;
            return std::nullopt;
        }
        Footprint f;
        f.buf = buf;
        f.box = true;
        f.load = f.store = true;  // elements the nest does not write go back as they came
        f.rest = f.key_rest = base;
        f.run = f.dma_run = row;
        f.lx_elems = elems;
        if (elems > row) f.outer.push_back({"$rows", DmaDim{elems / row, row, row}});
        f.lanes_per_stick = lanes_t;
        return f;
    }

    // Whether a condition around the nest being staged holds on one core only (core == c).
    bool on_one_core() const {
        for (const Expr &c : path_) {
            const EQ *eq = c.as<EQ>();
            const Variable *v = eq ? eq->a.as<Variable>() : nullptr;
            if (v && v->name == kCoreIdVar && is_const(eq->b)) return true;
        }
        return false;
    }

    // The loop whose earlier iterations wrote what a group of `buf` reads: the stored group and a
    // loaded one move alike, and the load sits a whole number of that loop's steps from the store
    // (row r - 1 of a scan over r: of the loops whose step divides the distance, the widest step).
    static std::optional<std::string> carrying_loop(const std::vector<Footprint> &groups, const std::string &buf,
                                                    const std::vector<Loop> &loops) {
        std::set<std::string> names;
        for (const Loop &l : loops) names.insert(l.name);
        for (const Footprint &st : groups) {
            if (st.buf != buf || !st.store) continue;
            for (const Footprint &ld : groups) {
                if (ld.buf != buf || &ld == &st || ld.coeff != st.coeff) continue;
                auto d = const_int(ld.key_rest - st.key_rest);
                auto outer = affine_in(st.rest, names);  // the loops outside the staging level
                if (!d || *d == 0 || !outer) continue;
                std::map<std::string, int64_t> coeff = st.coeff;
                for (const auto &[v, c] : outer->coeff) coeff[v] = c;
                std::optional<std::string> best;
                int64_t widest = 0;
                for (const auto &[v, c] : coeff)
                    if (c != 0 && *d % c == 0 && std::llabs(c) > widest) best = v, widest = std::llabs(c);
                if (best) return best;
            }
        }
        return std::nullopt;
    }

    // Halo sticks a shifted read needs around the run of its home vectors: the elements it reads,
    // relative to the run's first, bounded over the inner loops (a clamp or zero edge keeps the
    // reads of the edge vectors inside the rows; a plain shift reaches the neighbouring stick).
    static void halo(const ShiftCall &s, int lanes, const std::map<std::string, int64_t> &coeff, Footprint &f,
                     int64_t lanes_t) {
        Expr rel = make_zero(Int(32));
        Scope<Interval> scope;
        for (const std::string &v : f.run_vars) {
            if (v.empty() || !coeff.count(v)) continue;
            rel = rel + Variable::make(Int(32), v) * int(coeff.at(v));
            scope.push(v, Interval(make_zero(Int(32)), Expr(int(f.ext.at(v) - 1))));
        }
        Expr first = rel + s.shift, last = rel + (s.shift + lanes - 1);
        if (s.edge == kEdgeClamp) {
            Expr lo = simplify(rel + s.lo), hi = simplify(rel + s.hi);
            first = max(min(first, hi), lo), last = max(min(last, hi), lo);
        } else if (s.edge == kEdgeZero) {
            first = max(first, simplify(rel + s.lo)), last = min(last, simplify(rel + s.hi));
        } else if (s.edge == kEdgeMirrorImage || s.edge == kEdgeMirrorInterior) {
            // Inside the window the run itself; a reflection reaches back in from an end by at most
            // as far as the run went past it (vector_shift.h, vshift_read_span).
            Expr lo = simplify(rel + s.lo), hi = simplify(rel + s.hi);
            Expr ca = max(min(first, hi), lo), cb = max(min(last, hi), lo);
            Expr f2 = min(ca, max(lo, hi * 2 - last)), l2 = max(cb, min(hi, lo * 2 - first));
            first = f2, last = l2;
        }
        Interval lo = bounds_of_expr_in_scope(simplify(first), scope), hi = bounds_of_expr_in_scope(simplify(last), scope);
        auto lo_c = lo.has_lower_bound() ? const_int(lo.min) : std::nullopt;
        auto hi_c = hi.has_upper_bound() ? const_int(hi.max) : std::nullopt;
        // Bounds that do not resolve (a window moving with an outer loop): the plain shift's reach.
        int64_t a = lo_c ? *lo_c : std::min<int64_t>(0, s.shift), b = hi_c ? *hi_c : f.run - 1 + std::max(0, s.shift);
        // Sticks before the first element read and after the last are not staged (negative halo):
        // a zero edge may leave a home stick unread, and it may lie past the tensor.
        f.plain_back_shift = s.edge == 0 && a < 0;
        f.front = a < 0 ? (-a + lanes_t - 1) / lanes_t : -(a / lanes_t);
        f.back = b > f.run - 1 ? (b - (f.run - 1) + lanes_t - 1) / lanes_t : -((f.run - 1 - b) / lanes_t);
        if (b < a || f.run + (f.front + f.back) * lanes_t <= 0) f.front = f.back = 0;
    }

    // The new index of an access inside the staging buffer of its group.
    class Redirect : public IRMutator {
    public:
        Redirect(const std::vector<Footprint> &g, const std::set<std::string> &inner) : groups(g), inner(inner) {}
        const std::vector<Footprint> &groups;
        const std::set<std::string> &inner;
        using IRMutator::visit;
        std::map<std::string, int64_t> loop_ext;  // constant loops around the current node
        Stmt visit(const For *op) override {
            auto e = const_int(op->extent);
            if (!e) return IRMutator::visit(op);
            auto saved = loop_ext;
            loop_ext[op->name] = *e;
            Stmt r = IRMutator::visit(op);
            loop_ext = saved;
            return r;
        }
        // The group of an access: same shape, and the same loop extents where its own loops say.
        const Footprint *find(const std::string &name, const Expr &index) {
            Expr base = index;
            int lanes = 1;
            int64_t lane_stride = 1;
            if (const Ramp *r = index.as<Ramp>()) {
                base = r->base, lanes = r->lanes;
                if (auto st = as_const_int(r->stride)) lane_stride = *st;
            }
            for (const Footprint &g : groups)
                if (g.box && g.buf == name) return &g;
            auto af = affine_in(base, inner);
            if (!af) return nullptr;
            for (const Footprint &g : groups) {
                if (g.buf != name || g.coeff != af->coeff || g.lanes != lanes || g.lane_stride != lane_stride ||
                    !equal(g.key_rest, simplify(af->rest)))
                    continue;
                bool same = true;
                for (auto &kv : g.ext) {
                    auto it = loop_ext.find(kv.first);
                    if (it != loop_ext.end() && it->second != kv.second) same = false;
                }
                if (same) return &g;
            }
            return nullptr;
        }
        Expr new_index(const Footprint &g, const Expr &index) {
            if (g.box) {
                if (const Ramp *r = index.as<Ramp>()) return Ramp::make(simplify(r->base - g.rest), r->stride, r->lanes);
                return simplify(index - g.rest);
            }
            Expr b = make_zero(Int(32));
            int64_t lane_lx_stride = 1;
            for (const std::string &v : g.run_vars) b = b + Variable::make(Int(32), v) * int(g.coeff.at(v));
            for (auto &od : g.outer) {
                if (od.first == kLanesDim) lane_lx_stride = od.second.lx_stride;
                else b = b + Variable::make(Int(32), od.first) * int(od.second.lx_stride);
            }
            b = simplify(b + int(g.front * g.lanes_per_stick + g.skew));
            if (const Ramp *r = index.as<Ramp>())
                return Ramp::make(b, g.lane_stride > 1 ? Expr(int(lane_lx_stride)) : r->stride, r->lanes);
            return b;
        }
        Expr visit(const Load *op) override {
            const Footprint *g = find(op->name, op->index);
            if (!g) return IRMutator::visit(op);
            return Load::make(op->type, g->stage, new_index(*g, op->index), Buffer<>(), Parameter(), op->predicate,
                              ModulusRemainder());
        }
        Stmt visit(const Store *op) override {
            Expr value = mutate(op->value);
            const Footprint *g = find(op->name, op->index);
            if (!g) return Store::make(op->name, value, op->index, op->param, op->predicate, op->alignment);
            return Store::make(g->stage, value, new_index(*g, op->index), Parameter(), op->predicate,
                               ModulusRemainder());
        }
    };

    Stmt stage(const std::vector<const For *> &fors, size_t l, Level &lv, const Stmt &leaf, const std::string &func) {
        std::set<std::string> inner;
        for (size_t i = l; i < fors.size(); i++) inner.insert(fors[i]->name);
        class Loops : public IRVisitor {
        public:
            std::set<std::string> *inner;
            using IRVisitor::visit;
            void visit(const For *f) override {
                inner->insert(f->name);
                IRVisitor::visit(f);
            }
        } lv_loops;
        lv_loops.inner = &inner;
        leaf.accept(&lv_loops);
        for (Footprint &g : lv.groups) {
            const BufferInfo &src = plan_.buffer(g.buf);
            g.stage = g.buf + ".lx" + std::to_string(counter_++);
            BufferInfo b;
            b.name = g.stage;
            b.func = src.func;
            b.type = src.type;
            b.place = Place::LX;
            b.elems = g.lx_elems;
            b.staging = true;
            plan_.buffers[b.name] = b;
        }
        Redirect r(lv.groups, inner);
        Stmt body = r.mutate(leaf);
        for (size_t i = fors.size(); i-- > l;)
            body = For::make(fors[i]->name, 0, fors[i]->extent, ForType::Serial, fors[i]->device_api, body);
        // A read-only footprint that stays put across the loops of the nest around the staging level
        // (a bias row read by every row of a tile) is loaded once, outside them: the same LX, no
        // traffic per iteration.
        std::set<std::string> stored;
        for (const Footprint &g : lv.groups)
            if (g.store) stored.insert(g.buf);
        std::vector<size_t> level(lv.groups.size(), l);
        for (size_t gi = 0; gi < lv.groups.size(); gi++) {
            const Footprint &g = lv.groups[gi];
            if (!g.load || g.store || stored.count(g.buf)) continue;
            while (level[gi] > 0 && !expr_uses_var(g.rest, fors[level[gi] - 1]->name)) level[gi]--;
        }
        auto wrap = [&](Stmt s, size_t at) {
            std::vector<Stmt> seq;
            for (size_t gi = 0; gi < lv.groups.size(); gi++) {
                const Footprint &g = lv.groups[gi];
                if (level[gi] == at && g.load && !g.first_store) seq.push_back(checked_dma(dma_of(g, false), func));
            }
            seq.push_back(s);
            if (at == l)
                for (const Footprint &g : lv.groups)
                    if (g.store) seq.push_back(checked_dma(dma_of(g, true), func));
            s = Block::make(seq);
            for (size_t gi = 0; gi < lv.groups.size(); gi++) {
                const Footprint &g = lv.groups[gi];
                if (level[gi] == at)
                    s = Allocate::make(g.stage, type_of(plan_.buffer(g.stage).type), MemoryType::VTCM,
                                       {Expr(g.lx_elems)}, const_true(), s);
            }
            return s;
        };
        Stmt s = wrap(body, l);
        for (size_t i = l; i-- > 0;) {
            s = For::make(fors[i]->name, 0, fors[i]->extent, ForType::Serial, fors[i]->device_api, s);
            s = wrap(s, i);
        }
        return s;
    }

    // A run longer than the padded row it steps by would spill into the next row: the Func's
    // vectors, rounded up to whole sticks of its own type, are wider than the argument's padded
    // rows (an int8 Func's 128-element vectors over fp16 rows padded to 64). Halide's bounds
    // checks are host code the back end drops, so the kernel is refused here, by name.
    Stmt checked_dma(const DmaCall &d, const std::string &func) {
        const BufferInfo &b = plan_.buffer(d.dram);
        if (b.shape.size() >= 2) {
            const int64_t lanes = plan_.lanes(b.type), row = (b.shape[0] + lanes - 1) / lanes * lanes;
            for (const DmaDim &dim : d.dims)
                if (dim.count > 1 && dim.dram_stride == row && d.run > row)
                    throw_error("Func ", plan_.has(func) ? plan_.buffer(func).func : func, ": ",
                                d.store ? "writes" : "reads", " rows of ", d.run, " elements of ", place_name(b.place),
                                " '", b.func, "', whose ", b.shape[0], " columns are padded to ", row,
                                " (whole sticks of ", lanes, " ", dtype_name(b.type),
                                "): its vectors are wider than the padded rows (an int8 or uint8 vector is 128 "
                                "elements); give the rows a column count that pads to whole vectors, or vectorize "
                                "by fewer elements");
        }
        return make_dma(d);
    }

    static DmaCall dma_of(const Footprint &g, bool store) {
        DmaCall d;
        d.store = store;
        d.dram = g.buf;
        d.lx = g.stage;
        d.dram_offset = simplify(g.rest - int(g.dma_front * g.lanes_per_stick));
        d.lx_offset = Expr(int((g.front - g.dma_front) * g.lanes_per_stick));
        d.run = g.dma_run;  // a stored run clipped at its row's end too
        for (auto &od : g.outer) d.dims.push_back(od.second);
        return d;
    }

    static Type type_of(DType t) { return Type(dtype_host_type(t)); }

    // A nest that only copies between device memory and an LX buffer is one DMA.
    std::optional<Stmt> direct_copy(const std::vector<Loop> &loops, const Store *st) {
        const Load *ld = st->value.as<Load>();
        if (!ld || !plan_.has(ld->name) || !plan_.has(st->name)) return std::nullopt;
        const BufferInfo &sb = plan_.buffer(st->name), &lb = plan_.buffer(ld->name);
        bool load_dir = lb.in_device_memory() && !sb.in_device_memory();
        bool store_dir = sb.in_device_memory() && !lb.in_device_memory();
        if ((!load_dir && !store_dir) || sb.type != lb.type) return std::nullopt;
        const std::string &dev = load_dir ? ld->name : st->name;
        const std::string &lx = load_dir ? st->name : ld->name;
        Expr dev_idx = load_dir ? ld->index : st->index, lx_idx = load_dir ? st->index : ld->index;
        std::set<std::string> inner;
        std::map<std::string, int64_t> extent;
        for (const Loop &lp : loops) inner.insert(lp.name), extent[lp.name] = lp.extent;
        int lanes = 1;
        Expr db = dev_idx, lb_ = lx_idx;
        if (const Ramp *r = dev_idx.as<Ramp>()) {
            const Ramp *q = lx_idx.as<Ramp>();
            if (!q || !is_const_one(r->stride) || !is_const_one(q->stride)) return std::nullopt;
            db = r->base, lb_ = q->base, lanes = r->lanes;
        }
        auto ad = affine_in(db, inner), al = affine_in(lb_, inner);
        if (!ad || !al) return std::nullopt;
        int64_t lanes_t = plan_.lanes(sb.type);
        // Dimensions by device stride; the lanes and the variables merged into the run must be
        // contiguous on both sides.
        std::vector<std::tuple<int64_t, int64_t, int64_t>> dims;  // dev coeff, extent, lx coeff
        if (lanes > 1) dims.emplace_back(1, lanes, 1);
        for (const Loop &lp : loops) {
            int64_t cd = ad->of(lp.name), cl = al->of(lp.name);
            if (cd == 0 && cl == 0) continue;
            if (cd <= 0 || cl <= 0) return std::nullopt;
            dims.emplace_back(cd, lp.extent, cl);
        }
        std::sort(dims.begin(), dims.end());
        if (dims.empty() || std::get<0>(dims[0]) != 1 || std::get<2>(dims[0]) != 1) return std::nullopt;
        int64_t run = std::get<1>(dims[0]);
        const BufferInfo &dev_buf = plan_.buffer(dev);
        const int64_t row = dev_buf.shape.empty() ? 0 : (dev_buf.shape[0] + lanes_t - 1) / lanes_t * lanes_t;
        int64_t x_extent = 0;  // along the device row, before whole rows merge into the run
        size_t i = 1;
        while (i < dims.size() && std::get<0>(dims[i]) == run && std::get<2>(dims[i]) == run) {
            if (!x_extent && std::get<0>(dims[i]) >= row) x_extent = run;
            run *= std::get<1>(dims[i++]);
        }
        if (!x_extent) x_extent = run;
        DmaCall d;
        d.store = store_dir;
        d.dram = dev;
        d.lx = lx;
        d.dram_offset = simplify(ad->rest);
        d.lx_offset = simplify(al->rest);
        d.run = run;
        int64_t run_pad = (run + lanes_t - 1) / lanes_t * lanes_t;
        for (; i < dims.size(); i++) {
            auto [cd, e, cl] = dims[i];
            if (cd % lanes_t || cl % lanes_t || cl < run_pad) return std::nullopt;
            if (store_dir && cd < run_pad) return std::nullopt;
            d.dims.push_back(DmaDim{e, cd, cl});
        }
        if (d.dims.size() > 3) return std::nullopt;
        if (!provably_multiple(d.dram_offset, lanes_t) || !provably_multiple(d.lx_offset, lanes_t)) return std::nullopt;
        // A copy of rows longer than the device rows (a stick-vectorized consumer reading past the
        // input's end, in(x + c)): only its padding lanes read the part past the row, so the DMA
        // moves the row and stays inside the buffer.
        bool rows = row > 0 && x_extent > row && d.run == x_extent && provably_multiple(d.dram_offset, row);
        for (const DmaDim &dim : d.dims) rows = rows && dim.dram_stride % row == 0;
        if (load_dir && rows) d.run = row;
        // The same for a single row read past a buffer of one row.
        auto off = const_int(d.dram_offset);
        int64_t elems = row;  // the padded device image
        for (size_t k = 1; k < dev_buf.shape.size(); k++) elems *= dev_buf.shape[k];
        if (load_dir && d.dims.empty() && off && row > 0 && *off + d.run > elems && *off < elems) d.run = elems - *off;
        if (store_dir && run % lanes_t) {
            bool row_end = !sb.shape.empty() && run == sb.shape[0];
            if (!row_end) return std::nullopt;
        }
        return checked_dma(d, st->name);
    }

    // Where `rest` (a device element offset) falls in its padded row of `row` elements: the offsets
    // over the iterations of the loops around the staging level (`outer`, and those around the nest)
    // that the enclosing conditions allow. nullopt when that is not known.
    std::optional<std::set<int64_t>> offsets_in_row(const Expr &rest, int64_t row, const std::vector<Loop> &outer) const {
        std::map<std::string, int64_t> extent = outer_extent_;
        for (const Loop &l : outer) extent[l.name] = l.extent;
        std::set<std::string> names;
        for (const auto &kv : extent) names.insert(kv.first);
        auto af = affine_in(simplify(rest), names);
        if (!af) return std::nullopt;
        // Loops that step by whole rows do not move the offset; the others are enumerated.
        std::vector<std::pair<std::string, int64_t>> vars;  // (name, coefficient)
        int64_t points = 1;
        for (const auto &[v, c] : af->coeff) {
            if (c % row == 0) continue;
            vars.emplace_back(v, c);
            points *= extent.at(v);
            if (points > 4096) return std::nullopt;
        }
        const Expr r = simplify(af->rest);
        int64_t k = 0;
        if (auto c = const_int(r)) {
            k = *c;
        } else if (const Add *a = r.as<Add>()) {
            if (auto c2 = const_int(a->b)) k = *c2;
        }
        if (!provably_multiple(simplify(r - int(k)), row)) return std::nullopt;
        // The conditions that rule iterations out (checked at up to 512 iterations; beyond, every
        // iteration counts, which only widens the set).
        std::vector<Expr> conds;
        for (const Expr &c : path_)
            for (const auto &v : vars)
                if (points <= 512 && expr_uses_var(c, v.first)) {
                    conds.push_back(c);
                    break;
                }
        std::set<int64_t> offsets;
        for (int64_t p = 0; p < points; p++) {
            int64_t q = p, o = k;
            std::map<std::string, Expr> values;
            for (const auto &[v, c] : vars) {
                const int64_t e = extent.at(v), i = q % e;
                q /= e;
                o += c * i;
                values[v] = Expr(int(i));
            }
            bool runs = true;
            for (const Expr &c : conds) runs = runs && !can_prove(!substitute(values, c));
            if (runs) offsets.insert((o % row + row) % row);
        }
        if (offsets.empty()) return std::nullopt;
        return offsets;
    }

    KernelPlan &plan_;
    int64_t budget_;
    int64_t live_ = 0;
    std::map<std::string, int64_t> outer_extent_;  // the loops around the nest being staged
    std::vector<Expr> path_;                       // the conditions that hold there
    int counter_ = 0;
    bool allocations_inside_ = false;  // analyse() takes a body that allocates LX buffers
};

}  // namespace

Stmt infer_dma(const Stmt &s, KernelPlan &plan, int64_t budget_bytes) {
    if (budget_bytes <= 0) budget_bytes = plan.machine.lx_usable_bytes / 2;
    return InferDma(plan, budget_bytes).mutate(s);
}

}  // namespace spyre
