#include "layout_dma.h"

#include <algorithm>
#include <numeric>

#include "device/error.h"
#include "device/layout.h"
#include "map_cores.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// The view's rows and the layout's slabs. A view element index o splits into x = o % row (the
// stick dim, padded to whole sticks) and rest = o / row (the other dims, flattened in the
// layout's order); rest splits again at the stick count's place: lo = rest % inner (the dims the
// layout keeps inside the stick count) and hi = rest / inner. In the layout, element o is at
//   ((hi * sticks + x / lanes) * inner + lo) * stick_bytes + (x % lanes) * elem_bytes.
struct Geometry {
    int64_t eb = 2, sb = 128, lanes = 64;
    int64_t sticks = 1;  // sticks along the stick dim
    int64_t row = 64;    // view elements of one row: sticks * lanes
    int64_t inner = 1;   // elements of the dims inside the stick count
};

Geometry geometry_of(const BufferInfo &dev, int64_t sb) {
    Geometry g;
    g.eb = dtype_bytes(dev.type), g.sb = sb, g.lanes = sb / g.eb;
    g.sticks = (dev.shape[0] + g.lanes - 1) / g.lanes;
    g.row = g.sticks * g.lanes;
    const int rank = int(dev.shape.size());
    std::vector<int> order = dev.layout.order.empty() ? default_layout(rank).order : dev.layout.order;
    bool inside = false;
    for (int d : order) {
        if (inside) g.inner *= dev.shape[size_t(d)];
        inside |= d == dev.layout.stick_dim;
    }
    return g;
}

struct Atom {
    int64_t count = 1;
    int64_t dram = 0;  // bytes
    int64_t lx = 0;    // bytes
};

// The largest value `e` takes over `bounds`, if known.
std::optional<int64_t> max_of(const Expr &e, const Scope<Interval> &bounds) {
    Interval in = bounds_of_expr_in_scope(e, bounds);
    if (!in.has_upper_bound()) return std::nullopt;
    auto k = as_const_int(simplify(in.max));
    return k ? std::optional<int64_t>(*k) : std::nullopt;
}

// True when x (in [0, period)) plus `extent` provably stays inside one aligned block of `period`:
// by x's bounds, or by its alignment (x = modulus * k + remainder, blocks of gcd(modulus, period)).
bool provably_within(const Expr &x, int64_t extent, int64_t period, const Scope<Interval> &bounds) {
    if (auto hi = max_of(x, bounds); hi && *hi + extent <= period) return true;
    ModulusRemainder mr = modulus_remainder(x);
    int64_t block = mr.modulus == 0 ? period : std::gcd(mr.modulus, period);
    if (mr.modulus == 0) return mr.remainder >= 0 && mr.remainder % period + extent <= period;
    return mr.remainder % block + extent <= block;
}

// The same, or else core by core: the cores' shares are often divisions of the core index, which
// the simplifier resolves only once the index is a number.
bool stays_within(const Expr &x, int64_t extent, int64_t period, const Scope<Interval> &bounds, const CoreRuns &cores) {
    if (provably_within(x, extent, period, bounds)) return true;
    if (!expr_uses_var(x, kCoreIdVar)) return false;
    for (int c = 0; c < cores.count; c++)
        if (cores.runs(c) && !provably_within(simplify(substitute(kCoreIdVar, Expr(c), x), true, bounds), extent, period, bounds))
            return false;
    return true;
}

// True when x (never negative) is provably 0, or else core by core.
bool provably_zero(const Expr &x, const Scope<Interval> &bounds, const CoreRuns &cores) {
    auto zero = [&](const Expr &e) {
        auto hi = max_of(e, bounds);
        return is_const_zero(e) || (hi && *hi <= 0);
    };
    if (zero(x)) return true;
    if (!expr_uses_var(x, kCoreIdVar)) return false;
    for (int c = 0; c < cores.count; c++)
        if (cores.runs(c) && !zero(simplify(substitute(kCoreIdVar, Expr(c), x), true, bounds))) return false;
    return true;
}

bool stick_aligned(const Expr &x, int64_t lanes) {
    ModulusRemainder mr = modulus_remainder(x);
    return mr.modulus % lanes == 0 && mr.remainder % lanes == 0;
}

}  // namespace

