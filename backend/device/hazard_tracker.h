// Automatic synchronisation between a core's engine queues (queues.h), shared by instruction
// selection and the KTIR importer. The program is written as if sequential; the engines are not.
// The tracker remembers what each issued, unwaited instruction reads and writes and, before the
// next one, emits the WAIT for the pending work of other queues it conflicts with (read after
// write, write after read or write). Work of one queue needs none: a queue completes in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "program_builder.h"
#include "queues.h"

namespace spyre {

// LX bytes [lo, hi). hi < 0: unknown (an address in a register), which overlaps everything.
struct LxSpan {
    int64_t lo = 0, hi = -1;
    bool known() const { return hi >= 0; }
    bool operator==(const LxSpan &o) const { return lo == o.lo && hi == o.hi; }
};
bool overlap(const LxSpan &a, const LxSpan &b);

// What one instruction touches: LX byte ranges, and buffers outside LX by an index of the caller's
// (device-memory buffers), which conflict only with themselves.
struct Access {
    std::vector<LxSpan> reads, writes;
    std::set<int> dram_reads, dram_writes;
    bool operator==(const Access &o) const {
        return reads == o.reads && writes == o.writes && dram_reads == o.dram_reads && dram_writes == o.dram_writes;
    }
    // Whether this access touches (reads or writes) anything `o` does.
    bool touches(const Access &o) const;
};

// An issued instruction not yet waited for.
struct PendingWork {
    int tag;
    Queue queue;
    Access access;
    bool operator==(const PendingWork &o) const { return tag == o.tag && queue == o.queue && access == o.access; }
};
using PendingSet = std::vector<PendingWork>;
bool holds(const PendingSet &set, const PendingWork &w);
// The tags of the work in `set` that `other` does not hold.
uint32_t tags_not_in(const PendingSet &set, const PendingSet &other);

class HazardTracker {
public:
    // max_pending > 0: after that many unwaited instructions the tracker waits for the newest one's
    // tag, since a core tracks a bounded number of them (the simulator faults past 4096).
    explicit HazardTracker(ProgramBuilder &b, size_t max_pending = 0) : b_(&b), max_pending_(max_pending) {}

    // The tags of the pending work of other queues that `a`, issued on q, conflicts with.
    uint32_t conflicts(Queue q, const Access &a) const;
    // WAITs for them.
    void before(Queue q, const Access &a) { wait(conflicts(q, a)); }
    // Records an issued instruction.
    void after(int tag, Queue q, Access a);
    // Emits WAIT on `mask` (nothing when it is 0) and forgets the work it covers.
    void wait(uint32_t mask);
    // Waits for everything pending.
    void drain();
    // The tags of the pending work, on any queue, that touches anything `a` touches.
    uint32_t touching(const Access &a) const;

    // What is in flight, to save and restore around code that runs conditionally or repeatedly.
    const PendingSet &pending() const { return pending_; }
    void set_pending(PendingSet p) { pending_ = std::move(p); }

private:
    ProgramBuilder *b_;  // a pointer, so that a tracker can be copied with the state it belongs to
    size_t max_pending_;
    PendingSet pending_;
};

}  // namespace spyre
