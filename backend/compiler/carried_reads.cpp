#include "carried_reads.h"

#include <cctype>
#include <cstdlib>
#include <vector>

#include "affine.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

struct OwnRead {
    Expr base;           // element index of the first (or only) element read
    bool placed = true;  // a unit-stride vector or a scalar, not shifted
    bool scalar = false;
};

std::vector<OwnRead> own_reads(const Store *st) {
    class V : public IRVisitor {
    public:
        std::string name;
        std::vector<OwnRead> reads;
        using IRVisitor::visit;
        void visit(const Call *op) override {
            if (auto s = as_shift(Expr(op))) {
                if (const Load *home = s->home.as<Load>(); home && home->name == name) reads.push_back({home->index, false});
            }
            IRVisitor::visit(op);
        }
        void visit(const Load *op) override {
            if (op->name == name) {
                if (const Ramp *r = op->index.as<Ramp>()) reads.push_back({r->base, is_const_one(r->stride)});
                else reads.push_back({op->index, true, true});
            }
            IRVisitor::visit(op);
        }
    } v;
    v.name = st->name;
    st->value.accept(&v);
    return v.reads;
}

}  // namespace

bool step_reads_only_own_elements(const Store *st, const std::set<std::string> &merged, int64_t span) {
    const Ramp *sr = st->index.as<Ramp>();
    const Expr store_base = sr ? sr->base : st->index;
    for (const OwnRead &r : own_reads(st)) {
        if (!r.placed) return false;
        // A scalar read under a vector store is one element for all lanes: only a step of the one
        // vector Halide wrote (which reads before it writes, as Halide's vector does) is safe.
        if (r.scalar && sr) {
            if (!merged.empty()) return false;
            continue;
        }
        Expr d = simplify(r.base - store_base);
        if (mentions(d, merged)) return false;  // moves otherwise than the store
        auto c = const_int(d);
        if (!c) return false;
        if (*c != 0 && std::llabs(*c) < span) return false;  // reads what the step writes
    }
    return true;
}

bool reads_buffer(const Expr &e, const std::string &name) {
    class V : public IRVisitor {
    public:
        std::string name;
        bool found = false;
        using IRVisitor::visit;
        void visit(const Load *op) override {
            found |= op->name == name;
            IRVisitor::visit(op);
        }
    } v;
    v.name = name;
    e.accept(&v);
    return v.found;
}

std::string user_loop_name(const std::string &loop) {
    std::string n = loop;
    // "<func>.s<k>." prefix: the stage's own loop names follow it.
    for (size_t at = n.find(".s"); at != std::string::npos; at = n.find(".s", at + 1)) {
        size_t e = at + 2;
        while (e < n.size() && std::isdigit((unsigned char)n[e])) e++;
        if (e > at + 2 && e < n.size() && n[e] == '.') {
            n = n.substr(e + 1);
            break;
        }
    }
    const std::string rebased = ".rebased";  // Halide's loop over an RDom that does not start at 0
    if (n.size() > rebased.size() && n.compare(n.size() - rebased.size(), rebased.size(), rebased) == 0)
        n.resize(n.size() - rebased.size());
    for (char &ch : n)
        if (ch == '$') ch = '.';
    return n;
}

}  // namespace spyre
