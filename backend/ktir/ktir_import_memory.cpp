// The importer's memory side: LX allocation and geometry, memory views, access tiles, loads,
// stores and DMA, and the emission of vector instructions with their hazards (ktir_importer.h).
#include <algorithm>
#include <cstdlib>
#include <functional>

#include "ktir_importer.h"

namespace spyre::ktir::lowering {

int Importer::lx_alloc(int64_t bytes, const Op &op) {
    bytes = round_up(std::max<int64_t>(bytes, sb_), 2 * sb_);
    if (std::optional<int> id = lx_.alloc(bytes, m_.lx_bytes)) return *id;
    throw_error("line ", op.line, ": ", op.name, ": LX is full (", bytes, " more bytes needed, ",
                m_.lx_bytes - lx_.top(), " free of ", m_.lx_bytes, ")");
}

Tens Importer::new_tensor(DType t, const std::vector<int64_t> &shape, const Op &op, int64_t row_sticks) {
    Tens x;
    x.kind = Tens::InLx;
    x.t = t;
    x.shape = shape;
    const int64_t eb = dtype_bytes(t);
    int64_t inner = shape.empty() ? 1 : shape.back();
    int64_t row = row_sticks ? row_sticks * sb_ : round_up(inner * eb, sb_);
    x.bstride.assign(shape.size(), eb);
    int64_t st = row;
    for (size_t i = shape.size(); i-- > 1;) {
        x.bstride[i - 1] = st;
        st = wrap_mul(st, shape[i - 1]);
        if (st > m_.lx_bytes) throw_error("line ", op.line, ": ", op.name, ": tensor does not fit in LX");
    }
    x.alloc = lx_alloc(shape.size() <= 1 ? row : st, op);
    x.at = Lx(int32_t(lx_.offset(x.alloc)));
    return x;
}

LxSpan Importer::range_of(const Tens &x) const {
    LxSpan r;
    if (x.at.reg.id != 0) return r;
    int64_t lo = x.at.off, hi = x.at.off;
    for (size_t i = 0; i < x.shape.size(); i++) {
        int64_t span = (x.shape[i] - 1) * x.bstride[i];
        if (span < 0) lo += span;
        else hi += span;
    }
    r.lo = lo / sb_ * sb_;
    r.hi = round_up(hi + dtype_bytes(x.t), sb_);
    return r;
}

LxSpan Importer::range_at(Lx at, int64_t bytes) const {
    LxSpan r;
    if (at.reg.id != 0) return r;
    r.lo = at.off / sb_ * sb_;
    r.hi = round_up(at.off + bytes, sb_);
    return r;
}

Geo Importer::geo(const Tens &x, const Op &op, const char *what) const {
    const int64_t eb = dtype_bytes(x.t);
    Geo g;
    size_t r = x.shape.size();
    if (r == 0) return g;
    int64_t inner = x.shape.back();
    if (r == 1) {
        g.sticks = (inner * eb + sb_ - 1) / sb_;
        return g;
    }
    int64_t gs = x.bstride[r - 2];
    if (x.shape[r - 2] == 1) gs = round_up(inner * eb, sb_);
    if (gs % sb_ != 0 || gs < round_up(inner * eb, sb_))
        throw_error("line ", op.line, ": ", op.name, ": ", what, " rows are ", gs,
                    " bytes apart in LX; vector operands need rows of whole sticks");
    int64_t st = gs;
    for (size_t d = r - 1; d-- > 0;) {
        if (x.shape[d] != 1 && x.bstride[d] != st)
            throw_error("line ", op.line, ": ", op.name, ": ", what,
                        " is not contiguous in LX (its rows are not back to back)");
        st *= x.shape[d];
        g.groups *= x.shape[d];
    }
    g.sticks = gs / sb_;
    return g;
}

bool Importer::packed(const Tens &x) const {
    int64_t st = dtype_bytes(x.t);
    for (size_t d = x.shape.size(); d-- > 0;) {
        if (x.shape[d] != 1 && x.bstride[d] != st) return false;
        st *= x.shape[d];
    }
    return true;
}

int64_t Importer::elements(const std::vector<int64_t> &shape) const {
    int64_t n = 1;
    for (int64_t d : shape) n = wrap_mul(n, d);
    return n;
}

Lx Importer::lx_addr(const Scalar &s, DType type, const Op &op) {
    const int64_t eb = dtype_bytes(type), lx_offset = lx_offsets_[size_t(type)];
    if (s.is_float) throw_error("line ", op.line, ": ", op.name, ": a float is not an address");
    if (s.buffer >= 0) throw_error("line ", op.line, ": ", op.name, ": an HBM address used as an LX address");
    // Addresses count from spyre.lx_offset (bytes), or the offset of the view's element type, where
    // the exporter moved the program's LX.
    if (s.known) {
        const int64_t at = wrap_mul(s.c, eb), a = at - lx_offset;
        if (a < 0 && at >= 0)
            throw_error("line ", op.line, ": ", op.name, ": LX address ", at, " lies below the function's ",
                        lx_offset == lx_offset_ ? std::string("spyre.lx_offset")
                                                : "spyre.lx_offset_" + std::string(dtype_name(type == DType::U8 ? DType::I8 : type)),
                        " (", lx_offset, " bytes), where its LX starts");
        if (a < 0 || at >= m_.lx_bytes)
            throw_error("line ", op.line, ": ", op.name, ": LX address ", at, " is outside LX (", m_.lx_bytes,
                        " bytes)");
        return Lx(int32_t(a));
    }
    if (s.div_k == eb && std::llabs(s.div_add) < (int64_t(1) << 28))
        return Lx(s.div_src, int32_t(s.div_add * eb - lx_offset));
    Reg t;
    Reg r = reg_of(s, op, &t);
    Reg d = new_reg(op);
    b_.muli(d, r, int32_t(eb));
    temps_.push_back(d);
    return Lx(d, int32_t(-lx_offset));
}

std::pair<Reg, int32_t> Importer::dram_addr(const Scalar &s, int64_t eb, const Op &op) {
    if (s.known) {
        int64_t a = wrap_mul(s.c, eb);
        if (a < 0 || a > INT32_MAX) {
            Reg d = new_reg(op);
            b_.li(d, a);
            temps_.push_back(d);
            return {d, 0};
        }
        return {kZero, int32_t(a)};
    }
    if (s.div_k == eb && std::llabs(s.div_add) < (int64_t(1) << 28))
        return {s.div_src, int32_t(s.div_add * eb)};
    Reg t;
    Reg r = reg_of(s, op, &t);
    Reg d = new_reg(op);
    b_.muli(d, r, int32_t(eb));
    temps_.push_back(d);
    return {d, 0};
}

bool Importer::pure_between(const Op &op, const Op &user) {
    const OpPosition &a = info_.at(&op), &b = info_.at(&user);
    if (a.parent != b.parent || b.pos <= a.pos) return false;
    static const std::set<std::string> pure = {"arith.constant", "arith.addi", "arith.subi", "arith.muli",
                                               "arith.divsi", "arith.divui", "arith.remsi", "arith.remui",
                                               "arith.index_cast", "ktdp.construct_access_tile",
                                               "ktdp.construct_memory_view", "affine.apply", "tensor.empty"};
    for (size_t i = a.pos + 1; i < b.pos; i++)
        if (!pure.count(a.parent->ops[i].name)) return false;
    return true;
}

// A value with other users too goes to the tile only in an explicitly synchronised function (what
// our exporter writes): there a value stored to LX and read again is read while the tile still
// holds it, as the device program did (docs/ktir.md, "The export's form"); elsewhere another store
// could overwrite the tile while the value is still to be read.
const Op *Importer::lx_store_of(const Op &op, const std::string &res) {
    auto it = du_.find(res);
    if (it == du_.end() || it->second.users.empty() || (it->second.users.size() != 1 && !explicit_)) return nullptr;
    const Op *u = it->second.users[0];
    if (u->name != "ktdp.store" || u->operands[0] != res) return nullptr;
    auto tv = vals_.find(u->operands[1]);
    if (tv == vals_.end() || tv->second.released || tv->second.k != Val::X || tv->second.tile.v.hbm) return nullptr;
    if (!pure_between(op, *u)) return nullptr;
    return u;
}

Tens Importer::tile_tensor(const Tile &t, const Op &op) {
    Tens x;
    x.kind = Tens::InLx;
    x.t = t.v.t;
    x.shape = t.shape;
    const int64_t eb = dtype_bytes(t.v.t);
    Scalar a = add(t.v.off, t.origin, op);
    x.at = lx_addr(a, t.v.t, op);
    if (x.at.reg.id) {
        // The address register must outlive this op: hand it to the tensor.
        auto it = std::find_if(temps_.begin(), temps_.end(), [&](Reg r) { return r.id == x.at.reg.id; });
        if (it != temps_.end()) temps_.erase(it);
        else if (!a.known && a.r.id == x.at.reg.id) {
            // owned by the scalar value a (a fresh register from add(), or a held one)
        }
    }
    for (size_t d = 0; d < t.shape.size(); d++) x.bstride.push_back(t.v.strides[d] * eb);
    if (!x.bstride.empty() && x.bstride.back() != eb)
        throw_error("line ", op.line, ": ", op.name, ": the innermost dimension of an LX tile must be contiguous");
    return x;
}

void Importer::memory_view(const Op &op) {
    View v;
    v.hbm = memory_space_hbm(op);
    const Type &t = op.result_types[0];
    if (t.kind != Type::MemRef)
        throw_error("line ", op.line, ": ktdp.construct_memory_view: result must be a memref, not ", t.text());
    v.t = dtype_of(t, op);
    v.sizes = op.sizes;
    v.strides = op.strides;
    if (v.sizes.size() != v.strides.size() || v.sizes.empty())
        throw_error("line ", op.line, ": ktdp.construct_memory_view: needs as many sizes as strides (at least one)");
    if (t.shape != v.sizes)
        throw_error("line ", op.line, ": ktdp.construct_memory_view: sizes do not match the type ", t.text());
    for (size_t i = 0; i < v.sizes.size(); i++) {
        if (v.sizes[i] <= 0) throw_error("line ", op.line, ": ktdp.construct_memory_view: sizes must be positive");
        if (v.strides[i] < 0 || v.strides[i] > (int64_t(1) << 32))
            throw_error("line ", op.line, ": ktdp.construct_memory_view: strides must be in 0..2^32");
    }
    Scalar off = scalar(op.operands[0], op);
    if (v.hbm) {
        if (off.buffer >= 0) {
            v.buffer = off.buffer;
            off.buffer = -1;
        } else if (off.known) {
            // A buffer at a constant address (as in RFC 0682's example).
            for (size_t i = 0; i < bufs_.size(); i++) {
                const BufInfo &bi = bufs_[i];
                if (bi.const_addr >= 0 && off.c >= bi.const_addr && off.c < bi.const_addr + bi.elems) {
                    if (bi.t != v.t)
                        throw_error("line ", op.line, ": ktdp.construct_memory_view: the ", dtype_name(v.t), " view at ",
                                    off.c, " lies inside buffer '", bi.name, "' (", dtype_name(bi.t), ", elements ",
                                    bi.const_addr, " to ", bi.const_addr + bi.elems - 1,
                                    "); a constant address counts elements of the view's type (docs/ktir.md)");
                    v.buffer = int(i);
                    off.c -= bi.const_addr;
                }
            }
            if (v.buffer < 0) {
                std::string name = op.results[0];
                name = strip(name, {"_view", "_mem_view"});
                v.buffer = declare_buffer(op, name, off.c);
                const BufInfo &nb = bufs_.back();
                for (size_t i = 0; i + 1 < bufs_.size(); i++) {
                    const BufInfo &o = bufs_[i];
                    if (o.const_addr >= 0 && o.const_addr < nb.const_addr + nb.elems &&
                        nb.const_addr < o.const_addr + o.elems)
                        throw_error("line ", op.line, ": view '", nb.name, "' at ", nb.const_addr,
                                    " overlaps buffer '", o.name, "' at ", o.const_addr, " (addresses in elements)");
                }
                off.c = 0;
            }
        } else {
            throw_error("line ", op.line, ": ktdp.construct_memory_view: an HBM view's address must be a "
                        "function argument (plus an offset) or a constant");
        }
    } else if (off.buffer >= 0) {
        throw_error("line ", op.line, ": ktdp.construct_memory_view: an LX view on an HBM address");
    }
    v.off = off;
    v.i64 = i64_views_.count(&op) > 0;
    if (v.hbm) to_stick_layout(v, op);
    Val x;
    x.k = Val::V;
    x.v = v;
    define(op, 0, x);
}

std::vector<int64_t> Importer::dense_strides(const std::vector<int64_t> &sizes) {
    std::vector<int64_t> st(sizes.size());
    int64_t k = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
        st[i] = k;
        k = wrap_mul(k, sizes[i]);
    }
    return st;
}

