// Instruction selection: DMA descriptors and instructions, and the per-core device-memory span check.
#include "selector.h"

#include <optional>

#include "affine.h"
#include "layout_dma.h"

namespace spyre {
namespace selection {

void Selector::emit_dma(const DmaCall &d, int tag, bool managed) {
    const BufferInfo &dev = plan_.buffer(d.dram);
    st_.func = dev.func;
    int eb = dtype_bytes(dev.type);
    DmaDesc desc;
    desc.sticks = int32_t((d.run * eb + sb_ - 1) / sb_);
    for (size_t i = 0; i < d.dims.size() && i < 3; i++) {
        desc.count[i] = int32_t(d.dims[i].count);
        desc.dram_stride[i] = d.dims[i].dram_stride * eb;
        desc.lx_stride[i] = int32_t(d.dims[i].lx_stride * eb);
    }
    const bool placed = needs_placement(dev);  // a layout reached through its view (layout_dma.h)
    std::set<std::string> reads, writes;
    if (d.store) reads = {d.lx}, writes = {d.dram};
    else reads = {d.dram}, writes = {d.lx};
    Queue q = d.store ? QStore : QLoad;
    if (!managed) before(q, reads, writes);
    record_span(d, dev, eb);
    auto issue = [&](const Expr &dram_bytes, const DmaCall &at, int desc_index) {
        const bool shared = !d.store && shared_by_cores(dram_bytes);
        Reg off = eval(dram_bytes);
        std::vector<Reg> regs;
        Lx la = dma_lx(at, regs);
        if (d.store) b_.dma_st(tag, dev.program_buffer, off, 0, la, desc_index);
        else b_.dma_ld(tag, dev.program_buffer, off, 0, la, desc_index, shared);
        b_.release(off);
        for (Reg r : regs) b_.release(r);
    };
    if (placed) {
        Scope<Interval> scope;
        for (auto &kv : st_.extents) scope.push(kv.first, Interval(Expr(0), Expr(int32_t(kv.second - 1))));
        scope.push(kCoreIdVar, Interval(Expr(0), Expr(int32_t(plan_.num_cores - 1))));
        CoreRuns cores;
        cores.count = plan_.num_cores;
        cores.runs = [&](int c) {  // no condition around the transfer is false on core c
            for (const Expr &cond : conditions_)
                if (is_const_zero(simplify(substitute(kCoreIdVar, Expr(c), cond), true, scope))) return false;
            return true;
        };
        for (const PlacedDma &p : place_dma(d, dev, sb_, scope, cores)) {
            DmaCall at = d;
            at.lx_offset = p.lx_offset;
            issue(p.dram_bytes, at, b_.intern_dma_desc(p.desc));
        }
    } else {
        issue(simplify(d.dram_offset * eb), d, b_.intern_dma_desc(desc));
    }
    if (!managed) after(tag, q, reads, writes);
}

// A load that two or more cores issue for the same bytes is a shared load, which crosses device
// memory once for all of them (docs/device_model.md): its address has no core index in it (every
// core's operand), or two cores' addresses are the same expression of the loops (a group of cores:
// the cores of one batch, or those of one column of a core grid). A gather's rows are data.
bool Selector::shared_by_cores(const Expr &dram_bytes) const {
    if (plan_.num_cores < 2 || reads_memory(dram_bytes)) return false;
    if (!expr_uses_var(dram_bytes, kCoreIdVar)) return true;
    std::vector<Expr> seen;
    for (int c = 0; c < plan_.num_cores; c++) {
        const Expr e = simplify(substitute(kCoreIdVar, Expr(c), dram_bytes));
        for (const Expr &o : seen)
            if (equal(e, o)) return true;
        seen.push_back(e);
    }
    return false;
}

Lx Selector::dma_lx(const DmaCall &d, std::vector<Reg> &regs) {
    Operand lo;
    lo.type = plan_.buffer(d.lx).type;
    lo.base = lx_base(d.lx);
    lo.index = d.lx_offset;
    return addr(lo, regs);
}

// The elements `offset` reaches on core c, bounded with each open dynamic loop's count evaluated at
// the values of the loops it depends on, which are enumerated (Halide's boundary-condition
// partitions: a stage's row loop runs fewer rows at the image's edges). nullopt when a count
// depends on something else or there are more than kMaxSpanPoints values to try.
std::optional<std::pair<int64_t, int64_t>> Selector::exact_span(const Expr &offset, int c) const {
    constexpr int64_t kMaxSpanPoints = 4096;
    std::vector<std::string> open, drivers;
    for (const auto &kv : st_.vars)
        if (kv.first != kCoreIdVar) {
            if (!st_.extents.count(kv.first)) return std::nullopt;
            open.push_back(kv.first);
        }
    for (const auto &[loop, extent] : st_.dynamic_extents) {
        if (!st_.vars.count(loop)) continue;
        for (const std::string &v : open) {
            if (v == loop || !expr_uses_var(extent, v)) continue;
            if (st_.dynamic_extents.count(v)) return std::nullopt;  // a count of a count
            if (std::find(drivers.begin(), drivers.end(), v) == drivers.end()) drivers.push_back(v);
        }
    }
    int64_t points = 1;
    for (const std::string &v : drivers) {
        points *= std::max<int64_t>(st_.extents.at(v), 1);
        if (points > kMaxSpanPoints) return std::nullopt;
    }
    std::optional<int64_t> lo, hi;
    std::vector<int64_t> at(drivers.size(), 0);
    for (int64_t n = 0; n < points; n++) {
        std::map<std::string, Expr> values{{kCoreIdVar, Expr(c)}};
        for (size_t i = 0; i < drivers.size(); i++) values[drivers[i]] = Expr(int32_t(at[i]));
        Scope<Interval> scope;
        bool runs = true;
        for (const std::string &v : open) {
            if (values.count(v)) continue;
            int64_t ext = st_.extents.at(v);
            auto dyn = st_.dynamic_extents.find(v);
            if (dyn != st_.dynamic_extents.end()) {
                std::optional<int64_t> k = const_int(simplify(substitute(values, dyn->second)));
                if (!k) return std::nullopt;
                ext = *k;
            }
            if (ext <= 0) runs = false;
            scope.push(v, Interval(Expr(int32_t(0)), Expr(int32_t(std::max<int64_t>(ext, 1) - 1))));
        }
        if (runs) {
            Interval in = bounds_of_expr_in_scope(simplify(substitute(values, offset)), scope);
            if (!in.has_lower_bound() || !in.has_upper_bound()) return std::nullopt;
            std::optional<int64_t> l = const_int(simplify(in.min)), h = const_int(simplify(in.max));
            if (!l || !h) return std::nullopt;
            lo = lo ? std::min(*lo, *l) : *l;
            hi = hi ? std::max(*hi, *h) : *h;
        }
        for (size_t i = 0; i < at.size() && ++at[i] == st_.extents.at(drivers[i]); i++) at[i] = 0;
    }
    if (!lo) return std::pair<int64_t, int64_t>{0, 0};  // no value of the loops runs it
    return std::pair<int64_t, int64_t>{*lo, *hi};
}

void Selector::record_span(const DmaCall &d, const BufferInfo &dev, int eb) {
    if (reads_memory(d.dram_offset)) st_.gathered.insert(d.dram);
    Scope<Interval> scope;
    for (auto &kv : st_.extents) scope.push(kv.first, Interval(Expr(0), Expr(int32_t(kv.second - 1))));
    int64_t extra = (d.run * eb + sb_ - 1) / sb_ * sb_;
    for (const DmaDim &dim : d.dims) extra += (dim.count - 1) * dim.dram_stride * eb;
    const int64_t image = dev.shape.empty() ? 0
                          : device_geometry(dev.layout, dev.allocated_shape(), dev.type, sb_).total_bytes;
    // An offset affine in the core index (the usual split over the cores) is bounded over the
    // loops once and shifted per core; any other, core by core.
    std::optional<int64_t> shared_lo, shared_hi;
    int64_t per_core = 0;
    if (std::optional<Affine> a = affine_in(d.dram_offset, {kCoreIdVar})) {
        Interval in = bounds_of_expr_in_scope(a->rest, scope);
        if (in.has_lower_bound() && in.has_upper_bound())
            shared_lo = const_int(in.min), shared_hi = const_int(in.max), per_core = a->of(kCoreIdVar);
    }
    for (int c = 0; c < plan_.num_cores; c++) {
        std::optional<int64_t> lo, hi;
        if (shared_lo && shared_hi) {
            lo = *shared_lo + per_core * c, hi = *shared_hi + per_core * c;
        } else {
            scope.push(kCoreIdVar, Interval::single_point(Expr(c)));
            Interval in = bounds_of_expr_in_scope(d.dram_offset, scope);
            scope.pop(kCoreIdVar);
            if (!in.has_lower_bound() || !in.has_upper_bound()) continue;
            lo = const_int(in.min), hi = const_int(in.max);
        }
        if (!lo || !hi) continue;
        auto &span = st_.spans[{c, d.dram}];
        int64_t a = *lo * eb, b2 = *hi * eb + extra;
        // Halide's bounds checks are host code the back end drops: a transfer that reaches past
        // the device image (vectors rounded up past the end of the rows) is refused here, when
        // this core surely runs it (every condition around it holds for the core, whatever the
        // loops' values; asked only of a transfer that reaches past, as simplifying them is dear).
        auto surely_runs = [&] {
            for (const Expr &cond : conditions_)
                if (!is_const_one(simplify(substitute(kCoreIdVar, Expr(c), cond)))) return false;
            return true;
        };
        // A dynamic loop's largest count, taken whatever the loops around it (an interval bound),
        // may reach past where no iteration does: bounded again loop value by loop value.
        if (image > 0 && (a < 0 || b2 > image) && !st_.dynamic_extents.empty())
            if (std::optional<std::pair<int64_t, int64_t>> ex = exact_span(d.dram_offset, c))
                a = ex->first * eb, b2 = ex->second * eb + extra;
        if (image > 0 && (a < 0 || b2 > image) && surely_runs())
            throw_error("Func ", dev.func, ": core ", c, " ", d.store ? "writes" : "reads", " bytes [", a, ", ", b2,
                        ") of ", place_name(dev.place), " '", dev.func, "', whose device image is ", image,
                        " bytes: a loop or vector reaches past its end (a vectorize wider than the extent it splits, "
                        "which Halide rounds up, or a split inside a ring split whose last cores take fewer "
                        "rows: their transfers are sized for the longest share); vectorize by a divisor of the "
                        "extent, or stick_vectorize, and split a core's share by a divisor of it");
        // In a layout reached through its view, the bytes touched are bounded by whole slabs.
        if (needs_placement(dev)) std::tie(a, b2) = placed_span(dev, sb_, a / eb, (b2 - 1) / eb);
        if (span.second == 0) span = {a, b2};
        else span = {std::min(span.first, a), std::max(span.second, b2)};
    }
}

void Selector::check_spans() const {
    for (const auto &kv : st_.spans) {
        int64_t span = kv.second.second - kv.second.first;
        if (span > plan_.machine.max_span_bytes) {
            const BufferInfo &b = plan_.buffer(kv.first.second);
            if (st_.gathered.count(kv.first.second)) {
                const int64_t lanes = plan_.lanes(b.type);
                const int64_t row_bytes = b.shape.empty() ? 0 : (b.shape[0] + lanes - 1) / lanes * lanes * dtype_bytes(b.type);
                throw_error("Func ", b.func, ": a gather may read any row of '", b.func, "', whose ", span,
                            " bytes are more than one core may address (", plan_.machine.max_span_bytes,
                            " bytes, max_span_bytes); split the table into parts of at most ",
                            row_bytes > 0 ? plan_.machine.max_span_bytes / row_bytes : 0, " rows and gather from each");
            }
            throw_error("Func ", b.func, ": core ", kv.first.first, " addresses ", span, " bytes of buffer '",
                        b.name, "', more than the per-core span limit of ", plan_.machine.max_span_bytes,
                        " bytes; ring_split the work over more cores");
        }
    }
}


}  // namespace selection
}  // namespace spyre
