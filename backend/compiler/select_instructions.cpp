#include "select_instructions.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <sstream>

#include "affine.h"
#include "device/error.h"
#include "device/program_builder.h"
#include "map_cores.h"
#include "plan_pipelines.h"
#include "spyre_intrinsics.h"

namespace spyre {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// Tags: the general policy uses one tag per engine queue; pipelined loops own 0/1 (loads by
// parity) and 3/4 (stores by parity).
constexpr int kTagLoad = 5, kTagStore = 6, kTagVec = 2, kTagPE = 8;
constexpr int kTagForward = 9;  // ring forwards of shared tiles: 9 and 10, by iteration parity
enum Queue { QVec, QLoad, QStore, QPE, QRing };

struct Pending {
    int tag;
    Queue queue;
    std::set<std::string> reads, writes;
};

// A value the vector unit can use: a run of sticks per group (Vec) or one element per group / one
// element for all groups (Scal). Addresses stay symbolic until an instruction needs them.
struct Operand {
    enum Kind { Vec, Scal } kind = Vec;
    DType type = DType::F16;
    std::string buf;   // the LX buffer, for hazards ("" for temporaries)
    int32_t base = 0;  // LX byte offset of the buffer (or temporary)
    Expr index;        // element index of element 0 within the buffer
    bool per_group = false;
    int temp = -1;     // temporary slot, or -1
};

// Where the elements of one instruction's groups come from.
struct Domain {
    int ramp_lanes = 0;                                 // > 0: Halide vector expressions
    std::vector<std::pair<std::string, int64_t>> lane;  // loop vars merged into a group, with expected coeff
    std::string group_var;
    int64_t groups = 1;
    int64_t elems = 1;  // elements per group
    bool padded = false;  // element mode: groups are padded to whole sticks
    std::map<std::string, Expr> zero;
    std::set<std::string> vars() const {
        std::set<std::string> v;
        for (auto &l : lane) v.insert(l.first);
        if (!group_var.empty()) v.insert(group_var);
        return v;
    }
};

DType dtype_of(Type t) {
    t = t.element_of();
    if (t == Float(16)) return DType::F16;
    if (t == Float(32)) return DType::F32;
    if (t == Int(32)) return DType::I32;
    throw_error("type ", t, " has no Spyre vector form");
}


class Selector {
public:
    Selector(KernelPlan &p, ProgramBuilder &b) : plan_(p), b_(b), sb_(p.machine.stick_bytes) {
        temp_base_ = int32_t((plan_.lx_peak_bytes + sb_ - 1) / sb_ * sb_);
    }

    void run(const Stmt &s) {
        if (uses_core_id(s)) {
            Reg r = b_.alloc();
            b_.core_id(r);
            vars_[kCoreIdVar] = r;
        }
        emit(s);
        drain();
        int64_t peak = temp_base_ + temp_peak_;
        plan_.lx_peak_bytes = std::max<int64_t>(plan_.lx_peak_bytes, peak);
        if (peak > plan_.machine.lx_usable_bytes)
            throw_error("kernel ", plan_.kernel_name, ": LX overflow: buffers need ", temp_base_,
                        " bytes and expression temporaries ", temp_peak_, " more, the usable LX is ",
                        plan_.machine.lx_usable_bytes, " bytes; tile the Funcs (split) so that each step is smaller");
    }

private:
    // ---------------------------------------------------------------- scalar code
    static bool uses_core_id(const Stmt &s) { return stmt_uses_var(s, kCoreIdVar); }

    Reg eval(const Expr &e0) {
        Expr e = simplify(e0);
        if (auto c = const_int(e)) {
            Reg r = b_.alloc();
            b_.li(r, *c);
            return r;
        }
        if (const Variable *v = e.as<Variable>()) {
            auto it = vars_.find(v->name);
            if (it == vars_.end())
                throw_error("kernel ", plan_.kernel_name, ": the device code needs '", v->name,
                            "', which is not known at compile time (buffer metadata or a parameter); shapes and "
                            "parameters must be fixed when compiling for Spyre");
            Reg r = b_.alloc();
            b_.mov(r, it->second);
            return r;
        }
        auto bin = [&](Expr a, Expr bb, Opcode op) {
            Reg ra = eval(a);
            auto cb = const_int(bb);
            if (cb && *cb >= INT32_MIN && *cb <= INT32_MAX && (op == Opcode::ADD || op == Opcode::MUL)) {
                if (op == Opcode::ADD) b_.addi(ra, ra, int32_t(*cb));
                else b_.muli(ra, ra, int32_t(*cb));
                return ra;
            }
            Reg rb = eval(bb);
            b_.op3(op, ra, ra, rb);
            b_.release(rb);
            return ra;
        };
        if (const Add *op = e.as<Add>()) return bin(op->a, op->b, Opcode::ADD);
        if (const Sub *op = e.as<Sub>()) {
            if (auto cb = const_int(op->b)) return bin(op->a, Expr(int32_t(-*cb)), Opcode::ADD);
            return bin(op->a, op->b, Opcode::SUB);
        }
        if (const Mul *op = e.as<Mul>()) return bin(op->a, op->b, Opcode::MUL);
        if (const Div *op = e.as<Div>()) return bin(op->a, op->b, Opcode::DIV);
        if (const Mod *op = e.as<Mod>()) return bin(op->a, op->b, Opcode::REM);
        if (const Min *op = e.as<Min>()) return bin(op->a, op->b, Opcode::MIN);
        if (const Max *op = e.as<Max>()) return bin(op->a, op->b, Opcode::MAX);
        if (const LT *op = e.as<LT>()) return bin(op->a, op->b, Opcode::CMPLT);
        if (const GT *op = e.as<GT>()) return bin(op->b, op->a, Opcode::CMPLT);
        if (const LE *op = e.as<LE>()) return bin(op->a, op->b + 1, Opcode::CMPLT);
        if (const GE *op = e.as<GE>()) return bin(op->b, op->a + 1, Opcode::CMPLT);
        if (const EQ *op = e.as<EQ>()) return bin(op->a, op->b, Opcode::CMPEQ);
        if (const NE *op = e.as<NE>()) {
            Reg r = bin(op->a, op->b, Opcode::CMPEQ);
            Reg z = b_.alloc();
            b_.li(z, 0);
            b_.op3(Opcode::CMPEQ, r, r, z);
            b_.release(z);
            return r;
        }
        if (const And *op = e.as<And>()) return bin(op->a, op->b, Opcode::MIN);
        if (const Or *op = e.as<Or>()) return bin(op->a, op->b, Opcode::MAX);
        if (const Not *op = e.as<Not>()) {
            Reg r = eval(op->a);
            Reg z = b_.alloc();
            b_.li(z, 0);
            b_.op3(Opcode::CMPEQ, r, r, z);
            b_.release(z);
            return r;
        }
        if (const Select *op = e.as<Select>()) {
            Reg c = eval(op->condition), t = eval(op->true_value), f = eval(op->false_value);
            b_.emit(Instr{Opcode::SEL, 0, 0, {c.id, c.id, t.id, f.id}});
            b_.release(t);
            b_.release(f);
            return c;
        }
        if (const Cast *op = e.as<Cast>(); op && op->type.is_int_or_uint()) return eval(op->value);
        throw_error("kernel ", plan_.kernel_name, ": index expression ", e, " has no scalar form on Spyre");
    }