// IBM's tools write a view's strides for the dense host tensor (a 1151-element row: stride 1151);
// the device keeps each row in whole sticks, and the host runtime packs and unpacks between the
// two. So dense strides address the same elements as the padded ones, row for row.
void Importer::to_stick_layout(View &v, const Op &op) {
    const int64_t lanes = sb_ / dtype_bytes(v.t);
    const size_t n = v.sizes.size();
    if (v.buffer >= 0 && bufs_[size_t(v.buffer)].elem_sticks) {  // element i at stick i
        v.elem_sticks = true;
        for (int64_t &s : v.strides) s = wrap_mul(s, lanes);
        Scalar k;
        k.known = true;
        k.c = lanes;
        v.off = mul(v.off, k, op);
        return;
    }
    if (v.sizes.back() % lanes == 0 || v.strides != dense_strides(v.sizes)) return;
    if (v.buffer < 0 || bufs_[size_t(v.buffer)].shape.back() != v.sizes.back() || !v.off.known)
        throw_error("line ", op.line, ": ", op.name, ": a view with dense strides and rows of ", v.sizes.back(),
                    " elements (not whole sticks) must cover whole rows of its buffer at a constant offset");
    const int64_t row = round_up(v.sizes.back(), lanes);
    for (size_t i = n - 1; i-- > 0;) v.strides[i] = i + 2 == n ? row : wrap_mul(v.strides[i + 1], v.sizes[i + 1]);
    v.off.c = wrap_add(wrap_mul(v.off.c / v.sizes.back(), row), v.off.c % v.sizes.back());
}

