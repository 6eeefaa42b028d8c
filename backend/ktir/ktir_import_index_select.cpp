// The importer's reading of VSELIDX in standard ops, as the export writes it for ktir-cpu (docs/ktir.md,
// "Index selects"):
//   %lanes = linalg.broadcast of arith.constant dense<[0, 1, ..., W-1]> : tensor<Wxindex>, dimensions = [0]
//   %limit = tensor.splat %L                      (per_group: arith.addi of the rows' iota, dims [1], and it)
//   %mask  = arith.cmpi ule, %lanes, %limit
//   %r     = arith.select %mask, %x, %y {spyre.index_select = per_group}   (%y may be a broadcast along
//            the rows of one element per row)
// The mask is checked to be exactly that before anything is lowered; its ops lower to nothing and the
// select to one VSELIDX.
#include <algorithm>

#include "ktir_importer.h"

namespace spyre::ktir::lowering {

namespace {

void collect_defs(const Region &r, std::map<std::string, const Op *> &defs) {
    for (const Op &op : r.ops) {
        for (const std::string &n : op.results) defs[n] = &op;
        for (const Region &g : op.regions) collect_defs(g, defs);
    }
}

template <typename F>
void each_op(const Region &r, const F &f) {
    for (const Op &op : r.ops) {
        f(op);
        for (const Region &g : op.regions) each_op(g, f);
    }
}

}  // namespace

void Importer::find_index_selects() {
    std::map<std::string, const Op *> defs;
    bool any = false;
    each_op(f_.body, [&](const Op &op) { any |= op.name == "arith.select" && op.attrs.count("spyre.index_select"); });
    if (!any) return;
    collect_defs(f_.body, defs);
    each_op(f_.body, [&](const Op &sel) {
        if (sel.name != "arith.select" || !sel.attrs.count("spyre.index_select")) return;
        const Attr &pg = sel.attrs.at("spyre.index_select");
        auto fail = [&](const std::string &why) {
            throw_error("line ", sel.line, ": arith.select: spyre.index_select needs its mask as the export writes it ",
                        "(docs/ktir.md, \"Index selects\"): ", why);
        };
        if (pg.kind != Attr::Int || (pg.i != 0 && pg.i != 1)) fail("spyre.index_select must be 0 or 1 (i32)");
        if (sel.operands.size() != 3 || sel.result_types.size() != 1 || sel.result_types[0].shape.size() != 2)
            fail("it selects between two 2-D tensors");
        const int64_t rows = sel.result_types[0].shape[0], lanes = sel.result_types[0].shape[1];
        std::vector<const Op *> parts;
        // The op defining `name`, whose one user is `user`.
        auto part = [&](const std::string &name, const Op *user, const char *want) -> const Op & {
            auto d = defs.find(name);
            auto u = ssa_.values.find(name);
            if (d == defs.end() || d->second->name != want)
                fail("%" + name + " must be an " + want);
            if (u == ssa_.values.end() || u->second.users.size() != 1 || u->second.users[0] != user)
                fail("%" + name + " must have no other user");
            parts.push_back(d->second);
            return *d->second;
        };
        // A broadcast along `dim` of dense<[0, 1, ..., n-1]>.
        auto iota = [&](const std::string &name, const Op *user, int64_t dim, int64_t n) {
            const Op &b = part(name, user, "linalg.broadcast");
            if (b.dims != std::vector<int64_t>{dim} || b.operands.size() != 2)
                fail("%" + name + " must broadcast along dimension " + std::to_string(dim));
            const Op &c = part(b.operands[0], &b, "arith.constant");
            bool ok = c.value.kind == Attr::Array && int64_t(c.value.items.size()) == n;
            for (int64_t i = 0; ok && i < n; i++)
                ok = c.value.items[size_t(i)].kind == Attr::Int && c.value.items[size_t(i)].i == i;
            if (!ok) fail("%" + b.operands[0] + " must be dense<[0, 1, ..., " + std::to_string(n - 1) + "]>");
            part(b.operands[1], &b, "tensor.empty");
        };
        const Op &mask = part(sel.operands[0], &sel, "arith.cmpi");
        if (mask.predicate != "ule" || mask.operands.size() != 2) fail("the mask must be arith.cmpi ule");
        iota(mask.operands[0], &mask, 0, lanes);
        IndexSelectOps m;
        m.per_group = pg.i;
        std::string splat = mask.operands[1];
        const Op *splat_user = &mask;
        if (pg.i == 1) {
            const Op &add = part(mask.operands[1], &mask, "arith.addi");
            if (add.operands.size() != 2) fail("the limit must be arith.addi of the rows' indices and a splat");
            iota(add.operands[0], &add, 1, rows);
            splat = add.operands[1];
            splat_user = &add;
        }
        const Op &sp = part(splat, splat_user, "tensor.splat");
        if (sp.operands.size() != 1) fail("the limit must be a tensor.splat of an index value");
        m.limit = sp.operands[0];
        m.x = sel.operands[1];
        m.y = sel.operands[2];
        // The second source broadcast along the rows from one element per row.
        auto d = defs.find(m.y);
        auto u = ssa_.values.find(m.y);
        if (d != defs.end() && d->second->name == "linalg.broadcast" && d->second->dims == std::vector<int64_t>{1} &&
            d->second->operands.size() == 2 && u != ssa_.values.end() && u->second.users.size() == 1) {
            const Op &b = *d->second;
            parts.push_back(&b);
            part(b.operands[1], &b, "tensor.empty");
            m.y = b.operands[0];
        }
        for (const Op *p : parts) skip_.insert(p);
        // The limit and a broadcast second source are read at the select, after the skipped ops.
        for (const std::string &v : {m.limit, m.y}) {
            auto it = ssa_.values.find(v);
            if (it != ssa_.values.end()) it->second.last = std::max(it->second.last, ssa_.ops.at(&sel).index);
        }
        index_selects_[&sel] = m;
    });
}

void Importer::index_select_ops(const Op &op) {
    const IndexSelectOps &m = index_selects_.at(&op);
    index_select_of(op, m.x, m.y, m.limit, m.per_group);
}

}  // namespace spyre::ktir::lowering
