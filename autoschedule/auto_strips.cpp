#include "auto_strips.h"

#include <algorithm>
#include <map>
#include <vector>

#include "auto_cost.h"

namespace spyre::autosched {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// The calls (to Funcs and input Funcs) in every definition of `f`.
std::vector<const Call *> calls_in(const Function &f) {
    struct Calls : IRVisitor {
        std::vector<const Call *> all;
        using IRVisitor::visit;
        void visit(const Call *c) override {
            if (c->call_type == Call::Halide) all.push_back(c);
            IRVisitor::visit(c);
        }
    } calls;
    auto add = [&](const Definition &d) {
        for (const Expr &e : d.values()) e.accept(&calls);
        for (const Expr &e : d.args()) e.accept(&calls);
    };
    add(f.definition());
    for (const Definition &u : f.updates()) add(u);
    return calls.all;
}

// Whether every value `s` reads is read at s's own column (f(x, ...) with x exactly s's first arg):
// then a strip of columns needs nothing from another strip (no halo, no transpose, no gather).
bool column_aligned(const StageInfo &s) {
    if (s.args.empty()) return false;
    for (const Call *c : calls_in(s.function)) {
        if (c->name == s.name) continue;  // its own updates' reads of itself
        if (c->args.empty()) return false;
        const Variable *v = c->args[0].as<Variable>();
        if (!v || v->name != s.args[0]) return false;
    }
    return true;
}

// The divisors of n, ascending.
std::vector<int64_t> divisors(int64_t n) {
    std::vector<int64_t> d;
    for (int64_t i = 1; i <= n; i++)
        if (n % i == 0) d.push_back(i);
    return d;
}

}  // namespace

