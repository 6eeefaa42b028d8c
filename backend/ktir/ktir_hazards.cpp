#include "ktir_hazards.h"

#include <algorithm>

namespace spyre::ktir {

int queue_tag(Queue q) {
    switch (q) {
    case QVec: return 2;
    case QLoad: return 5;
    case QStore: return 6;
    case QPE: return 8;
    default: return 9;
    }
}

bool overlap(const LxRange &a, const LxRange &b) {
    if (a.hi < 0 || b.hi < 0) return true;
    return a.lo < b.hi && b.lo < a.hi;
}

void HazardTracker::before(Queue q, const Access &a) {
    uint32_t mask = 0;
    for (const Pending &p : pending_) {
        if (p.q == q) continue;  // one queue completes in order
        bool hit = false;
        for (const LxRange &w : p.a.writes) {
            for (const LxRange &r : a.reads) hit |= overlap(w, r);
            for (const LxRange &r : a.writes) hit |= overlap(w, r);
        }
        for (const LxRange &r : p.a.reads)
            for (const LxRange &w : a.writes) hit |= overlap(w, r);
        for (int b : p.a.dram_writes) hit |= a.dram_reads.count(b) || a.dram_writes.count(b);
        for (int b : p.a.dram_reads) hit |= a.dram_writes.count(b) != 0;
        if (hit) mask |= 1u << p.tag;
    }
    wait(mask);
}

void HazardTracker::after(int tag, Queue q, Access a) {
    pending_.push_back(Pending{tag, q, std::move(a)});
    // A core tracks a bounded number of unwaited instructions (the simulator faults past 4096): a
    // long run of independent ones (a row broadcast over thousands of rows) waits now and then.
    if (pending_.size() >= kMaxPending) wait(1u << tag);
}

void HazardTracker::wait(uint32_t mask) {
    if (!mask) return;
    b_.wait(mask);
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                  [&](const Pending &p) { return (mask >> p.tag) & 1u; }),
                   pending_.end());
}

void HazardTracker::drain() {
    uint32_t mask = 0;
    for (const Pending &p : pending_) mask |= 1u << p.tag;
    wait(mask);
}

}  // namespace spyre::ktir
