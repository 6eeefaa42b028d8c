#include "auto_space.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "auto_cost.h"
#include "auto_fold.h"
#include "auto_strips.h"
#include "device/error.h"
#include "directives.h"
#include "matmul_tiles.h"
#include "tile_rows.h"

namespace spyre::autosched {

std::string summary_of(const std::string &family, const std::vector<Choice> &choices) {
    std::string s = family;
    for (const Choice &c : choices) {
        s += " " + c.name;
        switch (c.form) {
        case Choice::Form::Setting: s += "=" + c.value; break;
        case Choice::Form::Placement: s += ":" + c.value; break;
        case Choice::Form::Flag: break;
        case Choice::Form::Group: s += "=(" + c.value + ")"; break;
        }
    }
    return s;
}


using namespace Halide;

int64_t product(const std::vector<int64_t> &v) {
    int64_t p = 1;
    for (int64_t d : v) p *= d;
    return p;
}

int sticks_of(const StageInfo &s) {
    if (s.matmul || s.min_read_bytes <= 0) return 1;
    return std::max(1, s.type.bytes() / s.min_read_bytes);
}

double stage_cycles_per_stick(const StageInfo &s, const MachineDesc &m) {
    double c = vector_cycles_per_stick(s.function.values()[0], m);
    for (const Internal::Definition &u : s.function.updates()) c += vector_cycles_per_stick(u.values()[0], m);
    return c;
}

namespace {

enum class Place { Inline, Tile, LxRoot, Device };
const char *place_name(Place p) {
    switch (p) {
    case Place::Inline: return "inline";
    case Place::Tile: return "tile";
    case Place::LxRoot: return "lx_root";
    case Place::Device: return "device";
    }
    return "";
}

// Where an input is copied into LX: not at all (the back end stages it), per tile, per core.
enum class Stage { None, Tile, Core };
const char *stage_name(Stage s) { return s == Stage::None ? "none" : s == Stage::Tile ? "tile" : "core"; }

int64_t const_extent(const Expr &e, int64_t fallback) {
    const int64_t *v = Internal::as_const_int(e);
    return v ? *v : fallback;
}

int64_t rvar_extent(const StageInfo &s, int64_t fallback) {
    if (s.function.updates().empty() || s.function.updates()[0].schedule().rvars().empty()) return fallback;
    return const_extent(s.function.updates()[0].schedule().rvars()[0].extent, fallback);
}

struct RowsPlan {
    int cores = 1;
    int tile = 0;  // rows per tile; 0: one tile per core
    std::map<std::string, Place> place;
    std::map<std::string, Stage> stage;
    bool pe = true;
    bool phased = false;  // dma_phases at the output's tile loop
    // The reductions Halide made for inline sum()/maximum() kept in LX at their consumer's tile
    // too, instead of folded into the consumer (which needs the consumer to be just the reduction).
    bool materialise = false;
    // The Funcs that read at (x + c) / k vectorized by k times their sticks (StageInfo::upsample).
    bool wide = false;
};

class RowsBuilder {
public:
    RowsBuilder(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &m)
        : info_(info), shapes_(shapes), m_(m) {
        rows_ = shapes.output.back();
        stage_rows_ = stage_rows(info, shapes.output);
        cols_ = shapes.output.size() >= 2 ? shapes.output[0] : 1;
        if (shapes.output.size() < 2)
            for (const auto &s : shapes.inputs) cols_ = std::max(cols_, s.empty() ? 1 : s[0]);
    }
    int64_t rows() const { return rows_; }

