// The buffer behind an argument that no memory view is constructed on directly (ktir_importer.h):
// IBM's multi-core examples address only each tile's part of a tensor (`%row_ptr = %in_ptr +
// %pid * 128`, a 1 x 128 view there). The buffer is then the union of those views over every tile
// and every iteration of the loops around them, which the importer evaluates: the offsets must be
// constant per tile and iteration, the views of one shape except their outermost size, dense and
// row-aligned. Anything else keeps the error asking for a view on the argument itself.
#include <functional>

#include "ktir_importer.h"

namespace spyre::ktir::lowering {

namespace {

// Too many tiles x iterations to enumerate for one view's offsets.
constexpr int64_t kMaxEvaluations = int64_t(1) << 20;

}  // namespace

bool Importer::offset_value(const OffsetScope &scope, const std::string &name, int64_t core,
                            const std::map<std::string, int64_t> &ivs, std::set<std::string> *need, int64_t *out,
                            std::string *why, int depth) {
    if (depth > 64) return *why = "the offset of a view is nested too deeply", false;
    if (name == scope.arg) return *out = 0, true;
    if (scope.loop_of.count(name)) {
        auto it = ivs.find(name);
        if (it != ivs.end()) return *out = it->second, true;
        need->insert(name);
        return *out = 0, true;
    }
    auto a = opt_.args.find(name);
    if (a != opt_.args.end()) {
        char *end = nullptr;
        long long v = std::strtoll(a->second.c_str(), &end, 0);
        if (a->second.empty() || *end) return *why = "argument %" + name + " is not an integer", false;
        return *out = v, true;
    }
    const Op *d = def_op(name);
    if (!d) return *why = "%" + name + " is not a constant, a tile id or a loop variable", false;
    if (d->name == "arith.constant" && d->value.kind == Attr::Int) return *out = d->value.i, true;
    if (d->name == "ktdp.get_compute_tile_id") {
        // Dimension 0 fastest, as tile_id() lowers it.
        std::vector<int64_t> grid = grid_.empty() ? std::vector<int64_t>{num_cores_} : grid_;
        size_t i = size_t(std::find(d->results.begin(), d->results.end(), name) - d->results.begin());
        int64_t inner = 1;
        for (size_t k = 0; k < i && k < grid.size(); k++) inner *= grid[k];
        *out = i < grid.size() ? core / inner % grid[i] : 0;
        return true;
    }
    if (d->name == "arith.index_cast" || d->name == "arith.index_castui")
        return offset_value(scope, d->operands[0], core, ivs, need, out, why, depth + 1);
    static const char *kBinary[] = {"arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.divui",
                                    "arith.remsi", "arith.remui", "arith.floordivsi", "arith.ceildivsi"};
    if (std::find(std::begin(kBinary), std::end(kBinary), d->name) != std::end(kBinary) && d->operands.size() == 2) {
        int64_t x, y;
        if (!offset_value(scope, d->operands[0], core, ivs, need, &x, why, depth + 1) ||
            !offset_value(scope, d->operands[1], core, ivs, need, &y, why, depth + 1))
            return false;
        if (d->name == "arith.addi") return *out = wrap_add(x, y), true;
        if (d->name == "arith.subi") return *out = wrap_add(x, wrap_mul(-1, y)), true;  // no -y: it may overflow
        if (d->name == "arith.muli") return *out = wrap_mul(x, y), true;
        if (y == 0) {
            if (!need->empty()) return *out = 0, true;  // a loop variable still to be bound
            return *why = "the offset of a view divides by zero", false;
        }
        if (y == -1) {  // INT64_MIN / -1 would trap
            if (d->name == "arith.remsi" || d->name == "arith.remui") return *out = 0, true;
            return *out = wrap_mul(-1, x), true;
        }
        if (d->name == "arith.remsi" || d->name == "arith.remui") return *out = x % y, true;
        int64_t q = x / y;
        if (d->name == "arith.floordivsi" && x % y != 0 && ((x < 0) != (y < 0))) q--;
        if (d->name == "arith.ceildivsi" && x % y != 0 && ((x < 0) == (y < 0))) q++;
        return *out = q, true;
    }
    return *why = "%" + name + " comes from " + d->name + ", which the importer does not evaluate", false;
}

bool Importer::infer_buffer_view(const std::string &arg, const std::vector<const Op *> &views, std::string *why) {
    std::map<std::string, const Op *> loop_of;  // induction variable -> its scf.for
    std::function<void(const Region &)> loops = [&](const Region &r) {
        for (const Op &op : r.ops) {
            if (op.name == "scf.for" && !op.regions.empty() && !op.regions[0].args.empty())
                loop_of[op.regions[0].args[0]] = &op;
            for (const Region &s : op.regions) loops(s);
        }
    };
    loops(f_.body);

    const OffsetScope scope{arg, loop_of};
    auto value = [&](const std::string &name, int64_t core, const std::map<std::string, int64_t> &ivs,
                     std::set<std::string> *need, int64_t *out, int depth) {
        return offset_value(scope, name, core, ivs, need, out, why, depth);
    };

    // Every view on `arg` must be the same but for its outermost size, dense, at a row boundary.
    for (const Op *v : views)
        for (int64_t s : v->sizes)
            if (s <= 0) return *why = "the view at line " + std::to_string(v->line) + " has a size of " + std::to_string(s), false;
    const Op &first = *views[0];
    int64_t row = 1;
    for (size_t i = 1; i < first.sizes.size(); i++) row = wrap_mul(row, first.sizes[i]);
    int64_t rows = 0;
    for (const Op *v : views) {
        if (v->sizes.size() != first.sizes.size() || v->strides != first.strides ||
            !std::equal(v->sizes.begin() + (v->sizes.empty() ? 0 : 1), v->sizes.end(),
                        first.sizes.begin() + (first.sizes.empty() ? 0 : 1)) ||
            v->result_types.empty() || first.result_types.empty() ||
            v->result_types[0].bits != first.result_types[0].bits || v->result_types[0].elem != first.result_types[0].elem)
            return *why = "its views (lines " + std::to_string(first.line) + " and " + std::to_string(v->line) +
                          ") differ in more than their outermost size",
                   false;
        if (v->sizes.empty() || v->strides != dense_strides(v->sizes))
            return *why = "the view at line " + std::to_string(v->line) + " is not dense and row-major", false;
        // Its offset for every tile, and every value of the loop variables it reads.
        std::vector<std::map<std::string, int64_t>> todo{{}};
        int64_t evaluations = 0;
        for (int64_t core = 0; core < num_cores_; core++) {
            todo.assign(1, {});
            while (!todo.empty()) {
                std::map<std::string, int64_t> ivs = todo.back();
                todo.pop_back();
                if (++evaluations > kMaxEvaluations)
                    return *why = "the offset of the view at line " + std::to_string(v->line) + " takes over " +
                                  std::to_string(kMaxEvaluations) + " values",
                           false;
                std::set<std::string> need;
                int64_t off;
                if (!value(v->operands[0], core, ivs, &need, &off, 0)) return false;
                if (!need.empty()) {  // bind the next loop variable over its range
                    const Op &loop = *loop_of.at(*need.begin());
                    int64_t lb, ub, step;
                    std::set<std::string> inner;
                    if (!value(loop.operands[0], core, ivs, &inner, &lb, 0) ||
                        !value(loop.operands[1], core, ivs, &inner, &ub, 0) ||
                        !value(loop.operands[2], core, ivs, &inner, &step, 0) || !inner.empty() || step <= 0)
                        return *why = "the bounds of the loop at line " + std::to_string(loop.line) +
                                      " around the view at line " + std::to_string(v->line) + " are not constant",
                               false;
                    if ((ub - lb) / step > kMaxEvaluations)
                        return *why = "the loop at line " + std::to_string(loop.line) + " runs too many iterations",
                               false;
                    for (int64_t i = lb; i < ub; i += step) {
                        std::map<std::string, int64_t> next = ivs;
                        next[*need.begin()] = i;
                        todo.push_back(next);
                    }
                    continue;
                }
                if (off < 0 || off % row != 0)
                    return *why = "the view at line " + std::to_string(v->line) + " starts at element " +
                                  std::to_string(off) + " for tile " + std::to_string(core) + ", not at a row of " +
                                  std::to_string(row) + " elements",
                           false;
                rows = std::max(rows, off / row + v->sizes[0]);
                if (rows > (int64_t(1) << 31))
                    return *why = "its views reach beyond 2^31 rows", false;
            }
        }
    }
    // The declaring view: the first one, grown to every row the views reach, at the argument.
    Op decl = first;
    decl.operands = {arg};
    decl.sizes[0] = rows;
    decl.strides = dense_strides(decl.sizes);
    decl.result_types[0].shape = decl.sizes;
    decl.attrs.erase("coordinate_set");
    inferred_views_.push_back(decl);
    arg_view_[arg] = &inferred_views_.back();
    return true;
}

}  // namespace spyre::ktir::lowering
