#include "schedule_record.h"

#include <cstdlib>

#include "device/error.h"

namespace spyre {

using namespace Halide::Internal;

namespace {

// "spyre.loop=<stage>,<role>,<group>,<qualified var>": Halide's names hold no comma.
constexpr const char *kTag = "spyre.loop=";
// "spyre.stick_count_outside=<var>".
constexpr const char *kStickCountTag = "spyre.stick_count_outside=";

const char *role_word(LoopRole r) {
    switch (r) {
    case LoopRole::Pe: return "pe";
    case LoopRole::RingShare: return "ring_share";
    case LoopRole::DmaPhases: return "dma_phases";
    }
    return "?";
}

const std::vector<Dim> &stage_dims(const Function &f, int stage) {
    if (stage == 0) return f.definition().schedule().dims();
    return f.updates().at(size_t(stage - 1)).schedule().dims();
}

}  // namespace

void record_loop_directive(const Function &f, int stage, const std::string &var, LoopDirective d) {
    if (stage < 0 || stage > int(f.updates().size()))
        throw_internal("internal: ", role_word(d.role), " on Func ", f.name(), ": it has no definition ", stage);
    std::string qualified;
    for (const Dim &dim : stage_dims(f, stage))
        if (dim.var == var || ends_with(dim.var, "." + var)) qualified = dim.var;
    if (qualified.empty())
        throw_internal("internal: ", role_word(d.role), " on Func ", f.name(), ": definition ", stage, " has no loop ",
                       var);
    Function g = f;  // a handle: the tag goes on f's contents
    g.add_trace_tag(std::string(kTag) + std::to_string(stage) + "," + role_word(d.role) + "," +
                    std::to_string(d.group) + "," + qualified);
}

void record_stick_count_outside(const Function &f, const std::string &var) {
    Function g = f;
    g.add_trace_tag(std::string(kStickCountTag) + var);
}

std::string stick_count_outside(const Function &f) {
    const std::string tag = kStickCountTag;
    std::string var;
    for (const std::string &t : f.get_trace_tags())
        if (t.compare(0, tag.size(), tag) == 0) var = t.substr(tag.size());  // the last call's
    return var;
}

LoopDirectives LoopDirectives::of(const std::map<std::string, Function> &env) {
    LoopDirectives out;
    const std::string tag = kTag;
    for (const auto &kv : env)
        for (const std::string &t : kv.second.get_trace_tags()) {
            if (t.compare(0, tag.size(), tag) != 0) continue;
            // Written by record_loop_directive alone: four comma-separated fields.
            const size_t a = t.find(',', tag.size());
            const size_t b = a == std::string::npos ? a : t.find(',', a + 1);
            const size_t c = b == std::string::npos ? b : t.find(',', b + 1);
            if (c == std::string::npos) throw_internal("internal: Func ", kv.first, ": malformed loop record '", t, "'");
            const std::string stage = t.substr(tag.size(), a - tag.size()), role = t.substr(a + 1, b - a - 1);
            LoopDirective d;
            d.group = std::atoi(t.substr(b + 1, c - b - 1).c_str());
            if (role == role_word(LoopRole::Pe)) d.role = LoopRole::Pe;
            else if (role == role_word(LoopRole::RingShare)) d.role = LoopRole::RingShare;
            else if (role == role_word(LoopRole::DmaPhases)) d.role = LoopRole::DmaPhases;
            else throw_internal("internal: Func ", kv.first, ": loop record of unknown role '", t, "'");
            out.add(kv.second.name() + ".s" + stage + "." + t.substr(c + 1), d);
        }
    return out;
}

bool LoopDirectives::is(const std::string &loop, LoopRole r) const {
    auto it = loops_.find(loop);
    return it != loops_.end() && it->second.role == r;
}

int LoopDirectives::ring_share_group(const std::string &loop) const {
    auto it = loops_.find(loop);
    return it != loops_.end() && it->second.role == LoopRole::RingShare ? it->second.group : 0;
}

}  // namespace spyre
