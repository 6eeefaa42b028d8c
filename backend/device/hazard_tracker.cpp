#include "hazard_tracker.h"

#include <algorithm>

namespace spyre {

bool overlap(const LxSpan &a, const LxSpan &b) {
    if (!a.known() || !b.known()) return true;
    return a.lo < b.hi && b.lo < a.hi;
}

namespace {

bool any_overlap(const std::vector<LxSpan> &a, const std::vector<LxSpan> &b) {
    for (const LxSpan &x : a)
        for (const LxSpan &y : b)
            if (overlap(x, y)) return true;
    return false;
}

bool any_common(const std::set<int> &a, const std::set<int> &b) {
    for (int x : a)
        if (b.count(x)) return true;
    return false;
}

// Whether `later` must wait for `earlier`: it reads or writes what `earlier` writes, or writes
// what `earlier` reads.
bool conflict(const Access &earlier, const Access &later) {
    return any_overlap(earlier.writes, later.reads) || any_overlap(earlier.writes, later.writes) ||
           any_overlap(earlier.reads, later.writes) || any_common(earlier.dram_writes, later.dram_reads) ||
           any_common(earlier.dram_writes, later.dram_writes) || any_common(earlier.dram_reads, later.dram_writes);
}

}  // namespace

bool Access::touches(const Access &o) const {
    for (const std::vector<LxSpan> *mine : {&reads, &writes})
        for (const std::vector<LxSpan> *theirs : {&o.reads, &o.writes})
            if (any_overlap(*mine, *theirs)) return true;
    for (const std::set<int> *mine : {&dram_reads, &dram_writes})
        for (const std::set<int> *theirs : {&o.dram_reads, &o.dram_writes})
            if (any_common(*mine, *theirs)) return true;
    return false;
}

bool holds(const PendingSet &set, const PendingWork &w) { return std::find(set.begin(), set.end(), w) != set.end(); }

uint32_t tags_not_in(const PendingSet &set, const PendingSet &other) {
    uint32_t mask = 0;
    for (const PendingWork &p : set)
        if (!holds(other, p)) mask |= 1u << p.tag;
    return mask;
}

uint32_t HazardTracker::conflicts(Queue q, const Access &a) const {
    uint32_t mask = 0;
    for (const PendingWork &p : pending_)
        if (p.queue != q && conflict(p.access, a)) mask |= 1u << p.tag;
    return mask;
}

void HazardTracker::after(int tag, Queue q, Access a) {
    pending_.push_back(PendingWork{tag, q, std::move(a)});
    // A long run of independent instructions (a row broadcast over thousands of rows) waits now
    // and then rather than overflow the core's record of unwaited work.
    if (max_pending_ && pending_.size() >= max_pending_) wait(1u << tag);
}

void HazardTracker::wait(uint32_t mask) {
    if (!mask) return;
    b_->wait(mask);
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                  [&](const PendingWork &p) { return (mask >> p.tag) & 1u; }),
                   pending_.end());
}

void HazardTracker::drain() {
    uint32_t mask = 0;
    for (const PendingWork &p : pending_) mask |= 1u << p.tag;
    wait(mask);
}

uint32_t HazardTracker::touching(const Access &a) const {
    uint32_t mask = 0;
    for (const PendingWork &p : pending_)
        if (p.access.touches(a)) mask |= 1u << p.tag;
    return mask;
}

}  // namespace spyre
