// The importer's automatic synchronisation: KTIR is sequential, the device's vector, PE, DMA
// (load and store queues) and ring engines are not. The tracker remembers what each pending
// instruction reads and writes (LX byte ranges, device-memory buffers) and, before the next
// instruction, WAITs for the pending ones of other queues it conflicts with (instructions of one
// queue complete in order). One completion tag per queue, as the compiler's general policy.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "device/program_builder.h"

namespace spyre::ktir {

enum Queue { QVec, QLoad, QStore, QPE, QRing };

// The tag the tracker gives instructions of queue q.
int queue_tag(Queue q);

struct LxRange {
    int64_t lo = 0, hi = -1;  // hi < 0: unknown (a dynamic address), which overlaps everything
};
bool overlap(const LxRange &a, const LxRange &b);

struct Access {
    std::vector<LxRange> reads, writes;
    std::set<int> dram_reads, dram_writes;  // buffer indices
};

class HazardTracker {
public:
    explicit HazardTracker(ProgramBuilder &b) : b_(b) {}
    // WAITs for the pending instructions of other queues that `a` conflicts with (read after
    // write, write after read or write).
    void before(Queue q, const Access &a);
    // Records an issued instruction.
    void after(int tag, Queue q, Access a);
    // Emits WAIT on `mask` and forgets the instructions it covers.
    void wait(uint32_t mask);
    // Waits for everything pending.
    void drain();

private:
    struct Pending {
        int tag;
        Queue q;
        Access a;
    };
    static constexpr size_t kMaxPending = 1024;
    ProgramBuilder &b_;
    std::vector<Pending> pending_;
};

}  // namespace spyre::ktir