void column_strips_family(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &m, int max_cores,
                          SpaceResult &out, std::set<std::string> &seen) {
    const StageInfo &o = info.output();
    if (o.args.size() != 2 || o.updates != 0 || o.values != 1 || shapes.output.size() != 2) return;
    // The form: 2-D Funcs without updates, 1-D Funcs of the columns (reductions over the rows that
    // stream along the sticks, or what reads them), every read at its reader's column; at least one
    // reduction. An inline reduction (folded) must feed a 1-D Func: folded into a 2-D one it would
    // be recomputed for every row.
    bool reduces = false;
    for (const StageInfo &s : info.stages) {
        if (!column_aligned(s) || s.transposes || s.values != 1) return;
        if (s.args.size() == 2) {
            if (s.updates > 0) return;
        } else if (s.args.size() == 1) {
            if (s.is_output || (s.updates > 0 && !s.streams_x)) return;
            reduces |= s.updates > 0;
        } else {
            return;
        }
        if (s.folded) {
            const StageInfo *c = info.find(s.consumers[0]);
            if (!c || c->args.size() != 1) return;
        }
    }
    if (!reduces) return;
    for (const InputInfo &in : info.inputs)
        if (in.in_gather || in.sticks_along_rows) return;

    // Strips are whole sticks of the type with the most lanes (an fp32 sum of fp16 values takes two
    // of its sticks per stick of the values), the same number of strips on every core, as
    // torch-spyre divides work and schedules/softmax.cpp does.
    int min_bytes = o.type.bytes();
    for (const StageInfo &s : info.stages) min_bytes = std::min(min_bytes, s.type.bytes());
    for (const InputInfo &in : info.inputs) min_bytes = std::min(min_bytes, in.type.bytes());
    const int64_t lanes = int64_t(m.stick_bytes) / min_bytes;
    const int64_t cols = shapes.output[0], rows = shapes.output[1];
    const int64_t sticks = (cols + lanes - 1) / lanes;
    const std::string x = o.args[0], y = o.args[1], xo = x + "o", xi = x + "i";

    // The choices: each 2-D intermediate at the strip or inlined, each inline reduction folded or
    // at the strip, each 2-D input copied per strip or not.
    std::vector<const StageInfo *> tensors, folded;
    for (const StageInfo &s : info.stages) {
        if (s.is_output) continue;
        if (s.folded) folded.push_back(&s);
        else if (s.args.size() == 2) tensors.push_back(&s);
    }
    std::vector<const InputInfo *> stageable;
    for (const InputInfo &in : info.inputs)
        if (in.dims == 2 && !in.read_elsewhere && !in.consumers.empty()) stageable.push_back(&in);
    // At most 2^8 placements of the 2-D intermediates: beyond, the all-at-strip and all-inlined
    // ones and each single change from them.
    std::vector<std::set<std::string>> at_strip_sets;  // which 2-D intermediates are kept at the strip
    if (tensors.size() <= 8) {
        for (uint32_t mask = 0; mask < (1u << tensors.size()); mask++) {
            std::set<std::string> v;
            for (size_t i = 0; i < tensors.size(); i++)
                if (mask & (1u << i)) v.insert(tensors[i]->name);
            at_strip_sets.push_back(v);
        }
    } else {
        std::set<std::string> all;
        for (const StageInfo *t : tensors) all.insert(t->name);
        at_strip_sets.push_back(all);
        at_strip_sets.push_back({});
        for (const StageInfo *t : tensors) {
            at_strip_sets.push_back({t->name});
            std::set<std::string> v = all;
            v.erase(t->name);
            at_strip_sets.push_back(v);
        }
    }

    for (int64_t c : divisors(sticks)) {
        if (c > max_cores) break;
        for (int64_t w : divisors(sticks / c)) {
            const int64_t strip = w * lanes, strips = sticks / w;
            for (const auto &at_strip : at_strip_sets)
                for (bool staged : stageable.empty() ? std::vector<bool>{false} : std::vector<bool>{true, false})
                    for (bool materialise : folded.empty() ? std::vector<bool>{false} : std::vector<bool>{false, true}) {
                        auto vector_sticks = [&](const StageInfo &s) {
                            return int(strip / (int64_t(m.stick_bytes) / s.type.bytes()));
                        };
                        std::vector<Directive> ds;
                        // RoundUp, as the hand schedule splits: a strip past the columns runs on
                        // into the stick padding (a guard would predicate the stores, which have
                        // no Spyre form). Fixed: the strip is the vectors' width, part of the
                        // structure.
                        Directive split{Directive::HSplit, o.name, {x, xo, xi}, {int(strip), 1}, ""};
                        split.fixed = true;
                        ds.push_back(split);
                        ds.push_back({Directive::HReorder, o.name, {xi, y, xo}, {}, ""});
                        if (c > 1) ds.push_back({Directive::RingSplit, o.name, {xo}, {int(c), int(strips)}, ""});
                        ds.push_back({Directive::StickVectorize, o.name, {xi}, {vector_sticks(o)}, ""});
                        // LX of one strip: the output's tile and each copied input double-buffered,
                        // the 2-D intermediates kept at the strip, the column Funcs, a few vectors
                        // of fp32 temporaries.
                        const double elems = double(strip) * double(rows);
                        double lx = 2 * elems * o.type.bytes() + 2.0 * double(strip) * 4;
                        RowsWork work;
                        int computed = 1;
                        // Consumers first, as a person writes them.
                        for (auto it = info.stages.rbegin(); it != info.stages.rend(); ++it) {
                            const StageInfo &s = *it;
                            if (s.is_output) continue;
                            const bool keep = s.args.size() == 1 ? !s.folded || materialise : at_strip.count(s.name) > 0;
                            if (!keep) continue;
                            computed++;
                            ds.push_back({Directive::StoreAt, s.name, {xo}, {}, o.name});
                            ds.push_back({Directive::StickVectorize, s.name, {s.args[0]}, {vector_sticks(s)}, ""});
                            lx += (s.args.size() == 2 ? elems : double(strip)) * s.type.bytes();
                        }
                        std::string staging;
                        for (size_t i = 0; i < info.inputs.size(); i++) {
                            const InputInfo &in = info.inputs[i];
                            const bool copied =
                                staged && std::find(stageable.begin(), stageable.end(), &in) != stageable.end();
                            if (copied) {
                                ds.push_back({Directive::StageAllInLx, in.name, {xo}, {}, o.name});
                                lx += 2 * elems * in.type.bytes();
                            }
                            // Left to the back end, an input is read again by every Func computed
                            // from it (through the ones inlined into it).
                            double reads = 1;
                            if (!copied) {
                                reads = 0;
                                for (const std::string &cn : in.consumers) {
                                    const StageInfo *r = info.find(cn);
                                    reads += r && r->args.size() == 2 && !r->is_output && !at_strip.count(r->name)
                                                 ? double(std::max<size_t>(1, r->consumers.size()))
                                                 : 1.0;
                                }
                            }
                            work.dram_bytes += double(product(shapes.inputs[i])) * in.type.bytes() * std::max(1.0, reads);
                        }
                        if (lx > double(m.lx_usable_bytes)) {
                            out.pruned_lx++;
                            continue;
                        }
                        // Vector work: every Func over all its elements (a reduction over all it
                        // reads), an inlined one once per consumer.
                        for (const StageInfo &s : info.stages) {
                            const int s_lanes = int(m.stick_bytes / s.type.bytes());
                            const double n = s.args.size() == 2 || s.updates > 0 ? double(cols) * double(rows) : double(cols);
                            const bool inlined = s.args.size() == 2 && !s.is_output && !at_strip.count(s.name);
                            const double uses = inlined ? double(std::max<size_t>(1, s.consumers.size())) : 1.0;
                            work.vector_sticks_cycles += uses * n / s_lanes * stage_cycles_per_stick(s, m);
                        }
                        const double out_bytes = double(product(shapes.output)) * o.type.bytes();
                        work.dram_bytes += out_bytes;
                        work.dram_write_bytes = out_bytes;
                        work.tiles_per_core = strips / c;
                        work.stages_per_tile = computed;
                        Candidate cand;
                        cand.family = "column_strips";
                        cand.set("cores", std::to_string(c));
                        cand.set("strip", std::to_string(w) + "sticks");
                        for (const StageInfo *t : tensors) cand.place(t->shown, at_strip.count(t->name) ? "strip" : "inline");
                        if (!folded.empty()) cand.place("reductions", materialise ? "strip" : "folded");
                        if (!stageable.empty()) cand.place("inputs", staged ? "strip" : "none");
                        cand.directives = std::move(ds);
                        cand.estimate_ns = estimate_ns(work, int(c), m);
                        if (seen.insert(cand.summary()).second) out.candidates.push_back(std::move(cand));
                    }
        }
    }
}

}  // namespace spyre::autosched