void Importer::access_tile(const Op &op) {
    Val &base = val(op.operands[0], op);
    if (base.k != Val::V)
        throw_error("line ", op.line, ": ktdp.construct_access_tile: %", op.operands[0], " is not a memory view");
    const View &v = base.v;
    const Type &tt = op.result_types[0];
    if (tt.kind != Type::Tile)
        throw_error("line ", op.line, ": ktdp.construct_access_tile: result must be !ktdp.access_tile<...>");
    if (v.i64)
        throw_error("line ", op.line, ": ktdp.construct_access_tile: %", op.operands[0],
                    " is an i64 view; i64 tensors have no device form, so an i64 view may only be the index view of "
                    "an indirect access tile (ind(...))");
    const bool multi = v.dist >= 0;  // subscripts of the distributed view's global coordinates
    if (op.indices.size() != v.sizes.size() || tt.shape.size() != v.sizes.size())
        throw_error("line ", op.line, ": ktdp.construct_access_tile: the view has ", v.sizes.size(),
                    " dimensions, the tile ", tt.shape.size(), " and ", op.indices.size(), " subscripts");
    auto ord = op.attrs.find("access_tile_order");
    if (ord != op.attrs.end() && !identity_map(ord->second))
        throw_error("line ", op.line, ": ktdp.construct_access_tile: only the identity access_tile_order is supported");
    if (op.attrs.count("base_map"))
        throw_error("line ", op.line, ": ktdp.construct_access_tile: base_map is not supported");
    auto set = op.attrs.find("access_tile_set");
    if (set != op.attrs.end()) check_box(set->second, tt.shape, op);
    for (size_t d = 0; d < tt.shape.size(); d++)
        if (tt.shape[d] == kDynamic)
            throw_error("line ", op.line, ": ktdp.construct_access_tile: a tile extent known only at run time ('?' in ",
                        tt.text(), ") is not supported");
    for (size_t d = 0; d < tt.shape.size(); d++)
        if (tt.shape[d] <= 0 || tt.shape[d] > v.sizes[d])
            throw_error("line ", op.line, ": ktdp.construct_access_tile: tile extent ", tt.shape[d],
                        " of dimension ", d, " does not fit the view's ", v.sizes[d]);
    Tile t;
    t.v = v;
    t.shape = tt.shape;
    Scalar origin;
    origin.known = true;
    for (size_t d = 0; d < op.indices.size(); d++) {
        Scalar i = eval(op.indices[d], op);
        if (i.known && (i.c < 0 || i.c + tt.shape[d] > v.sizes[d]))
            throw_error("line ", op.line, ": ktdp.construct_access_tile: subscript ", i.c, " of dimension ", d,
                        " puts the tile outside the view (size ", v.sizes[d], ")");
        t.idx_expr.push_back(op.indices[d]);
        if (multi) {
            t.idx.push_back(i);
            continue;
        }
        Scalar k;
        k.known = true;
        k.c = v.strides[d];
        origin = add(origin, mul(i, k, op), op);
        if (d + 1 == op.indices.size() && i.known) t.inner_start = i.c;
    }
    t.origin = origin;
    Val x;
    x.k = Val::X;
    x.tile = t;
    define(op, 0, x);
}

bool Importer::identity_map(const Attr &a) {
    if (a.kind != Attr::Map || a.map->results.size() != size_t(a.map->dims)) return false;
    for (size_t i = 0; i < a.map->results.size(); i++)
        if (a.map->results[i].kind != IExpr::Dim || a.map->results[i].c != int64_t(i)) return false;
    return true;
}

