// The importer's tiles whose rows start inside a stick (ktir_importer.h): a DMA moves whole sticks,
// so such a load moves the sticks that hold its rows and shifts them down to lane 0 (VSHIFT), and
// such a store, or one whose rows end inside a stick that holds other elements of the view, reads
// those sticks, merges its rows into them (VSHIFT up, two VSELIDX) and writes them back. The lane
// a row starts at is known for every value of the subscript (a constant, or a sum and product of
// values whose residues the import knows: spyre-kernels' mrope reads the right half of each head at
// head * 64 + 32), or, for a load, takes a few values as a loop runs (one branch each: its matmul's
// tiles at k = 0, 32, 64, 96). A store must not share its sticks with another core's tiles (its
// columns may not depend on the tile id), since each would write back the other's lanes.
#include <set>

#include "ktir_importer.h"

namespace spyre::ktir::lowering {

bool Importer::value_residue(const std::string &name, int64_t lanes, int64_t *r, int depth) {
    if (depth > 32) return false;
    auto v = vals_.find(name);
    if (v != vals_.end() && !v->second.released && v->second.k == Val::S && v->second.s.known &&
        v->second.s.buffer < 0 && !v->second.s.is_float) {
        *r = ((v->second.s.c % lanes) + lanes) % lanes;
        return true;
    }
    auto loop = loop_of_iv_.find(name);
    if (loop != loop_of_iv_.end()) {  // lb + i * step: lb's residue when step's is 0
        int64_t lb = 0, step = 0;
        const Op &f = *loop->second;
        if (!value_residue(f.operands[0], lanes, &lb, depth + 1) || !value_residue(f.operands[2], lanes, &step, depth + 1) ||
            step != 0)
            return false;
        *r = lb;
        return true;
    }
    const Op *d = def_op(name);
    if (d && d->name == "arith.constant" && d->value.kind == Attr::Int) {  // (its value may be released by now)
        *r = ((d->value.i % lanes) + lanes) % lanes;
        return true;
    }
    if (!d || d->operands.empty()) return false;
    const std::string &n = d->name;
    if (n == "arith.index_cast" || n == "arith.index_castui") return value_residue(d->operands[0], lanes, r, depth + 1);
    if ((n == "arith.addi" || n == "arith.subi" || n == "arith.muli") && d->operands.size() == 2) {
        int64_t a = 0, b = 0;
        const bool ka = value_residue(d->operands[0], lanes, &a, depth + 1),
                   kb = value_residue(d->operands[1], lanes, &b, depth + 1);
        if (n == "arith.muli" && ((ka && a == 0) || (kb && b == 0))) {  // a multiple of the lanes
            *r = 0;
            return true;
        }
        if (!ka || !kb) return false;
        const int64_t x = n == "arith.addi" ? a + b : n == "arith.subi" ? a - b : a * b;  // a, b < lanes <= 128
        *r = ((x % lanes) + lanes) % lanes;
        return true;
    }
    return false;
}

bool Importer::subscript_residue(const IExpr &e, int64_t lanes, int64_t *r, int depth) {
    if (depth > 32) return false;
    int64_t a = 0, b = 0;
    switch (e.kind) {
    case IExpr::Const: *r = ((e.c % lanes) + lanes) % lanes; return true;
    case IExpr::Value: return value_residue(e.name, lanes, r);
    case IExpr::Neg:
        if (!subscript_residue(e.args[0], lanes, &a, depth + 1)) return false;
        *r = (lanes - a) % lanes;
        return true;
    case IExpr::Add:
    case IExpr::Mul: {
        const bool ka = subscript_residue(e.args[0], lanes, &a, depth + 1),
                   kb = subscript_residue(e.args[1], lanes, &b, depth + 1);
        if (e.kind == IExpr::Mul && ((ka && a == 0) || (kb && b == 0))) {
            *r = 0;
            return true;
        }
        if (!ka || !kb) return false;
        *r = (e.kind == IExpr::Add ? a + b : a * b) % lanes;
        return true;
    }
    default: return false;
    }
}

bool Importer::reads_tile_id(const std::string &name, int depth) {
    if (depth > 32) return true;
    auto loop = loop_of_iv_.find(name);
    if (loop != loop_of_iv_.end()) {
        for (size_t i = 0; i < 3 && i < loop->second->operands.size(); i++)
            if (reads_tile_id(loop->second->operands[i], depth + 1)) return true;
        return false;
    }
    const Op *d = def_op(name);
    if (!d) return false;  // a function argument
    if (d->name == "ktdp.get_compute_tile_id") return true;
    for (const std::string &o : d->operands)
        if (reads_tile_id(o, depth + 1)) return true;
    return false;
}

bool Importer::subscript_reads_tile_id(const IExpr &e, int depth) {
    if (depth > 32) return true;
    if (e.kind == IExpr::Value) return reads_tile_id(e.name);
    for (const IExpr &a : e.args)
        if (subscript_reads_tile_id(a, depth + 1)) return true;
    return false;
}

bool Importer::row_start_lane(const Tile &t, int64_t *rho) {
    if (t.ind || t.v.dist >= 0 || !t.v.hbm || t.v.elem_sticks || !t.v.off.known) return false;
    const int64_t lanes = sb_ / dtype_bytes(t.v.t);
    int64_t r = 0;
    if (t.inner_start >= 0) r = ((t.inner_start % lanes) + lanes) % lanes;
    else if (t.idx_expr.empty() || !subscript_residue(t.idx_expr.back(), lanes, &r)) return false;
    // The view's offset, and its outer dimensions (rows padded to whole sticks), add whole sticks but
    // for the offset's own residue.
    *rho = (r + t.v.off.c % lanes + lanes) % lanes;
    return true;
}

bool Importer::row_start_lanes(const Tile &t, std::set<int64_t> *rhos) {
    if (t.ind || t.v.dist >= 0 || !t.v.hbm || t.v.elem_sticks || !t.v.off.known || t.idx_expr.empty()) return false;
    const int64_t lanes = sb_ / dtype_bytes(t.v.t);
    std::vector<int64_t> at;
    std::string why;
    if (!subscript_values(t.idx_expr.back(), &at, &why)) return false;
    for (int64_t x : at) rhos->insert(((t.v.off.c + x) % lanes + lanes) % lanes);
    return true;
}

void Importer::load_at_lanes(const Op &op, const Tile &t, const Tens &lx, const std::set<int64_t> &rhos) {
    if (explicit_)
        throw_error("line ", op.line, ": ", op.name, ": a tile whose rows start inside a stick is not supported in an "
                    "explicitly synchronised function (spyre.sync)");
    const int64_t lanes = sb_ / dtype_bytes(t.v.t);
    // The lane this iteration's rows start at, then one branch per lane the loop reaches.
    Scalar from_base = t.v.off;
    from_base.buffer = -1;
    Scalar k;
    k.known = true;
    k.c = lanes;
    const Scalar lane = scalar_op(Opcode::REM, add(from_base, t.origin, op), k, op);
    Val keep;  // the lane's register outlives the branches' temporaries
    hold_s(keep, lane);
    drain();
    Tile plain = t;
    plain.idx_expr.clear();  // each branch knows its lane
    for (int64_t rho : rhos) {
        Scalar want;
        want.known = true;
        want.c = rho;
        Reg temp;
        const Reg cond = reg_of(scalar_op(Opcode::CMPEQ, lane, want, op), op, &temp);
        b_.if_(cond);
        if (rho == 0) dma(op, false, plain, lx);
        else partial_rows(op, false, plain, lx, rho);
        b_.end_if();
        drain();
    }
    for (int r : keep.regs) unhold(r);
}

void Importer::partial_rows(const Op &op, bool store_to_hbm, const Tile &t, const Tens &lx, int64_t rho) {
    const int64_t eb = dtype_bytes(t.v.t), lanes = sb_ / eb, e = t.shape.back();
    const int64_t n = (rho + e + lanes - 1) / lanes;  // sticks of each row that hold its elements
    if (n != (e + lanes - 1) / lanes)
        throw_error("line ", op.line, ": ", op.name, ": the tile's rows of ", e, " elements start at lane ", rho,
                    " of a stick and so span ", n, " sticks, one more than they fill; a tile that starts inside a "
                    "stick must end in the stick it would end in from lane 0");
    if (explicit_)
        throw_error("line ", op.line, ": ", op.name, ": a tile whose rows start inside a stick is not supported in an "
                    "explicitly synchronised function (spyre.sync)");
    // A store rewrites whole sticks: tiles whose columns differ between compute tiles could share a
    // stick, and each would write back the other's lanes as it read them.
    if (store_to_hbm && num_cores_ > 1 && !t.idx_expr.empty() && subscript_reads_tile_id(t.idx_expr.back()))
        throw_error("line ", op.line, ": ", op.name, ": the tile's rows are part of a stick and its columns depend on "
                    "the compute tile id: tiles of other cores could share its sticks, and a store rewrites whole "
                    "sticks; give each compute tile whole sticks of a row, or its own rows");
    Geo g = geo(lx, op, store_to_hbm ? "the stored tensor" : "the loaded tensor");
    if (g.sticks != n)
        throw_error("line ", op.line, ": ", op.name, ": the tensor's rows are ", g.sticks, " sticks apart in LX, the "
                    "tile's ", n);
    // The whole sticks that hold the rows: from lane 0 of the first, n sticks a row.
    Tile whole = t;
    whole.shape.back() = n * lanes;
    Scalar back;
    back.known = true;
    back.c = -rho;
    whole.origin = add(t.origin, back, op);
    whole.inner_start = t.inner_start >= 0 ? t.inner_start - rho : -1;
    whole.idx_expr.clear();
    std::vector<int64_t> shape = t.shape;
    shape.back() = n * lanes;
    Tens sticks = new_tensor(t.v.t, shape, op);
    dma(op, false, whole, sticks);
    auto shift = [&](const Tens &dst, const Tens &src, int32_t by, int32_t hi) {
        Access acc;
        acc.reads.push_back(range_of(src));
        acc.writes.push_back(range_of(dst));
        before(QVec, acc);
        const int tag = tag_for(op, QVec);
        // Reads kept inside each row (a zero past the window): the last row's would leave the tensor.
        b_.vshift(t.v.t, tag, dst.at, src.at, by, int32_t(n), int32_t(g.groups), kEdgeZero, 0, hi);
        after(tag, QVec, acc);
    };
    auto select = [&](const Tens &dst, const Tens &a, const Tens &b, int64_t last) {  // lanes <= last from a
        Access acc;
        acc.reads = {range_of(a), range_of(b)};
        acc.writes.push_back(range_of(dst));
        before(QVec, acc);
        const int tag = tag_for(op, QVec);
        Reg limit = new_reg(op);
        b_.li(limit, last);
        b_.vselidx(t.v.t, tag, dst.at, a.at, b.at, limit, false, false, int32_t(n), int32_t(g.groups));
        after(tag, QVec, acc);
    };
    if (!store_to_hbm) {
        shift(lx, sticks, int32_t(rho), int32_t(n * lanes - 1));
    } else {
        // The rows shifted up to their lanes, the sticks' other lanes kept: [0, rho) and
        // [rho + e, n * lanes) from the sticks read, [rho, rho + e) from the tensor.
        Tens up = new_tensor(t.v.t, shape, op);
        shift(up, lx, int32_t(-rho), int32_t(e - 1));
        select(up, up, sticks, rho + e - 1);
        select(sticks, sticks, up, rho - 1);
        dma(op, true, whole, sticks);
        lx_free(up.alloc);
    }
    lx_free(sticks.alloc);
    free_temps();
}

}  // namespace spyre::ktir::lowering
