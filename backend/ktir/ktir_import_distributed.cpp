// The importer's distributed memory views (ktir_importer.h): RFC 0682's
// `ktdp.construct_distributed_memory_view` composes per-partition views, each covering the global
// coordinates its `coordinate_set` names, into one logical view; an access resolves to the
// partition holding its coordinates. Where every partition is a device-memory view of one
// argument's tensor, at the place a view of the whole tensor with the partitions' strides puts it
// (ktir-cpu's weight shards: `%w + 256`, strides [1024, 1], columns 256..511), every access reads
// what that whole view reads, and the import is that view. Partitions in the LX of other cores
// (RFC 0682's example) have no device form: an error names them.
#include "ktir_importer.h"

namespace spyre::ktir::lowering {

void Importer::distributed_views(const std::vector<const Op *> &dist) {
    const std::map<std::string, const Op *> no_loops;
    for (const Op *d : dist) {
        auto fail = [&](const auto &...why) {
            throw_error("line ", d->line, ": ktdp.construct_distributed_memory_view: ", why...);
        };
        if (d->operands.empty() || d->results.size() != 1 || d->result_types.empty() ||
            d->result_types[0].kind != Type::MemRef)
            fail("needs partition views and a memref result");
        const Type &global = d->result_types[0];
        const size_t rank = global.shape.size();
        std::string arg;
        std::vector<int64_t> strides;
        int64_t covered = 0;
        std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> boxes;
        for (const std::string &pn : d->operands) {
            const Op *p = def_op(pn);
            if (!p || p->name != "ktdp.construct_memory_view")
                fail("partition %", pn, " is not a ktdp.construct_memory_view");
            if (!memory_space_hbm(*p))
                fail("partition %", pn, " is not in device memory; partitions in a core's LX (another core's "
                     "included) have no device form");
            const std::string a = base_arg(p->operands[0]);
            if (a.empty() || (!arg.empty() && a != arg))
                fail("partition %", pn, " is not a view of ", arg.empty() ? "an argument" : "%" + arg,
                     " (every partition must address one argument's tensor)");
            arg = a;
            if (p->sizes.size() != rank || p->result_types.empty() || p->result_types[0].bits != global.bits ||
                p->result_types[0].elem != global.elem)
                fail("partition %", pn, " differs from the view ", global.text(), " in rank or element type");
            if (strides.empty()) strides = p->strides;
            if (p->strides != strides)
                fail("partition %", pn, " has other strides than the first partition");
            auto cs = p->attrs.find("coordinate_set");
            if (cs == p->attrs.end() || cs->second.kind != Attr::Set || !cs->second.set ||
                cs->second.set->dims != int(rank))
                fail("partition %", pn, " needs a coordinate_set of its ", rank, " global coordinates");
            std::vector<int64_t> lo, hi;
            if (box_bounds(*cs->second.set, lo, hi) >= 0)
                fail("partition %", pn, ": its coordinate_set must be a box (one bound per constraint)");
            int64_t offset = 0, at = 0, volume = 1;
            for (size_t k = 0; k < rank; k++) {
                if (lo[k] < 0 || hi[k] >= global.shape[k] || hi[k] - lo[k] + 1 != p->sizes[k])
                    fail("partition %", pn, ": its coordinate_set does not match its sizes inside ", global.text());
                at = wrap_add(at, wrap_mul(lo[k], strides[k]));
                volume = wrap_mul(volume, p->sizes[k]);
            }
            // The same offset on every tile (a view addressed by tile is not one tensor's piece).
            std::string why;
            for (int64_t core = 0; core < num_cores_; core++) {
                std::set<std::string> need;
                int64_t o;
                if (!offset_value(OffsetScope{arg, no_loops}, p->operands[0], core, {}, &need, &o, &why) ||
                    !need.empty() || (core > 0 && o != offset))
                    fail("partition %", pn, "'s offset from %", arg, " is not one constant",
                         why.empty() ? std::string() : " (" + why + ")");
                offset = o;
            }
            if (offset != at)
                fail("partition %", pn, " does not start where the whole tensor's view puts its coordinates (",
                     at, " elements from %", arg, "); only partitions of one strided tensor have a device form");
            for (const auto &b : boxes) {
                bool apart = false;
                for (size_t k = 0; k < rank; k++) apart = apart || hi[k] < b.first[k] || b.second[k] < lo[k];
                if (!apart) fail("partition %", pn, " overlaps another partition");
            }
            boxes.push_back({lo, hi});
            covered = wrap_add(covered, volume);
        }
        int64_t total = 1;
        for (int64_t e : global.shape) total = wrap_mul(total, e);
        if (covered != total) fail("its partitions do not cover ", global.text());
        Op whole = *d;
        whole.name = "ktdp.construct_memory_view";
        whole.operands = {arg};
        Type index;
        index.kind = Type::Index;
        index.bits = 64;
        whole.operand_types = {index};
        whole.sizes = global.shape;
        whole.strides = strides;
        whole.attrs = def_op(d->operands[0])->attrs;
        whole.attrs.erase("coordinate_set");
        Op &w = dist_views_[d] = whole;
        extend_life(arg, d->results[0]);  // the whole view reads the argument where the partitions did
        if (!arg_view_.count(arg)) arg_view_[arg] = &w;  // it declares the buffer, before any partition
    }
}

}  // namespace spyre::ktir::lowering
