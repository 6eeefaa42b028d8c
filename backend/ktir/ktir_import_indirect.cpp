// The importer's indirect access (ktir_importer.h): ktdp.construct_indirect_access_tile, and the
// loads (gathers) and stores (scatters) of such tiles, as the device does data-dependent access:
// the index view copied into LX, each index read into a register (LDLX), and a DMA of a block of
// rows at the address the indices give (as the code generator lowers a Halide gather, lower_gathers.h).
#include <algorithm>
#include <functional>
#include <sstream>

#include "ktir_importer.h"

namespace spyre::ktir::lowering {

namespace {

bool reads_a_variable(const IExpr &e, int depth = 0) {
    if (depth > 64) return true;
    if (e.kind == IExpr::Dim) return true;
    return std::any_of(e.args.begin(), e.args.end(), [&](const IExpr &a) { return reads_a_variable(a, depth + 1); });
}

// At most this many blocks of rows (one DMA each) per load or store of an indirect tile: the
// import unrolls them.
constexpr int64_t kMaxIndirectBlocks = 4096;

}  // namespace

void Importer::i64_views_as_words() {
    std::function<void(Region &)> walk = [&](Region &r) {
        for (Op &op : r.ops) {
            for (Region &sub : op.regions) walk(sub);
            if (op.name != "ktdp.construct_memory_view" || op.result_types.size() != 1) continue;
            Type &t = op.result_types[0];
            if (t.kind != Type::MemRef || t.elem != Type::Int || t.bits != 64) continue;
            const size_t n = t.shape.size();
            if (n == 0 || op.sizes.size() != n || op.strides.size() != n || t.shape != op.sizes)
                continue;  // memory_view reports it
            if (op.strides.back() != 1)
                throw_error("line ", op.line, ": ktdp.construct_memory_view: an i64 view's innermost stride must be 1");
            // (The reader bounds a type's extents below 2^31, so doubling one cannot overflow.)
            t.bits = 32;
            t.shape.back() *= 2;
            op.sizes.back() *= 2;
            for (size_t i = 0; i + 1 < n; i++) op.strides[i] = wrap_mul(op.strides[i], 2);
            i64_views_.insert(&op);
        }
    };
    walk(fn_.body);
}

IndirectTile::Affine Importer::var_affine(const IExpr &e, const IndirectTile &it, const Op &op, int depth) {
    if (depth > 64) throw_error("line ", op.line, ": expression nested too deeply");
    IndirectTile::Affine out;
    out.coef.assign(it.vars.size(), 0);
    out.base.known = true;
    if (!reads_a_variable(e)) {
        out.base = eval(e, op);
        return out;
    }
    auto negate = [&](IndirectTile::Affine a) {
        Scalar z;
        z.known = true;
        a.base = add(z, a.base, op, true);
        for (int64_t &c : a.coef) c = -c;
        return a;
    };
    switch (e.kind) {
    case IExpr::Dim:
        if (e.c < 0 || size_t(e.c) >= it.vars.size())
            throw_error("line ", op.line, ": ", op.name, ": subscript names an unknown intermediate variable");
        out.coef[size_t(e.c)] = 1;
        return out;
    case IExpr::Neg: return negate(var_affine(e.args[0], it, op, depth + 1));
    case IExpr::Add: {
        IndirectTile::Affine a = var_affine(e.args[0], it, op, depth + 1), b = var_affine(e.args[1], it, op, depth + 1);
        a.base = add(a.base, b.base, op);
        for (size_t i = 0; i < a.coef.size(); i++) a.coef[i] = wrap_add(a.coef[i], b.coef[i]);
        return a;
    }
    case IExpr::Mul: {
        const bool left = reads_a_variable(e.args[0]);
        if (!(left && reads_a_variable(e.args[1]))) {
            const Scalar k = eval(e.args[left ? 1 : 0], op);
            if (k.known) {
                IndirectTile::Affine a = var_affine(e.args[left ? 0 : 1], it, op, depth + 1);
                Scalar kk = k;
                a.base = mul(a.base, kk, op);
                for (int64_t &c : a.coef) c = wrap_mul(c, k.c);
                return a;
            }
        }
        break;
    }
    default: break;
    }
    throw_error("line ", op.line, ": ", op.name,
                ": a subscript must be a sum of intermediate variables times constants plus values of the function "
                "(floordiv, mod and products of variables are not supported)");
}

void Importer::indirect_access_tile(const Op &op) {
    const char *what = "ktdp.construct_indirect_access_tile";
    if (op.n_ins < int(op.operands.size()))
        throw_error("line ", op.line, ": ", what, ": symbols(...) (a variables_space_set bounded by values: a tile "
                    "whose size is known only at run time) is not supported");
    if (op.operands.empty() || op.operand_types.size() != op.operands.size())
        throw_error("line ", op.line, ": ", what, ": needs the view and each index view's type (", op.operands.size(),
                    " operands, ", op.operand_types.size(), " types)");
    Val &base = val(op.operands[0], op);
    if (base.k != Val::V) throw_error("line ", op.line, ": ", what, ": %", op.operands[0], " is not a memory view");
    const View v = base.v;
    if (!v.hbm || v.dist >= 0 || v.elem_sticks)
        throw_error("line ", op.line, ": ", what, ": %", op.operands[0],
                    " must be a view of device memory (HBM) of one argument; indirect access to ",
                    !v.hbm ? "LX" : v.dist >= 0 ? "a distributed view" : "a buffer of one element per stick",
                    " is not supported");
    const Type &tt = op.result_types[0];
    const size_t n = v.sizes.size();
    if (tt.kind != Type::Tile) throw_error("line ", op.line, ": ", what, ": result must be !ktdp.access_tile<...>");
    if (op.indirect.size() != n || tt.shape.size() != op.ivars.size() || tt.shape.empty())
        throw_error("line ", op.line, ": ", what, ": the view has ", n, " dimensions and ", op.indirect.size(),
                    " subscripts, the tile ", tt.shape.size(), " dimensions and ", op.ivars.size(),
                    " intermediate variables; a subscript per dimension of the view and a variable (at least one) per "
                    "dimension of the tile");
    const size_t nv = tt.shape.size();
    for (size_t d = 0; d < nv; d++)
        if (tt.shape[d] <= 0)
            throw_error("line ", op.line, ": ", what, ": tile extent ",
                        tt.shape[d] == kDynamic ? std::string("'?'") : std::to_string(tt.shape[d]), " of dimension ", d,
                        " is not a positive constant");
    auto ord = op.attrs.find("variables_space_order");
    if (ord != op.attrs.end() && !identity_map(ord->second))
        throw_error("line ", op.line, ": ", what, ": only the identity variables_space_order is supported");
    // The variables run over the box [0, extent) of the tile's type, in order.
    auto set = op.attrs.find("variables_space_set");
    if (set == op.attrs.end() || set->second.kind != Attr::Set)
        throw_error("line ", op.line, ": ", what, ": needs variables_space_set, an affine_set");
    const IntegerSet &s = *set->second.set;
    std::vector<int64_t> lo, hi;
    if (s.dims != int(nv) || s.syms != 0 || box_bounds(s, lo, hi) >= 0)
        throw_error("line ", op.line, ": ", what, ": variables_space_set must bound each of the ", nv,
                    " variables by constants (a box)");
    for (size_t d = 0; d < nv; d++)
        if (lo[d] != 0 || hi[d] != tt.shape[d] - 1)
            throw_error("line ", op.line, ": ", what, ": variables_space_set does not match the tile type: %",
                        op.ivars[d], " must run over 0..", tt.shape[d] - 1);
    auto it = std::make_shared<IndirectTile>();
    it->vars = op.ivars;
    it->ind = op.indirect;
    size_t next = n;  // the index views' subscripts follow the view's
    for (size_t k = 1; k < op.operands.size(); k++) {
        Val &iv = val(op.operands[k], op);
        if (iv.k != Val::V) throw_error("line ", op.line, ": ", what, ": %", op.operands[k], " is not a memory view");
        if (!iv.v.hbm || iv.v.dist >= 0 || iv.v.t != DType::I32 || iv.v.elem_sticks)
            throw_error("line ", op.line, ": ", what, ": index view %", op.operands[k],
                        " must be an i32 view of device memory (HBM) of one argument; it is ",
                        !iv.v.hbm ? "in LX" : iv.v.dist >= 0 ? "a distributed view"
                                  : iv.v.elem_sticks ? "a buffer of one element per stick"
                                                     : std::string("of ") + dtype_name(iv.v.t));
        IndirectTile::Index x;
        x.v = iv.v;
        if (next + x.v.sizes.size() > op.indices.size())
            throw_error("line ", op.line, ": ", what, ": ind(%", op.operands[k], "[...]) needs ", x.v.sizes.size(),
                        " subscripts, one per dimension of the index view");
        for (size_t e = 0; e < x.v.sizes.size(); e++) x.subs.push_back(var_affine(op.indices[next++], *it, op));
        it->index.push_back(x);
    }
    if (next != op.indices.size())
        throw_error("line ", op.line, ": ", what, ": the ind(...) subscripts do not match the index views' dimensions");
    for (size_t d = 0; d < n; d++) {
        if (it->ind[d] >= int(it->index.size()))
            throw_error("line ", op.line, ": ", what, ": subscript ", d, " names a missing index view");
        it->direct.push_back(it->ind[d] < 0 ? var_affine(op.indices[d], *it, op) : IndirectTile::Affine{});
    }
    Val x;
    x.k = Val::X;
    x.tile.v = v;
    x.tile.shape = tt.shape;
    x.tile.origin.known = true;
    x.tile.ind = it;
    define(op, 0, x);
}

void Importer::indirect_dma(const Op &op, bool store_to_hbm, const Tile &t, const Tens &lx) {
    const IndirectTile &it = *t.ind;
    const View &v = t.v;
    const size_t nd = v.sizes.size(), nv = t.shape.size();
    auto fail = [&](auto &&...why) { throw_error("line ", op.line, ": ", op.name, ": indirect access: ", why...); };
    if (explicit_) fail("not supported in an explicitly synchronised function (spyre.sync)");
    if (lx.t != v.t) fail("element types differ (", dtype_name(lx.t), " and ", dtype_name(v.t), ")");
    if (lx.kind != Tens::InLx || lx.shape != t.shape)
        throw_internal("line ", op.line, ": ", op.name, ": internal: the tensor is not the tile's shape in LX");
    const int64_t eb = dtype_bytes(v.t);
    int64_t points = 1;
    for (int64_t e : t.shape) points = wrap_mul(points, e);

    // Whether the tile is blocks of rows, one DMA each: the innermost subscript direct and walked by
    // the innermost variable, which no index reads, and each other variable no index reads the
    // subscript of its own dimension. `why` says what fails; the variables the indices read in `sel`.
    std::vector<bool> sel(nv, false);
    for (const IndirectTile::Index &x : it.index)
        for (const IndirectTile::Affine &a : x.subs)
            for (size_t i = 0; i < nv; i++) sel[i] = sel[i] || a.coef[i] != 0;
    std::string why;
    auto because = [&](auto &&...parts) {
        if (why.empty()) {
            std::ostringstream o;
            (o << ... << parts);
            why = o.str();
        }
    };
    if (nv != nd)
        because("the tile has ", nv, " variables for the view's ", nd,
                " dimensions; blocks of rows need one variable per dimension");
    else if (it.ind[nd - 1] >= 0)
        because("the innermost (stick) dimension's subscript is indirect; the device moves whole sticks by DMA, so "
                "indirect subscripts may select rows, not single elements");
    else {
        for (size_t d = 0; d < nd; d++) {
            if (it.ind[d] >= 0) {
                if (!sel[d] && t.shape[d] > 1)
                    because("%", it.vars[d], " runs over ", t.shape[d], " values but no subscript of dimension ", d,
                            " reads it");
                continue;
            }
            for (size_t i = 0; i < nv; i++) {
                const int64_t c = it.direct[d].coef[i];
                if (c == 0 || sel[i]) continue;
                if (i != d || c != 1)
                    because("dimension ", d, "'s subscript reads %", it.vars[i], "; a variable that no index reads must "
                            "be the subscript of its own dimension (dimension ", i, "), once");
            }
            if (!sel[d] && t.shape[d] > 1 && it.direct[d].coef[d] != 1)
                because("%", it.vars[d], " runs over ", t.shape[d], " values but dimension ", d,
                        "'s subscript does not read it");
        }
        if (sel[nv - 1])
            because("an index reads %", it.vars[nv - 1], ", the innermost variable; it must walk the rows' elements");
    }
    const bool elements = !why.empty();  // gathered one element at a time
    int64_t blocks = 1;
    for (size_t i = 0; i < nv; i++)
        if (elements || sel[i]) blocks = wrap_mul(blocks, t.shape[i]);
    if (elements && store_to_hbm) fail(why, " (an element scatter: a store writes whole sticks)");
    if (blocks > kMaxIndirectBlocks)
        fail(elements ? why + ": gathered one element at a time, " : std::string(), "the indices choose ", blocks,
             elements ? " elements" : " blocks of rows", ", more than the ", kMaxIndirectBlocks,
             " a load or store may move (one DMA each)");
    if (!elements && store_to_hbm && (t.shape[nv - 1] * eb) % sb_ != 0 &&
        !(it.direct[nd - 1].base.known && it.direct[nd - 1].base.c + t.shape[nv - 1] == v.sizes[nd - 1]))
        fail("rows of ", t.shape[nv - 1], " elements are not whole sticks and do not end at the view's row end; "
             "writing them would overwrite the elements after them");

    // Each index view whole in LX, then waited for: LDLX reads LX as it issues.
    std::vector<Tens> staged;
    Access staged_reads;
    for (const IndirectTile::Index &x : it.index) {
        Tens ix = new_tensor(DType::I32, x.v.sizes, op);
        Tile whole;
        whole.v = x.v;
        whole.origin.known = true;
        whole.shape = x.v.sizes;
        whole.inner_start = 0;
        dma(op, false, whole, ix);
        staged_reads.reads.push_back(range_of(ix));
        staged.push_back(ix);
    }
    hz_.wait(hz_.touching(staged_reads));

    std::vector<int64_t> at(nv, 0);  // the variables' values (the chosen ones: an odometer)
    auto value = [&](const IndirectTile::Affine &a) {
        int64_t c = 0;
        for (size_t i = 0; i < nv; i++)
            if (elements || sel[i]) c = wrap_add(c, wrap_mul(a.coef[i], at[i]));
        Scalar k;
        k.known = true;
        k.c = c;
        return add(a.base, k, op);
    };
    // The subscript of dimension d at the current values: its affine form, or the index it names.
    auto subscript = [&](size_t d) {
        if (it.ind[d] < 0) return value(it.direct[d]);
        const IndirectTile::Index &x = it.index[size_t(it.ind[d])];
        const Tens &ix = staged[size_t(it.ind[d])];
        Scalar addr;
        addr.known = true;
        addr.c = ix.at.off;
        for (size_t e = 0; e < x.subs.size(); e++) {
            Scalar s = value(x.subs[e]);
            const bool words = x.v.i64 && e + 1 == x.subs.size();  // an i64 index: two i32 words
            const int64_t size = words ? x.v.sizes[e] / 2 : x.v.sizes[e];
            if (s.known && (s.c < 0 || s.c >= size))
                fail("the index subscript ", s.c, " of dimension ", e, " is outside the index view (size ", size, ")");
            Scalar k;
            k.known = true;
            k.c = words ? 2 * ix.bstride[e] : ix.bstride[e];
            addr = add(addr, mul(s, k, op), op);
        }
        Lx src;
        if (addr.known) {
            src = Lx(int32_t(addr.c));
        } else {
            Reg tr;
            src = Lx(reg_of(addr, op, &tr), 0);
        }
        Scalar sub;
        sub.r = new_reg(op);
        b_.ldlx(sub.r, src);
        if (x.v.i64) {
            // The whole 64-bit index, hi * 2^32 + the low word unsigned (LDLX sign-extends it), so
            // that an index beyond 32 bits addresses where it points (and the DMA names it outside its
            // buffer) rather than wrapping to another row.
            Reg hi = new_reg(op), k = new_reg(op);
            b_.ldlx(hi, Lx(src.reg, src.off + 4));
            b_.op3(Opcode::CMPLT, k, sub.r, kZero);
            b_.add(hi, hi, k);
            b_.li(k, int64_t(1) << 32);
            b_.mul(hi, hi, k);
            b_.add(sub.r, sub.r, hi);
        }
        return sub;
    };
    auto next_values = [&] {
        for (size_t i = nv; i-- > 0;) {
            if (!elements && !sel[i]) continue;
            if (++at[i] < t.shape[i]) return;
            at[i] = 0;
        }
    };
    // The element address (from the view's offset) of the current values.
    auto origin_now = [&] {
        Scalar origin;
        origin.known = true;
        for (size_t d = 0; d < nd; d++) {
            Scalar k;
            k.known = true;
            k.c = v.strides[d];
            origin = add(origin, mul(subscript(d), k, op), op);
        }
        return origin;
    };
    if (lx.at.reg.id) refs_[lx.at.reg.id]++;  // the tensor's address outlives the sweeps below
    if (!elements) {
        for (int64_t b = 0; b < blocks; b++) {
            Tile block;
            block.v = v;
            block.origin = origin_now();
            block.shape = t.shape;
            Tens part = lx;
            for (size_t i = 0; i < nv; i++)
                if (sel[i] || it.ind[i] >= 0) {
                    block.shape[i] = 1;
                    part.shape[i] = 1;
                    part.at.off = int32_t(wrap_add(part.at.off, wrap_mul(at[i], lx.bstride[i])));
                }
            if (it.direct[nd - 1].base.known) {
                block.inner_start = it.direct[nd - 1].base.c;
                if (block.inner_start < 0 || block.inner_start + t.shape[nv - 1] > v.sizes[nd - 1])
                    fail("the rows' elements ", block.inner_start, "..", block.inner_start + t.shape[nv - 1] - 1,
                         " lie outside the view's rows of ", v.sizes[nd - 1]);
            }
            dma(op, store_to_hbm, block, part);
            free_temps();
            next_values();
        }
    } else {
        // One element at a time: the stick holding it into a scratch stick (a ring of them, so
        // that the DMAs run ahead of the selects), then VSELIDX puts it into its lane of the
        // tensor's stick (the lanes before it kept; the lanes after it, still to be gathered or
        // padding, take it too).
        const int64_t lanes = sb_ / eb;
        constexpr int kScratch = 8;
        std::vector<Tens> scratch;
        for (int i = 0; i < kScratch && i < points; i++) scratch.push_back(new_tensor(v.t, {lanes}, op));
        for (int64_t p = 0; p < points; p++) {
            const Scalar addr = origin_now();
            Scalar k;
            k.known = true;
            k.c = lanes;
            Scalar from_base = v.off;  // the lane counts from the buffer's base, where sticks start
            from_base.buffer = -1;
            const Scalar lane = scalar_op(Opcode::REM, add(from_base, addr, op), k, op);
            const Scalar first = add(addr, lane, op, true);  // the stick's first element
            const Tens &sc = scratch[size_t(p % kScratch)];
            Tile stick;
            stick.v = v;
            stick.origin = first;
            stick.shape.assign(nd, 1);
            stick.shape[nd - 1] = lanes;
            Tens into = sc;
            into.shape.assign(nd, 1);
            into.shape[nd - 1] = lanes;
            into.bstride.assign(nd, sb_);
            into.bstride[nd - 1] = eb;
            dma(op, false, stick, into);
            // Where the element goes: byte `to` of the tensor, in the stick starting at to - j * eb.
            int64_t to = lx.at.off;
            for (size_t i = 0; i < nv; i++) to = wrap_add(to, wrap_mul(at[i], lx.bstride[i]));
            const int64_t j = (to / eb) % lanes;
            Lx src;
            if (lane.known) {
                src = Lx(int32_t(sc.at.off + lane.c * eb));
            } else {
                Reg r = new_reg(op);
                b_.muli(r, lane.r, int32_t(eb));
                src = Lx(r, sc.at.off);
            }
            Reg limit = new_reg(op);
            b_.li(limit, j - 1);
            const Lx dst(lx.at.reg, int32_t(to - j * eb));
            Access acc;
            acc.reads.push_back(range_of(sc));
            acc.writes.push_back(lx.at.reg.id ? LxSpan{} : range_at(Lx(int32_t(to - j * eb)), sb_));
            acc.reads.push_back(acc.writes[0]);
            before(QVec, acc);
            const int tag = tag_for(op, QVec);
            b_.vselidx(v.t, tag, dst, dst, src, limit, false, true, 1, 1);
            after(tag, QVec, acc);
            free_temps();
            next_values();
        }
        for (const Tens &sc : scratch) lx_free(sc.alloc);
    }
    // A scatter writes the rows its indices name, known only at run time: the others keep what the
    // buffer held, so its initial contents are an input too (an in-out buffer).
    if (store_to_hbm) loaded_.insert(v.buffer);
    if (lx.at.reg.id) refs_[lx.at.reg.id]--;
    for (const Tens &ix : staged) lx_free(ix.alloc);
}

}  // namespace spyre::ktir::lowering
