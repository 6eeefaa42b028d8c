#include "auto_fold.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "auto_cost.h"

namespace spyre::autosched {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// Where a Func is computed: once per outer iteration of the output (a head), per output tile, per
// iteration of the update that needs it, or inlined into its consumers. Outermost first.
enum class Level { Head, Tile, Iter, Inline };
const char *level_name(Level l) {
    switch (l) {
    case Level::Head: return "head";
    case Level::Tile: return "tile";
    case Level::Iter: return "iter";
    case Level::Inline: return "inline";
    }
    return "";
}

// The calls (to Funcs and input Funcs) in a Func's definitions, with the lets Halide put into a
// Tuple's values substituted, so that an index computed once (t = j * tile + r) shows what it uses.
struct CallList : IRVisitor {
    std::vector<Expr> exprs;  // keeps the calls alive
    std::vector<const Call *> all;
    using IRVisitor::visit;
    void visit(const Call *c) override {
        if (c->call_type == Call::Halide) all.push_back(c);
        IRVisitor::visit(c);
    }
    void add(const Definition &d) {
        for (const Expr &e : d.values()) exprs.push_back(substitute_in_all_lets(e));
        for (const Expr &e : d.args()) exprs.push_back(substitute_in_all_lets(e));
    }
    CallList &collect() {
        for (const Expr &e : exprs) e.accept(this);
        return *this;
    }
};

CallList calls_of(const Definition &d) {
    CallList c;
    c.add(d);
    c.collect();
    return c;
}

CallList calls_of(const Function &f) {
    CallList c;
    c.add(f.definition());
    for (const Definition &u : f.updates()) c.add(u);
    c.collect();
    return c;
}

bool uses_any(const Expr &e, const std::set<std::string> &vars) {
    for (const std::string &v : vars)
        if (expr_uses_var(e, v)) return true;
    return false;
}

// The family's analysis of one pipeline: the state, what each update needs per iteration, and
// the Funcs (and clones) to place.
struct Fold {
    const StageInfo *state = nullptr;
    std::vector<std::string> rvars;  // per update of the state
    // The fewest of the state's pure args (first ones) that may sit inside the reduction loops:
    // an RDom predicate (a causal mask's `where`) that reads an arg makes the loop bounds of
    // everything computed at the reduction loop vary with that arg, which the back end refuses.
    int max_inner = 1 << 30;
    int64_t iterations = 0;  // the first update's reduction extent (key tiles), 0 when not constant
    // Per update: the Funcs (stages and input Funcs) whose values differ from one iteration to the
    // next, with the pure args that carry the iteration.
    std::vector<std::map<std::string, std::set<std::string>>> dep;
    struct Clone {
        std::string of, alias;
        std::vector<std::string> consumers;
        int update;
    };
    std::vector<Clone> clones;
    // The Funcs to place: name (a stage or a clone's alias) -> the stage it is (or copies).
    std::vector<std::pair<std::string, const StageInfo *>> funcs;
    std::map<std::string, std::vector<Level>> options;  // per placed Func, its choices (first: preferred)
    std::map<std::string, int> iter_update;              // the update a Func at Level::Iter belongs to

    // Whether input `in` differs from one iteration of some update to the next.
    bool per_iteration(const InputInfo &in) const {
        for (const auto &d : dep)
            if (d.count(in.func)) return true;
        return false;
    }