int Importer::box_bounds(const IntegerSet &s, std::vector<int64_t> &lo, std::vector<int64_t> &hi) {
    lo.assign(size_t(s.dims), INT64_MIN);
    hi.assign(size_t(s.dims), INT64_MAX);
    for (size_t i = 0; i < s.exprs.size(); i++) {
        // Linear form: coefficient per dim and a constant.
        std::vector<int64_t> coef(size_t(s.dims), 0);
        int64_t c = 0;
        if (!linear(s.exprs[i], 1, coef, c) || s.equality[i]) return int(i);
        int nz = 0, which = -1;
        for (size_t d = 0; d < coef.size(); d++)
            if (coef[d]) {
                nz++;
                which = int(d);
            }
        if (nz != 1 || (coef[size_t(which)] != 1 && coef[size_t(which)] != -1)) return int(i);
        if (coef[size_t(which)] == 1) lo[size_t(which)] = std::max(lo[size_t(which)], -c);
        else hi[size_t(which)] = std::min(hi[size_t(which)], c);
    }
    return -1;
}

void Importer::check_box(const Attr &a, const std::vector<int64_t> &shape, const Op &op) {
    if (a.kind != Attr::Set) throw_error("line ", op.line, ": access_tile_set must be an affine_set");
    const IntegerSet &s = *a.set;
    if (s.dims != int(shape.size()) || s.syms != 0)
        throw_error("line ", op.line, ": access_tile_set has ", s.dims, " dimensions, the tile ", shape.size());
    std::vector<int64_t> lo, hi;
    const int bad = box_bounds(s, lo, hi);
    if (bad >= 0) {
        std::vector<int64_t> coef(shape.size(), 0);
        int64_t c = 0;
        if (!linear(s.exprs[size_t(bad)], 1, coef, c))
            throw_error("line ", op.line, ": access_tile_set constraint ", bad, " is not a bound on one dimension");
        throw_error("line ", op.line, ": access_tile_set: only rectangular tiles (one bound per constraint) "
                    "are supported");
    }
    for (size_t d = 0; d < shape.size(); d++)
        if (lo[d] != 0 || hi[d] != shape[d] - 1)
            throw_error("line ", op.line, ": access_tile_set does not match the tile type: dimension ", d,
                        " must run over 0..", shape[d] - 1);
}

bool Importer::linear(const IExpr &e, int64_t scale, std::vector<int64_t> &coef, int64_t &c, int depth) {
    if (depth > 64) return false;
    switch (e.kind) {
    case IExpr::Const: c = wrap_add(c, wrap_mul(scale, e.c)); return true;
    case IExpr::Dim:
        if (e.c < 0 || size_t(e.c) >= coef.size()) return false;
        coef[size_t(e.c)] = wrap_add(coef[size_t(e.c)], scale);
        return true;
    case IExpr::Neg: return linear(e.args[0], -scale, coef, c, depth + 1);
    case IExpr::Add:
        return linear(e.args[0], scale, coef, c, depth + 1) && linear(e.args[1], scale, coef, c, depth + 1);
    case IExpr::Mul:
        if (e.args[0].kind == IExpr::Const) return linear(e.args[1], wrap_mul(scale, e.args[0].c), coef, c, depth + 1);
        if (e.args[1].kind == IExpr::Const) return linear(e.args[0], wrap_mul(scale, e.args[1].c), coef, c, depth + 1);
        return false;
    default: return false;
    }
}

Tile Importer::tile_of(const std::string &name, const Op &op) {
    Val &v = val(name, op);
    if (v.k != Val::X) throw_error("line ", op.line, ": ", op.name, ": %", name, " is not an access tile");
    return v.tile;
}

void Importer::dma(const Op &op, bool store_to_hbm, const Tile &t, const Tens &lx) {
    if (t.v.dist >= 0) {
        if (store_to_hbm)
            throw_error("line ", op.line, ": ", op.name, ": a store into a distributed view of several arguments is not "
                        "supported (loads are)");
        return multi_dist_dma(op, t, lx);
    }
    const int64_t eb = dtype_bytes(t.v.t);
    if (lx.t != t.v.t)
        throw_error("line ", op.line, ": ", op.name, ": element types differ (", dtype_name(lx.t), " and ",
                    dtype_name(t.v.t), ")");
    if (lx.kind != Tens::InLx) throw_internal("line ", op.line, ": ", op.name, ": internal: tensor not in LX");
    size_t r = t.shape.size();
    if (t.v.strides[r - 1] != 1 && !(t.v.elem_sticks && t.shape[r - 1] == 1))
        throw_error("line ", op.line, ": ", op.name, ": the innermost dimension of an HBM tile must be contiguous "
                    "(stride 1), not ", t.v.strides[r - 1]);
    struct Dim {
        int64_t count, dram, lx;
    };
    std::vector<Dim> dims;
    for (size_t d = 0; d + 1 < r; d++)
        if (t.shape[d] > 1) dims.push_back({t.shape[d], t.v.strides[d] * eb, lx.bstride[d]});
    // Merge dimensions that are contiguous on both sides.
    for (size_t i = dims.size(); i-- > 1;) {
        Dim &o = dims[i - 1], &in = dims[i];
        if (o.dram == in.dram * in.count && o.lx == in.lx * in.count) {
            in.count *= o.count;
            dims.erase(dims.begin() + long(i - 1));
        }
    }
    if (dims.size() > 3)
        throw_error("line ", op.line, ": ", op.name, ": the tile needs ", dims.size(),
                    " strided dimensions besides its contiguous rows; a DMA has at most 3");
    DmaDesc desc;
    desc.sticks = int32_t((t.shape[r - 1] * eb + sb_ - 1) / sb_);
    for (size_t i = 0; i < dims.size(); i++) {
        if (dims[i].count > INT32_MAX || dims[i].lx % sb_ != 0 || dims[i].lx > INT32_MAX || dims[i].lx < INT32_MIN)
            throw_error("line ", op.line, ": ", op.name, ": LX rows ", dims[i].lx,
                        " bytes apart are not whole sticks");
        desc.count[i] = int32_t(dims[i].count);
        desc.dram_stride[i] = dims[i].dram;
        desc.lx_stride[i] = int32_t(dims[i].lx);
    }
    int di = b_.intern_dma_desc(desc);
    Scalar addr = add(t.v.off, t.origin, op);
    if (addr.known && (wrap_mul(addr.c, eb) % sb_) != 0)
        throw_error("line ", op.line, ": ", op.name, ": the tile starts at element ", addr.c,
                    ", not at a stick boundary (", sb_ / eb, " elements)");
    // A start known only at run time: where the innermost subscript is a loop variable the import
    // can enumerate, each of its values must start a stick too, else the DMA would fault there.
    if (!addr.known && t.v.off.known && !t.idx_expr.empty() && !t.v.elem_sticks) {
        const int64_t lanes = sb_ / eb;
        std::vector<int64_t> at;
        std::string why;
        if (subscript_values(t.idx_expr.back(), &at, &why))
            for (int64_t x : at)
                if (((t.v.off.c + x) % lanes + lanes) % lanes != 0)
                    throw_error("line ", op.line, ": ", op.name, ": the tile starts at element ", x, " of its rows (%",
                                t.idx_expr.back().name, " = ", x, "), not at a stick boundary (", lanes,
                                " elements); a DMA moves whole sticks");
    }
    auto da = dram_addr(addr, eb, op);
    Access acc;
    LxSpan lr = range_of(lx);
    if (store_to_hbm) {
        acc.reads.push_back(lr);
        acc.dram_writes.insert(t.v.buffer);
        stored_.insert(t.v.buffer);
    } else {
        acc.writes.push_back(lr);
        acc.dram_reads.insert(t.v.buffer);
        loaded_.insert(t.v.buffer);
    }
    Queue q = store_to_hbm ? QStore : QLoad;
    before(q, acc);
    int tag = tag_for(op, q);
    if (store_to_hbm) b_.dma_st(tag, t.v.buffer, da.first, da.second, lx.at, di);
    else b_.dma_ld(tag, t.v.buffer, da.first, da.second, lx.at, di, shared_load(op));
    after(tag, q, acc);
}