    std::optional<Candidate> build(const RowsPlan &p) const {
        const StageInfo &out = info_.output();
        const int c = p.cores;
        const int64_t share = (rows_ + c - 1) / c, last = rows_ - (c - 1) * share;
        const bool even = rows_ % c == 0;
        if (last <= 0) return std::nullopt;
        const bool split = p.tile > 0 && p.tile < share;
        // A transposing output's sticks per row (tile_rows.h), when its rows are whole sticks.
        const int64_t out_row_lanes = int64_t(m_.stick_bytes / out.type.bytes());
        const int transpose_sticks =
            out.reads_across_sticks && cols_ % out_row_lanes == 0
                ? transpose_row_sticks(cols_ / out_row_lanes, split ? p.tile : share, m_)
                : 1;
        if (split && !even && (share % p.tile || last % p.tile)) return std::nullopt;
        // dma_phases: every core meets as many barriers as the others (tile_rows.h).
        if (p.phased && (c < 2 || !split || share % p.tile || !phases_agree(int(rows_), c, p.tile))) return std::nullopt;
        auto place = [&](const StageInfo &s) {
            if (s.is_output) return Place::Tile;
            auto it = p.place.find(s.name);
            return it == p.place.end() ? Place::Inline : it->second;
        };
        auto is_root = [&](const StageInfo &s) {
            Place pl = place(s);
            return s.is_output || pl == Place::LxRoot || pl == Place::Device;
        };
        // The root each Func is computed under: itself for a root, else its consumers' (one).
        std::map<std::string, std::string> owner;
        for (auto it = info_.stages.rbegin(); it != info_.stages.rend(); ++it) {
            const StageInfo &s = *it;
            if (is_root(s)) {
                owner[s.name] = s.name;
                continue;
            }
            std::set<std::string> o;
            for (const std::string &cn : s.consumers) o.insert(owner.at(cn));
            if (o.size() != 1) {
                if (place(s) == Place::Tile) return std::nullopt;  // one LX copy cannot serve two roots
                owner[s.name] = "";
                continue;
            }
            owner[s.name] = *o.begin();
        }
        auto tile_var = [&](const StageInfo &r) {
            const std::string &rv = r.args.back();
            if (split) return rv + "o";
            if (c > 1) return rv + "_core";
            return std::string(kOutermost);
        };
        auto reads_folded = [&](const StageInfo &s) {
            for (const std::string &r : s.reads) {
                const StageInfo *p = info_.find(r);
                if (p && p->folded) return true;
            }
            return false;
        };
        // A transposed read under a reduction (scores(t, h) = sum(q(d, h) * k(d, t, h)): a dot
        // product per element) over too few rows for whole sticks of the result: each element is
        // computed on its own, reduced along the input's sticks, as a hand schedule that leaves the
        // Func unvectorized does.
        auto dots_by_element = [&](const StageInfo &s) {
            const int lanes = int(m_.stick_bytes / s.type.bytes());
            return s.args.size() == 2 && s.reads_across_sticks && (s.updates > 0 || reads_folded(s)) &&
                   ((split ? p.tile : share) % lanes || (c > 1 && share % lanes));
        };
        auto sticks = [&](const StageInfo &s) { return sticks_of(s) * (p.wide ? s.upsample : 1); };
        std::vector<Directive> ds;
        int roots = 0, computed = 0;
        auto schedule_matmul = [&](const StageInfo &s) {
            if (!s.matmul) return;
            if (p.pe) ds.push_back({Directive::PeMatmul, s.name, {s.matmul->rvar}, {}, ""});
            else ds.push_back({Directive::HUpdateVectorize, s.name, {s.args[0]}, {int(m_.stick_bytes / 2)}, ""});
        };
        // Consumers first (the output's directives lead, as a person writes them).
        for (auto it = info_.stages.rbegin(); it != info_.stages.rend(); ++it) {
            const StageInfo &s = *it;
            if (s.folded) {
                const StageInfo *c = info_.find(s.consumers[0]);
                if (!p.materialise || !c || c->is_output || place(*c) != Place::Tile) continue;
                const StageInfo *r = info_.find(owner.at(s.name));
                if (!r) return std::nullopt;
                ds.push_back({Directive::StoreAt, s.name, {tile_var(*r)}, {}, r->name});
                continue;
            }
            Place pl = place(s);
            if (pl == Place::Inline) {
                // A Func with updates cannot be inlined; one that reads a folded reduction would
                // recompute the whole reduction for every element of its consumer.
                if (s.updates > 0 || reads_folded(s)) return std::nullopt;
                continue;
            }
            computed++;
            if (is_root(s)) {
                roots++;
                // A root intermediate is split over the cores by its own rows (a reader that swaps
                // dims or reads a halo needs more or fewer than the output's), in equal shares.
                auto own = stage_rows_.find(s.name);
                const int64_t srows = s.is_output || own == stage_rows_.end() ? rows_ : own->second;
                if (!s.is_output && c > 1 && srows % c) return std::nullopt;
                if (pl == Place::Device) ds.push_back({Directive::DeviceRoot, s.name, {}, {}, ""});
                if (pl == Place::LxRoot) ds.push_back({Directive::LxRoot, s.name, {}, {}, ""});
                const std::string rv = s.args.back();
                if (c > 1) ds.push_back({Directive::RingSplit, s.name, {rv}, {c, s.is_output ? 0 : int(srows)}, ""});
                if (split) ds.push_back({Directive::Split, s.name, {rv, rv + "o", rv + "i"}, {p.tile}, ""});
                if (p.phased && s.is_output) ds.push_back({Directive::DmaPhases, s.name, {rv + "o"}, {}, ""});
                if (s.args.size() == 2 && s.reads_across_sticks) {
                    // A transpose: a few output sticks per row (transpose_sticks), the tile's rows
                    // around them, so that each tile is one transpose of whole sticks
                    // (split(x, xo, xi, n * lanes).reorder(xi, y, xo)).
                    const int lanes = int(m_.stick_bytes / s.type.bytes());
                    if (dots_by_element(s)) {
                        schedule_matmul(s);
                        continue;
                    }
                    if ((split ? p.tile : share) % lanes || (c > 1 && share % lanes)) return std::nullopt;
                    const std::string x = s.args[0];
                    ds.push_back({Directive::Split, s.name, {x, x + "o", x + "i"}, {transpose_sticks * lanes}, ""});
                    ds.push_back({Directive::HReorder, s.name,
                                  split ? std::vector<std::string>{x + "i", rv + "i", x + "o", rv + "o"}
                                        : std::vector<std::string>{x + "i", rv, x + "o"}, {}, ""});
                    ds.push_back({Directive::StickVectorize, s.name, {x + "i"}, {1}, ""});
                } else if (s.args.size() >= 2 && s.is_output && s.stick_period > 0 &&
                           s.stick_period % int(m_.stick_bytes / s.type.bytes()) == 0 && cols_ % s.stick_period == 0) {
                    // x % P in the definition: x split by P (RoPE's heads), whole sticks of each.
                    const std::string x = s.args[0];
                    ds.push_back({Directive::Split, s.name, {x, x + "h", x + "i"}, {s.stick_period}, ""});
                    ds.push_back({Directive::StickVectorize, s.name, {x + "i"}, {sticks(s)}, ""});
                } else if (s.args.size() >= 2 && !(s.is_output && cols_ == 1)) {
                    // (An output one element wide, a row's argmax in a stick of its own, has no
                    // vector along x: the back end stores each row's element.)
                    ds.push_back({Directive::StickVectorize, s.name, {s.args[0]}, {sticks(s)}, ""});
                }
                schedule_matmul(s);
            } else {
                const StageInfo *r = info_.find(owner.at(s.name));
                if (!r) return std::nullopt;
                ds.push_back({Directive::StoreAt, s.name, {tile_var(*r)}, {}, r->name});
                if (s.args.size() >= 2 && !dots_by_element(s)) ds.push_back({Directive::StickVectorize, s.name, {s.args[0]}, {sticks(s)}, ""});
                schedule_matmul(s);
            }
        }
        // Inputs: copied into LX for the output's tile (or core) when only the output's subtree
        // reads them.
        for (const InputInfo &in : info_.inputs) {
            auto it = p.stage.find(in.name);
            Stage st = it == p.stage.end() ? Stage::None : it->second;
            if (st == Stage::None || in.consumers.empty()) continue;
            bool mine = true;
            for (const std::string &cn : in.consumers) mine &= owner.at(cn) == out.name;
            if (!mine) return std::nullopt;
            if (st == Stage::Core && c == 1) return std::nullopt;
            const std::string at = st == Stage::Core ? out.args.back() + "_core" : tile_var(out);
            ds.push_back({Directive::StageAllInLx, in.name, {at}, {}, out.name});
        }
        // The pre-filter: LX of one tile and the estimated time.
        const int64_t tile_rows = split ? p.tile : share;
        int64_t row_bytes = 0, fixed_bytes = 0;
        RowsWork w;
        w.phased = p.phased;
        w.roots = roots;
        w.tiles_per_core = split ? (share + p.tile - 1) / p.tile : 1;
        w.stages_per_tile = computed;
        for (size_t i = 0; i < info_.inputs.size(); i++) {
            const InputInfo &in = info_.inputs[i];
            const int64_t bytes = product(shapes_.inputs[i]) * in.type.bytes();
            std::set<std::string> roots_reading;
            for (const std::string &cn : in.consumers) roots_reading.insert(owner.at(cn));
            auto it = p.stage.find(in.name);
            Stage st = it == p.stage.end() ? Stage::None : it->second;
            // An input with fewer dimensions than the output (gamma) is read by every core: once if
            // copied per core, else again for every tile.
            double reads = double(std::max<size_t>(1, roots_reading.size()));
            if (in.dims < int(out.args.size()))
                reads *= double(c) * (st == Stage::Core ? 1.0 : double(w.tiles_per_core));
            w.dram_bytes += double(bytes) * reads;
            const int64_t per_row = shapes_.inputs[i].size() >= 2 ? bytes / shapes_.inputs[i].back() : 0;
            if (st == Stage::Tile) {
                if (per_row) row_bytes += 2 * per_row;
                else fixed_bytes += 2 * bytes;
            } else if (st == Stage::Core) {
                fixed_bytes += bytes;
            }
        }
        const double out_bytes = double(product(shapes_.output)) * out.type.bytes();
        w.dram_bytes += out_bytes;
        w.dram_write_bytes += out_bytes;
        // A transposing output holds one stick of each of a tile's rows at a time, not whole rows.
        const int64_t out_lanes = int64_t(m_.stick_bytes / out.type.bytes());
        const int64_t held_cols =
            out.reads_across_sticks && out.args.size() == 2 ? std::min(cols_, transpose_sticks * out_lanes) : cols_;
        row_bytes = row_bytes * held_cols / std::max<int64_t>(cols_, 1);
        row_bytes += 2 * int64_t(out_bytes) / rows_ * held_cols / std::max<int64_t>(cols_, 1);
        for (const StageInfo &s : info_.stages) {
            const Place pl = place(s);
            const bool two_d = s.args.size() >= 2;
            const double elems = two_d ? double(rows_) * double(cols_) : double(rows_);
            const int lanes = int(m_.stick_bytes / s.type.bytes());
            // A reduction reads whole rows whatever it produces.
            const double work_elems = s.updates > 0 || s.folded ? double(rows_) * double(cols_) : elems;
            double uses = 1;
            if (pl == Place::Inline && !s.folded) uses = double(std::max<size_t>(1, s.consumers.size()));
            if (s.matmul) {
                const double macs = elems * double(rvar_extent(s, 1));
                (p.pe ? w.pe_macs : w.vector_macs) += macs;
            } else {
                w.vector_sticks_cycles += uses * work_elems / lanes * stage_cycles_per_stick(s, m_);
            }
            if (s.is_output || s.folded) continue;
            if (pl == Place::Device) {
                w.dram_bytes += elems * s.type.bytes() * (1 + double(s.consumers.size()));
                w.dram_write_bytes += elems * s.type.bytes();
            }
            if (pl == Place::Tile) row_bytes += (two_d ? held_cols : 1) * s.type.bytes();
            if (pl == Place::LxRoot) fixed_bytes += int64_t(elems / c) * s.type.bytes();
        }
        // Expression temporaries: two fp32 rows.
        row_bytes += 2 * held_cols * 4;
        const int64_t lx = tile_rows * row_bytes + fixed_bytes;
        Candidate cand;
        cand.family = "rows";
        cand.lx_estimate = lx;
        cand.estimate_ns = estimate_ns(w, c, m_);
        cand.set("cores", std::to_string(c));
        cand.set("tile", std::to_string(tile_rows));
        for (const auto &pl : p.place) cand.place(info_.shown(pl.first), place_name(pl.second));
        // The inputs' staging is one choice (the variants of rows_family).
        std::string staging;
        for (const auto &st : p.stage) staging += (staging.empty() ? "" : ",") + display_name(st.first) + ":" + stage_name(st.second);
        if (!staging.empty()) cand.set("inputs", staging);
        if (w.pe_macs + w.vector_macs > 0) cand.flag(p.pe ? "pe" : "vector");
        if (p.materialise) cand.place("reductions", "tile");
        if (p.phased) cand.flag("phased");
        if (p.wide) cand.flag("upsample_sticks");
        cand.directives = std::move(ds);
        return cand;
    }

private:
    const PipelineInfo &info_;
    const SpaceShapes &shapes_;
    const MachineDesc &m_;
    int64_t rows_ = 1, cols_ = 1;
    std::map<std::string, int64_t> stage_rows_;  // the rows each stage's consumers need (stage_rows)
};

std::vector<int> core_counts(int64_t extent, int max_cores) {
    std::vector<int> v;
    for (int c = 1; c <= max_cores; c *= 2)
        if (c <= extent) v.push_back(c);
    if (max_cores <= extent && std::find(v.begin(), v.end(), max_cores) == v.end()) v.push_back(max_cores);
    return v;
}

// The core counts of a split of `rows` rows: ring_split(y, c) gives each core ceil(rows / c) rows,
// so that ceil(rows / share) cores have work (33 rows on 32 asked for: 2 each, 17 cores). Each
// power of two up to max_cores, and a row per core when there are fewer rows than that, becomes
// the count of cores its share keeps busy.
std::vector<int> row_core_counts(int64_t rows, int max_cores) {
    std::vector<int> asked = core_counts(rows, max_cores), v;
    if (rows < max_cores) asked.push_back(int(rows));
    for (int c : asked) {
        const int64_t share = (rows + c - 1) / c;
        const int busy = int((rows + share - 1) / share);
        if (std::find(v.begin(), v.end(), busy) == v.end()) v.push_back(busy);
    }
    std::sort(v.begin(), v.end());
    return v;
}

void rows_family(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &m, int max_cores,
                 SpaceResult &out, std::set<std::string> &seen) {
    RowsBuilder b(info, shapes, m);
    const StageInfo &o = info.output();
    const int lanes_out = int(m.stick_bytes / o.type.bytes());
    // The Funcs to place, with their choices.
    std::vector<const StageInfo *> fs;
    bool has_matmul = false;
    for (const StageInfo &s : info.stages) {
        has_matmul |= bool(s.matmul);
        if (!s.is_output && !s.folded) fs.push_back(&s);
    }
    auto reduces = [&](const StageInfo &s) {
        if (s.updates > 0) return true;
        for (const std::string &r : s.reads) {
            const StageInfo *p = info.find(r);
            if (p && p->folded) return true;
        }
        return false;
    };
    std::vector<std::map<std::string, Place>> policies;
    auto policy = [&](auto choose) {
        std::map<std::string, Place> p;
        for (const StageInfo *s : fs) p[s->name] = choose(*s);
        return p;
    };
    auto fix = [&](const StageInfo &s, Place p) { return reduces(s) && p == Place::Inline ? Place::Tile : p; };
    std::map<std::string, Place> all_tile = policy([&](const StageInfo &) { return Place::Tile; });
    std::map<std::string, Place> reductions_tile = policy([&](const StageInfo &s) {
        return reduces(s) || s.args.size() < 2 ? Place::Tile : Place::Inline;
    });
    policies.push_back(all_tile);
    policies.push_back(reductions_tile);
    policies.push_back(policy([&](const StageInfo &s) {
        return reduces(s) || s.args.size() < 2 ? Place::LxRoot : fix(s, Place::Device);
    }));
    policies.push_back(policy([&](const StageInfo &s) { return Place::Device; }));
    policies.push_back(policy([&](const StageInfo &s) { return Place::LxRoot; }));
    policies.push_back(policy([&](const StageInfo &s) {
        return reduces(s) || s.args.size() < 2 ? Place::LxRoot : fix(s, Place::Inline);
    }));
    for (const auto &base : {all_tile, reductions_tile})
        for (const StageInfo *s : fs)
            for (Place p : {Place::Inline, Place::Tile, Place::LxRoot, Place::Device}) {
                if (p == base.at(s->name) || (p == Place::Inline && reduces(*s))) continue;
                auto v = base;
                v[s->name] = p;
                policies.push_back(v);
            }
    // Input staging: big inputs (as many dims as the output) per tile or not; the others per core,
    // per tile or not.
    std::vector<std::map<std::string, Stage>> stagings;
    for (int variant = 0; variant < 4; variant++) {
        std::map<std::string, Stage> st;
        for (const InputInfo &in : info.inputs) {
            const bool big = in.dims >= int(o.args.size());
            if (variant == 3 || in.in_gather || in.read_elsewhere) st[in.name] = Stage::None;
            else if (big) st[in.name] = Stage::Tile;
            else st[in.name] = variant == 0 ? Stage::Core : variant == 1 ? Stage::Tile : Stage::None;
        }
        stagings.push_back(st);
    }
    // A big input read with the rows on its stick dimension (conv1d's w(c, tap) beside in(t, c)) is
    // cut into part-sticks by a tile of a few rows, but a core's share can be whole sticks: copied
    // per core, the rest per tile.
    for (const InputInfo &core_in : info.inputs) {
        if (core_in.dims < int(o.args.size()) || !core_in.sticks_along_rows) continue;
        std::map<std::string, Stage> st;
        for (const InputInfo &in : info.inputs)
            st[in.name] = in.name == core_in.name                ? Stage::Core
                          : in.in_gather || in.read_elsewhere ? Stage::None
                                                              : Stage::Tile;
        stagings.push_back(st);
    }
    const int64_t rows = b.rows();
    bool has_folded = false, has_upsample = false;
    for (const StageInfo &s : info.stages) {
        has_folded |= s.folded;
        has_upsample |= s.upsample > 1;
    }
    for (int c : row_core_counts(rows, max_cores)) {
        // A one-dimensional output over rows: each core's share in whole sticks.
        if (o.args.size() == 1 && c > 1 && (rows % c || (rows / c) % lanes_out)) continue;
        const int64_t share = (rows + c - 1) / c;
        std::vector<int> tiles{0};
        for (int t = 1; t < share && t <= 512; t *= 2) {
            if (o.args.size() == 1 && t % lanes_out) continue;
            tiles.push_back(t);
        }
        for (int t : tiles)
            for (const auto &pl : policies)
                for (const auto &st : stagings)
                    for (bool pe : has_matmul ? std::vector<bool>{true, false} : std::vector<bool>{true})
                    for (bool mat : has_folded ? std::vector<bool>{false, true} : std::vector<bool>{false})
                    for (bool phased : t > 0 && c > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false})
                    for (bool wide : has_upsample ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
                        RowsPlan p;
                        p.wide = wide;
                        p.phased = phased;
                        p.materialise = mat;
                        p.cores = c;
                        p.tile = t;
                        p.place = pl;
                        p.stage = st;
                        p.pe = pe;
                        // Core staging with one core is the tile staging of one tile.
                        if (c == 1) {
                            bool core = false;
                            for (const auto &s : st) core |= s.second == Stage::Core;
                            if (core) continue;
                        }
                        std::optional<Candidate> cand = b.build(p);
                        if (!cand) continue;
                        if (!seen.insert(cand->summary()).second) continue;
                        if (cand->lx_estimate > m.lx_usable_bytes) {
                            out.pruned_lx++;
                            out.over_lx.push_back(std::move(*cand));
                            continue;
                        }
                        out.candidates.push_back(std::move(*cand));
                    }
    }
}

void columns_family(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &m, int max_cores,
                    SpaceResult &out, std::set<std::string> &seen) {
    const StageInfo &o = info.output();
    if (o.args.size() != 1) return;
    bool streams = false;
    // An inline sum() along the sticks (out(x) = sum(in(x, r))) streams too: its folded stage's.
    for (const StageInfo &s : info.stages) streams |= s.streams_x;
    if (!streams) return;
    const int64_t cols = shapes.output[0];
    const int lanes = int(m.stick_bytes / o.type.bytes());
    int64_t rows = 1;
    for (const auto &s : shapes.inputs)
        if (s.size() >= 2) rows = std::max(rows, s.back());
    // A reduction the columns read per row (m(y) = sum(in(r, y)), read as m(ry) in out(x) =
    // sum(in(x, ry) - m(ry))) does not stream along the columns: vectorized along its rows it reads
    // the input across its sticks, past the last row when there are fewer rows than lanes. Such
    // stages are also tried unvectorized (`rows:scalar`), a reduction along each row, and are
    // placed as the accumulators are (computed once per tile of columns or once per core, not
    // inline in the column loop).
    // The statistic is its Func's own reduction, or the inline one it wraps (m(y) = sum(...)).
    auto per_row_stage = [&](const StageInfo &s) {
        if (s.is_output || s.folded) return false;
        if (s.updates > 0) return !s.streams_x;
        for (const std::string &r : s.reads)
            if (const StageInfo *f = info.find(r); f && f->folded && f->updates > 0 && !f->streams_x) return true;
        return false;
    };
    bool per_row = false;
    for (const StageInfo &s : info.stages) per_row |= per_row_stage(s);
    for (int c : core_counts(cols, max_cores)) {
        if (c > 1 && (cols % c || (cols / c) % lanes)) continue;
        for (Place acc_place : {Place::Tile, Place::LxRoot})
          for (bool scalar_rows : per_row ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
            std::vector<Directive> ds;
            const std::string x = o.args[0];
            if (c > 1) ds.push_back({Directive::RingSplit, o.name, {x}, {c, 0}, ""});
            ds.push_back({Directive::StickVectorize, o.name, {x}, {sticks_of(o)}, ""});
            RowsWork w;
            for (const StageInfo &s : info.stages) {
                w.vector_sticks_cycles += double(rows) * double(cols) / lanes * stage_cycles_per_stick(s, m);
                const bool row_stat = per_row_stage(s);
                if (s.is_output || s.folded || (s.updates == 0 && !row_stat)) continue;
                if (acc_place == Place::Tile) ds.push_back({Directive::StoreAt, s.name, {x}, {}, o.name});
                else ds.push_back({Directive::LxRoot, s.name, {}, {}, ""});
                if (!scalar_rows || !row_stat)
                    ds.push_back({Directive::StickVectorize, s.name, {s.args[0]}, {sticks_of(s)}, ""});
            }
            for (size_t i = 0; i < info.inputs.size(); i++)
                w.dram_bytes += double(product(shapes.inputs[i])) * info.inputs[i].type.bytes();
            w.dram_bytes += double(cols) * o.type.bytes();
            Candidate cand;
            cand.family = "columns";
            cand.set("cores", std::to_string(c));
            cand.place("accumulators", place_name(acc_place));
            if (scalar_rows) cand.place("rows", "scalar");
            cand.directives = ds;
            cand.estimate_ns = estimate_ns(w, c, m);
            if (seen.insert(cand.summary()).second) out.candidates.push_back(cand);
        }
    }
}

// ---- the matmul family ----

struct MmStage {
    const StageInfo *out;
    std::vector<const StageInfo *> accs;
    // Per accumulator: the Func converting its W input (int8 weights to fp16), computed per K
    // panel, or null when the accumulator reads its W input directly.
    std::vector<const StageInfo *> w_converts;
    int64_t batch = 1, rows = 1, inner = 1, cols = 1;
    int w_bytes = 2;  // bytes per element of the W inputs (1: int8 weights converted per panel)
    const InputInfo *a_input = nullptr;  // A, when it is an input the stage reads directly
    bool w_batched = false;              // W(n, k, b): each batch's cores read their own W
};

std::optional<std::vector<MmStage>> matmul_stages(const PipelineInfo &info, const SpaceShapes &shapes) {
    std::vector<MmStage> stages;
    std::map<std::string, size_t> stage_of;
    const StageInfo &o = info.output();
    if (o.args.size() < 2 || o.args.size() > 3) return std::nullopt;
    for (const StageInfo &s : info.stages) {
        if (s.folded || s.is_output) continue;
        if (s.updates == 0) continue;
        if (!s.matmul || !s.matmul->stage_form || s.consumers.size() != 1) return std::nullopt;
        const StageInfo *c = info.find(s.consumers[0]);
        if (!c || c->args != s.args) return std::nullopt;
        const InputInfo *w = info.find_input_func(s.matmul->w);
        // W may be an elementwise conversion of an input that only this accumulator reads (a
        // dequantization): it is computed per K panel in LX, as schedules/qlinear.cpp does.
        const StageInfo *convert = nullptr;
        if (!w) {
            convert = info.find(s.matmul->w);
            if (!convert || convert->elementwise_input.empty() || convert->args.size() != 2 ||
                convert->consumers.size() != 1 || convert->type.bytes() != 2)
                return std::nullopt;
            w = info.find_input_func(convert->elementwise_input);
            if (w && w->consumers.size() != 1) return std::nullopt;
        }
        if (!w || w->dims != (s.matmul->w_batched ? 3 : 2)) return std::nullopt;
        if (s.matmul->w_batched && (convert || shapes.inputs[size_t(w - info.inputs.data())][2] != shapes.output[2]))
            return std::nullopt;
        const int w_bytes = w->type.bytes();
        if (w_bytes != 1 && w_bytes != 2) return std::nullopt;
        size_t wi = size_t(w - info.inputs.data());
        if (!stage_of.count(c->name)) {
            stage_of[c->name] = stages.size();
            MmStage st;
            st.out = c;
            st.cols = shapes.inputs[wi][0];
            st.inner = shapes.inputs[wi][1];
            st.rows = shapes.output[1];
            st.batch = shapes.output.size() == 3 ? shapes.output[2] : 1;
            st.w_bytes = w_bytes;
            st.a_input = info.find_input_func(s.matmul->a);
            st.w_batched = s.matmul->w_batched;
            stages.push_back(st);
        }
        MmStage &st = stages[stage_of[c->name]];
        if (!st.accs.empty() && (st.accs[0]->matmul->a != s.matmul->a || shapes.inputs[wi][1] != st.inner ||
                                 shapes.inputs[wi][0] != st.cols || st.w_bytes != w_bytes ||
                                 st.w_batched != s.matmul->w_batched))
            return std::nullopt;
        // An fp16 W read directly, or int8 through a conversion: the PE multiplies fp16 panels.
        if ((w_bytes == 1) != bool(convert)) return std::nullopt;
        st.accs.push_back(&s);
        st.w_converts.push_back(convert);
    }
    if (stages.empty()) return std::nullopt;
    // Every stage but the output's goes through device memory; the output must be a stage.
    if (!stage_of.count(o.name)) return std::nullopt;
    for (const MmStage &st : stages)
        if (st.out->args.size() != o.args.size()) return std::nullopt;
    // Stages in the order they are computed.
    std::sort(stages.begin(), stages.end(), [&](const MmStage &a, const MmStage &b) {
        auto pos = [&](const StageInfo *s) { return s - info.stages.data(); };
        return pos(a.out) < pos(b.out);
    });
    return stages;
}

// RingBest shares A or W in each stage, whichever the tile estimate prefers (the pe_ring recipe);
// RingA and RingW share the same operand in every stage.
enum class MmMode { Pe, Vector, RingA, RingW, RingBest };
const char *mm_mode_name(MmMode m) {
    switch (m) {
    case MmMode::Pe: return "pe";
    case MmMode::Vector: return "vector";
    case MmMode::RingA: return "pe_ring_a";
    case MmMode::RingW: return "pe_ring_w";
    case MmMode::RingBest: return "pe_ring";
    }
    return "";
}

// The directives of one stage (schedules/matmul_stage.cpp's recipe with the tiles given), or
// nullopt when the split or the tiles cannot be whole sticks. The core grid (N and M splits of a
// batch's cores) is the first in IBM's batch > N > M order, or with `best_grid` the one whose tiles
// the estimate finds fastest (as the hand schedules choose).
std::optional<std::vector<Directive>> matmul_stage_directives(const MmStage &s, int cores, MmMode mode, bool best_grid,
                                                              int variant, const MachineDesc &m, double *est) {
    const int lanes = int(m.stick_bytes / 2);
    const int n_lanes = int(m.stick_bytes / s.w_bytes);  // N splits and tiles in whole sticks of W
    const int B = int(s.batch), M = int(s.rows), K = int(s.inner), N = int(s.cols);
    if (cores < B ? B % cores : cores % B) return std::nullopt;
    const int per_batch = std::max(1, cores / B);
    const bool best = mode == MmMode::RingBest;
    const int accs = int(s.accs.size());
    int n_split = 0, m_split = 0, share_a = 0, share_w = 0;
    MatmulTiles t;
    for (int ns = per_batch; ns >= 1; ns--) {
        if (per_batch % ns || N % ns || (ns > 1 && (N / ns) % n_lanes) || M % (per_batch / ns)) continue;
        const int ms = per_batch / ns;
        int sa = (mode == MmMode::RingA || best) && ns >= 2 ? ns : 0;
        // A W shared by every batch goes round the cores of all of them; a W per batch only round
        // that batch's cores (the core order below puts them next to each other).
        const int w_ring = s.w_batched ? ms : ms * B;
        int sw = (mode == MmMode::RingW || best) && cores >= B && w_ring >= 2 ? w_ring : 0;
        if ((mode == MmMode::RingA && !sa) || (mode == MmMode::RingW && !sw) || (best && !sa && !sw)) continue;
        MatmulTiles c;
        try {
            if (best && sa && sw) {
                MatmulTiles ta = choose_matmul_tiles(s.out->name, M / ms, N / ns, K, cores, m, sa, 1, accs, s.w_bytes);
                MatmulTiles tw = choose_matmul_tiles(s.out->name, M / ms, N / ns, K, cores, m, 1, sw, accs, s.w_bytes);
                if (tw.est_ns < ta.est_ns) c = tw, sa = 0;
                else c = ta, sw = 0;
            } else {
                c = choose_matmul_tiles(s.out->name, M / ms, N / ns, K, cores, m, std::max(sa, 1), std::max(sw, 1), accs,
                                        s.w_bytes);
            }
        } catch (const Error &) {
            continue;
        }
        if (n_split && c.est_ns >= t.est_ns * (1 - 1e-9)) continue;
        n_split = ns, m_split = ms, share_a = sa, share_w = sw, t = c;
        if (!best_grid) break;
    }
    if (!n_split) return std::nullopt;
    const int n_core = N / n_split, m_core = M / m_split;
    // Neighbours of the estimate's choice: the simulator judges what the estimate cannot.
    switch (variant) {
    case 0: break;
    case 1:
        if (K % (2 * t.k)) return std::nullopt;
        t.k *= 2;
        break;
    case 2:
        if ((t.k / 2) % lanes || t.k / 2 == 0) return std::nullopt;
        t.k /= 2;
        break;
    case 3:
        if ((t.n / 2) % n_lanes || t.n / 2 == 0 || n_core % (t.n / 2)) return std::nullopt;
        t.n /= 2;
        break;
    case 4:
        if ((t.m / 2) % m.pe_pass_rows || t.m / 2 == 0) return std::nullopt;
        t.m /= 2;
        break;
    default: return std::nullopt;
    }
    *est += t.est_ns;
    const StageInfo &o = *s.out;
    const std::string n = o.args[0], mm = o.args[1];
    const bool batched = o.args.size() == 3;
    const bool shares_w = share_w > 0;
    std::vector<Directive> ds;
    const std::string f = o.name;
    ds.push_back({Directive::HSplit, f, {n, "nc", n}, {n_core}, ""});
    ds.push_back({Directive::HSplit, f, {mm, "mc", mm}, {m_core}, ""});
    if (batched) {
        const std::string b = o.args[2];
        if (shares_w) {
            ds.push_back({Directive::HFuse, f, {"mc", b, "nm"}, {}, ""});
            ds.push_back({Directive::HFuse, f, {"nm", "nc", "core"}, {}, ""});
        } else {
            ds.push_back({Directive::HFuse, f, {"nc", "mc", "nm"}, {}, ""});
            ds.push_back({Directive::HFuse, f, {"nm", b, "core"}, {}, ""});
        }
    } else {
        ds.push_back({Directive::HFuse, f, shares_w ? std::vector<std::string>{"mc", "nc", "core"}
                                                    : std::vector<std::string>{"nc", "mc", "core"}, {}, ""});
    }
    if (cores > 1) ds.push_back({Directive::HParallel, f, {"core"}, {}, ""});
    ds.push_back({Directive::HSplit, f, {mm, "mo", "mi"}, {t.m}, ""});
    ds.push_back({Directive::HSplit, f, {n, "no", "ni"}, {t.n}, ""});
    ds.push_back({Directive::HReorder, f, {"ni", "mi", "no", "mo", "core"}, {}, ""});
    ds.push_back({Directive::HVectorize, f, {"ni"}, {lanes}, ""});
    for (size_t i = 0; i < s.accs.size(); i++) {
        const StageInfo *acc = s.accs[i];
        const std::string a = acc->name, an = acc->args[0], am = acc->args[1];
        ds.push_back({Directive::HComputeAtLx, a, {"no"}, {}, f});
        ds.push_back({Directive::HVectorize, a, {an}, {lanes / 2}, ""});
        ds.push_back({Directive::HUpdateSplit, a, {acc->matmul->rvar, "ko", "ki"}, {t.k}, ""});
        std::vector<std::string> order;
        if (mode == MmMode::Vector) {
            order = {"ki", an, am, "ko"};
        } else {
            const std::string pe = spyre::pe_loop(RVar("ki")).name();
            ds.push_back({Directive::OnPe, a, {"ki"}, {}, ""});
            order = {pe, an, am, "ko"};
        }
        if (batched) order.push_back(acc->args[2]);
        ds.push_back({Directive::HUpdateReorder, a, order, {}, ""});
        if (mode == MmMode::Vector) ds.push_back({Directive::HUpdateVectorize, a, {an}, {lanes}, ""});
        const int share = shares_w ? share_w : share_a;
        if (share) ds.push_back({Directive::RingShare, a, {"ko"}, {share}, ""});
        if (const StageInfo *cv = s.w_converts[i]) {
            // W's panel converted where K streams (ring_share renames that loop), with A's panel
            // copied into LX at the same loop ahead of it, so that the pipeline prefetches both
            // and the ring can share A's (schedules/qlinear.cpp explains the order).
            const std::string panel = share ? spyre::ring_share_loop(RVar("ko"), share).name() : "ko";
            ds.push_back({Directive::HComputeAtLx, cv->name, {panel}, {}, a});
            ds.push_back({Directive::StickVectorize, cv->name, {cv->args[0]}, {cv->type.bytes() / s.w_bytes}, ""});
            if (s.a_input) ds.push_back({Directive::StageInLxAt, s.a_input->name, {panel}, {}, a});
        }
    }
    return ds;
}

// The best few plans, by estimate, for each Func the matmul stages read as A that no stage computes
// (a norm before the projections): each planned as a pipeline of its own by the rows family and
// kept in device memory, split over the cores by its own rows, for the stages to stream. Empty
// when there is none; nullopt when one cannot be planned so.
std::optional<std::vector<std::vector<Candidate>>> prologue_plans(const PipelineInfo &info, const SpaceShapes &shapes,
                                                                  const std::vector<MmStage> &stages,
                                                                  const MachineDesc &m, int max_cores) {
    constexpr size_t kPlans = 3;
    std::vector<std::vector<Candidate>> plans;
    std::set<std::string> done;
    for (const MmStage &st : stages)
        for (const StageInfo *acc : st.accs) {
            const std::string &a = acc->matmul->a;
            const StageInfo *pre = info.find(a);
            if (!pre || pre->folded || !done.insert(a).second) continue;
            bool computed = false;
            for (const MmStage &o : stages) computed |= o.out->name == a;
            if (computed) continue;
            // Its shape is the stage's A: {K, M[, B]}.
            std::vector<int64_t> shape{st.inner, st.rows};
            if (pre->args.size() == 3) shape.push_back(st.batch);
            if (pre->args.size() != shape.size()) return std::nullopt;
            std::vector<size_t> index;
            const PipelineInfo sub = sub_pipeline(info, a, &index);
            for (const StageInfo &t : sub.stages)
                if (t.matmul) return std::nullopt;  // a matmul feeding it: a chain of stages, not a prologue
            SpaceShapes sub_shapes;
            for (size_t i : index) sub_shapes.inputs.push_back(shapes.inputs[i]);
            sub_shapes.output = shape;
            SpaceResult r;
            std::set<std::string> seen;
            rows_family(sub, sub_shapes, m, max_cores, r, seen);
            // The best plan on each of the most core counts: a prologue is a small part of the
            // work, which the estimate cannot rank by its own time, and its LX is taken from the
            // stages' tiles: a plan of fewer rows per core leaves them more.
            std::stable_sort(r.candidates.begin(), r.candidates.end(), [](const Candidate &x, const Candidate &y) {
                return x.estimate_ns < y.estimate_ns;
            });
            std::map<int, Candidate, std::greater<int>> by_cores;
            for (Candidate &c : r.candidates) {
                int cores = 1;
                for (const Directive &d : c.directives)
                    if (d.kind == Directive::RingSplit && d.func == a) cores = d.ints[0];
                by_cores.emplace(cores, std::move(c));  // the first, best estimate, of each count
            }
            r.candidates.clear();
            for (auto &e : by_cores)
                if (r.candidates.size() < kPlans) r.candidates.push_back(std::move(e.second));
            if (r.candidates.empty()) return std::nullopt;
            for (Candidate &c : r.candidates) {
                // An intermediate now: in device memory, its ring split sized by its own rows.
                for (Directive &d : c.directives)
                    if (d.kind == Directive::RingSplit && d.func == a) d.ints[1] = int(shape.back());
                c.directives.insert(c.directives.begin(), Directive{Directive::DeviceRoot, a, {}, {}, ""});
                // Written once and read back by the stages.
                c.estimate_ns += double(product(shape)) * pre->type.bytes() / m.dram_bytes_per_ns;
            }
            plans.push_back(std::move(r.candidates));
        }
    return plans;
}

void matmul_family(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &m, int max_cores,
                   SpaceResult &out, std::set<std::string> &seen) {
    std::optional<std::vector<MmStage>> stages = matmul_stages(info, shapes);
    if (!stages) return;
    const std::optional<std::vector<std::vector<Candidate>>> pre = prologue_plans(info, shapes, *stages, m, max_cores);
    if (!pre) return;
    size_t plans = 1;
    for (const auto &p : *pre) plans = std::max(plans, p.size());
    auto add = [&](int c, MmMode mode, bool best_grid, int variant, size_t plan) {
        std::vector<Directive> ds;
        double est = 0;
        std::vector<Choice> pre_choices;
        for (const auto &p : *pre) {
            const Candidate &pc = p[std::min(plan, p.size() - 1)];
            ds.insert(ds.end(), pc.directives.begin(), pc.directives.end());
            est += pc.estimate_ns;
            pre_choices.push_back({"pre", pc.summary(), Choice::Form::Group});
        }
        for (const MmStage &st : *stages) {
            if (!st.out->is_output) {
                ds.push_back({Directive::DeviceRoot, st.out->name, {}, {}, ""});
                // The intermediate is written and read back once.
                est += 2.0 * double(st.batch * st.rows * st.cols) * st.out->type.bytes() / m.dram_bytes_per_ns;
            }
            auto sd = matmul_stage_directives(st, c, mode, best_grid, variant, m, &est);
            if (!sd) return;
            ds.insert(ds.end(), sd->begin(), sd->end());
        }
        // Vector-unit matmuls: a MAC per fp32 lane.
        if (mode == MmMode::Vector) {
            double macs = 0;
            for (const MmStage &st : *stages)
                macs += double(st.accs.size()) * double(st.batch * st.rows) * double(st.inner * st.cols);
            est = std::max(est, macs / (double(c) * double(m.stick_bytes / 4) * m.vec_add_sticks_per_cycle * m.clock_ghz));
        }
        Candidate cand;
        cand.family = "matmul";
        cand.set("cores", std::to_string(c));
        cand.flag(mm_mode_name(mode));
        cand.set("grid", best_grid ? "best" : "first");
        cand.set("tiles", std::to_string(variant));
        cand.choices.insert(cand.choices.end(), pre_choices.begin(), pre_choices.end());
        cand.directives = std::move(ds);
        cand.estimate_ns = est;
        if (seen.insert(cand.summary()).second) out.candidates.push_back(std::move(cand));
    };
    for (int c = max_cores; c >= 1; c /= 2)
        for (MmMode mode : {MmMode::Pe, MmMode::RingBest, MmMode::RingA, MmMode::RingW, MmMode::Vector})
            for (bool best_grid : {false, true})
                for (int variant = 0; variant < 5; variant++)
                    for (size_t plan = 0; plan < plans; plan++) add(c, mode, best_grid, variant, plan);
}

// ---- column tiles: a scan down the rows ----

// Whether `s` is a scan down the rows: one update over (x, r) that reads its own earlier rows
// (acc(x, r) = acc(x, r - 1) + in(x, r)), x pure.
bool scans_down_rows(const StageInfo &s) {
    if (s.updates != 1 || s.values != 1 || s.args.size() != 2) return false;
    const Internal::Definition &u = s.function.updates()[0];
    if (u.args().size() != 2 || u.schedule().rvars().size() != 1) return false;
    const Internal::Variable *x = u.args()[0].as<Internal::Variable>();
    if (!x || x->name != s.args[0] || !expr_uses_var(u.args()[1], u.schedule().rvars()[0].var)) return false;
    bool reads_earlier = false;
    struct Calls : Internal::IRVisitor {
        std::string self, row;
        Expr at;
        bool *found;
        using Internal::IRVisitor::visit;
        void visit(const Internal::Call *c) override {
            if (c->name == self && c->args.size() == 2 && !equal(c->args[1], at)) *found = true;
            Internal::IRVisitor::visit(c);
        }
    } calls;
    calls.self = s.name, calls.at = u.args()[1], calls.found = &reads_earlier;
    for (const Expr &v : u.values()) v.accept(&calls);
    return reads_earlier;
}

// A 2-D output over a scan down the rows, which a row split cannot divide (every row needs the one
// before it): the columns in stick-wide tiles over the cores, each tile's scan in LX with its rows
// one vector step after another (docs/directives.md, "Scans").
void column_tiles_family(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &m, int max_cores,
                         SpaceResult &out, std::set<std::string> &seen) {
    const StageInfo &o = info.output();
    if (o.args.size() != 2 || o.updates != 0) return;
    // (A scan read by the output at its own args counts as folded into it; here it is kept in LX.)
    std::vector<const StageInfo *> scans;
    for (const StageInfo &s : info.stages) {
        if (s.is_output) continue;
        if (!scans_down_rows(s) || s.consumers != std::vector<std::string>{o.name}) return;
        scans.push_back(&s);
    }
    if (scans.empty()) return;
    const int lanes = int(m.stick_bytes / o.type.bytes());
    const int64_t cols = shapes.output[0], rows = shapes.output[1];
    const int64_t tiles = (cols + lanes - 1) / lanes;
    const std::string x = o.args[0], y = o.args[1], xo = x + "o";
    for (int c : row_core_counts(tiles, max_cores))
        for (bool staged : {true, false}) {
            std::vector<Directive> ds;
            ds.push_back({Directive::Split, o.name, {x, xo, x}, {lanes}, ""});
            ds.push_back({Directive::HReorder, o.name, {x, y, xo}, {}, ""});
            if (c > 1) ds.push_back({Directive::RingSplit, o.name, {xo}, {c, int(tiles)}, ""});
            ds.push_back({Directive::StickVectorize, o.name, {x}, {1}, ""});
            if (staged)
                for (const InputInfo &in : info.inputs)
                    if (in.dims == 2 && !in.in_gather) ds.push_back({Directive::StageAllInLx, in.name, {xo}, {}, o.name});
            RowsWork w;
            for (const StageInfo *sc : scans) {
                ds.push_back({Directive::StoreAt, sc->name, {xo}, {}, o.name});
                // A stick of a column tile per step (the rows one after another: each reads the last).
                const int sc_lanes = int(m.stick_bytes / sc->type.bytes());
                ds.push_back({Directive::HVectorize, sc->name, {sc->args[0]}, {sc_lanes}, ""});
                ds.push_back({Directive::HUpdateVectorize, sc->name, {sc->args[0]}, {sc_lanes}, ""});
            }
            for (const StageInfo &s : info.stages)
                w.vector_sticks_cycles += double(rows) * double(tiles) * stage_cycles_per_stick(s, m);
            for (size_t i = 0; i < info.inputs.size(); i++)
                w.dram_bytes += double(product(shapes.inputs[i])) * info.inputs[i].type.bytes();
            w.dram_write_bytes = double(product(shapes.output)) * o.type.bytes();
            w.dram_bytes += w.dram_write_bytes;
            w.tiles_per_core = (tiles + c - 1) / c;
            Candidate cand;
            cand.family = "column_tiles";
            cand.set("cores", std::to_string(c));
            cand.place("inputs", staged ? "tile" : "none");
            cand.directives = std::move(ds);
            cand.estimate_ns = estimate_ns(w, c, m);
            if (seen.insert(cand.summary()).second) out.candidates.push_back(std::move(cand));
        }
}

// ---- split reductions (with reassociation allowed) ----

// The core counts (2 and up) that split `extent` into equal shares of whole sticks of `lanes`: every
// divisor of its sticks, not only powers of two (Llama's reduced intermediate of 704 is 11 sticks:
// 11 cores of one stick each).
std::vector<int> whole_stick_splits(int64_t extent, int lanes, int max_cores) {
    std::vector<int> v;
    if (extent % lanes) return v;
    const int64_t sticks = extent / lanes;
    for (int c = 2; c <= max_cores && c <= sticks; c++)
        if (sticks % c == 0) v.push_back(c);
    return v;
}

// A reduction split over the cores (ring_split_reduction): each core reduces its share of the
// reduction domain into a partial in its LX and one ring reduction combines them. Worth it where
// the outputs are too few to spread over the cores: a matmul with a small M x N and a long K (the
// accumulator whole in LX, on the PE array), or a 1-D output reduced along its inputs' sticks.
void split_k_family(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &m, int max_cores,
                    SpaceResult &out, std::set<std::string> &seen) {
    const StageInfo &o = info.output();
    const int lanes = int(m.stick_bytes / 2);
    auto add = [&](int c, const StageInfo &red, int64_t extent, bool pe, std::vector<Directive> ds, RowsWork w,
                   int64_t lx) {
        if (lx > m.lx_usable_bytes) {
            out.pruned_lx++;
            return;
        }
        Candidate cand;
        cand.family = "split_k";
        cand.set("cores", std::to_string(c));
        cand.flag(pe ? "pe" : "vector");
        ds.insert(ds.begin(), {Directive::RingSplitReduction, red.name, {red.function.updates()[0].schedule().rvars()[0].var},
                               {c, int(extent), pe ? 1 : 0}, ""});
        cand.directives = std::move(ds);
        // The partials go round the ring once, reduced as they go.
        const double partial = double(lx) / 2;
        cand.estimate_ns = estimate_ns(w, c, m) + partial * double(c - 1) / double(c) / (m.ring_bytes_per_cycle * m.clock_ghz) +
                           double(c) * m.ring_hop_latency_cycles / m.clock_ghz;
        if (seen.insert(cand.summary()).second) out.candidates.push_back(std::move(cand));
    };
    // A matmul stage of one output: out(n, m) from acc(n, m) += A(k, m) * W(n, k).
    std::optional<std::vector<MmStage>> stages = matmul_stages(info, shapes);
    if (stages && stages->size() == 1 && (*stages)[0].accs.size() == 1 && (*stages)[0].batch == 1 &&
        (*stages)[0].w_bytes == 2) {
        const MmStage &st = (*stages)[0];
        const StageInfo &acc = *st.accs[0];
        // Each core's partial is whole fp32 sticks along N.
        if ((st.cols * 4) % int64_t(m.stick_bytes)) return;
        for (int c : whole_stick_splits(st.inner, lanes, max_cores)) {
            RowsWork w;
            for (size_t i = 0; i < info.inputs.size(); i++) w.dram_bytes += double(product(shapes.inputs[i])) * info.inputs[i].type.bytes();
            const double outs = double(st.rows) * double(st.cols);
            w.dram_bytes += outs * o.type.bytes();
            w.dram_write_bytes = outs * o.type.bytes();
            w.pe_macs = outs * double(st.inner);
            w.vector_sticks_cycles = outs / lanes * stage_cycles_per_stick(o, m);
            // The fp32 partial whole, and a K share of A and W (the back end stages them).
            const int64_t lx = 2 * int64_t(outs) * 4 + (st.rows + st.cols) * (st.inner / c) * 2;
            add(c, acc, st.inner, true,
                {{Directive::LxRoot, acc.name, {}, {}, ""},
                 {Directive::StickVectorize, o.name, {o.args[0]}, {1}, ""}},
                w, lx);
        }
        return;
    }
    // A 1-D output with one update reducing along the sticks of what it reads.
    if (o.args.size() != 1 || o.updates != 1 || o.matmul || o.streams_x) return;
    const Internal::Definition &u = o.function.updates()[0];
    if (u.schedule().rvars().size() != 1) return;
    const int64_t extent = const_extent(u.schedule().rvars()[0].extent, 0);
    if ((shapes.output[0] * o.type.bytes()) % int64_t(m.stick_bytes)) return;  // partials in whole sticks
    for (int c : whole_stick_splits(extent, lanes, max_cores)) {
        RowsWork w;
        double elems = 0;
        for (size_t i = 0; i < info.inputs.size(); i++) {
            w.dram_bytes += double(product(shapes.inputs[i])) * info.inputs[i].type.bytes();
            elems = std::max(elems, double(product(shapes.inputs[i])));
        }
        w.dram_bytes += double(shapes.output[0]) * o.type.bytes();
        w.dram_write_bytes = double(shapes.output[0]) * o.type.bytes();
        w.vector_sticks_cycles = elems / lanes * stage_cycles_per_stick(o, m);
        const int64_t lx = 2 * shapes.output[0] * 4 + 2 * int64_t(m.stick_bytes) * shapes.output[0];
        add(c, o, extent, false, {}, w, lx);
    }
}

// Halide's argmax()/argmin() (or a tuple_select update of that form): an inline Tuple reduction of
// an index and a value, updated as select(better, r, index) and the value kept likewise, which the
// back end selects as one VREDARGMAX/VREDARGMIN (select_reductions.cpp).
bool arg_reduction_stage(const StageInfo &s) {
    using namespace Halide::Internal;
    if (!s.folded || s.values != 2 || s.updates != 1) return false;
    std::vector<Halide::Expr> v = s.function.update(0).values();
    for (Halide::Expr &e : v)
        while (const Let *l = e.as<Let>()) e = l->body;  // Halide names the compared values
    const Select *index = v[0].as<Select>();
    return index && index->true_value.as<Variable>() && (v[1].as<Select>() || v[1].as<Max>() || v[1].as<Min>());
}

}  // namespace