bool needs_placement(const BufferInfo &dev) {
    return dev.in_device_memory() && dev.shape.size() > 1 && !stick_count_innermost(dev.layout, int(dev.shape.size()));
}

std::vector<PlacedDma> place_dma(const DmaCall &d, const BufferInfo &dev, int64_t sb, const Scope<Interval> &bounds,
                                 const CoreRuns &cores) {
    const Geometry g = geometry_of(dev, sb);
    const std::string what = "Func " + dev.func + ": device layout " + layout_to_string(dev.layout) + ": ";
    const Expr o = simplify(d.dram_offset, true, bounds);
    const Expr row = Expr(int32_t(g.row)), inner = Expr(int32_t(g.inner));
    const Expr x = simplify(o % row, true, bounds), rest = simplify(o / row, true, bounds);
    const Expr lo = simplify(rest % inner, true, bounds);
    if (!stick_aligned(x, g.lanes) && !provably_zero(simplify(x % Expr(int32_t(g.lanes)), true, bounds), bounds, cores))
        throw_error(what, "a transfer starts at an element the compiler cannot prove is the first of a stick; in "
                          "this layout a transfer moves whole sticks of the stick dimension");

    std::vector<Atom> atoms;
    int64_t x_extent = 0;                       // view elements of the row the transfer reaches past x
    std::vector<std::pair<Atom, int64_t>> rows;  // steps of `rest`: the atom with its step count
    const int64_t run_sticks = (d.run + g.lanes - 1) / g.lanes;
    if (run_sticks <= 1) {
        x_extent = g.lanes;
    } else if (stays_within(x, run_sticks * g.lanes, g.row, bounds, cores)) {
        atoms.push_back({run_sticks, g.inner * g.sb, g.sb});
        x_extent = run_sticks * g.lanes;
    } else if (provably_zero(x, bounds, cores) && run_sticks * g.lanes % g.row == 0) {
        // Whole rows: the sticks of each row, then the rows (a run that ends inside a row is not
        // one: moving its whole last row would reach past the LX tile).
        atoms.push_back({g.sticks, g.inner * g.sb, g.sb});
        rows.push_back({{(d.run + g.row - 1) / g.row, 0, g.row * g.eb}, 1});
        x_extent = g.row;
    } else {
        throw_error(what, "a run of ", d.run, " elements crosses rows without starting at one or ending at one's "
                          "end; stage whole rows or whole sticks of a row");
    }
    for (const DmaDim &dim : d.dims) {
        if (dim.count <= 1) continue;
        const int64_t lx = dim.lx_stride * g.eb;
        if (dim.dram_stride == 0) {
            atoms.push_back({dim.count, 0, lx});
        } else if (dim.dram_stride > 0 && dim.dram_stride < g.row && dim.dram_stride % g.lanes == 0) {
            atoms.push_back({dim.count, dim.dram_stride / g.lanes * g.inner * g.sb, lx});
            x_extent += (dim.count - 1) * dim.dram_stride;
        } else if (dim.dram_stride > 0 && dim.dram_stride % g.row == 0) {
            rows.push_back({{dim.count, 0, lx}, dim.dram_stride / g.row});
        } else {
            throw_error(what, "a transfer steps ", dim.dram_stride, " elements, not whole sticks or whole rows");
        }
    }
    if (x_extent > g.lanes && !stays_within(x, x_extent, g.row, bounds, cores))
        throw_error(what, "a transfer reaching ", x_extent,
                    " elements along the stick dimension may cross into the next row; split the stick dimension by a "
                    "divisor of its sticks");

    // Steps of `rest`: a multiple of `inner` steps the dims outside the stick count; a smaller step
    // the dims inside it, which must not carry out of them.
    int64_t lo_extent = 0;
    std::vector<std::pair<Atom, int64_t>> inside;
    for (auto &[a, t] : rows) {
        if (t % g.inner == 0) {
            atoms.push_back({a.count, t / g.inner * g.sticks * g.inner * g.sb, a.lx});
        } else if (t < g.inner) {
            inside.push_back({a, t});
            lo_extent += (a.count - 1) * t;
        } else {
            throw_error(what, "a transfer steps ", t, " rows, which is neither inside nor a multiple of the ", g.inner,
                        " rows the layout keeps inside its stick count");
        }
    }
    if (!inside.empty()) {
        if (stays_within(lo, lo_extent + 1, g.inner, bounds, cores)) {
            for (auto &[a, t] : inside) atoms.push_back({a.count, t * g.sb, a.lx});
        } else if (inside.size() == 1 && g.inner % inside[0].second == 0 &&
                   (inside[0].first.count * inside[0].second) % g.inner == 0 &&
                   provably_zero(lo, bounds, cores)) {
            // Whole slabs: the rows of a slab, then the slabs.
            auto [a, t] = inside[0];
            const int64_t per_slab = g.inner / t;
            atoms.push_back({per_slab, t * g.sb, a.lx});
            atoms.push_back({a.count / per_slab, g.sticks * g.inner * g.sb, a.lx * per_slab});
        } else {
            throw_error(what, "a transfer's rows may run past the ", g.inner,
                        " rows the layout keeps inside its stick count; tile those dimensions by divisors of their "
                        "extents");
        }
    }

    // The descriptor: steps that continue the run on both sides join it; the others become its
    // dimensions, the shortest DRAM stride innermost (contiguous runs merge in the model's count).
    atoms.erase(std::remove_if(atoms.begin(), atoms.end(), [](const Atom &a) { return a.count <= 1; }), atoms.end());
    int64_t unit = g.sb;
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < atoms.size(); i++)
            if (atoms[i].dram == unit && atoms[i].lx == unit) {
                unit *= atoms[i].count;
                atoms.erase(atoms.begin() + long(i));
                grew = true;
                break;
            }
    }
    std::stable_sort(atoms.begin(), atoms.end(), [](const Atom &a, const Atom &b) { return a.dram < b.dram; });
    for (size_t i = 0; i + 1 < atoms.size();) {
        Atom &a = atoms[i], &b = atoms[i + 1];
        if (b.dram == a.count * a.dram && b.lx == a.count * a.lx) {
            a.count *= b.count;
            atoms.erase(atoms.begin() + long(i) + 1);
        } else {
            i++;
        }
    }
    // More dimensions than a descriptor has: the outer ones become separate transfers.
    std::vector<Atom> outer;
    while (atoms.size() > 3) {
        outer.push_back(atoms.back());
        atoms.pop_back();
    }
    int64_t copies = 1;
    for (const Atom &a : outer) copies *= a.count;
    if (copies > 256)
        throw_error(what, "a transfer would need ", copies,
                    " descriptors (its dimensions scatter over more than three strides); stage a smaller tile");

    DmaDesc desc;
    desc.sticks = int32_t(unit / g.sb);
    for (size_t i = 0; i < atoms.size(); i++) {
        desc.count[i] = int32_t(atoms[i].count);
        desc.dram_stride[i] = atoms[i].dram;
        desc.lx_stride[i] = int32_t(atoms[i].lx);
    }
    const Expr sticks = Expr(int32_t(g.sticks)), lanes = Expr(int32_t(g.lanes));
    const Expr base = simplify(((rest / inner) * sticks + x / lanes) * Expr(int32_t(g.inner * g.sb)) +
                                   lo * Expr(int32_t(g.sb)) + (x % lanes) * Expr(int32_t(g.eb)),
                               true, bounds);
    std::vector<PlacedDma> out;
    for (int64_t k = 0; k < copies; k++) {
        int64_t dram = 0, lx = 0, rem = k;
        for (const Atom &a : outer) {
            dram += (rem % a.count) * a.dram, lx += (rem % a.count) * a.lx;
            rem /= a.count;
        }
        out.push_back({simplify(base + Expr(int32_t(dram))), simplify(d.lx_offset + Expr(int32_t(lx / g.eb))), desc});
    }
    return out;
}

std::pair<int64_t, int64_t> placed_span(const BufferInfo &dev, int64_t sb, int64_t lo, int64_t hi) {
    const Geometry g = geometry_of(dev, sb);
    const int64_t slab = g.sticks * g.inner * g.sb;
    const int64_t first = lo / g.row / g.inner, last = hi / g.row / g.inner;
    return {first * slab, (last + 1) * slab};
}

}  // namespace spyre