// Our export's mark of a shared load: `spyre.shared = 1` on the store of the loaded tile into LX (or
// on the load itself). IBM's KTIR has no such load; without the mark a load is a plain one.
bool Importer::shared_load(const Op &op) const {
    auto marked = [](const Op &o) {
        auto it = o.attrs.find("spyre.shared");
        return it != o.attrs.end() && it->second.kind == Attr::Int && it->second.i == 1;
    };
    if (marked(op)) return true;
    if (op.results.empty()) return false;
    auto du = du_.find(op.results[0]);
    return du != du_.end() && du->second.users.size() == 1 && du->second.users[0]->name == "ktdp.store" &&
           marked(*du->second.users[0]);
}

void Importer::load(const Op &op) {
    Tile t = tile_of(op.operands[0], op);
    const Type &rt = op.result_types[0];
    if (rt.kind != Type::Tensor || rt.shape != t.shape || dtype_of(rt, op) != t.v.t)
        throw_error("line ", op.line, ": ktdp.load: result type ", rt.text(), " does not match the tile (",
                    dtype_name(t.v.t), ")");
    Val v;
    v.k = Val::T;
    if (!t.v.hbm) {
        v.x = tile_tensor(t, op);
        return define(op, 0, v);
    }
    // Rows that start inside a stick (ktir_import_partial.cpp).
    int64_t rho = 0;
    const bool inside = row_start_lane(t, &rho) && rho != 0;
    // Or at lanes that vary with a loop variable (one branch per lane).
    std::set<int64_t> rhos;
    const bool lanes_vary = !inside && !row_start_lane(t, &rho) && row_start_lanes(t, &rhos) &&
                            (rhos.size() > 1 || (rhos.size() == 1 && *rhos.begin() != 0));
    const Op *st = lx_store_of(op, op.results[0]);
    if (st) {
        Tile dst = tile_of(st->operands[1], *st);
        if (dst.shape != t.shape || dst.v.t != t.v.t)
            throw_error("line ", st->line, ": ktdp.store: tensor and tile shapes differ");
        check_row_end(dst, *st);
        v.x = tile_tensor(dst, *st);
        check_clobber(v.x, *st, op.results[0]);
        skip_.insert(st);
        if (t.ind) indirect_dma(*st, false, t, v.x);
        else if (inside) partial_rows(*st, false, t, v.x, rho);
        else if (lanes_vary) load_at_lanes(*st, t, v.x, rhos);
        else dma(*st, false, t, v.x);
    } else {
        v.x = new_tensor(t.v.t, t.shape, op);
        if (t.ind) indirect_dma(op, false, t, v.x);
        else if (inside) partial_rows(op, false, t, v.x, rho);
        else if (lanes_vary) load_at_lanes(op, t, v.x, rhos);
        else dma(op, false, t, v.x);
    }
    define(op, 0, v);
}

