#include "prove_bounds.h"

#include <algorithm>
#include <set>

#include "device/error.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// An ImageParam's own Func (ImageParam::operator() calls it: "in_im"), defined as a read of the
// buffer: a read of it is a read of the input, charged to the Func that wrote it.
const Call *image_read(const Function &f) {
    if (!f.has_pure_definition() || !f.updates().empty() || f.values().size() != 1) return nullptr;
    const Call *c = f.values()[0].as<Call>();
    return c && c->call_type == Call::Image ? c : nullptr;
}

// Producers before consumers (Halide's realization order, up to ties).
void visit_order(const Function &f, std::set<std::string> &seen, std::vector<Function> &order) {
    if (!seen.insert(f.name()).second) return;
    for (const auto &kv : find_direct_calls(f))
        if (kv.first != f.name()) visit_order(kv.second, seen, order);
    order.push_back(f);
}

std::string range_text(int64_t lo, int64_t hi) { return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]"; }

class Prover {
public:
    Prover(const Function &output, const std::map<std::string, std::vector<int64_t>> &inputs,
           const std::vector<int64_t> &output_shape)
        : output_(output), inputs_(inputs) {
        std::set<std::string> seen;
        visit_order(output, seen, order_);
        std::map<std::string, Function> env;
        std::vector<std::string> names;
        for (const Function &f : order_) env[f.name()] = f, names.push_back(f.name());
        func_bounds_ = compute_function_value_bounds(names, env);
        Box out;
        for (int64_t e : output_shape) out.push_back(Interval(0, int(e - 1)));
        required_[output.name()] = out;
        // Boundary conditions and RDoms over a buffer read its bounds ("in.extent.0"): fixed here.
        auto fix = [&](const std::string &name, const std::vector<int64_t> &shape) {
            for (size_t d = 0; d < shape.size(); d++) {
                shape_vars_[name + ".min." + std::to_string(d)] = 0;
                shape_vars_[name + ".extent." + std::to_string(d)] = int(shape[d]);
            }
        };
        for (const auto &[name, shape] : inputs) fix(name, shape);
        fix(output.name(), output_shape);
    }

    void run() {
        for (auto it = order_.rbegin(); it != order_.rend(); ++it) visit_func(*it);
    }

private:
    void visit_func(const Function &f) {
        auto req = required_.find(f.name());
        if (req == required_.end() || f.has_extern_definition() || image_read(f)) return;
        Box region = req->second;
        if (int(region.size()) != f.dimensions()) return;
        // The updates first: what they write (and read of f itself) widens the region the pure
        // definition is computed over, as in Halide's bounds inference.
        for (size_t u = 0; u < f.updates().size(); u++) {
            const Definition &def = f.updates()[u];
            Scope<Interval> scope;
            for (int d = 0; d < f.dimensions(); d++) scope.push(f.args()[d], region[d]);
            for (const ReductionVariable &rv : def.schedule().rvars())
                scope.push(rv.var, Interval(fixed(rv.min), simplify(fixed(rv.min + rv.extent - 1))));
            Box written;
            for (size_t d = 0; d < def.args().size(); d++) {
                written.push_back(bounds_of_expr_in_scope(fixed(def.args()[d]), scope, func_bounds_));
                charge(f, boxes_required(fixed(def.args()[d]), scope, func_bounds_));
            }
            if (f.same_as(output_)) check_write(f, written);
            for (const Expr &v : def.values()) charge(f, boxes_required(fixed(v), scope, func_bounds_));
        }
        Scope<Interval> scope;
        for (int d = 0; d < f.dimensions(); d++) scope.push(f.args()[d], region[d]);
        for (const Expr &v : f.values()) charge(f, boxes_required(fixed(v), scope, func_bounds_));
    }

    // The regions `reader`'s definition requires: inputs are checked, Funcs' regions grow.
    void charge(const Function &reader, const std::map<std::string, Box> &boxes) {
        for (const auto &[name, box] : boxes) {
            if (name == reader.name()) continue;
            auto in = inputs_.find(name);
            if (in != inputs_.end()) {
                check_read(reader, name, in->second, box);
                continue;
            }
            auto callee = std::find_if(order_.begin(), order_.end(), [&](const Function &g) { return g.name() == name; });
            if (callee == order_.end()) continue;
            if (const Call *img = image_read(*callee)) {
                auto shape = inputs_.find(img->name);
                if (shape != inputs_.end()) check_read(reader, img->name, shape->second, box);
                continue;
            }
            auto r = required_.find(name);
            if (r == required_.end()) required_[name] = box;
            else merge_boxes(r->second, box);
        }
    }

    void check_read(const Function &reader, const std::string &input, const std::vector<int64_t> &shape,
                    const Box &box) {
        for (size_t d = 0; d < box.size() && d < shape.size(); d++) {
            const std::string what = "Func '" + reader.name() + "' reads input '" + input + "'";
            auto [lo, hi] = constant_range(box[d], what, d, shape[d]);
            if (lo >= 0 && hi < shape[d]) continue;
            throw_error(what, " over ", range_text(lo, hi), " in dimension ", d, ", outside its extent ",
                        range_text(0, shape[d] - 1), " (", shape[d],
                        " elements): the device has no data there. Add a boundary condition "
                        "(Halide::BoundaryConditions::repeat_edge, constant_exterior, mirror_image, ...) or shrink "
                        "the output so that every read stays inside '",
                        input, "'");
        }
    }

    void check_write(const Function &f, const Box &written) {
        const Box &out = required_[f.name()];
        for (size_t d = 0; d < written.size() && d < out.size(); d++) {
            const int64_t extent = *as_const_int(out[d].max) + 1;
            const std::string what = "the update of output Func '" + f.name() + "' writes";
            auto [lo, hi] = constant_range(written[d], what, d, extent);
            if (lo >= 0 && hi < extent) continue;
            throw_error(what, " over ", range_text(lo, hi), " in dimension ", d, ", outside the output's extent ",
                        range_text(0, extent - 1), ": bound the update's indices (clamp, or an RDom inside the "
                        "output)");
        }
    }

    std::pair<int64_t, int64_t> constant_range(const Interval &i, const std::string &what, size_t d, int64_t extent) {
        Expr lo = i.has_lower_bound() ? simplify(i.min) : Expr(), hi = i.has_upper_bound() ? simplify(i.max) : Expr();
        const int64_t *l = lo.defined() ? as_const_int(lo) : nullptr, *h = hi.defined() ? as_const_int(hi) : nullptr;
        if (l && h) return {*l, *h};
        throw_error(what, " in dimension ", d, " at an index the compiler cannot bound within ", range_text(0, extent - 1),
                    " (it depends on data or on a value not known at compile time): clamp the index "
                    "(clamp(i, 0, ", extent - 1, ")) or use a boundary condition");
    }

    // Every value the algorithm reads, with the buffers' fixed bounds in place.
    Expr fixed(const Expr &e) const { return substitute(shape_vars_, e); }

    std::map<std::string, Expr> shape_vars_;
    const Function &output_;
    const std::map<std::string, std::vector<int64_t>> &inputs_;
    std::vector<Function> order_;
    FuncValueBounds func_bounds_;
    std::map<std::string, Box> required_;
};

}  // namespace

void prove_bounds(const Function &output, const std::map<std::string, std::vector<int64_t>> &input_shapes,
                  const std::vector<int64_t> &output_shape) {
    Prover(output, input_shapes, output_shape).run();
}

}  // namespace spyre