SpaceResult candidate_space(const PipelineInfo &info, const SpaceShapes &shapes, const MachineDesc &m, int max_cores,
                            bool reassociate) {
    if (shapes.inputs.size() != info.inputs.size())
        throw_error("auto_schedule: ", info.inputs.size(), " inputs but ", shapes.inputs.size(), " input shapes");
    if (shapes.output.size() != info.output().args.size())
        throw_error("auto_schedule: output ", display_name(info.output().name), " has ", info.output().args.size(),
                    " dimensions but its shape has ", shapes.output.size());
    for (size_t i = 0; i < shapes.inputs.size(); i++)
        if (int(shapes.inputs[i].size()) != info.inputs[i].dims)
            throw_error("auto_schedule: input ", display_name(info.inputs[i].name), " has ", info.inputs[i].dims,
                        " dimensions but its shape has ", shapes.inputs[i].size());
    max_cores = int(std::max<int64_t>(1, std::min<int64_t>(max_cores > 0 ? max_cores : m.cores, m.cores)));
    SpaceResult r;
    const StageInfo *tuple = nullptr;
    for (const StageInfo &s : info.stages)
        if (s.values > 1 && !tuple) tuple = &s;
    if (tuple) {
        // A Tuple state folded over a reduction: the fold family (auto_fold.h); an argmax, which
        // the back end selects as it stands, the rows family (it splits the rows).
        if (arg_reduction_stage(*tuple)) {
            std::set<std::string> seen;
            rows_family(info, shapes, m, max_cores, r, seen);
        } else if (std::string why = fold_family(info, shapes, m, max_cores, r); !why.empty()) {
            throw_error("auto_schedule: Func ", display_name(tuple->name), " is a Tuple state the autoscheduler cannot fold: ", why);
        }
    } else {
        std::set<std::string> seen;
        columns_family(info, shapes, m, max_cores, r, seen);
        if (r.candidates.empty()) rows_family(info, shapes, m, max_cores, r, seen);
        column_tiles_family(info, shapes, m, max_cores, r, seen);
        column_strips_family(info, shapes, m, max_cores, r, seen);
        matmul_family(info, shapes, m, max_cores, r, seen);
        if (reassociate) split_k_family(info, shapes, m, max_cores, r, seen);
    }
    // Different choices can write the same directives (a tile as large as a core's share, say):
    // time each schedule once.
    std::set<std::string> written;
    std::vector<Candidate> distinct;
    for (Candidate &c : r.candidates)
        if (written.insert(directives_key(c.directives)).second) distinct.push_back(std::move(c));
    r.candidates = std::move(distinct);
    return r;
}

}  // namespace spyre::autosched
