#include "directives.h"
#include "compute_level.h"

#include <algorithm>
#include <set>

#include "device/dtype_host.h"
#include "device/error.h"
#include "boundary_condition_names.h"
#include "schedule_record.h"
#include "spyre_intrinsics.h"
#include "user_terms.h"

namespace spyre {

namespace {
// The names pe_matmul / on_pe, ring_share and dma_phases give the loops they mark, for the schedule
// to place work at; what marks a loop is the directive's record (schedule_record.h), not its name.
constexpr const char *kPeLoopSuffix = "_pe";
constexpr const char *kRingShareSuffix = "_share";
constexpr const char *kDmaPhasesSuffix = "_phased";
}  // namespace

using namespace Halide;

namespace {
// The Func's name as its author wrote it: Halide makes names unique per process ("out$2" when
// another Func was called "out"), which an error should not show.
std::string user_name(const Func &f) {
    if (f.defined())
        if (auto m = made_func_name(f.function())) return m->token;  // repeat_edge(in)
    return f.name().substr(0, f.name().find('$'));
}
// What an error calls f: "Func out", or for a Func Halide made for a boundary condition, the
// condition and the input it wraps (boundary_condition_names.h).
std::string subject(const Func &f) { return func_subject(f); }
// An RVar as its author writes it ("r$x" is r.x), in the words every other error uses.
std::string user_name(const RVar &r) { return in_user_terms(r.name()); }

// Halide's own schedule errors, re-raised naming the Func and the directive.
template <typename F>
void guarded(const Func &f, const std::string &directive, F &&apply) {
    try {
        apply();
    } catch (const Halide::Error &e) {
        const std::map<std::string, std::string> made = made_func_phrases({f});
        std::string what = e.what();
        if (what.rfind("Error: ", 0) == 0) what.erase(0, 7);
        while (!what.empty() && (what.back() == '\n' || what.back() == ' ')) what.pop_back();
        // A boundary condition's Func has Halide's implicit Vars, not the user's x and y.
        const bool implicit = made.count(f.name()) && !f.args().empty() && Var::is_implicit(f.args()[0].name());
        throw_error(subject(f), ": ", directive, ": ", in_user_terms(what, &made),
                    implicit ? " (its dimensions are Halide's implicit Vars _0, _1, ...: schedule it with those)" : "");
    }
}
// True when update `i` of f streams sticks along x as its pure definition does: x stays a pure
// variable of the update, and every value the update reads depends on x (acc(x) += in(x, r)). A
// matmul-shaped update, c(n, m) += a(k, m) * b(n, k), reads an operand that does not; it is left to
// pe_matmul or to the schedule's own update().vectorize().
bool streams_along(const Func &f, int i, const std::string &x) {
    bool pure_x = false;
    for (const Expr &a : f.update_args(i)) {
        const auto *v = a.as<Internal::Variable>();
        pure_x |= v && v->name == x;
    }
    if (!pure_x) return false;
    struct Reads : Internal::IRVisitor {
        std::string x;
        bool all_use_x = true;
        using IRVisitor::visit;
        void visit(const Internal::Call *c) override {
            if (c->call_type == Internal::Call::Halide || c->call_type == Internal::Call::Image) {
                bool uses = false;
                for (const Expr &a : c->args) uses |= Internal::expr_uses_var(a, x);
                all_use_x &= uses;
            }
            IRVisitor::visit(c);
        }
    } reads;
    reads.x = x;
    Tuple values = f.update_values(i);  // kept alive: as_vector() refers into it
    for (const Expr &v : values.as_vector()) v.accept(&reads);
    return reads.all_use_x;
}

// Sticks of f's type that cover one stick of the narrowest values its reductions along x read: an
// fp32 accumulator of fp16 values (acc(x) += f32(in(x, r)), or an inline sum(f32(in(x, r))) that f
// reads at its own x) takes two, so that each vector reads whole sticks of in. 1 when it reduces
// nothing narrower than itself.
int covering_sticks(const Func &f, const std::string &x) {
    struct Narrowest : Internal::IRVisitor {
        int bytes = 0;
        std::vector<Internal::Function> reductions;  // inline reductions read at x
        std::string x;
        using IRVisitor::visit;
        void visit(const Internal::Call *c) override {
            if (c->call_type == Internal::Call::Halide || c->call_type == Internal::Call::Image) {
                if (bytes == 0 || c->type.bytes() < bytes) bytes = c->type.bytes();
                if (c->call_type == Internal::Call::Halide && c->func.defined() && !x.empty() && !c->args.empty()) {
                    const Internal::Function g(c->func);
                    const auto *v = c->args[0].as<Internal::Variable>();
                    if (!g.updates().empty() && compute_level_of(g).is_inlined() && v && v->name == x)
                        reductions.push_back(g);
                }
            }
            IRVisitor::visit(c);
        }
    };
    Narrowest pure;
    pure.x = x;
    for (const Expr &v : f.function().definition().values()) v.accept(&pure);
    Narrowest reduced;
    for (int i = 0; i < f.num_update_definitions(); i++)
        if (streams_along(f, i, x)) {
            Tuple values = f.update_values(i);
            for (const Expr &v : values.as_vector()) v.accept(&reduced);
        }
    for (const Internal::Function &g : pure.reductions)
        for (const Internal::Definition &u : g.updates())
            for (const Expr &v : u.values()) v.accept(&reduced);
    const Type own_type = f.output_types()[0];
    const int own = own_type.bytes();
    // A 16-bit integer Func (stored in int32, legalise_types) that widens bytes reads whole sticks of
    // them: a blur_x of uint16 over a uint8 image, as Halide's tutorials write it.
    const int widened = own_type.is_int_or_uint() && own == 2 && pure.bytes == 1 ? 2 : 1;
    if (reduced.bytes == 0 || reduced.bytes >= own || own % reduced.bytes) return widened;
    return std::max(widened, own / reduced.bytes);
}

// The row variable of a transposed read in f's pure definition: a Func or buffer read with x in
// one of its outer dimensions and a pure variable of f (returned) in its stick dimension, as in
// out(x, y) = in(y, x). "" when f reads nothing that way.
std::string transposed_row(const Func &f, const std::string &x) {
    struct Reads : Internal::IRVisitor {
        std::string x, row;
        std::set<std::string> pure;
        using IRVisitor::visit;
        void visit(const Internal::Call *c) override {
            if ((c->call_type == Internal::Call::Halide || c->call_type == Internal::Call::Image) && c->args.size() > 1 &&
                !Internal::expr_uses_var(c->args[0], x)) {
                bool x_outer = false;
                for (size_t i = 1; i < c->args.size(); i++) x_outer |= Internal::expr_uses_var(c->args[i], x);
                const auto *v = c->args[0].as<Internal::Variable>();
                if (x_outer && v && pure.count(v->name)) row = v->name;
            }
            IRVisitor::visit(c);
        }
    } reads;
    reads.x = x;
    for (const Var &v : f.args()) reads.pure.insert(v.name());
    Tuple values = f.values();  // kept alive: as_vector() refers into it
    for (const Expr &v : values.as_vector()) v.accept(&reads);
    return reads.row;
}

}  // namespace

bool unroll_stick_offsets(Func f, int i, const std::string &x) {
    constexpr int64_t kMaxUnrolledTaps = 64;
    struct Offsets : Internal::IRVisitor {
        std::string x;
        std::set<std::string> rvars;
        std::set<std::string> used;  // offsets a read along x
        using IRVisitor::visit;
        void visit(const Internal::Call *c) override {
            if ((c->call_type == Internal::Call::Halide || c->call_type == Internal::Call::Image) && !c->args.empty() &&
                Internal::expr_uses_var(c->args[0], x))
                for (const std::string &r : rvars)
                    if (Internal::expr_uses_var(c->args[0], r)) used.insert(r);
            IRVisitor::visit(c);
        }
    } offsets;
    offsets.x = x;
    const std::vector<Internal::ReductionVariable> rvs = f.function().update(i).schedule().rvars();
    for (const auto &rv : rvs) offsets.rvars.insert(rv.var);
    Tuple values = f.update_values(i);  // kept alive: as_vector() refers into it
    for (const Expr &v : values.as_vector()) v.accept(&offsets);
    if (offsets.used.empty()) return false;
    int64_t taps = 1;  // of the RVars with a constant extent
    for (const auto &rv : rvs) {
        const int64_t *extent = Internal::as_const_int(rv.extent);
        if (offsets.used.count(rv.var) && (!extent || *extent > kMaxUnrolledTaps))
            throw_error(subject(f), ": ", user_name(RVar(rv.var)), " offsets its reads along the stick dimension (", x,
                        " + ", user_name(RVar(rv.var)), ") over ", extent ? std::to_string(*extent) + " taps" : "a run-time extent",
                        "; Spyre shifts a vector only by a constant, so such taps are unrolled, at most ",
                        kMaxUnrolledTaps, " of them: use a constant window of at most ", kMaxUnrolledTaps, " taps");
        if (extent) taps *= *extent;
    }
    // A 2-D stencil's other taps too (its rows), so that each tap reads one fixed row: a loop of
    // rows under a boundary condition would be staged without the condition's clamp.
    for (const auto &rv : rvs)
        if (offsets.used.count(rv.var) || (Internal::as_const_int(rv.extent) && taps <= kMaxUnrolledTaps))
            f.update(i).unroll(RVar(rv.var));
    return true;
}

SpyreSchedule::SpyreSchedule(Func f, const MachineDesc &machine) : f_(f), machine_(machine) {}

int SpyreSchedule::lanes() const {
    Type t = f_.defined() ? f_.output_types()[0] : Float(16);
    return int(machine_.stick_bytes / t.bytes());
}

SpyreSchedule &SpyreSchedule::stick_vectorize(const Var &x, int sticks) {
    if (sticks < 0)
        throw_error(subject(f_), ": stick_vectorize(", x.name(), ", ", sticks,
                    "): sticks must be at least 1 (or 0, the default: as many as cover a stick of what it reduces)");
    if (sticks == 0) sticks = covering_sticks(f_, x.name());
    Type t = f_.output_types()[0];
    DType dt;
    // A 16-bit integer Func is stored in int32 (legalise_types), its vectors as wide as its type's.
    if (!dtype_from_host(t, &dt) && !(t.is_int_or_uint() && t.bits() == 16))
        throw_error(subject(f_), ": stick_vectorize(", x.name(), "): type ", t, " has no stick operations (",
                    kDeviceTypesText, " do)");
    std::string row = transposed_row(f_, x.name());
    // Only while the row is still one loop of f (a schedule that split it keeps its own order).
    bool row_loop = false;
    for (const Internal::Dim &d : f_.function().definition().schedule().dims())  // "y", or "y.y" after ring_split
        row_loop |= !row.empty() && (d.var == row || Internal::ends_with(d.var, "." + row));
    if (!row_loop) row.clear();
    guarded(f_, "stick_vectorize(" + x.name() + ")", [&] {
        if (!row.empty()) {
            // A transposed read (a restickify): one stick of x per row, the rows innermost, so that
            // each step's rows are the columns of one tile of the producer (one VTRANSPOSE).
            // A loop over the cores (ring_split(x), ring_split(y)) stays outermost, as it must.
            Var xo(x.name() + "_sticks"), r(row);
            std::vector<VarOrRVar> order = {x, r, xo};
            for (const Internal::Dim &d : f_.function().definition().schedule().dims()) {
                const std::string name = d.var.substr(d.var.rfind('.') + 1);
                if (d.for_type == Internal::ForType::Parallel && name != row) order.push_back(Var(name));
            }
            f_.split(x, xo, x, sticks * lanes(), TailStrategy::RoundUp).reorder(order);
        }
        // The lanes loop named for x (Halide's vectorize(x, n) names it v<n>, which errors would show).
        const Var lanes_of_x(x.name() + kLanesSuffix);
        f_.split(x, x, lanes_of_x, sticks * lanes(), TailStrategy::RoundUp).vectorize(lanes_of_x);
        for (int i = 0; i < f_.num_update_definitions(); i++)
            if (streams_along(f_, i, x.name())) {
                f_.update(i).split(x, x, lanes_of_x, sticks * lanes(), TailStrategy::RoundUp).vectorize(lanes_of_x);
                unroll_stick_offsets(f_, i, x.name());
            }
    });
    return *this;
}

namespace {
// Whether g's pure definition has a loop named v ("yo", or "y.yo" style names from splits).
bool has_loop(const Func &g, const std::string &v) {
    for (const Internal::Dim &d : g.function().definition().schedule().dims())
        if (d.var == v || Internal::ends_with(d.var, "." + v)) return true;
    return false;
}
// v, or the name dma_phases gave its loop.
Var loop_var(const Func &g, const Var &v) {
    const std::string phased = v.name() + kDmaPhasesSuffix;
    return !has_loop(g, v.name()) && has_loop(g, phased) ? Var(phased) : v;
}
}  // namespace

Var phased_loop_var(const Func &g, const Var &v) { return loop_var(g, v); }

SpyreSchedule &SpyreSchedule::scratchpad_store_at(const Func &g, const Var &v) {
    guarded(f_, "scratchpad_store_at(" + user_name(g) + ", " + v.name() + ")",
            [&] { f_.compute_at(g, loop_var(g, v)).store_in(MemoryType::VTCM); });
    return *this;
}

SpyreSchedule &SpyreSchedule::dma_phases(const Var &v) {
    const std::string d = "dma_phases(" + v.name() + ")";
    if (!has_loop(f_, v.name()))
        throw_error(subject(f_), ": ", d, ": f has no loop ", v.name(), " in its pure definition");
    const Var phased(v.name() + kDmaPhasesSuffix);
    guarded(f_, d, [&] {
        f_.rename(v, phased);
        record_loop_directive(f_.function(), 0, phased.name(), {LoopRole::DmaPhases});
        // Producers already computed or stored at v follow the loop to its new name.
        std::map<std::string, Internal::Function> env = Internal::find_transitive_calls(f_.function());
        for (auto &kv : env) {
            Internal::FuncSchedule &fs = kv.second.schedule();
            for (Halide::LoopLevel *ll : {&fs.compute_level(), &fs.store_level()}) {
                Halide::LoopLevel copy = *ll;
                copy.lock();
                if (copy.is_inlined() || copy.is_root()) continue;
                if (copy.func() == f_.name() && copy.var().name() == v.name()) *ll = Halide::LoopLevel(f_, phased);
            }
        }
    });
    return *this;
}

SpyreSchedule &SpyreSchedule::scratchpad_root() {
    f_.compute_root().store_in(MemoryType::VTCM);
    return *this;
}

SpyreSchedule &SpyreSchedule::device_root() {
    f_.compute_root();
    return *this;
}

namespace {
// "device_layout(x, z, y" as the messages name the call (closed by the caller).
std::string layout_call(const std::vector<Var> &order) {
    std::string call = "device_layout(";
    for (size_t i = 0; i < order.size(); i++) call += (i ? ", " : "") + order[i].name();
    return call;
}
}  // namespace

SpyreSchedule &SpyreSchedule::device_layout(const std::vector<Var> &order) {
    const std::string call = layout_call(order) + ")";
    const std::vector<Var> args = f_.args();
    std::set<std::string> named;
    for (const Var &v : order) {
        if (std::none_of(args.begin(), args.end(), [&](const Var &a) { return a.name() == v.name(); }))
            throw_error(subject(f_), ": ", call, ": ", v.name(), " is not one of its dimensions");
        if (!named.insert(v.name()).second)
            throw_error(subject(f_), ": ", call, ": ", v.name(), " is named twice");
    }
    if (order.empty() || order.size() != args.size())
        throw_error(subject(f_), ": ", call, ": names ", order.size(), " of its ", args.size(),
                    " dimensions; a layout orders them all");
    if (order[0].name() != args[0].name())
        throw_error(subject(f_), ": ", call, ": the stick dimension ", args[0].name(),
                    " (the Func's first) must come first, innermost");
    // An inlined Func has no storage: its layout would be dropped without a word.
    LoopLevel at = f_.function().schedule().compute_level();
    at.lock();
    if (at.is_inlined())
        throw_error(subject(f_), ": ", call, ": it is inlined and has no storage to lay out; place it "
                    "first (device_root, scratchpad_store_at or scratchpad_root)");
    guarded(f_, call, [&] { f_.reorder_storage(order); });
    return *this;
}

SpyreSchedule &SpyreSchedule::device_layout(const std::vector<Var> &order, const Var &stick_count_outside) {
    device_layout(order);
    const std::string call = layout_call(order) + "; stick count outside " + stick_count_outside.name() + ")";
    if (std::none_of(order.begin(), order.end(), [&](const Var &v) { return v.name() == stick_count_outside.name(); }))
        throw_error(subject(f_), ": ", call, ": ", stick_count_outside.name(), " is not one of its dimensions");
    // In LX every engine reads whole sticks at any stride, so an LX tile keeps its stick count
    // innermost (the default: outside the stick dimension itself; docs/directives.md); only device
    // memory, read in runs, has a choice that matters.
    LoopLevel at = f_.function().schedule().compute_level();
    at.lock();
    const bool in_lx = !at.is_root() || f_.function().schedule().memory_type() == MemoryType::VTCM;
    if (in_lx && stick_count_outside.name() != order[0].name())
        throw_error(subject(f_), ": ", call, ": it is kept in LX, where the stick count stays innermost; "
                    "the stick count's place is for a Func in device memory (device_root)");
    // Carried to the back end on the Func itself (schedule_record.h).
    record_stick_count_outside(f_.function(), stick_count_outside.name());
    return *this;
}

// Each core's share of ring_split(v, cores) over `extent`: ceil(extent / cores), rounded up to whole
// sticks when v is the Func's stick dimension (dim 0), whose shares must start on a stick: 100
// row sums of fp32 on 32 cores take 32 each on the first 4 cores, the others none.
Expr SpyreSchedule::core_share(const Var &v, const Expr &extent, int cores) const {
    Expr share = (extent + cores - 1) / cores;
    const std::vector<Var> args = f_.args();
    if (args.empty() || args[0].name() != v.name()) return share;
    return (share + lanes() - 1) / lanes() * lanes();
}

SpyreSchedule &SpyreSchedule::ring_split(const Var &v, int cores, int extent) {
    if (cores < 1 || cores > machine_.cores)
        throw_error(subject(f_), ": ring_split(", v.name(), ", ", cores, "): the machine has ", machine_.cores,
                    " cores");
    if (extent < 1)
        throw_error(subject(f_), ": ring_split(", v.name(), ", ", cores, "): extent ", extent,
                    " is not positive");
    // An extent that does not divide splits unevenly: each core takes ceil(extent / cores) and the
    // last ones fewer (or none), as the output-extent form below does.
    Var core(v.name() + "_core");
    guarded(f_, "ring_split(" + v.name() + ", " + std::to_string(cores) + ")", [&] {
        f_.split(v, core, v, core_share(v, extent, cores), TailStrategy::GuardWithIf).parallel(core);
    });
    return *this;
}

SpyreSchedule &SpyreSchedule::ring_split(const Var &v, int cores) {
    if (cores < 1 || cores > machine_.cores)
        throw_error(subject(f_), ": ring_split(", v.name(), ", ", cores, "): the machine has ", machine_.cores,
                    " cores");
    std::vector<Var> args = f_.args();
    int dim = -1;
    for (size_t i = 0; i < args.size(); i++)
        if (args[i].name() == v.name()) dim = int(i);
    if (dim < 0) throw_error(subject(f_), ": ring_split(", v.name(), "): not a pure dimension of the Func");
    Expr extent = f_.output_buffer().dim(dim).extent();
    Var core(v.name() + "_core");
    guarded(f_, "ring_split(" + v.name() + ", " + std::to_string(cores) + ")", [&] {
        f_.split(v, core, v, core_share(v, extent, cores), TailStrategy::GuardWithIf).parallel(core);
    });
    return *this;
}

SpyreSchedule &SpyreSchedule::ring_split_reduction(const RVar &r, int cores, int extent, bool on_pe, int k_panel,
                                                   int n_tile) {
    std::string d = "ring_split_reduction(" + user_name(r) + ", " + std::to_string(cores) + ")";
    if (cores < 1 || cores > machine_.cores)
        throw_error(subject(f_), ": ", d, ": the machine has ", machine_.cores, " cores");
    if (f_.num_update_definitions() < 1)
        throw_error(subject(f_), ": ", d, ": needs an update definition (f(...) = init; f(...) += ...)");
    if (extent < cores || extent % cores)
        throw_error(subject(f_), ": ", d, ": extent ", extent, " does not divide evenly over ", cores, " cores");
    int lanes = int(machine_.stick_bytes / 2);  // the reduced values are read in fp16 sticks or wider
    if ((extent / cores) % lanes)
        throw_error(subject(f_), ": ", d, ": each core would reduce ", extent / cores,
                    " values, not whole sticks of ", lanes);
    if (k_panel && (!on_pe || k_panel < 0 || (extent / cores) % k_panel || k_panel % lanes))
        throw_error(subject(f_), ": ", d, ": a K panel of ", k_panel, " needs the PE array (on_pe) and ",
                    "whole sticks of ", lanes, " that divide each core's ", extent / cores);
    if (n_tile && (!k_panel || n_tile < 0 || n_tile % lanes))
        throw_error(subject(f_), ": ", d, ": an N tile of ", n_tile, " needs a K panel and whole sticks of ",
                    lanes);
    guarded(f_, d, [&] {
        RVar ro(r.name() + "_core"), ri = on_pe ? pe_loop(RVar(r.name() + "_in")) : RVar(r.name() + "_in");
        Var u(r.name() + "_part");
        f_.update().split(r, ro, ri, extent / cores);
        Func partial = f_.update().rfactor(ro, u);
        partial.compute_root().store_in(MemoryType::VTCM);
        // Each core initialises and fills only its own partial (so LX holds just that slice).
        std::vector<VarOrRVar> pure, order{ri};
        for (const Var &v : f_.args()) pure.push_back(v), order.push_back(v);
        pure.push_back(u);
        order.push_back(u);
        partial.reorder(pure).parallel(u);
        if (k_panel && k_panel < extent / cores) {
            // Panels of the core's share: ki on the PE array, the panel loop ko just outside the
            // pure loops, where the back end stages (and double-buffers) each panel.
            RVar ko(r.name() + "_ko"), ki = pe_loop(RVar(r.name() + "_ki"));
            partial.update().split(ri, ko, ki, k_panel);
            order[0] = ki;
            order.insert(order.end() - 1, ko);
        }
        if (n_tile) {
            // Tiles of the first dimension outside the panels: each tile's panels are W's rows of
            // that tile, runs of n_tile elements (the partial rounded up to whole tiles).
            Var no(f_.args()[0].name() + "_no"), ni(f_.args()[0].name() + "_ni");
            partial.update().split(f_.args()[0], no, ni, n_tile, TailStrategy::RoundUp);
            order[1] = ni;
            order.insert(order.end() - 1, no);
        }
        partial.update().reorder(order).parallel(u);
        if (on_pe) {
            const bool panels = k_panel && k_panel < extent / cores;
            record_loop_directive(partial.function(), 1, panels ? pe_loop(RVar(r.name() + "_ki")).name() : ri.name(),
                                  {LoopRole::Pe});
        }
    });
    return *this;
}

RVar pe_loop(const RVar &k) { return RVar(k.name() + kPeLoopSuffix); }

RVar ring_share_loop(const RVar &r, int cores) { return RVar(r.name() + kRingShareSuffix + std::to_string(cores)); }

SpyreSchedule &SpyreSchedule::pe_matmul(const RVar &k) {
    std::string d = "pe_matmul(" + user_name(k) + ")";
    if (f_.num_update_definitions() < 1)
        throw_error(subject(f_), ": ", d, ": needs an update definition (f(...) = 0; f(...) += a * b)");
    guarded(f_, d, [&] {
        RVar pe = pe_loop(k);
        std::vector<VarOrRVar> order{pe};
        for (const Var &v : f_.args()) order.push_back(v);
        f_.update().rename(k, pe);
        record_loop_directive(f_.function(), 1, pe.name(), {LoopRole::Pe});
        // Other reduction loops among the matmul's (a K split into panels, split(k, ko, ki, 512)
        // then pe_matmul(ki), leaves ko between ki and the pure loops) move just outside them: the
        // PE array takes one (k, n, m) nest per panel. Any other loop there is left for the
        // back end to name.
        const std::vector<Halide::Internal::Dim> &dims = f_.update().get_schedule().dims();
        std::set<std::string> named;
        for (const Var &v : f_.args()) named.insert(v.name());
        size_t last = 0;
        for (size_t i = 0; i < dims.size(); i++)
            if (named.count(dims[i].var)) last = i;
        std::vector<VarOrRVar> between;
        bool only_rvars = true;
        for (size_t i = 0; i < last; i++) {
            if (named.count(dims[i].var) || dims[i].var == pe.name() || Internal::ends_with(dims[i].var, "." + pe.name()))
                continue;
            // reorder() takes the loop's own name, the last part of the qualified one (k$x.ko).
            if (dims[i].is_rvar()) between.push_back(RVar(dims[i].var.substr(dims[i].var.rfind('.') + 1)));
            else only_rvars = false;
        }
        if (only_rvars) order.insert(order.end(), between.begin(), between.end());
        f_.update().reorder(order);
    });
    return *this;
}

SpyreSchedule &SpyreSchedule::on_pe(const RVar &k, int update) {
    const std::string d = "on_pe(" + user_name(k) + (update ? ", " + std::to_string(update) : "") + ")";
    if (update < 0 || update >= f_.num_update_definitions())
        throw_error(subject(f_), ": ", d, ": it has ", f_.num_update_definitions(), " update definitions, no update ",
                    update, " (f(...) = 0; f(...) += a * b)");
    guarded(f_, d, [&] {
        const RVar pe = pe_loop(k);
        f_.update(update).rename(k, pe);
        record_loop_directive(f_.function(), update + 1, pe.name(), {LoopRole::Pe});
    });
    return *this;
}

SpyreSchedule &SpyreSchedule::ring_share(const RVar &r, int cores) {
    std::string d = "ring_share(" + user_name(r) + ", " + std::to_string(cores) + ")";
    if (cores < 2 || cores > machine_.cores)
        throw_error(subject(f_), ": ", d, ": a run of sharing cores is 2 to ", machine_.cores, " cores");
    if (f_.num_update_definitions() < 1)
        throw_error(subject(f_), ": ", d, ": needs an update definition whose loop stages the tiles");
    guarded(f_, d, [&] {
        const RVar shared = ring_share_loop(r, cores);
        f_.update().rename(r, shared);
        record_loop_directive(f_.function(), 1, shared.name(), {LoopRole::RingShare, cores});
    });
    return *this;
}

SpyreSchedule &SpyreSchedule::ring_split(const Var &v, const Param<int> &cores, int extent) {
    Expr e = extent;
    if (extent <= 0) {
        std::vector<Var> args = f_.args();
        int dim = -1;
        for (size_t i = 0; i < args.size(); i++)
            if (args[i].name() == v.name()) dim = int(i);
        if (dim < 0) throw_error(subject(f_), ": ring_split(", v.name(), "): not a pure dimension of the Func");
        e = f_.output_buffer().dim(dim).extent();
    }
    Var core(v.name() + "_core");
    guarded(f_, "ring_split(" + v.name() + ", " + cores.name() + ")", [&] {
        f_.split(v, core, v, (e + cores - 1) / cores, TailStrategy::GuardWithIf).parallel(core);
    });
    return *this;
}

SpyreSchedule &SpyreSchedule::split(const Var &v, const Var &outer, const Var &inner, const Param<int> &factor) {
    // The whole call: which of a Func's splits Halide refused, and by what factor.
    guarded(f_, "split(" + v.name() + ", " + outer.name() + ", " + inner.name() + ", " + factor.name() + ")",
            [&] { f_.split(v, outer, inner, factor, TailStrategy::GuardWithIf); });
    return *this;
}

SpyreSchedule &SpyreSchedule::split(const Var &v, const Var &outer, const Var &inner, int factor) {
    const std::string call =
        "split(" + v.name() + ", " + outer.name() + ", " + inner.name() + ", " + std::to_string(factor) + ")";
    if (factor < 1) throw_error(subject(f_), ": ", call, ": factor must be positive");
    guarded(f_, call, [&] { f_.split(v, outer, inner, factor, TailStrategy::GuardWithIf); });
    return *this;
}

namespace {
Func stage(Func wrapper, const Func &consumer, const Var &v, const MachineDesc &machine) {
    wrapper.compute_at(consumer, loop_var(consumer, v)).store_in(MemoryType::VTCM);
    Type t = wrapper.output_types()[0];
    const Var x = wrapper.args()[0], lanes_of_x(x.name() + kLanesSuffix);
    wrapper.split(x, x, lanes_of_x, int(machine.stick_bytes / t.bytes()), TailStrategy::RoundUp).vectorize(lanes_of_x);
    return wrapper;
}
}  // namespace

Func stage_in_lx(ImageParam producer, const Func &consumer, const Var &v, const MachineDesc &machine) {
    return stage(producer.in(consumer), consumer, v, machine);
}

Func stage_in_lx(Func producer, const Func &consumer, const Var &v, const MachineDesc &machine) {
    return stage(producer.in(consumer), consumer, v, machine);
}

Func stage_all_in_lx(ImageParam producer, const Func &at, const Var &v, const MachineDesc &machine) {
    return stage(producer.in(), at, v, machine);
}

}  // namespace spyre
