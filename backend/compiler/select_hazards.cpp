// Instruction selection: WAITs between engine queues (device/hazard_tracker.h), from the LX and
// device buffers each instruction reads and writes.
#include "selector.h"

namespace spyre {
namespace selection {

// Buffers are followed by their LX bytes: a buffer whose scope has ended keeps its work pending
// on its range, and the next buffer allocated there waits for that work when it is touched. (Two
// live buffers never share LX: allocate_lx stacks them.)
Access Selector::access(const std::set<std::string> &reads, const std::set<std::string> &writes) {
    Access a;
    auto add = [&](const std::string &name, std::vector<LxSpan> &lx, std::set<int> &dram) {
        if (auto r = lx_range(name)) lx.push_back(*r);
        else dram.insert(buffer_ids_.emplace(name, int(buffer_ids_.size())).first->second);
    };
    for (const std::string &n : reads) add(n, a.reads, a.dram_reads);
    for (const std::string &n : writes) add(n, a.writes, a.dram_writes);
    return a;
}

std::optional<LxSpan> Selector::lx_range(const std::string &name) const {
    if (!plan_.has(name)) return std::nullopt;
    const BufferInfo &bi = plan_.buffer(name);
    if (bi.place != Place::LX || bi.lx_offset < 0) return std::nullopt;
    const int64_t copy = (bi.bytes() + sb_ - 1) / sb_ * sb_;
    return LxSpan{int64_t(bi.lx_offset), int64_t(bi.lx_offset) + copy * std::max(bi.copies, 1)};
}

// The end of a buffer's scope waits for nothing when the buffer is in LX: work on it may stay in
// flight (into the next iteration of a carried loop), pending on its range. A buffer outside LX
// has no range to follow and is waited for here.
void Selector::release_buffer(const std::string &name) {
    if (lx_range(name)) return;
    wait(hz_.touching(access({name}, {})));
}

}  // namespace selection
}  // namespace spyre