    // ---------------------------------------------------------------- hazards
    void before(Queue q, const std::set<std::string> &reads, const std::set<std::string> &writes) {
        uint32_t mask = 0;
        for (const Pending &p : pending_) {
            if (p.queue == q) continue;
            bool hit = false;
            for (const std::string &w : p.writes) hit |= reads.count(w) || writes.count(w);
            for (const std::string &r : p.reads) hit |= writes.count(r) != 0;
            if (hit) mask |= 1u << p.tag;
        }
        wait(mask);
    }
    void after(int tag, Queue q, std::set<std::string> reads, std::set<std::string> writes) {
        pending_.push_back(Pending{tag, q, std::move(reads), std::move(writes)});
    }
    void wait(uint32_t mask) {
        if (!mask) return;
        b_.wait(mask);
        pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                      [&](const Pending &p) { return (mask >> p.tag) & 1u; }),
                       pending_.end());
    }
    void drain() {
        uint32_t mask = 0;
        for (const Pending &p : pending_) mask |= 1u << p.tag;
        wait(mask);
    }
    void release_buffer(const std::string &name) {
        uint32_t mask = 0;
        for (const Pending &p : pending_)
            if (p.reads.count(name) || p.writes.count(name)) mask |= 1u << p.tag;
        wait(mask);
    }

    // ---------------------------------------------------------------- LX addresses
    int32_t lx_base(const std::string &name) {
        const BufferInfo &bi = plan_.buffer(name);
        if (bi.place != Place::LX) throw_error("kernel ", plan_.kernel_name, ": internal: ", name, " is not in LX");
        int32_t off = bi.lx_offset;
        auto it = parity_.find(name);
        if (it != parity_.end() && it->second) off += int32_t((bi.bytes() + sb_ - 1) / sb_ * sb_);
        return off;
    }
    // Materialises an operand's address; registers it needs are appended to `regs`.
    Lx addr(const Operand &o, std::vector<Reg> &regs) {
        Expr bytes = simplify(o.index * dtype_bytes(o.type));
        if (auto c = const_int(bytes)) return Lx(int32_t(o.base + *c));
        Reg r = eval(bytes);
        regs.push_back(r);
        return Lx(r, o.base);
    }

    // ---------------------------------------------------------------- temporaries
    int64_t sticks_per_group(const Domain &d, DType t) const {
        int64_t bytes = d.elems * dtype_bytes(t);
        return (bytes + sb_ - 1) / sb_;
    }
    Operand new_temp(DType t, int64_t bytes) {
        bytes = (bytes + sb_ - 1) / sb_ * sb_;
        // First fit among free slots, else a new slot on top.
        for (size_t i = 0; i < temps_.size(); i++) {
            if (!temps_[i].used && temps_[i].bytes >= bytes) {
                temps_[i].used = true;
                return temp_operand(int(i), t);
            }
        }
        int64_t top = temps_.empty() ? 0 : temps_.back().offset + temps_.back().bytes;
        temps_.push_back(TempSlot{top, bytes, true});
        temp_peak_ = std::max(temp_peak_, top + bytes);
        return temp_operand(int(temps_.size()) - 1, t);
    }
    Operand temp_operand(int slot, DType t) {
        Operand o;
        o.kind = Operand::Vec;
        o.type = t;
        o.buf = "$temp";  // tracked like a buffer: the PE array reads restickified operands from it
        o.base = int32_t(temp_base_ + temps_[slot].offset);
        o.index = Expr(0);
        o.temp = slot;
        return o;
    }
    void free_temp(const Operand &o) {
        if (o.temp >= 0) temps_[o.temp].used = false;
    }

    // ---------------------------------------------------------------- vector instructions
    void vinstr(Opcode op, DType t, const Operand &dst, const Operand *a, const Operand *b2, int64_t sticks,
                int64_t groups, uint8_t mode = 0, int32_t aux = 0) {
        std::set<std::string> reads, writes;
        for (const Operand *o : {a, b2})
            if (o && !o->buf.empty()) reads.insert(o->buf);
        if (!dst.buf.empty()) writes.insert(dst.buf);
        if (mode & kAccumulate) reads.insert(dst.buf);
        before(QVec, reads, writes);
        if (sticks > INT32_MAX || groups > INT32_MAX)
            throw_error("kernel ", plan_.kernel_name, ": a vector step of ", sticks, " x ", groups, " sticks is too large");
        std::vector<Reg> regs;
        Lx ld = addr(dst, regs);
        Lx la = a ? addr(*a, regs) : Lx();
        Lx lb = b2 ? addr(*b2, regs) : Lx();
        Instr in;
        in.op = op;
        in.dtype = uint8_t(t);
        in.mode = mode;
        in.a = {kTagVec, ld.reg.id, ld.off, la.reg.id, la.off, lb.reg.id, lb.off, int32_t(sticks), int32_t(groups), aux};
        b_.emit(in);
        for (Reg r : regs) b_.release(r);
        after(kTagVec, QVec, reads, writes);
    }

    // ---------------------------------------------------------------- expressions
    [[noreturn]] void unsupported(const std::string &what) const {
        throw_error("Func ", func_, ": ", what);
    }

    // Classifies a load in domain d.
    Operand load(const Load *op, const Domain &d) {
        if (!plan_.has(op->name)) unsupported("reads " + op->name + ", which is not a buffer of the kernel");
        const BufferInfo &bi = plan_.buffer(op->name);
        if (bi.place != Place::LX) unsupported("internal: " + op->name + " was not staged into LX");
        Operand o;
        o.type = bi.type;
        o.buf = op->name;
        o.base = lx_base(op->name);
        Expr base = op->index;
        bool ramp = false;
        if (const Ramp *r = op->index.as<Ramp>()) {
            if (!is_const_one(r->stride)) unsupported("reads " + bi.func + " with a strided vector");
            base = r->base;
            ramp = true;
            if (r->lanes != d.ramp_lanes) unsupported("mixes vectors of different widths");
        }
        std::set<std::string> vars = d.vars();
        auto a = affine_in(base, vars);
        if (!a) unsupported("index of " + bi.func + " is not affine in its loops");
        int64_t lanes_t = plan_.lanes(bi.type);
        bool lane_dep = false;
        for (auto &l : d.lane) lane_dep |= a->of(l.first) != 0;
        if (ramp || lane_dep) {
            for (auto &l : d.lane)
                if (a->of(l.first) != l.second)
                    unsupported("reads " + bi.func + " out of stick order along " + l.first +
                                " (stick_vectorize the dimension of stride 1 and keep rows contiguous)");
            if (d.ramp_lanes == 0 && d.lane.empty()) unsupported("internal: vector load without lanes");
            if (!d.group_var.empty()) {
                int64_t want = d.padded ? sticks_per_group(d, bi.type) * lanes_t : d.elems;
                if (a->of(d.group_var) != want)
                    unsupported("rows of " + bi.func + " are not back to back in whole sticks (row stride " +
                                std::to_string(a->of(d.group_var)) + ", expected " + std::to_string(want) + ")");
            }
            o.kind = Operand::Vec;
            o.index = simplify(a->rest);
            if (!provably_multiple(o.index, lanes_t)) {
                // The usual cause: a Func with wider elements (an fp32 accumulator) vectorized by its
                // own stick, which covers part of a stick of its narrower input.
                std::string hint;
                if (d.ramp_lanes > 0 && d.ramp_lanes % lanes_t != 0)
                    hint = ": its vectors are " + std::to_string(d.ramp_lanes) + " elements and a stick of " +
                           bi.func + " holds " + std::to_string(lanes_t) + "; stick_vectorize(x, " +
                           std::to_string(lanes_t / std::max<int64_t>(d.ramp_lanes, 1)) +
                           ") on this Func makes each vector a whole stick of " + bi.func;
                unsupported("reads " + bi.func + " from an address that is not on a stick boundary" + hint);
            }
            return o;
        }
        o.kind = Operand::Scal;
        o.index = simplify(a->rest);
        int64_t cg = d.group_var.empty() ? 0 : a->of(d.group_var);
        if (cg != 0 && cg != 1) unsupported("reads one value of " + bi.func + " per row, but not consecutive values");
        o.per_group = cg == 1;
        return o;
    }

    bool is_scalar_like(const Expr &e, const Domain &d) {
        if (e.type().is_vector()) {
            if (e.as<Broadcast>()) return true;
            if (e.as<Load>()) return false;
        }
        if (const Load *l = e.as<Load>()) {
            if (l->index.type().is_vector()) return false;
            auto a = affine_in(l->index, d.vars());
            if (!a) return false;
            for (auto &lv : d.lane)
                if (a->of(lv.first)) return false;
            return true;
        }
        if (e.as<FloatImm>() || e.as<IntImm>()) return true;
        bool all = true;
        int children = 0;
        auto check = [&](const Expr &c) {
            children++;
            all = all && is_scalar_like(c, d);
        };
        if (const Cast *op = e.as<Cast>()) check(op->value);
        else if (const Call *op = e.as<Call>()) {
            for (const Expr &a : op->args) check(a);
        } else if (const Add *op = e.as<Add>()) check(op->a), check(op->b);
        else if (const Sub *op = e.as<Sub>()) check(op->a), check(op->b);
        else if (const Mul *op = e.as<Mul>()) check(op->a), check(op->b);
        else if (const Div *op = e.as<Div>()) check(op->a), check(op->b);
        else if (const Min *op = e.as<Min>()) check(op->a), check(op->b);
        else if (const Max *op = e.as<Max>()) check(op->a), check(op->b);
        else return false;
        return all && children > 0;
    }

    // A scalar-valued subexpression, evaluated for every group at once as a vector over the groups.
    Operand scalar_value(const Expr &e0, const Domain &d) {
        Expr e = e0;
        if (const Broadcast *bc = e.as<Broadcast>()) e = bc->value;
        if (const Load *l = e.as<Load>()) return load(l, d);
        Domain g;
        // Whole fp16 sticks, so that conversions between fp16 and fp32 give whole sticks too; the
        // elements past the last group are computed but never used.
        g.elems = (d.groups + sb_ / 2 - 1) / (sb_ / 2) * (sb_ / 2);
        g.padded = true;
        if (!d.group_var.empty()) g.lane.push_back({d.group_var, 1});
        for (auto &l : d.lane) g.zero[l.first] = Expr(0);
        Expr body = substitute(g.zero, e);
        Operand v = gen(body, g, nullptr);
        if (v.kind == Operand::Scal) {  // no dependence on the groups: spread it
            Operand t = new_temp(v.type, std::max<int64_t>(1, sticks_per_group(g, v.type)) * sb_);
            vinstr(Opcode::VBCAST, v.type, t, &v, nullptr, sticks_per_group(g, v.type), 1);
            free_temp(v);
            v = t;
        }
        v.kind = Operand::Scal;
        v.per_group = !d.group_var.empty();
        return v;
    }

    // Per-group scalar array (or a uniform one when there is a single group) usable as src1.
    Operand as_src1(Operand s, const Domain &d) {
        if (s.kind != Operand::Scal || s.per_group || d.groups == 1) return s;
        Domain g;
        g.elems = d.groups;
        Operand t = new_temp(s.type, sticks_per_group(g, s.type) * sb_);
        vinstr(Opcode::VBCAST, s.type, t, &s, nullptr, sticks_per_group(g, s.type), 1);
        t.kind = Operand::Scal;
        t.per_group = true;
        return t;
    }

    Operand constant(double v, DType t, const Domain &d) {
        Domain g;
        g.elems = d.groups;
        int64_t sticks = std::max<int64_t>(1, sticks_per_group(g, t));
        Operand o = new_temp(t, sticks * sb_);
        float f = float(v);
        int32_t bits;
        std::memcpy(&bits, &f, 4);
        vinstr(Opcode::VFILL, t, o, nullptr, nullptr, sticks, 1, 0, bits);
        o.kind = Operand::Scal;
        o.per_group = d.groups > 1;
        return o;
    }

    Operand result_for(const Domain &d, DType t, const Operand *into, std::initializer_list<const Operand *> reuse) {
        if (into) return *into;
        for (const Operand *r : reuse)
            if (r && r->temp >= 0 && r->type == t && r->kind == Operand::Vec &&
                temps_[r->temp].bytes >= sticks_per_group(d, t) * d.groups * sb_)
                return *r;
        return new_temp(t, sticks_per_group(d, t) * d.groups * sb_);
    }

    // Emits the vector code of e in domain d; writes the result into `into` when given.
    Operand gen(const Expr &e, const Domain &d, const Operand *into) {
        DType t = dtype_of(e.type());
        int64_t sticks = sticks_per_group(d, t);
        // In a one-element domain (no lanes, no groups) every value is scalar-like: compute it
        // directly on one stick instead of re-entering scalar evaluation.
        bool single = d.lane.empty() && d.group_var.empty() && d.ramp_lanes == 0;
        if (!single && is_scalar_like(e, d)) {
            Operand s;
            if (const FloatImm *f = e.as<FloatImm>()) s = constant(f->value, t, d);
            else if (const Broadcast *bc = e.as<Broadcast>(); bc && bc->value.as<FloatImm>())
                s = constant(bc->value.as<FloatImm>()->value, t, d);
            else s = scalar_value(e, d);
            if (!into) return s;
            s = as_src1(s, d);
            vinstr(Opcode::VBCAST, t, *into, &s, nullptr, sticks, d.groups);
            free_temp(s);
            return *into;
        }
        if (single) {
            const FloatImm *f = e.as<FloatImm>();
            if (const Broadcast *bc = e.as<Broadcast>()) f = bc->value.as<FloatImm>();
            if (f) {
                Operand c = constant(f->value, t, d);
                if (!into) return c;
                vinstr(Opcode::VBCAST, t, *into, &c, nullptr, sticks, d.groups);
                free_temp(c);
                return *into;
            }
        }
        if (const Load *l = e.as<Load>()) {
            Operand o = load(l, d);
            if (!into) return o;
            vinstr(o.kind == Operand::Scal ? Opcode::VBCAST : Opcode::VCOPY, t, *into, &o, nullptr, sticks, d.groups);
            return *into;
        }
        if (const Cast *c = e.as<Cast>()) {
            Operand a = to_vec(gen(c->value, d, nullptr), d);
            DType from = a.type;
            if (from == t) return a;
            int64_t src_sticks = sticks_per_group(d, from);
            int64_t ratio_num = dtype_bytes(t), ratio_den = dtype_bytes(from);
            if (d.groups == 1 && (src_sticks * ratio_num) % ratio_den) {
                // A narrowing of a part stick: convert a padded copy so that both sides are whole sticks.
                int64_t padded = (src_sticks + ratio_den / ratio_num - 1) / (ratio_den / ratio_num) * (ratio_den / ratio_num);
                Operand p = new_temp(from, padded * sb_);
                vinstr(Opcode::VCOPY, from, p, &a, nullptr, src_sticks, 1);
                free_temp(a);
                a = p;
                src_sticks = padded;
            }
            Operand r = result_for(d, t, into, {});
            vinstr(Opcode::VCVT, from, r, &a, nullptr, src_sticks, d.groups, 0, int32_t(t));
            free_temp(a);
            return r;
        }
        auto unary = [&](Opcode op, const Expr &x) {
            Operand a = to_vec(gen(x, d, nullptr), d);
            Operand r = result_for(d, t, into, {&a});
            vinstr(op, t, r, &a, nullptr, sticks, d.groups);
            if (r.temp != a.temp) free_temp(a);
            return r;
        };
        if (const Call *c = e.as<Call>()) {
            std::string n = c->name;
            auto is = [&](const char *base) { return n == std::string(base) + "_f16" || n == std::string(base) + "_f32"; };
            if (is("exp")) return unary(Opcode::VEXP, c->args[0]);
            if (is("log")) return unary(Opcode::VLOG, c->args[0]);
            if (is("tanh")) return unary(Opcode::VTANH, c->args[0]);
            if (is("sqrt")) return unary(Opcode::VSQRT, c->args[0]);
            if (c->is_intrinsic(Call::abs)) return unary(Opcode::VABS, c->args[0]);
            unsupported("the operation " + n + " has no Spyre vector instruction");
        }
        auto binary = [&](Opcode op, const Expr &x, const Expr &y, bool commutative) {
            bool xs = is_scalar_like(x, d), ys = is_scalar_like(y, d);
            if (xs && commutative) return binary_ops(op, y, x, d, into, t, sticks);
            if (xs) {
                // scalar op vector: spread the scalar over the vector first.
                Operand s = gen(x, d, nullptr);
                s = as_src1(s, d);
                Operand v = new_temp(t, sticks * d.groups * sb_);
                vinstr(Opcode::VBCAST, t, v, &s, nullptr, sticks, d.groups);
                free_temp(s);
                Operand b2 = gen(y, d, nullptr);
                Operand r = result_for(d, t, into, {&v, &b2});
                uint8_t mode = b2.kind == Operand::Scal ? kSrc1Scalar : 0;
                if (mode) b2 = as_src1(b2, d);
                vinstr(op, t, r, &v, &b2, sticks, d.groups, mode);
                if (r.temp != v.temp) free_temp(v);
                if (r.temp != b2.temp) free_temp(b2);
                return r;
            }
            (void)ys;
            return binary_ops(op, x, y, d, into, t, sticks);
        };
        if (const Add *op = e.as<Add>()) return binary(Opcode::VADD, op->a, op->b, true);
        if (const Mul *op = e.as<Mul>()) return binary(Opcode::VMUL, op->a, op->b, true);
        if (const Min *op = e.as<Min>()) return binary(Opcode::VMIN, op->a, op->b, true);
        if (const Max *op = e.as<Max>()) return binary(Opcode::VMAX, op->a, op->b, true);
        if (const Div *op = e.as<Div>()) return binary(Opcode::VDIV, op->a, op->b, false);
        if (const Sub *op = e.as<Sub>()) {
            Expr z = op->a;
            if (const Broadcast *bc = z.as<Broadcast>()) z = bc->value;
            if (is_const_zero(z)) return unary(Opcode::VNEG, op->b);
            return binary(Opcode::VSUB, op->a, op->b, false);
        }
        unsupported("the expression " + describe(e) + " has no Spyre vector form");
    }

    // A scalar operand spread over a whole vector, for positions that need sticks.
    Operand to_vec(Operand s, const Domain &d) {
        if (s.kind == Operand::Vec) return s;
        s = as_src1(s, d);
        Operand v = new_temp(s.type, sticks_per_group(d, s.type) * d.groups * sb_);
        vinstr(Opcode::VBCAST, s.type, v, &s, nullptr, sticks_per_group(d, s.type), d.groups);
        free_temp(s);
        return v;
    }

    Operand binary_ops(Opcode op, const Expr &x, const Expr &y, const Domain &d, const Operand *into, DType t,
                       int64_t sticks) {
        Operand a = to_vec(gen(x, d, nullptr), d);
        Operand b2 = gen(y, d, nullptr);
        uint8_t mode = 0;
        if (b2.kind == Operand::Scal) {
            b2 = as_src1(b2, d);
            mode = kSrc1Scalar;
        }
        Operand r = result_for(d, t, into, {&a, &b2});
        vinstr(op, t, r, &a, &b2, sticks, d.groups, mode);
        if (r.temp != a.temp) free_temp(a);
        if (r.temp != b2.temp) free_temp(b2);
        return r;
    }

    static std::string describe(const Expr &e) {
        std::ostringstream os;
        os << e;
        std::string s = os.str();
        return s.size() > 120 ? s.substr(0, 117) + "..." : s;
    }

    // ---------------------------------------------------------------- loop nests
    struct Loop {
        std::string name;
        int64_t extent;
    };

    void emit_loops(const std::vector<Loop> &loops, size_t n, const std::function<void()> &inner) {
        if (n == 0) return inner();
        std::vector<Reg> regs;
        for (size_t i = 0; i < n; i++) {
            Reg r = b_.alloc();
            regs.push_back(r);
            b_.loop(r, int32_t(loops[i].extent));
            vars_[loops[i].name] = r;
            extents_[loops[i].name] = loops[i].extent;
        }
        inner();
        for (size_t i = n; i-- > 0;) {
            // Every iteration leaves nothing in flight: the next one may reuse any buffer, and the
            // device keeps no unbounded list of unwaited operations.
            drain();
            b_.end_loop();
            vars_.erase(loops[i].name);
            b_.release(regs[i]);
        }
    }

    // A Store at the bottom of `loops`: one of the three vector forms.
    void emit_nest(const std::vector<Loop> &loops, const Store *st) {
        func_ = plan_.has(st->name) ? plan_.buffer(st->name).func : st->name;
        if (!plan_.has(st->name) || plan_.buffer(st->name).place != Place::LX)
            unsupported("internal: store to " + st->name + " was not staged into LX");
        if (!is_const_one(st->predicate)) unsupported("predicated stores have no Spyre form");
        if (!loops.empty() && ends_with(loops.back().name, kPeLoopSuffix)) return emit_matmul(loops, st);
        if (st->index.type().is_vector()) return emit_vector_store(loops, st);
        // A reduction needs a reduction loop: an innermost loop the destination does not move with.
        bool has_reduction_loop = false;
        if (!loops.empty()) {
            auto a = affine_in(st->index, var_set(loops));
            has_reduction_loop = a && a->of(loops.back().name) == 0;
        }
        if (auto red = reduction_of(st); red && has_reduction_loop) return emit_reduction(loops, st, *red);
        emit_element_store(loops, st);
    }

    std::set<std::string> var_set(const std::vector<Loop> &loops) {
        std::set<std::string> s;
        for (const Loop &l : loops) s.insert(l.name);
        return s;
    }

    struct AccessCoeffs {
        std::vector<std::pair<Expr, bool>> vec, scal;  // index bases
    };
    void collect(const Expr &e, bool under_broadcast, AccessCoeffs &out) {
        class V : public IRVisitor {
        public:
            AccessCoeffs *out;
            int bc = 0;
            using IRVisitor::visit;
            void visit(const Broadcast *op) override {
                bc++;
                IRVisitor::visit(op);
                bc--;
            }
            void visit(const Load *op) override {
                if (const Ramp *r = op->index.as<Ramp>()) out->vec.push_back({r->base, true});
                else out->scal.push_back({op->index, bc > 0});
                IRVisitor::visit(op);
            }
        } v;
        v.out = &out;
        v.bc = under_broadcast;
        e.accept(&v);
    }

    void emit_vector_store(const std::vector<Loop> &loops, const Store *st) {
        const Ramp *r = st->index.as<Ramp>();
        if (!r || !is_const_one(r->stride)) unsupported("stores a strided vector");
        const BufferInfo &dst = plan_.buffer(st->name);
        AccessCoeffs acc;
        acc.vec.push_back({r->base, true});
        collect(st->value, false, acc);
        std::set<std::string> all = var_set(loops);
        auto coeff = [&](const Expr &idx, const std::string &v) {
            auto a = affine_in(idx, all);
            return a ? a->of(v) : INT64_MIN;
        };
        Domain d;
        d.ramp_lanes = r->lanes;
        d.elems = r->lanes;
        size_t k = loops.size();
        // Merge loops, innermost first, while every vector access continues contiguously and no
        // per-element scalar depends on them.
        while (k > 0) {
            const Loop &l = loops[k - 1];
            bool ok = true;
            for (auto &a : acc.vec) ok &= coeff(a.first, l.name) == d.elems;
            for (auto &s : acc.scal) ok &= coeff(s.first, l.name) == 0;
            if (!ok) break;
            d.lane.push_back({l.name, d.elems});
            d.elems *= l.extent;
            k--;
        }
        if (k > 0) {
            const Loop &l = loops[k - 1];
            bool ok = true;
            for (auto &a : acc.vec) ok &= coeff(a.first, l.name) == d.elems;
            for (auto &s : acc.scal) {
                int64_t c = coeff(s.first, l.name);
                ok &= c == 0 || c == 1;
            }
            if (ok) {
                d.group_var = l.name;
                d.groups = l.extent;
                k--;
            }
        }
        DType t = dst.type;
        if ((d.elems * dtype_bytes(t)) % sb_)
            unsupported("vectors of " + std::to_string(d.elems) + " elements are not whole sticks; stick_vectorize it");
        emit_loops(loops, k, [&] {
            Operand o;
            o.kind = Operand::Vec;
            o.type = t;
            o.buf = st->name;
            o.base = lx_base(st->name);
            auto a = affine_in(r->base, d.vars());
            o.index = simplify(a->rest);
            if (!provably_multiple(o.index, plan_.lanes(t)))
                unsupported("stores to an address that is not on a stick boundary");
            gen(st->value, d, &o);
            reset_temps();
        });
    }

    static bool ends_with(const std::string &s, const std::string &suffix) {
        return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
    }

    // C[n + ldc*m] += f32(A[k + lda*m]) * f32(B[n + ldb*k]) over loops (..., m, n, k_pe) in any order of
    // m and n: one MATMUL per iteration of the loops outside them.
    void emit_matmul(const std::vector<Loop> &loops, const Store *st) {
        const std::string &kname = loops.back().name;
        auto fail = [&](const std::string &why) {
            unsupported("pe_matmul: " + why + " (the update must be f(n, m) += f32(A(k, m)) * f32(B(n, k)))");
        };
        const BufferInfo &cb = plan_.buffer(st->name);
        if (cb.type != DType::F32) fail("the accumulator must be float32");
        const Add *add = st->value.as<Add>();
        if (!add) fail("not an accumulation");
        Expr acc = add->a, prod = add->b;
        if (!(acc.as<Load>() && acc.as<Load>()->name == st->name)) std::swap(acc, prod);
        const Load *cl = acc.as<Load>();
        const Mul *mul = prod.as<Mul>();
        if (!cl || cl->name != st->name || !equal(cl->index, st->index) || !mul) fail("not an accumulation of a product");
        auto operand = [&](const Expr &e) -> const Load * {
            const Cast *c = e.as<Cast>();
            const Load *l = c ? c->value.as<Load>() : e.as<Load>();
            if (!l || l->type.is_vector() || !plan_.has(l->name) || plan_.buffer(l->name).type != DType::F16) return nullptr;
            return l;
        };
        const Load *la = operand(mul->a), *lb = operand(mul->b);
        if (!la || !lb) fail("operands must be float16 values widened to float32");
        std::set<std::string> vars = var_set(loops);
        auto ac = affine_in(st->index, vars), aa = affine_in(la->index, vars), ab = affine_in(lb->index, vars);
        if (!ac || !aa || !ab) fail("indices are not affine");
        // The n loop: C moves by 1 and one operand (B) moves with it, the other (A) does not.
        std::string n_name, m_name;
        int64_t n_ext = 1, m_ext = 1;
        size_t first = loops.size() - 1;
        for (size_t i = loops.size() - 1; i-- > 0 && i + 3 >= loops.size();) {
            const Loop &l = loops[i];
            if (n_name.empty() && ac->of(l.name) == 1 && (aa->of(l.name) == 0) != (ab->of(l.name) == 0)) {
                if (aa->of(l.name) != 0) std::swap(la, lb), std::swap(aa, ab);  // B is the one moving with n
                n_name = l.name, n_ext = l.extent;
            } else if (ac->of(l.name) > 1) {
                m_name = l.name, m_ext = l.extent;
            } else {
                break;
            }
            first = i;
        }
        if (n_name.empty()) fail("no loop over n along which C is contiguous");
        if (aa->of(kname) != 1) fail("A must be sticked on k (contiguous along the reduction)");
        if (!m_name.empty() && (ab->of(m_name) != 0 || aa->of(m_name) <= 0)) fail("B must not move with m");
        // B sticked on n is what the PE array takes; B sticked on k is restickified first.
        const bool b_transposed = ab->of(kname) == 1;
        if (!b_transposed && ab->of(n_name) != 1) fail("B must be sticked on n or on k");
        int64_t k_ext = loops.back().extent;
        int64_t lda = m_name.empty() ? 0 : aa->of(m_name) * 2;
        int64_t ldb = b_transposed ? (n_ext + sb_ / 2 - 1) / (sb_ / 2) * sb_ : ab->of(kname) * 2;
        int64_t ldc = m_name.empty() ? 0 : ac->of(m_name) * 4;
        if (b_transposed && ab->of(n_name) * 2 != (k_ext * 2 + sb_ - 1) / sb_ * sb_)
            fail("B sticked on k must have rows of k padded to whole sticks");
        // Row strides must be whole sticks (the layouts pad K and N); a single row needs none.
        if (m_name.empty()) lda = (k_ext * 2 + sb_ - 1) / sb_ * sb_, ldc = (n_ext * 4 + sb_ - 1) / sb_ * sb_;
        for (int64_t ld : {lda, ldb, ldc})
            if (ld % sb_) fail("operand rows are not whole sticks");
        MatmulDesc md;
        md.m = int32_t(m_ext), md.n = int32_t(n_ext), md.k = int32_t(k_ext);
        md.lda = int32_t(lda), md.ldb = int32_t(ldb), md.ldc = int32_t(ldc);
        int di = b_.mm_desc(md);
        std::set<std::string> inner;
        for (size_t i = first; i < loops.size(); i++) inner.insert(loops[i].name);
        emit_loops(loops, first, [&] {
            auto base = [&](const Load *l, DType t) {
                Operand o;
                o.type = t;
                o.buf = l->name;
                o.base = lx_base(l->name);
                auto a = affine_in(l->index, inner);
                o.index = simplify(a->rest);
                if (!provably_multiple(o.index, plan_.lanes(t))) fail("an operand does not start on a stick boundary");
                return o;
            };
            Operand oa = base(la, DType::F16), ob = base(lb, DType::F16), oc = base(cl, DType::F32);
            std::string bname = lb->name;
            if (b_transposed) {
                // Restickify B (n rows of k) into k rows of n, at the restickify rate.
                Operand t = new_temp(DType::F16, k_ext * ldb);
                vinstr(Opcode::VTRANSPOSE, DType::F16, t, &ob, nullptr, n_ext, k_ext);
                ob = t;
                bname = t.buf;
            }
            before(QPE, {la->name, bname, st->name}, {st->name});
            std::vector<Reg> regs;
            Lx xc = addr(oc, regs), xa = addr(oa, regs), xb = addr(ob, regs);
            b_.matmul(kTagPE, xc, xa, xb, di, true);
            for (Reg r : regs) b_.release(r);
            after(kTagPE, QPE, {la->name, bname, st->name}, {st->name});
            reset_temps();
        });
    }

    struct Reduction {
        Opcode op;
        Expr value;
    };
    std::optional<Reduction> reduction_of(const Store *st) {
        auto match = [&](const Expr &acc, const Expr &v, Opcode op) -> std::optional<Reduction> {
            const Load *l = acc.as<Load>();
            if (l && l->name == st->name && equal(l->index, st->index)) return Reduction{op, v};
            return std::nullopt;
        };
        if (const Add *a = st->value.as<Add>()) {
            if (auto r = match(a->a, a->b, Opcode::VREDSUM)) return r;
            return match(a->b, a->a, Opcode::VREDSUM);
        }
        if (const Max *a = st->value.as<Max>()) {
            if (auto r = match(a->a, a->b, Opcode::VREDMAX)) return r;
            return match(a->b, a->a, Opcode::VREDMAX);
        }
        if (const Min *a = st->value.as<Min>()) {
            if (auto r = match(a->a, a->b, Opcode::VREDMIN)) return r;
            return match(a->b, a->a, Opcode::VREDMIN);
        }
        return std::nullopt;
    }

    void emit_reduction(const std::vector<Loop> &loops, const Store *st, const Reduction &red) {
        const BufferInfo &dst = plan_.buffer(st->name);
        std::set<std::string> all = var_set(loops);
        auto ai = affine_in(st->index, all);
        if (!ai) unsupported("reduction destination index is not affine");
        // Reduction loops: the innermost loops the destination does not depend on.
        size_t k = loops.size();
        Domain d;
        d.padded = true;
        while (k > 0 && ai->of(loops[k - 1].name) == 0) {
            const Loop &l = loops[k - 1];
            d.lane.push_back({l.name, d.elems});
            d.elems *= l.extent;
            k--;
        }
        if (d.lane.empty()) unsupported("a reduction without a reduction loop");
        Expr v = red.value;
        DType vt = dtype_of(v.type());
        uint8_t mode = kAccumulate;
        if (dst.type == DType::F32 && vt == DType::F16) mode |= kDstF32;
        if (const Cast *c = v.as<Cast>(); c && dst.type == DType::F32 && dtype_of(c->value.type()) == DType::F16) {
            v = c->value;  // accumulate the fp16 values in fp32 directly
            vt = DType::F16;
            mode |= kDstF32;
        }
        if (dst.type != vt && !(mode & kDstF32)) unsupported("reduces " + std::string(dtype_name(vt)) + " values into " + dtype_name(dst.type));
        // A group: the next loop out, when destinations are consecutive and source rows back to back.
        if (k > 0 && ai->of(loops[k - 1].name) == 1) {
            const Loop &l = loops[k - 1];
            AccessCoeffs acc;
            collect(v, false, acc);
            int64_t row = sticks_per_group(d, vt) * plan_.lanes(vt);
            bool ok = true;
            for (auto &s : acc.scal) {
                auto a = affine_in(s.first, all);
                if (!a) continue;
                bool lane = false;
                for (auto &lv : d.lane) lane |= a->of(lv.first) != 0;
                int64_t c = a->of(l.name);
                ok &= lane ? c == row : (c == 0 || c == 1);
            }
            if (ok) {
                d.group_var = l.name;
                d.groups = l.extent;
                k--;
            }
        }
        emit_loops(loops, k, [&] {
            Operand o;
            o.kind = Operand::Scal;
            o.type = dst.type;
            o.buf = st->name;
            o.base = lx_base(st->name);
            auto a = affine_in(st->index, d.vars());
            o.index = simplify(a->rest);
            Operand src = gen(v, d, nullptr);
            if (src.kind != Operand::Vec) unsupported("reduces a value that does not vary along the reduction");
            int64_t sticks = sticks_per_group(d, vt);
            vinstr(red.op, vt, o, &src, nullptr, sticks, d.groups, mode, int32_t(d.elems));
            free_temp(src);
            reset_temps();
        });
    }

    void emit_element_store(const std::vector<Loop> &loops, const Store *st) {
        const BufferInfo &dst = plan_.buffer(st->name);
        std::set<std::string> all = var_set(loops);
        auto ai = affine_in(st->index, all);
        if (!ai) unsupported("store index is not affine");
        Domain d;
        d.padded = true;
        size_t k = loops.size();
        AccessCoeffs acc;
        collect(st->value, false, acc);
        auto coeff = [&](const Expr &idx, const std::string &v) {
            auto a = affine_in(idx, all);
            return a ? a->of(v) : INT64_MIN;
        };
        while (k > 0) {
            const Loop &l = loops[k - 1];
            if (ai->of(l.name) != d.elems) break;
            bool ok = true;
            for (auto &s : acc.scal) {
                int64_t c = coeff(s.first, l.name);
                ok &= c == 0 || c == d.elems;
            }
            if (!ok) break;
            d.lane.push_back({l.name, d.elems});
            d.elems *= l.extent;
            k--;
        }
        // No loop over consecutive elements: one element (a stick whose other lanes must be free).
        if (d.lane.empty() && k != 0)
            unsupported("stores one element at a time; stick_vectorize it or make its innermost loop run over "
                        "consecutive elements");
        int64_t lanes_t = plan_.lanes(dst.type);
        emit_loops(loops, k, [&] {
            Operand o;
            o.kind = Operand::Vec;
            o.type = dst.type;
            o.buf = st->name;
            o.base = lx_base(st->name);
            auto a = affine_in(st->index, d.vars());
            o.index = simplify(a->rest);
            if (!provably_multiple(o.index, lanes_t))
                unsupported("stores a run that does not start on a stick boundary");
            // A partial last stick overwrites the elements after the run: only allowed at the end.
            if (d.elems % lanes_t && !dst.staging) {
                auto c = const_int(o.index);
                if (!c || *c + d.elems != dst.elems)
                    unsupported("stores runs of " + std::to_string(d.elems) + " elements inside a larger buffer, not "
                                "whole sticks of " + std::to_string(lanes_t));
            }
            gen(st->value, d, &o);
            reset_temps();
        });
    }

    void reset_temps() {
        for (TempSlot &t : temps_) t.used = false;
    }

    // ---------------------------------------------------------------- DMA
    void emit_dma(const DmaCall &d, int tag, bool managed) {
        const BufferInfo &dev = plan_.buffer(d.dram);
        const BufferInfo &lx = plan_.buffer(d.lx);
        func_ = dev.func;
        int eb = dtype_bytes(dev.type);
        DmaDesc desc;
        desc.sticks = int32_t((d.run * eb + sb_ - 1) / sb_);
        for (size_t i = 0; i < d.dims.size() && i < 3; i++) {
            desc.count[i] = int32_t(d.dims[i].count);
            desc.dram_stride[i] = d.dims[i].dram_stride * eb;
            desc.lx_stride[i] = int32_t(d.dims[i].lx_stride * eb);
        }
        int di = descriptor(desc);
        std::set<std::string> reads, writes;
        if (d.store) reads = {d.lx}, writes = {d.dram};
        else reads = {d.dram}, writes = {d.lx};
        Queue q = d.store ? QStore : QLoad;
        if (!managed) before(q, reads, writes);
        record_span(d, dev, eb);
        Reg off = eval(simplify(d.dram_offset * eb));
        Operand lo;
        lo.type = lx.type;
        lo.base = lx_base(d.lx);
        lo.index = d.lx_offset;
        std::vector<Reg> regs;
        Lx la = addr(lo, regs);
        if (d.store) b_.dma_st(tag, dev.program_buffer, off, 0, la, di);
        else b_.dma_ld(tag, dev.program_buffer, off, 0, la, di);
        b_.release(off);
        for (Reg r : regs) b_.release(r);
        if (!managed) after(tag, q, reads, writes);
    }

    // The device-memory range each core reaches in each buffer, from the loops' extents.
    void record_span(const DmaCall &d, const BufferInfo &dev, int eb) {
        Scope<Interval> scope;
        for (auto &kv : extents_) scope.push(kv.first, Interval(Expr(0), Expr(int32_t(kv.second - 1))));
        int64_t extra = (d.run * eb + sb_ - 1) / sb_ * sb_;
        for (const DmaDim &dim : d.dims) extra += (dim.count - 1) * dim.dram_stride * eb;
        for (int c = 0; c < plan_.num_cores; c++) {
            scope.push(kCoreIdVar, Interval::single_point(Expr(c)));
            Interval in = bounds_of_expr_in_scope(d.dram_offset, scope);
            scope.pop(kCoreIdVar);
            if (!in.has_lower_bound() || !in.has_upper_bound()) continue;
            auto lo = const_int(in.min);
            auto hi = const_int(in.max);
            if (!lo || !hi) continue;
            auto &span = spans_[{c, d.dram}];
            int64_t a = *lo * eb, b2 = *hi * eb + extra;
            if (span.second == 0) span = {a, b2};
            else span = {std::min(span.first, a), std::max(span.second, b2)};
        }
    }