    std::set<int> updates_of(const std::string &f) const {
        std::set<int> u;
        for (size_t i = 0; i < dep.size(); i++)
            if (dep[i].count(f)) u.insert(int(i));
        return u;
    }
};

// Does f read a Func along its own first arg (the stick dimension), or transpose what it reads?
// Inline reductions are looked through: tile_max(q) = maximum(s(r, q)) reads s across q.
bool reads_along_x(const PipelineInfo &info, const StageInfo &f) {
    if (f.args.empty()) return false;
    if (f.transposes) return true;
    const std::string x = f.args[0];
    std::function<bool(const Function &)> along = [&](const Function &fn) {
        const CallList calls = calls_of(fn);
        for (const Call *c : calls.all) {
            if (c->name == fn.name()) continue;
            const StageInfo *s = info.find(c->name);
            if (s && s->folded) {
                if (along(s->function)) return true;
                continue;
            }
            if (!c->args.empty() && expr_uses_var(c->args[0], x)) return true;
        }
        return false;
    };
    return along(f.function);
}

// The arg of a transposing Func that indexes the sticks of what it reads (kt(t, d) = k(d, t): d), or
// "" when that is no plain arg.
std::string transposed_row(const StageInfo &f) {
    const CallList calls = calls_of(f.function);
    for (const Call *c : calls.all) {
        if (c->name == f.name || c->args.empty() || expr_uses_var(c->args[0], f.args[0])) continue;
        if (const Variable *v = c->args[0].as<Variable>())
            if (std::find(f.args.begin(), f.args.end(), v->name) != f.args.end()) return v->name;
    }
    return "";
}

bool reads_folded(const PipelineInfo &info, const StageInfo &s) {
    for (const std::string &r : s.reads) {
        const StageInfo *p = info.find(r);
        if (p && p->folded) return true;
    }
    return false;
}

bool reads_inputs_only(const PipelineInfo &info, const StageInfo &s) {
    if (s.reads.empty()) return false;
    for (const std::string &r : s.reads)
        if (!info.find_input_func(r)) return false;
    return true;
}

std::string analyse(const PipelineInfo &info, Fold &fold) {
    const StageInfo &o = info.output();
    for (const StageInfo &s : info.stages)
        if (s.values > 1) {
            if (fold.state) return "it has two Tuple Funcs (" + display_name(fold.state->name) + ", " + display_name(s.name) + ")";
            fold.state = &s;
        }
    const StageInfo &st = *fold.state;
    const std::string name = display_name(st.name);
    if (st.is_output) return "the Tuple Func " + name + " is the output";
    if (st.consumers.size() != 1 || st.consumers[0] != o.name)
        return "the Tuple Func " + name + " is read by another Func than the output";
    if (o.updates > 0 || o.args.size() < 2 || o.reads.size() != 1)
        return "the output " + display_name(o.name) + " does more than read the state " + name;
    const auto &updates = st.function.updates();
    fold.dep.resize(updates.size());
    for (size_t u = 0; u < updates.size(); u++) {
        const std::string rv = updates[u].schedule().rvars()[0].var;
        fold.rvars.push_back(rv);
        if (u == 0)
            if (const int64_t *n = as_const_int(simplify(updates[u].schedule().rvars()[0].extent))) fold.iterations = *n;
        if (const Expr &pred = updates[u].predicate(); pred.defined())
            for (size_t q = 0; q < updates[u].args().size(); q++)
                if (const Variable *v = updates[u].args()[q].as<Variable>(); v && expr_uses_var(pred, v->name))
                    fold.max_inner = std::min(fold.max_inner, int(q));
        // What update u calls at its reduction variable, then what those read at the args that
        // carry it, to a fixed point.
        auto &dep = fold.dep[u];
        std::vector<std::string> work;
        auto mark = [&](const Call *c, const std::set<std::string> &vars) {
            const StageInfo *callee = info.find(c->name);
            bool changed = false;
            for (size_t q = 0; q < c->args.size(); q++) {
                if (!uses_any(c->args[q], vars)) continue;
                const std::string arg = callee ? callee->args.at(q) : std::to_string(q);
                changed |= dep[c->name].insert(arg).second;
            }
            if (changed && callee) work.push_back(c->name);
        };
        const CallList direct = calls_of(updates[u]);
        for (const Call *c : direct.all)
            if (c->name != st.name) mark(c, {rv});
        while (!work.empty()) {
            const std::string f = work.back();
            work.pop_back();
            const StageInfo *s = info.find(f);
            const std::set<std::string> vars = dep[f];
            const CallList calls = calls_of(s->function);
            for (const Call *c : calls.all)
                if (c->name != f) mark(c, vars);
        }
        if (dep.empty()) return "update " + std::to_string(u) + " of " + name + " reads nothing per iteration of " + rv;
    }
    // Clones: a Func with updates needed per iteration by two updates gets a copy for each after
    // the first, read by the consumers that belong to that update alone.
    for (const StageInfo &s : info.stages) {
        if (&s == fold.state || s.is_output || s.folded) continue;
        const std::set<int> us = fold.updates_of(s.name);
        fold.funcs.push_back({s.name, &s});
        if (us.size() < 2 || s.updates == 0) continue;
        const int first = *us.begin();
        for (int u : us) {
            if (u == first) continue;
            Fold::Clone c{s.name, display_name(s.name) + "_u" + std::to_string(u), {}, u};
            for (const std::string &cn : s.consumers) {
                if (cn == fold.state->name) return "the state " + name + " reads " + display_name(s.name) + " in two updates";
                const bool mine = fold.dep[size_t(u)].count(cn), first_too = fold.dep[size_t(first)].count(cn);
                if (mine && first_too)
                    return display_name(cn) + " needs " + display_name(s.name) + " per iteration of two updates";
                if (mine) c.consumers.push_back(cn);
            }
            fold.clones.push_back(c);
            fold.funcs.push_back({c.alias, &s});
            fold.iter_update[c.alias] = u;
        }
        fold.iter_update[s.name] = first;
    }
    // The choices of each Func.
    for (const auto &[f, s] : fold.funcs) {
        std::vector<Level> &opt = fold.options[f];
        const std::set<int> us = fold.updates_of(s->name);
        // A PE matmul's operands are values of Funcs (fp16 widened), not expressions.
        bool operand = false;
        for (const std::string &cn : s->consumers)
            if (const StageInfo *c = info.find(cn); c && c->matmul) operand |= c->matmul->a == s->name || c->matmul->w == s->name;
        const bool inlinable = s->updates == 0 && !reads_folded(info, *s) && !operand;
        const bool head = o.args.size() >= 3 && s->updates == 0 && reads_inputs_only(info, *s);
        if (us.empty()) {
            opt = {Level::Tile};  // the same for every iteration: once per tile
        } else if (fold.iter_update.count(f)) {
            opt = {Level::Iter};  // a Func with updates, or one clone of it
        } else if (us.size() == 1) {
            fold.iter_update[f] = *us.begin();
            // A clone's consumers are inlined where they can be: computed at the loop themselves,
            // the clone's region follows theirs and its PE operands start inside a stick (the
            // back end refuses them; measured on causal attention).
            bool reads_clone = false;
            for (const Fold::Clone &c : fold.clones)
                reads_clone |= std::find(c.consumers.begin(), c.consumers.end(), f) != c.consumers.end();
            if (!(reads_clone && inlinable)) opt = {Level::Iter};
            if (head) opt.push_back(Level::Head);
            if (inlinable) opt.push_back(Level::Inline);
        } else {
            if (head) opt.push_back(Level::Head);
            if (inlinable) opt.push_back(Level::Inline);
            if (opt.empty())
                return display_name(s->name) + " is needed per iteration of two updates and can be neither inlined nor "
                                                "computed per outer iteration";
        }
    }
    return "";
}

struct FoldPlan {
    int cores = 1;
    int64_t tile = 1;
    int inner = 2;  // the state's pure args inside the reduction loop
    // The tiles in segments of `segment` tiles, the head's Funcs and copies computed per segment
    // (stored per head): with a mask, the first segments need only the first iterations' data.
    int64_t segment = 0;
    std::map<std::string, Level> level;
    std::map<std::string, Level> stage;  // per input (ImageParam name): Head, Tile or Inline (not copied)
};

class FoldBuilder {
public:
    FoldBuilder(const PipelineInfo &info, const Fold &fold, const SpaceShapes &shapes, const MachineDesc &m)
        : info_(info), fold_(fold), shapes_(shapes), m_(m) {}

