#include "queues.h"

#include "error.h"

namespace spyre {

Queue queue_of(Opcode op) {
    switch (op_info(op).engine) {
    case Engine::Vector: return QVec;
    case Engine::PE: return QPE;
    case Engine::DMA: return op == Opcode::DMA_ST ? QStore : QLoad;
    case Engine::Ring: return QRing;
    case Engine::Control:
    case Engine::Sync: break;
    }
    throw_internal("internal: ", op_info(op).name, " goes to no engine queue");
}

}  // namespace spyre
