// Instruction selection: WAITs between engine queues, from the LX and device buffers each pending
// instruction reads and writes.
#include "selector.h"

namespace spyre {
namespace selection {

void Selector::before(Queue q, const std::set<std::string> &reads, const std::set<std::string> &writes) {
    uint32_t mask = 0;
    for (const Pending &p : pending_) {
        if (p.queue == q) continue;
        bool hit = false;
        for (const std::string &w : p.writes) hit |= reads.count(w) || writes.count(w) || reuses(w, reads, writes);
        for (const std::string &r : p.reads) hit |= writes.count(r) || reuses(r, {}, writes);
        if (hit) mask |= 1u << p.tag;
    }
    wait(mask);
}

// A released buffer's LX may already belong to another buffer: touching that one is touching it.
bool Selector::reuses(const std::string &released, const std::set<std::string> &reads,
                      const std::set<std::string> &writes) const {
    auto it = released_.find(released);
    if (it == released_.end()) return false;
    for (const std::set<std::string> *names : {&reads, &writes})
        for (const std::string &n : *names) {
            auto r = lx_range(n);
            if (r && n != released && r->first < it->second.second && it->second.first < r->second) return true;
        }
    return false;
}

std::optional<std::pair<int64_t, int64_t>> Selector::lx_range(const std::string &name) const {
    if (!plan_.has(name)) return std::nullopt;
    const BufferInfo &bi = plan_.buffer(name);
    if (bi.place != Place::LX || bi.lx_offset < 0) return std::nullopt;
    const int64_t copy = (bi.bytes() + sb_ - 1) / sb_ * sb_;
    return std::make_pair(int64_t(bi.lx_offset), int64_t(bi.lx_offset) + copy * std::max(bi.copies, 1));
}

void Selector::after(int tag, Queue q, std::set<std::string> reads, std::set<std::string> writes) {
    pending_.push_back(Pending{tag, q, std::move(reads), std::move(writes)});
}

void Selector::wait(uint32_t mask) {
    if (!mask) return;
    b_.wait(mask);
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                  [&](const Pending &p) { return (mask >> p.tag) & 1u; }),
                   pending_.end());
}

void Selector::drain() {
    uint32_t mask = 0;
    for (const Pending &p : pending_) mask |= 1u << p.tag;
    wait(mask);
}

// The end of a buffer's scope waits for nothing: work on it may stay in flight (into the next
// iteration of a carried loop), and whatever buffer takes its LX next waits for that work when it
// is touched (reuses). A buffer outside LX has no range to follow and is waited for here.
void Selector::release_buffer(const std::string &name) {
    if (auto r = lx_range(name)) {
        released_[name] = *r;
        return;
    }
    uint32_t mask = 0;
    for (const Pending &p : pending_)
        if (p.reads.count(name) || p.writes.count(name)) mask |= 1u << p.tag;
    wait(mask);
}

}  // namespace selection
}  // namespace spyre