    // The level a Func is computed at, inlined ones at their consumers'.
    Level effective(const FoldPlan &p, const std::string &f) const {
        auto it = p.level.find(f);
        if (it != p.level.end() && it->second != Level::Inline) return it->second;
        const StageInfo *s = info_.find(f);
        if (!s) return Level::Iter;
        if (s == fold_.state || s->is_output) return Level::Tile;
        Level l = Level::Inline;
        for (const std::string &c : s->consumers)
            l = std::min(l, c == fold_.state->name ? Level::Iter : effective(p, c));
        return l;
    }

    std::optional<Candidate> build(const FoldPlan &p) const {
        const StageInfo &o = info_.output(), &st = *fold_.state;
        const std::string core = o.args.back(), td = o.args.size() >= 3 ? o.args[o.args.size() - 2] : core;
        const std::string tile_var = td + "o";
        const int64_t heads = shapes_.output.back(), rows = shapes_.output[o.args.size() >= 3 ? o.args.size() - 2 : o.args.size() - 1];
        if (rows % p.tile) return std::nullopt;
        if (td == core && (rows % p.cores || (rows / p.cores) % p.tile)) return std::nullopt;
        std::vector<Directive> ds;
        if (p.cores > 1) ds.push_back({Directive::RingSplit, o.name, {core}, {p.cores, 0}, ""});
        ds.push_back({Directive::Split, o.name, {td, tile_var, td + "i"}, {int(p.tile)}, ""});
        // Segments need Halide's sliding window, which it finds only with constant tiles: no
        // shared lowering for them.
        if (p.segment)
            for (Directive &d : ds) d.fixed = true;
        ds.push_back({Directive::StickVectorize, o.name, {o.args[0]}, {1}, ""});
        // Segmented: the tile loop split into segments; what was per tile is per tile of a segment,
        // what was per head is computed per segment and stored per head.
        const std::string seg_var = tile_var + "_seg", tile_at = p.segment ? tile_var + "_in" : tile_var;
        if (p.segment) {
            if ((rows / p.tile) % p.segment) return std::nullopt;
            ds.push_back({Directive::Split, o.name, {tile_var, seg_var, tile_at}, {int(p.segment)}, ""});
            ds.back().fixed = true;
        }
        // The state: in LX for the tile, each update's loop over the reduction outside its first
        // `inner` dimensions, vectorized along the sticks.
        ds.push_back({Directive::StoreAt, st.name, {tile_at}, {}, o.name});
        ds.push_back({Directive::StickVectorize, st.name, {st.args[0]}, {1}, ""});
        const int lanes_state = int(m_.stick_bytes / st.type.bytes());
        for (size_t u = 0; u < fold_.rvars.size(); u++) {
            std::vector<std::string> order(st.args.begin(), st.args.begin() + p.inner);
            order.push_back(fold_.rvars[u]);
            Directive r{Directive::HUpdateReorder, st.name, order, {}, ""};
            r.update = int(u);
            ds.push_back(r);
            Directive v{Directive::HUpdateVectorize, st.name, {st.args[0]}, {lanes_state}, ""};
            v.update = int(u);
            ds.push_back(v);
        }
        for (const Fold::Clone &c : fold_.clones)
            for (const std::string &cn : c.consumers) ds.push_back({Directive::CloneIn, c.of, {c.alias}, {}, cn});
        int computed = 0;
        for (const auto &[f, s] : fold_.funcs) {
            const Level l = p.level.at(f);
            if (l == Level::Inline) continue;
            computed++;
            if (l == Level::Iter) {
                ds.push_back({Directive::HComputeAtLx, f, {fold_.rvars.at(size_t(fold_.iter_update.at(f)))}, {}, st.name});
            } else if (l == Level::Head && p.segment) {
                ds.push_back({Directive::HComputeAtLx, f, {seg_var}, {}, o.name});
                ds.push_back({Directive::HStoreAt, f, {core}, {}, o.name});
            } else {
                ds.push_back({Directive::HComputeAtLx, f, {l == Level::Head ? core : tile_at}, {}, o.name});
            }
            if (!s->matmul && s->transposes && !transposed_row(*s).empty()) {
                // A restickify (keys along the sticks): per row of what it reads, every stick of
                // its own row, so that each row's sticks are the groups of one transpose.
                const std::string x = s->args[0];
                ds.push_back({Directive::HSplit, f, {x, x + "o", x + "i"}, {int(m_.stick_bytes / s->type.bytes())}, ""});
                ds.push_back({Directive::HVectorize, f, {x + "i"}, {int(m_.stick_bytes / s->type.bytes())}, ""});
                ds.push_back({Directive::HReorder, f, {x + "i", x + "o", transposed_row(*s)}, {}, ""});
            } else if (s->matmul || (s->args.size() >= 2 && reads_along_x(info_, *s))) {
                ds.push_back({Directive::StickVectorize, f, {s->args[0]}, {sticks_of(*s)}, ""});
            }
            if (s->matmul) ds.push_back({Directive::PeMatmul, f, {s->matmul->rvar}, {}, ""});
        }
        // Inputs copied into LX, and what they cost: an input that differs per iteration is read
        // again for every tile unless it is copied (or read) once per head.
        RowsWork w;
        const int64_t tiles = rows / p.tile;
        int64_t lx = p.tile * shapes_.output[0] * st.type.bytes() * st.values;
        for (size_t i = 0; i < info_.inputs.size(); i++) {
            const InputInfo &in = info_.inputs[i];
            const int64_t bytes = product(shapes_.inputs[i]) * in.type.bytes();
            Level read = Level::Inline;
            for (const std::string &c : in.consumers) read = std::min(read, effective(p, c));
            const Level staged = p.stage.count(in.name) ? p.stage.at(in.name) : Level::Inline;
            if (staged != Level::Inline) {
                // A consumer outside the copy's loop cannot read it; consumers all at its loop
                // would read the input once there anyway (the copy only adds one).
                if (staged >= read) return std::nullopt;
                read = staged;
                if (staged == Level::Head && p.segment)
                    ds.push_back({Directive::StageAllInLx, in.name, {seg_var, core}, {}, o.name});
                else
                    ds.push_back({Directive::StageAllInLx, in.name, {staged == Level::Head ? core : tile_at}, {}, o.name});
                lx += bytes / std::max<int64_t>(heads, 1) / (staged == Level::Tile && !per_iteration(in) ? tiles : 1);
            }
            const bool again = per_iteration(in) && read >= Level::Tile;
            w.dram_bytes += double(bytes) * double(again ? tiles : 1);
        }
        for (const auto &[f, s] : fold_.funcs)
            if (p.level.at(f) == Level::Head)
                for (size_t i = 0; i < info_.inputs.size(); i++)
                    if (std::find(s->reads.begin(), s->reads.end(), info_.inputs[i].func) != s->reads.end())
                        lx += product(shapes_.inputs[i]) / std::max<int64_t>(heads, 1) * s->type.bytes();
        const double out_bytes = double(product(shapes_.output)) * o.type.bytes();
        w.dram_bytes += out_bytes;
        w.dram_write_bytes = out_bytes;
        w.tiles_per_core = (heads + p.cores - 1) / p.cores * tiles;
        w.stages_per_tile = computed + 2;
        Candidate cand;
        cand.family = "fold";
        if (lx > m_.lx_usable_bytes) {
            cand.estimate_ns = -1;
            return cand;
        }
        cand.estimate_ns = estimate_ns(w, p.cores, m_);
        // The segments' count follows from the tile and the mask: "segmented" is one choice, so
        // that two segmented candidates with other tiles are neighbours in the local search.
        auto choose = [&](Candidate &k, bool segmented) {
            k.set("cores", std::to_string(p.cores));
            k.set("tile", std::to_string(p.tile));
            k.set("inner", std::to_string(p.inner));
            if (segmented) k.flag("segmented");
            for (const auto &[f, l] : p.level)
                if (fold_.options.at(f).size() > 1) k.place(info_.shown(f), level_name(l));
            std::string staging;
            for (const auto &[in, l] : p.stage)
                staging += (staging.empty() ? "" : ",") + display_name(in) + ":" + (l == Level::Inline ? "none" : level_name(l));
            if (!staging.empty()) k.set("inputs", staging);
        };
        choose(cand, p.segment != 0);
        if (p.segment) {
            Candidate base;
            base.family = cand.family;
            choose(base, false);
            cand.refines = base.summary();
        }
        cand.directives = std::move(ds);
        return cand;
    }

private:
    bool per_iteration(const InputInfo &in) const { return fold_.per_iteration(in); }
    const PipelineInfo &info_;
    const Fold &fold_;
    const SpaceShapes &shapes_;
    const MachineDesc &m_;
};

}  // namespace