void Importer::store(const Op &op) {
    Tens x = tensor(op.operands[0], op);
    Tile t = tile_of(op.operands[1], op);
    if (x.shape != t.shape || x.t != t.v.t)
        throw_error("line ", op.line, ": ktdp.store: tensor ", op.operand_types[0].text(),
                    " does not match the tile's shape and element type");
    if (t.v.hbm) {
        // Rows that start inside a stick, or end inside one that holds more of the view: read, merged
        // and written back (ktir_import_partial.cpp).
        int64_t rho = 0;
        if (row_start_lane(t, &rho) && (rho != 0 || !rows_end_cleanly(t))) {
            if (x.kind != Tens::InLx) x = materialize(x, op, nullptr);
            return partial_rows(op, true, t, x, rho);
        }
        if (!t.ind) check_row_end(t, op);  // (an indirect store checks its rows itself)
        if (x.kind != Tens::InLx) x = materialize(x, op, nullptr);
        return t.ind ? indirect_dma(op, true, t, x) : dma(op, true, t, x);
    }
    Tens dst = tile_tensor(t, op);
    if (x.kind == Tens::InLx && x.at.reg.id == dst.at.reg.id && x.at.off == dst.at.off && x.bstride == dst.bstride)
        return;  // stored where it already is
    // A tensor.empty() stored into LX leaves the tile's contents as they are, undefined: no
    // instruction. (Our export writes one to declare a tile that a loop fills in pieces, so that
    // ktir-cpu holds it as one allocation: "Typed allocations" in docs/ktir.md.)
    if (x.kind == Tens::Empty) return;
    check_row_end(t, op);
    check_clobber(dst, op, op.operands[0]);
    materialize(x, op, &dst);
    // In an explicitly synchronised function (our export's form) a value that reads another value's
    // LX in place (a reshape, a slice, a ktdp.load of an LX tile) and whose first user is this store
    // is, from here on, the tile it was stored to: the export reads the tile through that value
    // ("LX contents as SSA values" in ktir_export.cpp), and the device program read the tile, not
    // the place the value was copied from, which later ops may overwrite. Its first store is where
    // any other value would have been placed (lx_store_of).
    // Likewise a constant fill or a broadcast that is only ever stored (into LX here, then to device
    // memory) or reshaped (a reduction's init): the export writes the value itself there (ktir-cpu
    // reads its own copies of loaded tiles at fixed LX addresses), where the device program read
    // this tile.
    if (explicit_ && (x.kind == Tens::Splat || x.kind == Tens::Bcast)) {
        auto du = du_.find(op.operands[0]);
        auto v = vals_.find(op.operands[0]);
        const bool only_stored = kept_where_stored(op.operands[0]) && du->second.users[0] == &op;
        if (only_stored && v != vals_.end() && !v->second.released) {
            for (int r : v->second.regs) unhold(r);
            v->second.regs.clear();
            v->second.x = dst;
            hold_tensor(v->second);
        }
        return;
    }
    if (explicit_ && x.kind == Tens::InLx && x.alloc < 0) {
        auto du = du_.find(op.operands[0]);
        auto v = vals_.find(op.operands[0]);
        if (du != du_.end() && !du->second.users.empty() && du->second.users[0] == &op && v != vals_.end() &&
            !v->second.released) {
            for (int r : v->second.regs) unhold(r);
            v->second.regs.clear();
            v->second.x = dst;
            hold_tensor(v->second);
        }
    }
}

bool Importer::kept_where_stored(const std::string &value) const {
    auto du = du_.find(value);
    if (!explicit_ || du == du_.end() || du->second.users.empty()) return false;
    const Op &first = *du->second.users[0];
    if (first.name != "ktdp.store" || first.operands.size() != 2 || first.operands[0] != value) return false;
    // A store into device memory (a store into LX again writes the value there again).
    auto to_device_memory = [&](const Op &u) {
        if (u.name != "ktdp.store" || u.operands.size() != 2 || u.operands[0] != value) return false;
        const Op *tile = def_op(u.operands[1]);
        const Op *view = tile && tile->name == "ktdp.construct_access_tile" && !tile->operands.empty()
                             ? def_op(tile->operands[0])
                             : nullptr;
        return view && view->name == "ktdp.construct_memory_view" && memory_space_hbm(*view);
    };
    if (to_device_memory(first)) return false;
    for (size_t k = 1; k < du->second.users.size(); k++) {
        const Op &u = *du->second.users[k];
        if (!to_device_memory(u) && !(u.name == "tensor.reshape" && !u.operands.empty() && u.operands[0] == value))
            return false;
    }
    return true;
}

bool Importer::rows_end_cleanly(const Tile &t) {
    const int64_t eb = dtype_bytes(t.v.t), inner = t.shape.back();
    if ((inner * eb) % sb_ == 0 || (t.v.elem_sticks && inner == 1)) return true;
    // HBM rows are padded to sticks (the buffer's layout); an LX view's only if its row stride says so.
    const size_t r = t.v.sizes.size();
    const bool padded = t.v.hbm || (r >= 2 && (t.v.strides[r - 2] * eb) % sb_ == 0);
    if (padded && t.inner_start >= 0 && t.inner_start + inner == t.v.sizes.back()) return true;
    // At a loop variable's positions: every one must end the row (a loop of one tile per row).
    std::vector<int64_t> at;
    std::string why;
    return padded && t.inner_start < 0 && !t.idx_expr.empty() && subscript_values(t.idx_expr.back(), &at, &why) &&
           !at.empty() && std::all_of(at.begin(), at.end(), [&](int64_t v) { return v + inner == t.v.sizes.back(); });
}

void Importer::check_row_end(const Tile &t, const Op &op) {
    const int64_t inner = t.shape.back();
    if (rows_end_cleanly(t)) return;
    throw_error("line ", op.line, ": ", op.name, ": the tile's rows of ", inner,
                " elements are not whole sticks and do not end at the view's row end; writing them would "
                "overwrite the elements after them");
}

void Importer::check_clobber(const Tens &dst, const Op &op, const std::string &stored) {
    LxSpan w = range_of(dst);
    if (!w.known()) return;  // a dynamic address: not checked
    const int at = info_.at(&op).index;
    for (const auto &kv : vals_) {
        const Val &v = kv.second;
        if (v.released || v.k != Val::T || v.x.kind != Tens::InLx || kv.first == stored) continue;
        auto du = du_.find(kv.first);
        if (du == du_.end() || du->second.last <= at || v.x.shape.empty()) continue;
        LxSpan r = range_of(v.x);
        if (r.known() && overlap(r, w))
            throw_error("line ", op.line, ": ", op.name, ": overwrites LX that %", kv.first,
                        " still holds (it is read later); store to another LX tile");
    }
}

