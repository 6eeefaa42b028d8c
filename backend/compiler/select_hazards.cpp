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
        for (const std::string &w : p.writes) hit |= reads.count(w) || writes.count(w);
        for (const std::string &r : p.reads) hit |= writes.count(r) != 0;
        if (hit) mask |= 1u << p.tag;
    }
    wait(mask);
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

void Selector::release_buffer(const std::string &name) {
    uint32_t mask = 0;
    for (const Pending &p : pending_)
        if (p.reads.count(name) || p.writes.count(name)) mask |= 1u << p.tag;
    wait(mask);
}

}  // namespace selection
}  // namespace spyre
