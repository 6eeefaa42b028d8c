// A core's engine queues and the general synchronisation policy's tag for each: the one place
// that says which queue an instruction goes to. Instruction selection (backend/compiler), the KTIR
// importer (backend/ktir) and their hazard tracker (hazard_tracker.h) issue work by these queues;
// the simulator checks races between the same queues.
#pragma once

#include "isa.h"

namespace spyre {

// The in-order queues of one core. The DMA engine has two (loads and stores), which complete
// independently of each other, so a hazard between them needs a WAIT like any other pair.
enum Queue { QVec, QLoad, QStore, QPE, QRing };
constexpr int kNumQueues = 5;

// The queue of an asynchronous (tagged) instruction, from its engine (isa.h); only the DMA engine
// needs the opcode to choose. Throws for control and synchronisation instructions, which have none.
Queue queue_of(Opcode op);

// The general policy: one completion tag per queue, so that a WAIT on a queue's tag covers all of
// its work. Tags 0, 1, 3, 4, 7 and 10..15 are left for a caller's own policies (the compiler's
// double-buffered loops take some by iteration parity; ring forwards use kTagRing + 1 for odd ones).
constexpr int kTagVec = 2, kTagLoad = 5, kTagStore = 6, kTagPE = 8, kTagRing = 9;
constexpr int queue_tag(Queue q) {
    return q == QVec ? kTagVec : q == QLoad ? kTagLoad : q == QStore ? kTagStore : q == QPE ? kTagPE : kTagRing;
}

}  // namespace spyre