Tens Importer::materialize(const Tens &x, const Op &op, const Tens *into) {
    Tens d = into ? *into : new_tensor(x.t, x.shape, op);
    Geo g = geo(d, op, "the destination");
    if (x.kind == Tens::Empty)
        throw_error("line ", op.line, ": ", op.name, ": reads a tensor.empty value, which holds no data");
    if (x.kind == Tens::Splat) {
        vec_emit(op, Opcode::VFILL, x.t, d, nullptr, nullptr, g, 0, 0, x.splat);
    } else if (x.kind == Tens::Bcast && x.row) {
        Tens s;
        s.kind = Tens::InLx;
        s.t = x.t;
        s.at = x.src;
        s.shape = {1, x.shape.back()};
        s.bstride = {g.sticks * sb_, dtype_bytes(x.t)};
        copy_row_to_rows(op, s, d, g.groups, g.sticks);
    } else if (x.kind == Tens::Bcast) {
        if (x.uniform) {
            Tens s;
            s.kind = Tens::InLx;
            s.t = x.t;
            s.at = x.src;
            s.shape = {1};
            s.bstride = {dtype_bytes(x.t)};
            Geo g1{1, g.groups * g.sticks};
            vec_emit(op, Opcode::VBCAST, x.t, d, &s, nullptr, g1, 0, 0, 0, /*src_elems=*/1);
        } else {
            Tens s;
            s.kind = Tens::InLx;
            s.t = x.t;
            s.at = x.src;
            s.shape = {g.groups};
            s.bstride = {dtype_bytes(x.t)};
            vec_emit(op, Opcode::VBCAST, x.t, d, &s, nullptr, g, 0, 0, 0, g.groups);
        }
    } else {
        Geo gs = geo(x, op, "the source");
        if (gs.groups != g.groups || gs.sticks != g.sticks)
            throw_error("line ", op.line, ": ", op.name, ": copies between different LX layouts (", gs.groups, "x",
                        gs.sticks, " and ", g.groups, "x", g.sticks, " groups x sticks)");
        vec_emit(op, Opcode::VCOPY, x.t, d, &x, nullptr, g);
    }
    return d;
}

void Importer::vec_emit(const Op &op, Opcode oc, DType t, const Tens &dst, const Tens *a, const Tens *b2,
    Geo g, uint8_t mode, int32_t aux, double fill, int64_t src0_elems, int64_t src1_elems, int64_t dst_elems,
    DType dst_t) {
    if (g.groups > INT32_MAX || g.sticks > INT32_MAX || g.groups * g.sticks > m_.lx_bytes / sb_)
        throw_error("line ", op.line, ": ", op.name, ": operand larger than LX");
    const int64_t eb = dtype_bytes(t);
    Access acc;
    auto span = [&](int64_t elems, DType tt) { return elems ? elems * dtype_bytes(tt) : g.groups * g.sticks * sb_; };
    if (a) acc.reads.push_back(range_at(a->at, span(src0_elems, t)));
    if (b2) acc.reads.push_back(range_at(b2->at, span(src1_elems, t)));
    int64_t dbytes = dst_elems ? dst_elems * dtype_bytes(dst_t) : span(0, t);
    if (oc == Opcode::VCVT || oc == Opcode::VCVTF8) dbytes = g.groups * g.sticks * (sb_ / eb) * dtype_bytes(dst_t);
    acc.writes.push_back(range_at(dst.at, dbytes));
    if ((mode & kAccumulate) || oc == Opcode::VSELM) acc.reads.push_back(range_at(dst.at, dbytes));  // VSELM: the mask
    before(QVec, acc);
    int tag = tag_for(op, QVec);
    int32_t s = int32_t(g.sticks), n = int32_t(g.groups);
    switch (oc) {
    case Opcode::VFILL: b_.vfill(t, tag, dst.at, float(fill), s, n); break;
    case Opcode::VBCAST: b_.vbcast(t, tag, dst.at, a->at, s, n); break;
    case Opcode::VCVT: b_.vcvt(t, dst_t, tag, dst.at, a->at, s, n); break;
    case Opcode::VCVTF8: b_.vcvtf8(t, dst_t, Fp8Format(aux), tag, dst.at, a->at, s, n); break;
    case Opcode::VREDSUM:
    case Opcode::VREDMAX:
    case Opcode::VREDMIN: b_.vred(oc, t, tag, dst.at, a->at, s, n, aux, mode); break;
    case Opcode::VTRANSPOSE: b_.vtranspose(t, tag, dst.at, a->at, int32_t(g.groups), int32_t(g.sticks)); break;
    default:
        if (b2) b_.vbin(oc, t, tag, dst.at, a->at, b2->at, s, n, mode);
        else b_.vun(oc, t, tag, dst.at, a->at, s, n);
    }
    after(tag, QVec, acc);
}

Tens Importer::destination(const Op &op, const std::string &res, DType t, const std::vector<int64_t> &shape,
    int64_t row_sticks, bool need_geo, Geo want, bool exact_elements) {
    const Op *st = lx_store_of(op, res);
    if (st) {
        Tile tl = tile_of(st->operands[1], *st);
        if (tl.shape == shape && tl.v.t == t) {
            if (!exact_elements) check_row_end(tl, *st);
            Tens d = tile_tensor(tl, *st);
            bool ok = true;
            if (need_geo) {
                try {
                    Geo g = geo(d, op, "the destination");
                    ok = g.groups == want.groups && g.sticks == want.sticks;
                } catch (const Error &) {
                    ok = false;
                }
            }
            if (ok) {
                check_clobber(d, *st, res);
                skip_.insert(st);
                return d;
            }
        }
    }
    return new_tensor(t, shape, op, row_sticks);
}

}  // namespace spyre::ktir::lowering