public:
    // Throws if a core reaches more contiguous device memory in one buffer than the machine allows.
    void check_spans() const {
        for (const auto &kv : spans_) {
            int64_t span = kv.second.second - kv.second.first;
            if (span > plan_.machine.max_span_bytes) {
                const BufferInfo &b = plan_.buffer(kv.first.second);
                throw_error("Func ", b.func, ": core ", kv.first.first, " addresses ", span, " bytes of buffer '",
                            b.name, "', more than the per-core span limit of ", plan_.machine.max_span_bytes,
                            " bytes; ring_split the work over more cores");
            }
        }
    }

private:
    int descriptor(const DmaDesc &d) {
        for (size_t i = 0; i < descs_.size(); i++) {
            const DmaDesc &e = descs_[i].first;
            if (e.sticks == d.sticks && e.count == d.count && e.dram_stride == d.dram_stride && e.lx_stride == d.lx_stride)
                return descs_[i].second;
        }
        int idx = b_.dma_desc(d);
        descs_.push_back({d, idx});
        return idx;
    }

    // Every core's partials are complete before the collective, which all cores join.
    void emit_ring_reduce(const RingReduceCall &rr) {
        const BufferInfo &bi = plan_.buffer(rr.lx);
        func_ = bi.func;
        drain();
        Operand o;
        o.type = bi.type;
        o.base = lx_base(rr.lx);
        o.index = rr.offset;
        std::vector<Reg> regs;
        Lx at = addr(o, regs);
        constexpr int kTagRing = 7;
        b_.ring_reduce(bi.type, kTagRing, RedOp(rr.op), at, int32_t(rr.elems * dtype_bytes(bi.type) / sb_));
        b_.wait_tag(kTagRing);
        for (Reg r : regs) b_.release(r);
    }

    // ---------------------------------------------------------------- statements
    void emit(const Stmt &s) {
        if (!s.defined()) return;
        if (const Block *op = s.as<Block>()) {
            emit(op->first);
            emit(op->rest);
        } else if (const ProducerConsumer *op = s.as<ProducerConsumer>()) {
            emit(op->body);
        } else if (const Allocate *op = s.as<Allocate>()) {
            emit(op->body);
            release_buffer(op->name);
        } else if (s.as<Free>()) {
        } else if (const Evaluate *op = s.as<Evaluate>()) {
            if (auto d = as_dma(s)) {
                auto shared = plan_.ring_shared_loads.find(op);
                if (shared != plan_.ring_shared_loads.end()) emit_shared_load(*d, shared->second);
                else emit_dma(*d, d->store ? kTagStore : kTagLoad, false);
            }
            else if (auto rr = as_ring_reduce(s)) emit_ring_reduce(*rr);
            else if (is_barrier(s)) {
                drain();
                b_.barrier();
            } else if (!is_const(op->value)) {
                throw_error("kernel ", plan_.kernel_name, ": unsupported statement ", s);
            }
        } else if (const IfThenElse *op = s.as<IfThenElse>()) {
            Reg c = eval(op->condition);
            b_.if_(c);
            b_.release(c);
            emit(op->then_case);
            drain();
            if (op->else_case.defined()) {
                b_.else_();
                emit(op->else_case);
                drain();
            }
            b_.end_if();
        } else if (const Store *op = s.as<Store>()) {
            emit_nest({}, op);
        } else if (const For *op = s.as<For>()) {
            emit_for(op);
        } else {
            throw_error("kernel ", plan_.kernel_name, ": unsupported statement ", s);
        }
    }

    void emit_for(const For *op) {
        auto ext = const_int(op->extent);
        if (!ext) throw_error("kernel ", plan_.kernel_name, ": loop ", op->name, " has a non-constant extent");
        if (plan_.pipelines.count(op)) return emit_pipeline(op, *ext);
        std::vector<Loop> loops;
        Stmt cur = Stmt(op);
        while (const For *f = cur.as<For>()) {
            auto e = const_int(f->extent);
            if (!e || plan_.pipelines.count(f)) break;
            loops.push_back(Loop{f->name, *e});
            cur = f->body;
        }
        if (const Store *st = cur.as<Store>()) return emit_nest(loops, st);
        // A general loop.
        Reg r = b_.alloc();
        b_.loop(r, int32_t(*ext));
        vars_[op->name] = r;
        extents_[op->name] = *ext;
        emit(op->body);
        drain();
        b_.end_loop();
        vars_.erase(op->name);
        b_.release(r);
    }

    // Double-buffered loop: loads for the next iteration are issued before this one computes.
    void emit_pipeline(const For *op, int64_t n) {
        const std::vector<std::string> &tiles = plan_.pipelines.at(op);
        auto is_tile = [&](const std::string &b) { return std::find(tiles.begin(), tiles.end(), b) != tiles.end(); };
        std::vector<Stmt> seq = body_sequence(op->body);
        std::vector<DmaCall> loads, stores;
        size_t first = 0, last = seq.size();
        while (first < seq.size()) {
            auto d = as_dma(seq[first]);
            if (!d || d->store || !is_tile(d->lx)) break;
            loads.push_back(*d);
            first++;
        }
        while (last > first) {
            auto d = as_dma(seq[last - 1]);
            if (!d || !d->store || !is_tile(d->lx)) break;
            stores.insert(stores.begin(), *d);
            last--;
        }
        drain();
        Reg i = b_.alloc(), next = b_.alloc(), pair = b_.alloc(), cond = b_.alloc();
        // Ring sharing (plan_ring_shares): `head` is set on the first core of each run, which reads
        // the shared tiles; `forward` on every core but the last of a run, which passes them on.
        auto share_it = plan_.ring_shares.find(op);
        const KernelPlan::RingShare *share = share_it == plan_.ring_shares.end() ? nullptr : &share_it->second;
        Reg head, forward;
        if (share) {
            head = b_.alloc();
            forward = b_.alloc();
            b_.core_id(head);
            b_.li(forward, share->group);
            b_.op3(Opcode::REM, head, head, forward);  // position in the run
            b_.li(forward, share->group - 1);
            b_.op3(Opcode::CMPLT, forward, head, forward);
            b_.op3(Opcode::CMPEQ, head, head, kZero);
        }
        const uint32_t forward_tags = share ? (3u << kTagForward) : 0;
        auto issue_loads = [&](Reg at, int parity) {
            vars_[op->name] = at;
            for (const std::string &t : tiles) parity_[t] = parity;
            // The tile this parity's copy held two iterations ago must have left for the next core.
            if (share) b_.wait(1u << (kTagForward + parity));
            for (const DmaCall &d : loads) {
                if (!share || !share->tiles.count(d.lx)) {
                    emit_dma(d, parity, true);
                    continue;
                }
                b_.if_(head);
                emit_dma(d, parity, true);
                b_.else_();
                emit_ring_tile(d, parity, /*send=*/false);
                b_.end_if();
            }
        };
        extents_[op->name] = n;
        b_.li(i, 0);
        issue_loads(i, 0);
        b_.loop(pair, int32_t((n + 1) / 2));
        for (int p = 0; p < 2; p++) {
            b_.muli(i, pair, 2);
            if (p) b_.addi(i, i, 1);
            bool guard_this = p == 1 && n % 2;
            if (guard_this) {
                b_.li(cond, n);
                b_.op3(Opcode::CMPLT, cond, i, cond);
                b_.if_(cond);
            }
            if (!loads.empty()) {
                b_.addi(next, i, 1);
                b_.li(cond, n);
                b_.op3(Opcode::CMPLT, cond, next, cond);
                b_.if_(cond);
                issue_loads(next, 1 - p);
                b_.end_if();
            }
            b_.wait((1u << p) | (1u << (3 + p)));
            vars_[op->name] = i;
            for (const std::string &t : tiles) parity_[t] = p;
            if (share) {
                // This iteration's shared tiles have arrived: pass them on while the body computes.
                b_.if_(forward);
                for (const DmaCall &d : loads)
                    if (share->tiles.count(d.lx)) emit_ring_tile(d, kTagForward + p, /*send=*/true);
                b_.end_if();
            }
            for (size_t s = first; s < last; s++) emit(seq[s]);
            drain();
            for (const DmaCall &d : stores) emit_dma(d, 3 + p, true);
            if (guard_this) b_.end_if();
        }
        b_.end_loop();
        b_.wait((1u << 3) | (1u << 4) | forward_tags);
        for (const std::string &t : tiles) parity_.erase(t);
        vars_.erase(op->name);
        for (Reg r : {i, next, pair, cond}) b_.release(r);
        if (share) {
            b_.release(head);
            b_.release(forward);
        }
    }

    // A load shared over runs of g cores outside any pipeline: the run's first core reads it, the
    // others receive it from the previous core; once it is in, every core but the last passes it on.
    // The forward stays pending on the tile, so the next write to it waits for it.
    void emit_shared_load(const DmaCall &d, int g) {
        const std::set<std::string> reads{d.dram}, writes{d.lx};
        before(QLoad, reads, writes);
        before(QRing, reads, writes);
        Reg pos = b_.alloc(), flag = b_.alloc();
        b_.core_id(pos);
        b_.li(flag, g);
        b_.op3(Opcode::REM, pos, pos, flag);
        b_.op3(Opcode::CMPEQ, flag, pos, kZero);
        b_.if_(flag);
        emit_dma(d, kTagLoad, true);
        b_.else_();
        emit_ring_tile(d, kTagLoad, /*send=*/false);
        b_.end_if();
        b_.wait_tag(kTagLoad);
        b_.li(flag, g - 1);
        b_.op3(Opcode::CMPLT, flag, pos, flag);
        b_.if_(flag);
        emit_ring_tile(d, kTagForward, /*send=*/true);
        b_.end_if();
        b_.release(pos);
        b_.release(flag);
        after(kTagForward, QRing, {d.lx}, {});
    }

    // A shared tile over the ring: received from the previous core into the tile's LX range (with
    // the load's tag), or sent from it to the next core. plan_ring_shares checked that the range is
    // contiguous.
    void emit_ring_tile(const DmaCall &d, int tag, bool send) {
        const BufferInfo &lx = plan_.buffer(d.lx);
        const int64_t eb = dtype_bytes(lx.type);
        int64_t bytes = (d.run * eb + sb_ - 1) / sb_ * sb_;
        for (const DmaDim &dim : d.dims) bytes *= dim.count;
        Operand lo;
        lo.type = lx.type;
        lo.base = lx_base(d.lx);
        lo.index = d.lx_offset;
        std::vector<Reg> regs;
        Lx la = addr(lo, regs);
        if (send) b_.ring_send(tag, +1, la, int32_t(bytes / sb_));
        else b_.ring_recv(tag, -1, la, int32_t(bytes / sb_));
        for (Reg r : regs) b_.release(r);
    }

    struct TempSlot {
        int64_t offset, bytes;
        bool used;
    };

    KernelPlan &plan_;
    ProgramBuilder &b_;
    int64_t sb_;
    std::map<std::string, Reg> vars_;
    std::map<std::string, int> parity_;
    std::vector<Pending> pending_;
    std::vector<TempSlot> temps_;
    int32_t temp_base_ = 0;
    int64_t temp_peak_ = 0;
    std::vector<std::pair<DmaDesc, int>> descs_;
    std::string func_;
    std::map<std::string, int64_t> extents_;
    std::map<std::pair<int, std::string>, std::pair<int64_t, int64_t>> spans_;
};

}  // namespace

DeviceProgram select_instructions(const Stmt &s, KernelPlan &plan, const std::vector<std::string> &input_order,
                                  const std::string &output) {
    ProgramBuilder b(plan.kernel_name, plan.num_cores);
    // Halide makes Func names unique per process ("softmax$1"); the program shows the name the
    // author wrote unless two buffers of this kernel would then share it.
    std::map<std::string, int> base_count;
    auto base = [](const std::string &n) { return n.substr(0, n.find('$')); };
    for (auto &kv : plan.buffers)
        if (kv.second.in_device_memory()) base_count[base(kv.first)]++;
    auto add = [&](const std::string &name, BufferKind kind) {
        BufferInfo &bi = plan.buffer(name);
        std::string shown = base_count[base(name)] == 1 ? base(name) : name;
        bi.program_buffer = b.buffer(shown, kind, bi.type, bi.shape, bi.layout);
    };
    for (const std::string &n : input_order) add(n, BufferKind::Input);
    add(output, BufferKind::Output);
    for (auto &kv : plan.buffers)
        if (kv.second.place == Place::DeviceTemp) add(kv.first, BufferKind::Temp);
    Selector sel(plan, b);
    sel.run(s);
    sel.check_spans();
    return b.finish();
}

}  // namespace spyre
