#include "auto_schedule.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "auto_fingerprint.h"
#include "auto_layouts.h"
#include "auto_print.h"
#include "auto_search.h"
#include "auto_space.h"
#include "auto_structure.h"
#include "device/error.h"
#include "tuned_schedule.h"
#include "tuning_db.h"
#include "prove_bounds.h"
#include "sim/model_validity.h"
#include "user_terms.h"

namespace spyre {

using namespace Halide;
using namespace autosched;

namespace {

// The arguments in order (inputs, then the output), marked free where AutoOptions allows.
std::vector<LayoutArg> layout_args(const Func &output, const std::vector<ImageParam> &inputs,
                                   const CompileOptions &options, const AutoOptions &ao) {
    std::vector<LayoutArg> args;
    for (size_t i = 0; i < inputs.size(); i++)
        args.push_back({inputs[i].name(), options.inputs[i].layout, int(options.inputs[i].shape.size()), false});
    args.push_back({display_name(output.name()), options.output.layout, int(options.output.shape.size()), false});
    for (const std::string &name : ao.free_layouts) {
        bool found = false;
        for (LayoutArg &a : args)
            if (name == "*" || a.name == name) a.free = found = true;
        if (found) continue;
        std::string known;
        for (const LayoutArg &a : args) known += (known.empty() ? "" : ", ") + a.name;
        throw_error("auto_schedule: kernel ", options.kernel_name, ": AutoOptions::free_layouts names '", name,
                    "', which is not an argument of the pipeline (its arguments: ", known, ")");
    }
    return args;
}


// The C++ of a chosen schedule, headed by where it came from.
std::string result_cpp(const AutoResult &r, const Func &output, const AutoOptions &ao, const std::vector<Directive> &ds,
                       const PipelineInfo &info, const std::string &origin) {
    char stop[512] = "";
    if (r.stopped_by_time_limit)
        std::snprintf(stop, sizeof stop,
                      "; the time limit (time_budget_s) stopped the search after %lld candidates of its order, which "
                      "AutoOptions::stop_after_timing = %lld with workers = %d repeats",
                      (long long)r.stopped_at, (long long)r.stopped_at, r.workers);
    else if (r.stopped_at > 0)
        std::snprintf(stop, sizeof stop, "; stopped after %lld candidates of its order (stop_after_timing, %d workers)",
                      (long long)r.stopped_at, r.workers);
    char head[1536];
    std::snprintf(head, sizeof head,
                  "// Spyre schedule of %s chosen by spyre::auto_schedule (seed %u): %.2f us modelled%s%s.\n"
                  "// %s\n// %lld candidates, %lld timed by the simulator (%lld refused), %.1f s%s.\n",
                  display_name(output.name()).c_str(), ao.seed, r.us, r.exact ? "" : " (loops summarised)", origin.c_str(),
                  r.summary.c_str(), (long long)r.candidates, (long long)r.timed, (long long)r.failed, r.search_seconds, stop);
    std::string validity;
    if (r.validity_known) {
        std::string keys;
        for (const std::string &k : r.validity) keys += (keys.empty() ? "" : ", ") + k;
        validity = keys.empty() ? "// The timing model: within its calibrated range.\n"
                                : "// The timing model extrapolates here (" + keys +
                                      "): docs/device_model.md, \"Where the model is validated\".\n";
    }
    std::string layouts = layouts_cpp(r.options, "options", "// ");
    if (!layouts.empty()) layouts = "// The device layouts it chose (AutoOptions::free_layouts), for the CompileOptions:\n" + layouts;
    return std::string(head) + validity + layouts + print_cpp(ds, info, "m");
}

// The search's figures, between an AutoResult and the database's TunedSchedule (same field names).
template <typename From, typename To>
void copy_figures(const From &f, To &t) {
    t.us = f.us;
    t.exact = f.exact;
    t.validity = f.validity;
    t.validity_known = f.validity_known;
    t.family = f.family;
    t.summary = f.summary;
    t.candidates = f.candidates;
    t.timed = f.timed;
    t.failed = f.failed;
    t.search_seconds = f.search_seconds;
}

TunedSchedule tuned_of(const AutoResult &r, const std::vector<Directive> &ds, const Fingerprint &fp) {
    TunedSchedule t;
    t.directives = rename_directives(ds, fp.names, true);
    for (const TensorSpec &in : r.options.inputs) t.layouts.push_back(in.layout);
    t.layouts.push_back(r.options.output.layout);
    copy_figures(r, t);
    return t;
}

// A stored result applied to the caller's Funcs. An entry that does not decode or apply is an error
// naming the database and the entry: searching instead would hide a stale or damaged file.
AutoResult from_tuning_db(const std::string &json_text, const Fingerprint &fp, const PipelineInfo &info,
                          const Func &output, const std::vector<ImageParam> &inputs,
                          const std::map<std::string, Func> &funcs, const std::map<std::string, Func> &input_funcs,
                          const CompileOptions &options, const AutoOptions &ao) {
    const std::string where = "auto_schedule: kernel " + options.kernel_name + ": tuning database '" + ao.tuning_db +
                              "', entry " + fp.key + ": ";
    AutoResult r;
    std::vector<Directive> ds;
    try {
        TunedSchedule t = decode_tuned_schedule(json_text);
        if (t.layouts.size() != inputs.size() + 1)
            throw_error("tuning database entry: ", t.layouts.size(), " layouts for ", inputs.size() + 1, " arguments");
        r.options = options;
        for (size_t i = 0; i < inputs.size(); i++) {
            check_layout(t.layouts[i], options.inputs[i].shape, "layout of input " + inputs[i].name());
            r.options.inputs[i].layout = t.layouts[i];
        }
        check_layout(t.layouts.back(), options.output.shape, "layout of the output");
        r.options.output.layout = t.layouts.back();
        ds = rename_directives(t.directives, fp.names, false);
        apply_directives(ds, funcs, input_funcs, options.machine);
        copy_figures(t, r);
    } catch (const Error &e) {
        throw_error_of(e.kind(), where, e.what());
    } catch (const std::exception &e) {  // Halide's errors on records that name no loop of this pipeline
        throw_error(where, "its schedule does not apply: ", e.what());
    }
    r.from_tuning_db = true;
    r.fingerprint = fp.key;
    r.cpp = result_cpp(r, output, ao, ds, info, ", from the tuning database " + ao.tuning_db);
    return r;
}
// Whether candidate `c` keeps each of `outputs` in device memory at root, as the Pipeline that has
// them as outputs stores them: a device_root and no directive that moves it into LX or lays it out.
bool materialises(const Candidate &c, const std::set<std::string> &outputs) {
    for (const std::string &name : outputs) {
        bool root = false;
        for (const Directive &d : c.directives) {
            if (d.func != name) continue;
            if (d.kind == Directive::DeviceRoot) root = true;
            if (d.kind == Directive::StoreAt || d.kind == Directive::LxRoot || d.kind == Directive::HComputeAtLx ||
                d.kind == Directive::HStoreAt || d.kind == Directive::CloneIn || d.kind == Directive::DeviceLayout)
                return false;
        }
        if (!root) return false;
    }
    return true;
}

// auto_schedule of `output`, whose pipeline has `also_outputs` (Funcs `output` reads) as outputs too.
AutoResult schedule_pipeline(Func output, const std::set<std::string> &also_outputs,
                             const std::vector<ImageParam> &inputs, const CompileOptions &options,
                             const AutoOptions &ao);

}  // namespace

AutoResult auto_schedule(Func output, const std::vector<ImageParam> &inputs, const CompileOptions &options,
                         const AutoOptions &ao) {
    return schedule_pipeline(output, {}, inputs, options, ao);
}

namespace {

AutoResult schedule_pipeline(Func output, const std::set<std::string> &also_outputs,
                             const std::vector<ImageParam> &inputs, const CompileOptions &options,
                             const AutoOptions &ao) {
    if (options.inputs.size() != inputs.size())
        throw_error("auto_schedule: kernel ", options.kernel_name, ": ", inputs.size(),
                    " ImageParams but ", options.inputs.size(), " input shapes in CompileOptions::inputs");
    if (options.output.shape.empty())
        throw_error("auto_schedule: kernel ", options.kernel_name, ": CompileOptions::output has no shape");
    if (ao.stop_after_timing < 0)
        throw_error("auto_schedule: kernel ", options.kernel_name, ": AutoOptions::stop_after_timing is ", ao.stop_after_timing,
                    "; it counts candidates (0: no stop)");
    if (ao.time_budget_s < 0 || !(ao.time_budget_s == ao.time_budget_s))
        throw_error("auto_schedule: kernel ", options.kernel_name, ": AutoOptions::time_budget_s is ", ao.time_budget_s,
                    "; it is seconds of wall time (0: no limit)");
    options.machine.validate();
    // An algorithm that reads outside its inputs has no schedule: say so once, not per candidate.
    std::map<std::string, std::vector<int64_t>> input_shapes;
    for (size_t i = 0; i < inputs.size(); i++) input_shapes[inputs[i].name()] = options.inputs[i].shape;
    try {
        prove_bounds(output.function(), input_shapes, options.output.shape);
    } catch (const Error &e) {
        throw_error_of(e.kind(), "auto_schedule: kernel ", options.kernel_name, ": ", in_user_terms(e.what()));
    }
    PipelineInfo info = analyse_pipeline(output, inputs);
    for (StageInfo &st : info.stages)
        if (also_outputs.count(st.name)) {
            st.also_output = true;
            st.folded = false;  // an output is stored, not folded into its reader
        }
    // The caller's Funcs, by name, for the chosen directives.
    std::map<std::string, Func> funcs, input_funcs;
    for (const auto &e : pipeline_env(output)) funcs[e.first] = Func(e.second);
    funcs[output.name()] = output;
    for (const ImageParam &p : inputs) input_funcs[p.name()] = Func(p);
    const Fingerprint fp = fingerprint(info, inputs, options, ao);
    // The database is open only to look up and to store: the search forks its workers in between.
    if (!ao.tuning_db.empty())
        if (std::optional<std::string> hit = TuningDb(ao.tuning_db).find(fp.key))
            return from_tuning_db(*hit, fp, info, output, inputs, funcs, input_funcs, options, ao);

    const auto t0 = std::chrono::steady_clock::now();
    SpaceShapes shapes;
    for (const TensorSpec &t : options.inputs) shapes.inputs.push_back(t.shape);
    shapes.output = options.output.shape;
    SpaceResult space = candidate_space(info, shapes, options.machine, ao.max_cores, ao.allow_reassociation);
    // Nothing within the pre-filter's LX estimate: time those it rejected, the back end's LX plan
    // deciding (its refusal, if every one is refused, names the real overflow).
    const bool beyond_estimate = space.candidates.empty() && !space.over_lx.empty();
    if (beyond_estimate) space.candidates = std::move(space.over_lx);
    space.candidates = with_layout_variants(space.candidates, layout_args(output, inputs, options, ao));
    space.candidates = with_intermediate_layout_variants(space.candidates, info);
    if (!also_outputs.empty()) {
        const size_t before = space.candidates.size();
        std::vector<Candidate> kept;
        for (Candidate &c : space.candidates)
            if (materialises(c, also_outputs)) kept.push_back(std::move(c));
        space.candidates = std::move(kept);
        if (space.candidates.empty() && before > 0) {
            std::string names;
            for (const std::string &n : also_outputs) names += (names.empty() ? "" : ", ") + display_name(n);
            throw_error("auto_schedule: kernel ", options.kernel_name, ": none of the ", before,
                        " candidate schedules keeps the pipeline's other outputs (", names,
                        ") in device memory, where an output is stored");
        }
    }
    const double space_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (space.candidates.empty())
        throw_error("auto_schedule: kernel ", options.kernel_name, ": no candidate schedule for Func ", display_name(output.name()),
                    space.pruned_lx ? " fits the usable LX (" + std::to_string(options.machine.lx_usable_bytes) + " bytes)"
                                    : " can be derived from its structure");
    SearchOptions so;
    so.seed = ao.seed;
    so.max_evaluations = ao.max_evaluations;
    so.time_budget_s = ao.time_budget_s;
    so.stop_after_timing = ao.stop_after_timing;
    so.workers = ao.workers;
    so.progress = ao.progress;
    so.max_cores = ao.max_cores;
    SearchResult sr;
    try {
        sr = search(output, inputs, space.candidates, options, so);
    } catch (const Error &e) {
        if (!beyond_estimate) throw;
        throw_error_of(e.kind(), "auto_schedule: kernel ", options.kernel_name, ": no candidate schedule for Func ",
                       display_name(output.name()), " fits the usable LX (", options.machine.lx_usable_bytes,
                       " bytes): the estimate rejected all ", space.candidates.size(),
                       ", and those timed did not compile; ", e.what());
    }
    const Candidate &best = space.candidates[sr.best];

    // The winner on the caller's Funcs.
    apply_directives(best.directives, funcs, input_funcs, options.machine);

    AutoResult r;
    r.us = sr.best_us;
    r.exact = sr.exact;
    r.validity = validity_mask_keys(sr.validity);
    r.validity_known = true;
    r.family = best.family;
    r.summary = best.summary();
    r.candidates = int64_t(space.candidates.size());
    r.pruned_lx = space.pruned_lx;
    r.timed = int64_t(sr.timed.size());
    r.failed = sr.failed;
    r.search_seconds = sr.seconds;
    r.stopped_by_time_limit = sr.stopped_by_time;
    r.stopped_at = sr.stopped_at;
    r.workers = sr.workers;
    r.timed_per_second = sr.seconds > 0 ? double(sr.timed.size()) / sr.seconds : 0;
    r.estimated_per_second = space_s > 0 ? double(space.candidates.size() + space.pruned_lx) / space_s : 0;
    r.fingerprint = fp.key;
    r.options = with_layouts(options, best);
    r.cpp = result_cpp(r, output, ao, best.directives, info, "");
    // A search a time limit cut short depends on the machine's speed: not stored.
    if (!ao.tuning_db.empty() && !r.stopped_by_time_limit)
        TuningDb(ao.tuning_db).store(fp.key, options.kernel_name, encode_tuned_schedule(tuned_of(r, best.directives, fp)));
    return r;
}

}  // namespace

AutoResult auto_schedule(Pipeline pipeline, const std::vector<ImageParam> &inputs, const CompileOptions &options,
                         const AutoOptions &ao) {
    const size_t n = pipeline.defined() ? pipeline.outputs().size() : 0;  // Pipeline() has none
    if (n == 0) throw_error("auto_schedule: kernel ", options.kernel_name, ": the pipeline has no output");
    if (n == 1) return auto_schedule(pipeline.outputs()[0], inputs, options, ao);
    const std::vector<Func> outputs = pipeline.outputs();
    if (options.outputs.size() != n)
        throw_error("auto_schedule: kernel ", options.kernel_name, ": the pipeline has ", n, " outputs but ",
                    "CompileOptions::outputs gives ", options.outputs.size(), " shapes");
    // Several outputs: the one that reads all the others is scheduled, the others kept in device
    // memory at root (they are stored there anyway), so that one search covers the whole pipeline.
    int sink = -1;
    for (size_t i = 0; i < n; i++) {
        const std::map<std::string, Internal::Function> reads = pipeline_env(outputs[i]);
        bool all = true;
        for (size_t j = 0; j < n; j++) all &= j == i || reads.count(outputs[j].name()) > 0;
        if (all) sink = int(i);
    }
    if (sink < 0) {
        std::string names;
        for (const Func &f : outputs) names += (names.empty() ? "" : ", ") + display_name(f.name());
        throw_error("auto_schedule: kernel ", options.kernel_name, ": no output of the pipeline (", names,
                    ") reads all the others; the autoscheduler takes several outputs when one of them does (as "
                    "a fused residual add and norm's norm reads its sum); schedule the others by hand");
    }
    std::set<std::string> also;
    for (size_t j = 0; j < n; j++)
        if (int(j) != sink) also.insert(outputs[j].name());
    CompileOptions one = options;
    one.output = options.outputs[size_t(sink)];
    one.outputs.clear();
    AutoResult r = schedule_pipeline(outputs[size_t(sink)], also, inputs, one, ao);
    // The caller's options, with the layouts it chose for the inputs and the scheduled output.
    CompileOptions all = options;
    all.inputs = r.options.inputs;
    all.outputs[size_t(sink)].layout = r.options.output.layout;
    all.output = all.outputs[0];
    r.options = all;
    return r;
}

}  // namespace spyre