namespace spyre::ktir::lowering {

namespace {

template <typename F>
void each_op_in(Region &r, const F &f) {
    for (Op &op : r.ops) {
        f(op);
        for (Region &g : op.regions) each_op_in(g, f);
    }
}

}  // namespace

void Importer::specialise_dynamic_sizes() {
    std::map<std::string, const Op *> defs;
    std::map<std::string, std::vector<int64_t>> views;  // specialised views' sizes, by result
    bool any = false;
    each_op_in(fn_.body, [&](Op &op) {
        for (const std::string &r : op.results) defs[r] = &op;
        if (op.name == "ktdp.construct_memory_view")
            for (int64_t v : op.sizes) any |= v == kDynamic;
        for (int64_t v : op.strides) any |= v == kDynamic;
    });
    if (!any) return;
    // The integer a size value holds: an --arg (through index casts and integer widenings) or a constant.
    std::function<int64_t(const std::string &, const Op &, int)> value = [&](const std::string &name, const Op &at,
                                                                            int depth) -> int64_t {
        auto why = [&](const std::string &w) {
            throw_error("line ", at.line, ": ktdp.construct_memory_view: dynamic size %", name, " ", w,
                        " (a dynamic size is specialised at import from a scalar argument given with --arg, or a "
                        "constant)");
        };
        if (depth > 16) why("is computed too deeply");
        auto arg = std::find(fn_.args.begin(), fn_.args.end(), name);
        if (arg != fn_.args.end()) {
            auto it = opt_.args.find(name);
            if (it == opt_.args.end()) why("comes from argument %" + name + ", which has no value: give --arg " + name + "=VALUE");
            char *end = nullptr;
            const long long v = std::strtoll(it->second.c_str(), &end, 10);
            if (it->second.empty() || *end || v < 0 || v > (int64_t(1) << 40))
                why("comes from --arg " + name + "=" + it->second + ", which is not an integer in [0, 2^40]");
            return int64_t(v);
        }
        auto d = defs.find(name);
        if (d == defs.end()) why("is not defined");
        const Op &op = *d->second;
        if (op.name == "arith.constant" && op.value.kind == Attr::Int) {
            if (op.value.i < 0 || op.value.i > (int64_t(1) << 40)) why("is out of range");
            return op.value.i;
        }
        if ((op.name == "arith.index_cast" || op.name == "arith.index_castui" || op.name == "arith.extsi" ||
             op.name == "arith.extui") && op.operands.size() == 1)
            return value(op.operands[0], at, depth + 1);
        if ((op.name == "arith.muli" || op.name == "arith.addi") && op.operands.size() == 2) {
            const int64_t a = value(op.operands[0], at, depth + 1), b = value(op.operands[1], at, depth + 1);
            const int64_t most = int64_t(1) << 40;  // each in [0, 2^40]
            if (op.name == "arith.muli" ? a != 0 && b > most / a : a + b > most) why("is too large");
            return op.name == "arith.muli" ? a * b : a + b;
        }
        why("comes from " + op.name + " (line " + std::to_string(op.line) + ")");
        return 0;
    };
    // A coordinate_set's symbols are the view's dynamic sizes, left to right (the dialect's contract
    // for ktdp.construct_memory_view, as ktir-cpu binds them).
    std::function<void(IExpr &, const std::vector<int64_t> &, const Op &)> bind =
        [&](IExpr &e, const std::vector<int64_t> &syms, const Op &at) {
            if (e.kind == IExpr::Sym) {
                // The reader takes only the symbols a set declares, and their count was checked.
                if (e.c < 0 || size_t(e.c) >= syms.size())
                    throw_internal("line ", at.line, ": internal: coordinate_set symbol s", e.c, " of ", syms.size());
                e.kind = IExpr::Const;
                e.c = syms[size_t(e.c)];
            }
            for (IExpr &a : e.args) bind(a, syms, at);
        };
    each_op_in(fn_.body, [&](Op &op) {
        if (op.name != "ktdp.construct_memory_view") return;
        size_t k = 1;
        std::vector<int64_t> syms;
        for (std::vector<int64_t> *list : {&op.sizes, &op.strides})
            for (int64_t &sz : *list)
                if (sz == kDynamic) {
                    if (k >= op.operands.size())
                        throw_error("line ", op.line, ": ktdp.construct_memory_view: a dynamic entry has no value");
                    sz = value(op.operands[k++], op, 0);
                    if (list == &op.sizes) syms.push_back(sz);
                }
        auto cs = op.attrs.find("coordinate_set");
        if (cs != op.attrs.end() && cs->second.kind == Attr::Set && cs->second.set && cs->second.set->syms > 0) {
            auto set = std::make_shared<IntegerSet>(*cs->second.set);  // an alias may be shared by other views
            if (size_t(set->syms) != syms.size())
                throw_error("line ", op.line, ": ktdp.construct_memory_view: its coordinate_set has ", set->syms,
                            " symbols and the view ", syms.size(), " dynamic sizes to bind them to");
            for (IExpr &e : set->exprs) bind(e, syms, op);
            set->syms = 0;
            cs->second.set = set;
        }
        op.operands.resize(1);
        op.operand_types.resize(1);
        if (!op.result_types.empty() && op.result_types[0].shape.size() == op.sizes.size())
            for (size_t i = 0; i < op.sizes.size(); i++)
                if (op.result_types[0].shape[i] == kDynamic) op.result_types[0].shape[i] = op.sizes[i];
        if (!op.results.empty()) views[op.results[0]] = op.sizes;
    });
    // A distributed view of specialised partitions spans their boxes (ktir-cpu resolves its '?' so).
    each_op_in(fn_.body, [&](Op &op) {
        if (op.name != "ktdp.construct_distributed_memory_view" || op.results.empty() || op.result_types.empty())
            return;
        std::vector<int64_t> shape(op.result_types[0].shape.size(), 0);
        for (const std::string &pn : op.operands) {
            auto d = defs.find(pn);
            if (d == defs.end() || d->second->name != "ktdp.construct_memory_view") return;
            auto cs = d->second->attrs.find("coordinate_set");
            std::vector<int64_t> lo, hi;
            if (cs == d->second->attrs.end() || cs->second.kind != Attr::Set || !cs->second.set ||
                cs->second.set->syms != 0 || box_bounds(*cs->second.set, lo, hi) >= 0 || hi.size() != shape.size())
                return;
            for (size_t i = 0; i < shape.size(); i++) shape[i] = std::max(shape[i], hi[i] + 1);
        }
        views[op.results[0]] = shape;
    });
    // The types that name a specialised view take its sizes; any other '?' is refused.
    each_op_in(fn_.body, [&](Op &op) {
        auto fix = [&](Type &t, const std::string *name) {
            bool dynamic = false;
            for (int64_t d : t.shape) dynamic |= d == kDynamic;
            if (!dynamic) return;
            auto v = name ? views.find(*name) : views.end();
            if (v == views.end() || v->second.size() != t.shape.size())
                throw_error("line ", op.line, ": ", op.name, ": dynamic dimension '?' in ", t.text(),
                            " (only a memory view's own sizes and strides may be values, given by --arg)");
            t.shape = v->second;
        };
        for (size_t i = 0; i < op.result_types.size(); i++) fix(op.result_types[i], i < op.results.size() ? &op.results[i] : nullptr);
        for (size_t i = 0; i < op.operand_types.size(); i++) fix(op.operand_types[i], i < op.operands.size() ? &op.operands[i] : nullptr);
    });
}

}  // namespace spyre::ktir::lowering
