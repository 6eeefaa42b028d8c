#include "auto_search.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "auto_layouts.h"
#include "auto_moves.h"
#include "auto_structure.h"
#include "restickify_arguments.h"
#include "auto_workers.h"
#include "compile_kernel.h"
#include "device/error.h"
#include "device/program_io.h"
#include "sim/model_validity.h"
#include "sim/program_work.h"
#include "sim/simulator.h"

namespace spyre::autosched {

using namespace Halide;

namespace {

// An internal error of the back end is a bug to report, not a refused candidate (Halide's own
// errors and the back end's refusals are).
bool is_our_bug(const std::exception &x) {
    const Error *e = dynamic_cast<const Error *>(&x);
    return e && e->kind() == ErrorKind::Internal;
}

using Clock = std::chrono::steady_clock;

// The candidates by estimate, best first.
std::vector<size_t> by_estimate(const std::vector<Candidate> &cs) {
    std::vector<size_t> by_est(cs.size());
    std::iota(by_est.begin(), by_est.end(), 0);
    std::stable_sort(by_est.begin(), by_est.end(),
                     [&](size_t a, size_t b) { return cs[a].estimate_ns < cs[b].estimate_ns; });
    return by_est;
}

// Each family's plainest candidate: the fewest Funcs and inputs placed anywhere but inline, then
// the most cores, the shortest tile, the best estimate; what Halide's default schedule and a
// user's first hand schedule do (the output's rows split over the cores, one row at a time,
// everything else inline). The search always times it, and times it exactly among the finalists:
// where many placed candidates compile, the budget could otherwise run out before this baseline is
// timed, the local search (one choice at a time) does not reach it from a placed favourite, and
// its summarised time can rank it out of the finalists (a 5-point Laplacian on 200 x 64: 4.52 us
// summarised, 3.62 exact, against a placed favourite's 3.86).
std::set<size_t> plainest_candidates(const std::vector<Candidate> &cs) {
    auto plainness = [&](size_t i) {
        int placed = 0;
        for (const Choice &c : cs[i].choices) {
            if (c.form == Choice::Form::Placement) placed += c.value != "inline" && c.value != "none";
            if (c.name != "inputs") continue;  // "in:tile,w:none": each input's staging
            std::stringstream list(c.value);
            for (std::string one; std::getline(list, one, ',');) placed += one.substr(one.rfind(':') + 1) != "none";
        }
        const Choice *cores = cs[i].choice("cores"), *tile = cs[i].choice("tile");
        const int n = cores ? std::atoi(cores->value.c_str()) : 0, rows = tile ? std::atoi(tile->value.c_str()) : 0;
        return std::make_tuple(placed, -n, rows, cs[i].estimate_ns);
    };
    std::map<std::string, size_t> by_family;
    for (size_t i = 0; i < cs.size(); i++) {
        auto it = by_family.find(cs[i].family);
        if (it == by_family.end() || plainness(i) < plainness(it->second)) by_family[cs[i].family] = i;
    }
    std::set<size_t> r;
    for (const auto &kv : by_family) r.insert(kv.second);
    return r;
}

// The order candidates are timed in: for each family its few best estimates and its plainest
// candidate, then the best estimates overall, then a sample of the rest drawn with the seed. Without the `deferred` ones
// (refinements, timed after their bases).
std::vector<size_t> timing_order(const std::vector<Candidate> &cs, const std::vector<size_t> &all_by_est,
                                 const std::vector<char> &deferred, const SearchOptions &so) {
    std::vector<size_t> by_est;
    for (size_t i : all_by_est)
        if (!deferred[i]) by_est.push_back(i);
    const size_t budget = std::min(by_est.size(), size_t(std::max(1, so.max_evaluations)));
    std::vector<size_t> order;
    std::set<size_t> taken;
    auto take = [&](size_t i) {
        if (order.size() < budget && !taken.count(i)) {
            taken.insert(i);
            order.push_back(i);
        }
    };
    std::map<std::string, int> per_family;
    std::set<std::string> families;
    for (const Candidate &c : cs) families.insert(c.family);
    // Half the budget goes to the families in equal shares, so that a family whose estimates are
    // optimistic cannot crowd out the others.
    const int per_family_first = std::max<int>(1, int(budget) / int(2 * families.size()));
    for (size_t i : by_est)
        if (per_family[cs[i].family]++ < per_family_first) take(i);
    for (size_t i : plainest_candidates(cs))
        if (!deferred[i]) take(i);
    const size_t top = budget - budget / 4;
    for (size_t i : by_est) {
        if (order.size() >= top) break;
        take(i);
    }
    std::vector<size_t> rest;
    for (size_t i : by_est)
        if (!taken.count(i)) rest.push_back(i);
    std::mt19937 rng(so.seed);
    std::shuffle(rest.begin(), rest.end(), rng);
    for (size_t i : rest) take(i);
    // Past the budget (further rounds, when many candidates fail): the rest by estimate.
    for (size_t i : by_est)
        if (taken.insert(i).second) order.push_back(i);
    return order;
}

class Progress {
public:
    Progress(bool on, size_t total) : on_(on && isatty(2)), total_(total) {}
    void update(size_t done, double best_us) {
        if (!on_) return;
        const int width = 30;
        int filled = total_ ? int(double(done) / double(total_) * width) : width;
        std::string bar(filled, '#');
        bar += std::string(width - filled, '-');
        if (best_us > 0) std::fprintf(stderr, "\rauto_schedule [%s] %zu/%zu  best %.2f us ", bar.c_str(), done, total_, best_us);
        else std::fprintf(stderr, "\rauto_schedule [%s] %zu/%zu ", bar.c_str(), done, total_);
        std::fflush(stderr);
    }
    void done() {
        if (on_) std::fprintf(stderr, "\n");
    }

private:
    bool on_;
    size_t total_;
};

// Which worker times each of `group`'s tasks: a structure's candidates go to the worker that already
// holds its lowering (`owner`), else all to one worker so that they share it; new groups, largest
// first, to the least loaded worker. `owner` learns the new groups' workers.
std::vector<int> assign_workers(const std::vector<std::string> &group, int workers, std::map<std::string, int> &owner) {
    std::map<std::string, std::vector<size_t>> members;
    for (size_t i = 0; i < group.size(); i++) members[group[i]].push_back(i);
    std::vector<size_t> load(size_t(std::max(1, workers)), 0);
    std::vector<int> of(group.size(), 0);
    std::vector<std::pair<const std::string *, const std::vector<size_t> *>> fresh;
    for (const auto &m : members) {
        auto it = owner.find(m.first);
        if (it == owner.end()) {
            fresh.push_back({&m.first, &m.second});
            continue;
        }
        for (size_t i : m.second) of[i] = it->second;
        load[size_t(it->second)] += m.second.size();
    }
    std::stable_sort(fresh.begin(), fresh.end(), [](auto a, auto b) { return a.second->size() > b.second->size(); });
    for (auto [key, m] : fresh) {
        const int w = int(std::min_element(load.begin(), load.end()) - load.begin());
        for (size_t i : *m) of[i] = w;
        load[size_t(w)] += m->size();
        owner[*key] = w;
    }
    return of;
}

}  // namespace

struct LoweringCache::Entry {
    std::shared_ptr<CapturedKernel> kernel;  // null: lower each candidate on its own
    // The kinds of the shared lowering's refusals (the checks that raised them, Error::site) that a
    // plain lowering of a sibling gave too: refusals of these kinds are the back end's, not the
    // shared lowering's own, and are taken as they are.
    std::set<std::string> confirmed;
};

LoweringCache::LoweringCache() = default;
LoweringCache::~LoweringCache() = default;

namespace {

// A deep copy of the pipeline (the original stays unscheduled) with `c`'s directives applied; with
// `factors`, its factors as Params. Returns the copy's output.
Func scheduled_copy(const Func &output, const std::vector<ImageParam> &inputs, const Candidate &c,
                    const CompileOptions &opt, FactorParams *factors) {
    std::map<std::string, Internal::Function> env = pipeline_env(output);
    auto copy = Internal::deep_copy({output.function()}, env);
    std::map<std::string, Func> funcs, input_funcs;
    for (const auto &e : copy.second) funcs[e.first] = Func(e.second);
    funcs[output.name()] = Func(copy.first[0]);
    for (const ImageParam &p : inputs) {
        auto it = copy.second.find(Func(p).name());
        if (it != copy.second.end()) input_funcs[p.name()] = Func(it->second);
    }
    apply_directives(c.directives, funcs, input_funcs, opt.machine, factors);
    return Func(copy.first[0]);
}

// Candidates with the same key share a Halide lowering: the same directives but for their factors,
// and the same layouts.
std::string lowering_key(const Candidate &c) { return structure_key(c.directives) + layouts_key(c); }

// Which check refused (Error::site), or empty when unknown: two refusals of one check are of one
// kind, whatever names and numbers their messages hold.
std::string refusal_kind(const std::exception &e) {
    const Error *err = dynamic_cast<const Error *>(&e);
    return err ? err->site() : std::string();
}

BackendOptions backend_options(const CompileOptions &opt) {
    BackendOptions bo;
    bo.staging_budget_bytes = opt.staging_budget_bytes;
    return bo;
}

// A candidate's own key: its directives with their factors, and its layouts.
std::string own_key(const Candidate &c) { return directives_key(c.directives) + layouts_key(c); }

}  // namespace

void LoweringCache::lower_alone(const Candidate &c) { alone_.insert(lowering_key(c)); }

bool LoweringCache::holds_own_program(const Candidate &c) const { return own_.count(own_key(c)) != 0; }

double time_candidate(const Func &output, const std::vector<ImageParam> &inputs, const Candidate &c,
                      const CompileOptions &opt, int64_t exact_limit, bool require_exact) {
    return time_candidate(output, inputs, c, opt, exact_limit, require_exact, nullptr);
}

DeviceProgram lower_candidate(const Func &output, const std::vector<ImageParam> &inputs, const Candidate &c,
                              const CompileOptions &caller_opt, LoweringCache *cache) {
    CompileOptions opt = with_layouts(caller_opt, c);
    opt.stage_broadcast_inputs = false;  // the search places the inputs itself
    if (cache) {
        const std::string mine = own_key(c);
        auto kept = cache->own_.find(mine);
        if (kept != cache->own_.end()) return kept->second;
        auto own = [&]() {
            cache->lowerings_++;
            DeviceProgram prog = compile_for_spyre(scheduled_copy(output, inputs, c, opt, nullptr), inputs, opt);
            cache->own_.emplace(mine, prog);
            return prog;
        };
        if (cache->alone_.count(lowering_key(c))) return own();
        std::shared_ptr<LoweringCache::Entry> &e = cache->entries_[lowering_key(c)];
        if (!e) {
            e = std::make_shared<LoweringCache::Entry>();
            try {
                FactorParams fp;
                Func out = scheduled_copy(output, inputs, c, opt, &fp);
                std::vector<Argument> args(fp.params.begin(), fp.params.end());
                cache->lowerings_++;
                // Arguments sticked on another dim: the kernel sees them sticked on dim 0 and
                // their restickify is added to each candidate's program (priced with it).
                const CompileOptions kopt = kernel_options(opt);
                e->kernel = std::make_shared<CapturedKernel>(capture_kernel(
                    out, inputs, kernel_signature(out, inputs, kopt), opt.machine, backend_options(opt), args));
            } catch (const std::exception &x) {  // what Halide refuses symbolically, try per candidate
                if (is_our_bug(x)) throw;
            }
        }
        if (e->kernel) {
            try {
                DeviceProgram prog = finish_kernel(*e->kernel, factor_values(c.directives)).program;
                if (needs_restickify(opt)) prog = restickify_arguments(prog, opt);
                cache->hits_++;
                return prog;
            } catch (const std::exception &shared) {
                // The shared Stmt may differ from a plain lowering in ways the back end refuses
                // (bounds that Halide cannot prove constant with the factors symbolic): such a
                // candidate is lowered on its own, and its siblings still share the lowering.
                const std::string kind = refusal_kind(shared);
                if (!kind.empty() && e->confirmed.count(kind)) throw;
                // An LX overflow is the back end's: it allocates LX once every size is a constant
                // (it refuses sizes that change first), so a plain lowering needs the same bytes.
                // spyre-bench's searches confirmed all 323 of them with a plain lowering.
                if (error_kind(shared) == ErrorKind::LxOverflow) throw;
                try {
                    return own();
                } catch (const std::exception &plain) {
                    if (!kind.empty() && refusal_kind(plain) == kind) e->confirmed.insert(kind);
                    throw;
                }
            }
        }
        return own();
    }
    return compile_for_spyre(scheduled_copy(output, inputs, c, opt, nullptr), inputs, opt);
}

namespace {

// time_candidate's timing of a lowered program. `exact`: the time is the exact model's, as a run
// without loop summaries gives it (none was summarised, e.g. a ring's loops, and the run was not
// stopped).
double time_program(const DeviceProgram &prog, const CompileOptions &opt, int64_t exact_limit, bool require_exact,
                    double stop_after_us, bool *exact = nullptr, uint32_t *validity = nullptr) {
    if (exact) *exact = false;
    if (validity) *validity = 0;
    // A candidate whose engines' busy time alone reaches the stop is not simulated: it cannot win.
    if (stop_after_us > 0) {
        const double bound = time_lower_bound_us(prog, opt.machine);
        if (bound >= stop_after_us) return bound;
    }
    SimOptions so;
    so.timing_only = true;
    // Exact runs only where they are cheap, judged from the program's static work.
    const ProgramWork w = program_work(prog, opt.machine);
    so.summarize_loops = !w.counts_known || w.instructions > exact_limit;
    if (so.summarize_loops && require_exact)
        throw_error("auto_schedule: ", w.instructions, " instructions are too many for an exact timing run");
    if (!so.summarize_loops) so.max_instructions = std::max<int64_t>(exact_limit, 1) * 2;
    so.stop_after_us = stop_after_us;
    const SimResult r = simulate(prog, opt.machine, {}, so);
    if (exact) *exact = !r.stopped && r.stats.summarised_iterations == 0;
    if (validity && !r.stopped) *validity = validity_mask(model_validity(prog, r.stats, opt.machine));
    return r.stats.us;
}

}  // namespace

double time_candidate(const Func &output, const std::vector<ImageParam> &inputs, const Candidate &c,
                      const CompileOptions &opt, int64_t exact_limit, bool require_exact, LoweringCache *cache,
                      double stop_after_us) {
    return time_program(lower_candidate(output, inputs, c, opt, cache), opt, exact_limit, require_exact, stop_after_us);
}

SearchResult search(const Func &output, const std::vector<ImageParam> &inputs, const std::vector<Candidate> &cs,
                    const CompileOptions &opt, const SearchOptions &so) {
    if (cs.empty()) throw_error("auto_schedule: kernel ", opt.kernel_name, ": no candidate schedule fits the machine");
    // Refinements (Candidate::refines) wait for their bases: they are timed for the best few bases,
    // and the local search reaches them as neighbours of the best.
    const std::vector<size_t> by_est = by_estimate(cs);
    std::vector<char> deferred(cs.size(), 0);
    std::map<size_t, std::vector<size_t>> refinements;  // base -> its refinements, by estimate
    {
        std::map<std::string, size_t> by_summary;
        for (size_t i = 0; i < cs.size(); i++) by_summary.emplace(cs[i].summary(), i);
        for (size_t i : by_est) {
            if (cs[i].refines.empty()) continue;
            auto base = by_summary.find(cs[i].refines);
            if (base == by_summary.end()) continue;  // no base in the space: timed like any other
            deferred[i] = 1;
            refinements[base->second].push_back(i);
        }
    }
    const std::vector<size_t> order = timing_order(cs, by_est, deferred, so);
    std::vector<std::vector<Choice>> choices;
    for (const Candidate &c : cs) choices.push_back(c.choices);
    std::vector<size_t> everyone = order;  // then the deferred, by estimate
    for (size_t i : by_est)
        if (deferred[i]) everyone.push_back(i);
    const auto start = Clock::now();
    // Without a wall-time bound (the default) nothing below depends on how fast the machine runs.
    const auto deadline = so.time_budget_s > 0
                              ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(so.time_budget_s))
                              : Clock::time_point::max();
    bool cut = false;  // a deadline check fired, or stop_after_timing: some candidate or phase was skipped
    auto past_deadline = [&] { return cut = cut || Clock::now() > deadline; };
    // A stopped search (by the deadline or stop_after_timing) keeps the first positions of `list` it
    // timed without a gap: what a replay with stop_after_timing at their count times the same way.
    const size_t stop_at = so.stop_after_timing > 0 ? size_t(so.stop_after_timing) : std::numeric_limits<size_t>::max();
    // The candidates handed to the workers so far, in order; records[pos] is list[pos]'s result.
    std::vector<size_t> list;
    std::vector<WorkResult> records;
    std::set<size_t> listed;
    enum TaskKind : int32_t { kSearch = 0, kExact = 1, kVerify = 2 };
    // What a worker keeps from task to task: its lowerings, and the best time it knows (the earlier
    // rounds' best, sent with each task, and its own). A candidate is simulated only until it is
    // 1.25 times as slow as that best: it cannot be the winner then, and is recorded at the bound (a
    // model-size kernel on the vector unit would otherwise take seconds to say so). The finalists
    // are re-timed exactly, which covers summarised figures that rank two schedules close to each
    // other in the wrong order. The bound depends only on what was timed before, in the same order,
    // so the search stays deterministic.
    LoweringCache cache;
    double known_best = 0;
    // A program on more cores than the caller allows is refused. The space sizes each root stage's
    // share from its own rows (stage_rows), so this is a guard: what Halide lowers is the truth.
    auto within_cores = [&](const Candidate &c, DeviceProgram p) {
        if (so.max_cores > 0 && p.num_cores > so.max_cores)
            throw_error("auto_schedule: kernel ", opt.kernel_name, ": candidate '", c.summary(), "' runs on ", p.num_cores,
                        " cores, more than the ", so.max_cores, " allowed (AutoOptions::max_cores)");
        return p;
    };
    // The winner's check: its own lowering; where that is the program the shared lowering gave
    // (most kernels), the times measured stand and it is not simulated again. A candidate the search
    // lowered on its own was timed on that program already.
    auto verify = [&](const Candidate &c, WorkResult &r) {
        if (cache.holds_own_program(c)) {
            r.same_program = 1;
            return;
        }
        const DeviceProgram own = within_cores(c, lower_candidate(output, inputs, c, opt, nullptr));
        if (serialize_program(own) == serialize_program(lower_candidate(output, inputs, c, opt, &cache)))
            r.same_program = 1;
        else {
            bool exact = false;
            r.us = time_program(own, opt, int64_t(1) << 22, false, 0, &exact, &r.validity);
            r.exact = exact;
        }
    };
    auto evaluate = [&](const WorkTask &t) {
        WorkResult r;
        r.pos = t.pos;
        if (past_deadline()) return r;
        r.status = 0;
        if (t.best_before > 0 && (known_best == 0 || t.best_before < known_best)) known_best = t.best_before;
        const Candidate &c = cs[size_t(t.candidate)];
        try {
            if (t.kind == kExact) {
                // Its own lowering, as the caller will compile it: a shared lowering (symbolic tile
                // sizes and core counts) can give a slower program (Halide partitions a boundary
                // condition's loops otherwise), which would rank the candidate out.
                // Loops whose counts it cannot tell before running are summarised, as in the search.
                bool exact = false;
                r.us = time_program(within_cores(c, lower_candidate(output, inputs, c, opt, nullptr)), opt,
                                    int64_t(1) << 22, false, 0, &exact, &r.validity);
                r.exact = exact;
            } else if (t.kind == kVerify) {
                verify(c, r);
            } else {
                bool exact = false;
                r.us = time_program(within_cores(c, lower_candidate(output, inputs, c, opt, &cache)), opt,
                                    int64_t(1) << 20, false, 1.25 * known_best, &exact, &r.validity);
                r.exact = exact;
                if (known_best == 0 || r.us < known_best) known_best = r.us;
            }
            r.status = 1;
        } catch (const std::exception &x) {  // Halide::Error too: an invalid candidate, or one too long to run exactly
            if (is_our_bug(x)) throw;
        }
        return r;
    };
    // Each candidate chosen brings the siblings that share its Halide lowering (the same directives
    // but for tile sizes and core counts), best estimates first: they cost a finish and a
    // simulation each, a fraction of a lowering. A structure of one candidate is lowered as the
    // caller will lower it (known before the workers start, which inherit the cache).
    std::vector<std::string> key(cs.size());
    std::map<std::string, std::vector<size_t>> siblings;
    for (size_t i : everyone) {
        key[i] = lowering_key(cs[i]);
        siblings[key[i]].push_back(i);
    }
    for (const auto &kv : siblings)
        if (kv.second.size() == 1) cache.lower_alone(cs[kv.second[0]]);
    WorkerPool pool(so.workers > 0 ? so.workers : int(std::max(1u, std::thread::hardware_concurrency())), evaluate);
    std::map<std::string, int> owner;  // lowering_key -> the worker holding its lowering
    double round_best = 0;             // the best time of the rounds done
    const size_t budget = size_t(std::max(1, so.max_evaluations));
    Progress bar(so.progress, std::min(order.size(), budget * size_t(1 + std::max(0, so.siblings))));
    double best_so_far = 0;
    size_t done = 0, timed_ok = 0;
    auto note = [&](const WorkResult &r) {
        records[size_t(r.pos)] = r;
        done++;
        if (r.status == 1) timed_ok++;
        if (r.status == 1 && (best_so_far == 0 || r.us < best_so_far)) best_so_far = r.us;
        bar.update(std::min(done, budget), best_so_far);
    };
    // Runs list[begin, end) on the pool (kind kSearch) and then learns the round's best. The
    // workers are assigned for the whole round, also where stop_at leaves part of it out, so that
    // each worker times what it timed in the run a deadline stopped there, in the same order.
    auto run_listed = [&](size_t begin) {
        std::vector<WorkTask> tasks;
        std::vector<std::string> group;
        for (size_t pos = begin; pos < list.size(); pos++) {
            WorkTask t;
            t.pos = int32_t(pos);
            t.kind = kSearch;
            t.candidate = int64_t(list[pos]);
            t.best_before = round_best;
            tasks.push_back(t);
            group.push_back(key[list[pos]]);
        }
        std::vector<int> worker_of = assign_workers(group, pool.size(), owner);
        if (list.size() > stop_at) {
            cut = true;
            const size_t keep = stop_at > begin ? stop_at - begin : 0;
            tasks.resize(keep);
            worker_of.resize(keep);
        }
        if (!tasks.empty()) pool.run(tasks, worker_of, deadline, note);
        for (size_t pos = begin; pos < list.size(); pos++)
            if (records[pos].status == 1 && (round_best == 0 || records[pos].us < round_best)) round_best = records[pos].us;
    };
    auto time_more = [&](const std::vector<size_t> &more, bool with_siblings) {
        const size_t begin = list.size();
        auto add = [&](size_t i) {
            if (!listed.insert(i).second) return false;
            list.push_back(i);
            return true;
        };
        for (size_t i : more) {
            add(i);
            int n = 0;
            for (size_t j : siblings[key[i]])
                if (with_siblings && n < so.siblings && add(j)) n++;
        }
        records.resize(list.size(), WorkResult{});
        run_listed(begin);
    };
    auto best_timed = [&]() {
        std::pair<double, size_t> best{0, cs.size()};
        for (size_t pos = 0; pos < list.size(); pos++)
            if (records[pos].status == 1 && (best.second == cs.size() || records[pos].us < best.first))
                best = {records[pos].us, list[pos]};
        return best.second;
    };
    // First the pre-filter's favourites, one per worker, so that every worker starts the first
    // round knowing a good time to stop the hopeless candidates at (their siblings follow there).
    time_more(std::vector<size_t>(order.begin(), order.begin() + std::min(order.size(), size_t(pool.size()))), false);
    // Rounds of `budget` candidates: another round (up to four) while fewer than half of those
    // timed so far compiled, so that a space where the estimate favours invalid candidates is still
    // searched. Which candidates a round times depends only on the previous rounds' results.
    for (size_t begin = 0, round = 0; begin < order.size() && round < 4; begin += budget, round++) {
        if (round > 0 && (timed_ok >= budget / 2 || past_deadline())) break;
        time_more(std::vector<size_t>(order.begin() + begin, order.begin() + std::min(order.size(), begin + budget)), true);
    }
    // Then the refinements of the best bases timed (as many as the finalists).
    {
        std::vector<std::pair<double, size_t>> bases;
        for (size_t pos = 0; pos < list.size(); pos++)
            if (records[pos].status == 1 && refinements.count(list[pos])) bases.push_back({records[pos].us, list[pos]});
        std::stable_sort(bases.begin(), bases.end());
        std::vector<size_t> refs;
        for (size_t b = 0; b < bases.size() && b < size_t(std::max(1, so.finalists)); b++)
            for (size_t r : refinements[bases[b].second])
                if (!listed.count(r)) refs.push_back(r);
        if (!refs.empty() && !past_deadline()) time_more(refs, true);
    }
    // Then a local search: the untimed neighbours of the best so far (one choice changed; a move
    // that costs a lowering one value at a time along a numeric choice: auto_moves.h), while that
    // improves it, at most four steps of half the budget each.
    for (int step = 0; step < 4 && !past_deadline(); step++) {
        const size_t best = best_timed();
        if (best == cs.size()) break;
        std::vector<size_t> near = local_moves(
            choices, best, everyone, [&](size_t i) { return listed.count(i) > 0; },
            [&](size_t i) { return owner.count(key[i]) > 0; });
        if (near.empty()) break;
        if (near.size() > budget / 2) near.resize(std::max<size_t>(1, budget / 2));
        time_more(near, true);
        if (best_timed() == best) break;
    }
    bar.done();
    SearchResult res;
    res.workers = pool.size();
    // Stopped early: the ranking is of the positions before the first untimed one (a deadline stops
    // the workers mid-round, each at its own place in the list).
    const bool stopped = cut || pool.spent() || so.stop_after_timing > 0;
    size_t ranked_end = list.size();
    if (stopped) {
        for (size_t pos = 0; pos < list.size(); pos++)
            if (records[pos].status == 2) {
                ranked_end = pos;
                break;
            }
        res.stopped_at = int64_t(ranked_end);
    }
    std::vector<std::pair<double, size_t>> ok;  // (us, position in list)
    for (size_t pos = 0; pos < ranked_end; pos++) {
        const WorkResult &r = records[pos];
        if (r.status == 2) continue;
        Timed t;
        t.index = list[pos];
        t.ok = r.status == 1;
        t.us = r.us;
        res.timed.push_back(t);
        if (t.ok) ok.push_back({t.us, pos});
        else res.failed++;
    }
    if (ok.empty()) {
        // Say why the favourite failed: time it again here, where its error can be read.
        std::string why = "no candidate was timed within the time budget";
        ErrorKind kind = ErrorKind::Refused;  // the favourite's, when it failed with a bug
        if (!res.timed.empty()) {
            try {
                time_program(within_cores(cs[order[0]], lower_candidate(output, inputs, cs[order[0]], opt, nullptr)), opt,
                             int64_t(1) << 20, false, 0);
            } catch (const std::exception &e) {
                why = e.what();
                if (const Error *err = dynamic_cast<const Error *>(&e); err && err->kind() == ErrorKind::Internal)
                    kind = ErrorKind::Internal;
            }
        }
        throw_error_of(kind, "auto_schedule: kernel ", opt.kernel_name, ": none of the ", res.timed.size(),
                    " candidates timed compiles for this machine; the pre-filter's favourite (",
                    cs[order[0]].summary(), ") failed with: ", why);
    }
    std::stable_sort(ok.begin(), ok.end());
    res.best = list[ok[0].second];
    res.best_us = ok[0].first;
    // A stopped search's result: no finalists' exact runs (a deadline may have stopped some), and
    // the winner's check here, whatever the deadline: the caller compiles the winner next, so it
    // must be one that compiles. A deadline past the search's last round stops it here too, with
    // every position ranked: a replay at that count runs every round and stops here.
    auto finish_stopped = [&]() {
        res.stopped_at = int64_t(ranked_end);
        res.stopped_by_time = pool.spent() || Clock::now() > deadline;
        res.best = list[ok[0].second];
        res.best_us = ok[0].first;
        res.exact = false;
        for (size_t i = 0; i < ok.size(); i++) {
            const size_t cand = list[ok[i].second];
            WorkResult got;
            try {
                verify(cs[cand], got);
            } catch (const std::exception &x) {
                if (is_our_bug(x)) throw;
                continue;
            }
            res.best = cand;
            res.best_us = got.same_program ? ok[i].first : got.us;
            res.exact = got.same_program ? records[ok[i].second].exact != 0 : got.exact != 0;
            res.validity = got.same_program ? records[ok[i].second].validity : got.validity;
            break;
        }
        res.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return res;
    };
    if (stopped) return finish_stopped();
    // The finalists again, each lowered on its own (as the caller will compile it) and without loop
    // summaries (the exact model), where that is cheap; a finalist too long to run exactly keeps
    // everyone on the summarised figures.
    // They run on the workers, so that the wall-time bound stops them too: each on the worker that
    // holds its lowering, unless that worker has its share of them already.
    size_t nf = std::min(ok.size(), size_t(std::max(1, so.finalists)));
    {
        const std::set<size_t> plain = plainest_candidates(cs);
        for (size_t i = nf; i < ok.size(); i++)
            if (plain.count(list[ok[i].second])) {
                std::rotate(ok.begin() + std::ptrdiff_t(nf), ok.begin() + std::ptrdiff_t(i), ok.begin() + std::ptrdiff_t(i) + 1);
                nf++;
            }
    }
    std::vector<WorkResult> finals(nf);
    std::vector<WorkTask> final_tasks;
    std::vector<std::string> final_group;
    for (size_t i = 0; i < nf; i++) {
        WorkTask t;
        t.pos = int32_t(i);
        t.kind = kExact;
        t.candidate = int64_t(list[ok[i].second]);
        final_tasks.push_back(t);
        final_group.push_back(key[list[ok[i].second]]);
    }
    std::vector<int> final_worker = assign_workers(final_group, pool.size(), owner);
    {
        const size_t share = (nf + size_t(pool.size()) - 1) / size_t(pool.size());
        std::vector<size_t> load(size_t(pool.size()), 0);
        for (int &w : final_worker) {
            if (load[size_t(w)] >= share) w = int(std::min_element(load.begin(), load.end()) - load.begin());
            load[size_t(w)]++;
        }
    }
    // The winner's check (below) of candidate `cand`: lowered on its own on the worker that holds its
    // shared lowering, to compare the two programs.
    auto check_task = [&](size_t cand, int32_t pos) {
        WorkTask t;
        t.pos = pos;
        t.kind = kVerify;
        t.candidate = int64_t(cand);
        auto it = owner.find(key[cand]);
        return std::make_pair(t, it == owner.end() ? 0 : it->second);
    };
    // Beside the finalists, the summarised ranking's best (most often the winner) is checked.
    WorkResult first_check;
    {
        auto [t, w] = check_task(list[ok[0].second], int32_t(nf));
        final_tasks.push_back(t);
        final_worker.push_back(w);
    }
    pool.run(final_tasks, final_worker, deadline, [&](const WorkResult &r) {
        if (size_t(r.pos) == nf) first_check = r;
        else finals[size_t(r.pos)] = r;
    });
    if (pool.spent() || past_deadline()) return finish_stopped();
    std::vector<std::pair<double, size_t>> exact;
    bool all_ran = true, all_exact = true;
    for (size_t i = 0; i < nf; i++) {
        all_ran &= finals[i].status == 1;
        all_exact &= finals[i].exact != 0;
        exact.push_back({finals[i].us, ok[i].second});
    }
    if (all_ran && !exact.empty()) {
        std::stable_sort(exact.begin(), exact.end());
        res.best = list[exact[0].second];
        res.best_us = exact[0].first;
        res.exact = all_exact;
    }
    // The winner as the caller will compile it: a Halide lowering of its own, timed again where it
    // is not the shared lowering's program. A shared lowering can differ from it (with constant
    // factors Halide partitions a causal mask's loops otherwise) and, rarely, fit LX where it does
    // not; such a winner gives way to the next best.
    {
        // The finalists in their exact order, then the others timed (in theirs).
        std::vector<std::pair<double, size_t>> ranked = all_ran ? exact : ok;
        if (all_ran) ranked.insert(ranked.end(), ok.begin() + std::ptrdiff_t(nf), ok.end());
        for (size_t i = 0; i < ranked.size(); i++) {
            if (past_deadline()) return finish_stopped();
            const size_t cand = list[ranked[i].second];
            WorkResult got = first_check;
            if (cand != list[ok[0].second] || got.status == 2) {
                auto [t, w] = check_task(cand, 0);
                got = WorkResult{};
                pool.run({t}, {w}, deadline, [&](const WorkResult &r) { got = r; });
                if (pool.spent()) return finish_stopped();
            }
            if (got.status != 1) continue;
            res.best = cand;
            res.best_us = got.same_program ? ranked[i].first : got.us;
            // Past the finalists the ranking's times are the search's (summarised where it did).
            res.exact = got.same_program ? res.exact && (i < nf || records[ranked[i].second].exact) : got.exact != 0;
            res.validity = got.same_program ? records[ranked[i].second].validity : got.validity;
            break;
        }
    }
    res.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return res;
}

}  // namespace spyre::autosched