std::string fold_family(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &m, int max_cores,
                        SpaceResult &out) {
    Fold fold;
    if (std::string why = analyse(info, fold); !why.empty()) return why;
    FoldBuilder b(info, fold, shapes, m);
    const StageInfo &o = info.output();
    const int64_t heads = shapes.output.back();
    const int64_t rows = shapes.output[o.args.size() >= 3 ? o.args.size() - 2 : o.args.size() - 1];
    // The most cores the outer dimension fills, and the most that divide it evenly.
    std::vector<int> cores{int(std::min<int64_t>(heads, max_cores))};
    for (int c = cores[0]; c >= 1; c--)
        if (heads % c == 0) {
            if (c != cores[0]) cores.push_back(c);
            break;
        }
    // Tiles of at least half a PE pass of rows, largest first (fewest tiles, if they fit).
    std::vector<int64_t> tiles;
    for (int64_t t = 256; t >= 1; t /= 2)
        if (t <= rows && rows % t == 0 && t * 2 >= int64_t(m.pe_pass_rows)) tiles.push_back(t);
    if (tiles.empty()) tiles.push_back(rows);
    // The reduction loop just outside a row of the state (each iteration's Funcs computed per
    // row of tiles, the least LX), or outside all of it (computed once per iteration for the whole
    // tile). The dimensions between add little: with the tile's Funcs sized by a Param, Halide
    // cannot share their lowering (auto_search.h), so each costs a lowering of its own.
    const int dims = int(fold.state->args.size());
    std::vector<int> inners;
    for (int inner : {std::min(2, dims), dims})
        if (inner <= fold.max_inner && (inners.empty() || inners.back() != inner)) inners.push_back(inner);
    if (inners.empty())
        return "the reduction's predicate reads " + display_name(fold.state->name) + "'s innermost args, so no loop order keeps its bounds fixed";
    // Every combination of the Funcs' choices.
    std::vector<std::map<std::string, Level>> levels{{}};
    for (const auto &[f, opts] : fold.options) {
        std::vector<std::map<std::string, Level>> next;
        for (const auto &l : levels)
            for (Level o2 : opts) {
                auto v = l;
                v[f] = o2;
                next.push_back(v);
            }
        levels = std::move(next);
    }
    // An input that differs per iteration is copied once per head or not at all (per tile it would
    // be the whole head again for every tile); the others per tile or not at all.
    std::vector<std::map<std::string, Level>> stagings{{}};
    for (const InputInfo &in : info.inputs) {
        const Level copy = fold.per_iteration(in) ? Level::Head : Level::Tile;
        std::vector<std::map<std::string, Level>> next;
        for (const auto &s : stagings)
            for (Level l : {copy, Level::Inline}) {
                if (l == Level::Head && o.args.size() < 3) continue;
                auto v = s;
                v[in.name] = l;
                next.push_back(v);
            }
        stagings = std::move(next);
    }
    // Segments: with a mask (a predicate on the reduction), the tiles of one iteration's extent of
    // rows (a key tile's queries) need no later iteration's data, so the head's Funcs and copies can
    // be loaded a segment at a time (Halide's sliding window) under the previous segments' compute.
    auto segments = [&](int64_t t) {
        std::vector<int64_t> s{0};
        if (fold.max_inner < (1 << 30) && fold.iterations > 1 && rows % fold.iterations == 0 &&
            (rows / fold.iterations) % t == 0)
            s.push_back(rows / fold.iterations / t);
        return s;
    };
    // Segments only where every input that differs per iteration is read through a copy per head
    // (staged, or read only by Funcs computed per head): there is nothing else to load ahead.
    auto per_head = [&](const std::map<std::string, Level> &lv, const std::map<std::string, Level> &sg) {
        bool any = false;
        for (const InputInfo &in : info.inputs) {
            if (!fold.per_iteration(in)) continue;
            auto st = sg.find(in.name);
            bool covered = st != sg.end() && st->second == Level::Head;
            if (!covered) {
                covered = !in.consumers.empty();
                for (const std::string &c : in.consumers) {
                    auto l = lv.find(c);
                    covered &= l != lv.end() && l->second == Level::Head;
                }
            }
            if (!covered) return false;
            any = true;
        }
        return any;
    };
    std::set<std::string> seen;
    for (int c : cores)
        for (int64_t t : tiles)
            for (int inner : inners)
                for (const auto &lv : levels)
                    for (const auto &sg : stagings)
                        for (int64_t segment : segments(t)) {
                            if (segment && !per_head(lv, sg)) continue;
                            FoldPlan p;
                            p.cores = c, p.tile = t, p.inner = inner, p.level = lv, p.stage = sg, p.segment = segment;
                            std::optional<Candidate> cand = b.build(p);
                            if (!cand) continue;
                            if (cand->estimate_ns < 0) {
                                out.pruned_lx++;
                                continue;
                            }
                            if (seen.insert(cand->summary()).second) out.candidates.push_back(std::move(*cand));
                        }
    return "";
}

}  // namespace spyre::autosched
