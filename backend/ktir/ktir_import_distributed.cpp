// The importer's distributed memory views (ktir_importer.h): RFC 0682's
// `ktdp.construct_distributed_memory_view` composes per-partition views, each covering the global
// coordinates its `coordinate_set` names, into one logical view; an access resolves to the
// partition holding its coordinates. Where every partition is a device-memory view of one
// argument's tensor, at the place a view of the whole tensor with the partitions' strides puts it
// (ktir-cpu's weight shards: `%w + 256`, strides [1024, 1], columns 256..511), every access reads
// what that whole view reads, and the import is that view. Partitions in the LX of other cores
// (RFC 0682's example) have no device form: an error names them.
#include <functional>

#include "ktir_importer.h"

namespace spyre::ktir::lowering {

void Importer::multi_dist(const Op &d) {
    auto fail = [&](const auto &...why) {
        throw_error("line ", d.line, ": ktdp.construct_distributed_memory_view: ", why...);
    };
    const Type &global = d.result_types[0];
    const size_t rank = global.shape.size();
    MultiDist md;
    md.shape = global.shape;
    int64_t covered = 0;
    for (const std::string &pn : d.operands) {
        const Op *p = def_op(pn);
        if (!p || p->name != "ktdp.construct_memory_view" || !memory_space_hbm(*p))
            fail("partition %", pn, " is not a ktdp.construct_memory_view in device memory");
        if (p->sizes.size() != rank || p->result_types.empty() || p->result_types[0].bits != global.bits ||
            p->result_types[0].elem != global.elem)
            fail("partition %", pn, " differs from the view ", global.text(), " in rank or element type");
        auto cs = p->attrs.find("coordinate_set");
        if (cs == p->attrs.end() || cs->second.kind != Attr::Set || !cs->second.set || cs->second.set->dims != int(rank))
            fail("partition %", pn, " needs a coordinate_set of its ", rank, " global coordinates");
        std::vector<int64_t> lo, hi;
        if (cs->second.set->syms != 0 || box_bounds(*cs->second.set, lo, hi) >= 0)
            fail("partition %", pn, ": its coordinate_set must be a box (one bound per constraint)");
        int64_t volume = 1;
        for (size_t k = 0; k < rank; k++) {
            if (lo[k] < 0 || hi[k] >= global.shape[k] || hi[k] - lo[k] + 1 != p->sizes[k])
                fail("partition %", pn, ": its coordinate_set does not match its sizes inside ", global.text());
            volume = wrap_mul(volume, p->sizes[k]);
        }
        for (size_t q = 0; q < md.parts.size(); q++) {
            bool apart = false;
            for (size_t k = 0; k < rank; k++) apart = apart || hi[k] < md.lo[q][k] || md.hi[q][k] < lo[k];
            if (!apart) fail("partition %", pn, " overlaps partition %", md.parts[q]);
        }
        md.parts.push_back(pn);
        md.lo.push_back(lo);
        md.hi.push_back(hi);
        covered = wrap_add(covered, volume);
    }
    int64_t total = 1;
    for (int64_t e : global.shape) total = wrap_mul(total, e);
    if (covered != total) fail("its partitions do not cover ", global.text());
    // The partitions' views are read where the distributed view's tiles are loaded.
    for (const std::string &pn : d.operands) {
        extend_life(pn, d.results[0]);
        auto du = du_.find(d.results[0]);
        if (du == du_.end()) continue;
        for (const Op *u : du->second.users)
            if (!u->results.empty()) {
                extend_life(pn, u->results[0]);
                extend_life(d.results[0], u->results[0]);
            }
    }
    multi_dist_of_[&d] = int(multi_dists_.size());
    multi_dists_.push_back(md);
}

void Importer::multi_dist_view(const Op &op, int id) {
    View v;
    v.hbm = true;
    v.t = dtype_of(op.result_types[0], op);
    v.sizes = multi_dists_[size_t(id)].shape;
    v.dist = id;
    Val x;
    x.k = Val::V;
    x.v = v;
    define(op, 0, x);
}

bool Importer::subscript_values(const IExpr &e, std::vector<int64_t> *values, std::string *why) {
    if (e.kind != IExpr::Value || !loop_of_iv_.count(e.name))
        return *why = "it is not a loop variable", false;
    const Op &loop = *loop_of_iv_.at(e.name);
    const std::map<std::string, const Op *> no_loops;
    const OffsetScope scope{"", no_loops};
    for (int64_t core = 0; core < num_cores_; core++) {
        int64_t b[3];
        for (int i = 0; i < 3; i++) {
            std::set<std::string> need;
            if (!offset_value(scope, loop.operands[size_t(i)], core, {}, &need, &b[i], why) || !need.empty())
                return *why = "the bounds of its loop (line " + std::to_string(loop.line) + ") are not constants", false;
        }
        // scf.for refuses a step that is not a positive constant before lowering its body.
        if (b[2] <= 0) throw_internal("line ", loop.line, ": internal: scf.for with step ", b[2], " was lowered");
        for (int64_t v = b[0]; v < b[1]; v += b[2]) {
            if (values->size() > 65536) return *why = "its loop runs too many times to check", false;
            values->push_back(v);
        }
    }
    return true;
}

void Importer::multi_dist_dma(const Op &op, const Tile &t, const Tens &lx) {
    const MultiDist &md = multi_dists_[size_t(t.v.dist)];
    const size_t rank = t.shape.size();
    // The run-time subscripts: the partitions must not split their dimension for a tile, and some
    // partition must hold the tile at every value (else part of it would go unread).
    std::vector<size_t> runtime;
    for (size_t k = 0; k < rank; k++) {
        if (t.idx[k].known) continue;
        bool split = false;
        for (size_t p = 0; p < md.parts.size(); p++) split |= md.lo[p][k] != 0 || md.hi[p][k] != md.shape[k] - 1;
        if (!split) continue;
        std::vector<int64_t> values;
        std::string why;
        if (!subscript_values(t.idx_expr[k], &values, &why))
            throw_error("line ", op.line, ": ", op.name, ": subscript ", k, " of a tile of a distributed view of several "
                        "arguments is a run-time value and its partitions split that dimension: ", why,
                        " (the import must know that each position is inside one partition)");
        for (int64_t v : values) {
            // Along k the tile lies inside some partition's range and across no partition's edge (a
            // grid of partitions has several with one range).
            bool inside = false, across = false;
            for (size_t p = 0; p < md.parts.size(); p++) {
                const bool contained = md.lo[p][k] <= v && v + t.shape[k] - 1 <= md.hi[p][k];
                const bool overlaps = v <= md.hi[p][k] && md.lo[p][k] <= v + t.shape[k] - 1;
                inside |= contained;
                across |= overlaps && !contained;
            }
            if (!inside || across)
                throw_error("line ", op.line, ": ", op.name, ": at ", v, " along dimension ", k, " the tile (", t.shape[k],
                            " wide) is not inside one partition of the distributed view; a run-time position must not "
                            "straddle partitions");
        }
        runtime.push_back(k);
    }
    // Every pending transfer waits before and after: an IF's DMA must not leave the tracker believing
    // a path not taken waited.
    if (!runtime.empty()) drain();
    for (size_t p = 0; p < md.parts.size(); p++) {
        Tile piece;
        piece.v = val(md.parts[p], op).v;
        piece.shape = t.shape;
        Tens into = lx;
        Scalar origin;
        origin.known = true;
        bool empty = false;
        for (size_t k = 0; k < rank; k++) {
            Scalar start;  // the piece's first global coordinate
            if (t.idx[k].known) {
                const int64_t a = std::max(t.idx[k].c, md.lo[p][k]), b = std::min(t.idx[k].c + t.shape[k] - 1, md.hi[p][k]);
                if (a > b) {
                    empty = true;
                    break;
                }
                piece.shape[k] = b - a + 1;
                start.known = true;
                start.c = a;
                into.at.off = int32_t(into.at.off + (a - t.idx[k].c) * lx.bstride[k]);
            } else {
                start = t.idx[k];
            }
            Scalar lo;
            lo.known = true;
            lo.c = -md.lo[p][k];
            Scalar stride;
            stride.known = true;
            stride.c = piece.v.strides[k];
            origin = add(origin, mul(add(start, lo, op), stride, op), op);
        }
        if (empty) continue;
        piece.origin = origin;
        into.shape = piece.shape;
        if (into.at.off % sb_ != 0)
            throw_error("line ", op.line, ": ", op.name, ": a partition's piece of the tile starts inside a stick of LX");
        piece.inner_start = t.idx[rank - 1].known ? std::max(t.idx[rank - 1].c, md.lo[p][rank - 1]) - md.lo[p][rank - 1] : -1;
        // The condition that the tile is inside this partition along its run-time dimensions.
        Reg cond, temp;
        if (!runtime.empty()) {
            Scalar inside;
            inside.known = true;
            inside.c = 0;  // the number of failed bounds
            for (size_t k : runtime) {
                Scalar lo, last;
                lo.known = last.known = true;
                lo.c = md.lo[p][k];
                last.c = md.hi[p][k] - t.shape[k] + 1;
                inside = add(inside, scalar_op(Opcode::CMPLT, t.idx[k], lo, op), op);
                inside = add(inside, scalar_op(Opcode::CMPLT, last, t.idx[k], op), op);
            }
            Scalar zero;
            zero.known = true;
            cond = reg_of(scalar_op(Opcode::CMPEQ, inside, zero, op), op, &temp);
            b_.if_(cond);
        }
        dma(op, false, piece, into);
        if (!runtime.empty()) {
            b_.end_if();
            drain();
        }
    }
}

void Importer::distributed_views(const std::vector<const Op *> &dist) {
    std::function<void(const Region &)> loops = [&](const Region &r) {
        for (const Op &op : r.ops) {
            if (op.name == "scf.for" && !op.regions.empty() && !op.regions[0].args.empty() && op.operands.size() >= 3)
                loop_of_iv_[op.regions[0].args[0]] = &op;
            for (const Region &s : op.regions) loops(s);
        }
    };
    loops(f_.body);
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
        // Partitions that are views of different arguments: read partition by partition.
        std::set<std::string> args;
        for (const std::string &pn : d->operands)
            if (const Op *p = def_op(pn); p && p->name == "ktdp.construct_memory_view" && memory_space_hbm(*p))
                args.insert(base_arg(p->operands[0]));
        if (args.size() > 1 && !args.count("")) {
            multi_dist(*d);
            continue;
        }
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
