// Instruction selection: matmul nests marked by pe_matmul become MATMUL on the PE array.
#include "selector.h"

namespace spyre {
namespace selection {

bool Selector::ends_with(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

namespace {
// The loops down to a store, and the store; nullptr when s is not such a chain. Nothing may sit
// between the loops: the chain is then the nest emit_for collects.
const Store *loop_chain(Stmt s, std::vector<const For *> &loops) {
    while (const ProducerConsumer *pc = s.as<ProducerConsumer>()) s = pc->body;
    while (const For *f = s.as<For>()) loops.push_back(f), s = f->body;
    return s.as<Store>();
}

// The first statement s runs.
Stmt first_statement(Stmt s) {
    while (true) {
        if (const Block *b = s.as<Block>()) s = b->first;
        else if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) s = pc->body;
        else return s;
    }
}

int64_t const_extent_product(const std::vector<const For *> &loops, size_t n) {
    int64_t p = 1;
    for (size_t i = 0; i < n; i++) {
        auto e = as_const_int(loops[i]->extent);
        if (!e) return -1;
        p *= *e;
    }
    return p;
}
}  // namespace

bool Selector::defer_zero_fill(const Stmt &fill, const Stmt &next) {
    std::vector<const For *> fl, ml;
    const Store *fs = loop_chain(fill, fl);
    if (!fs || !is_const_zero(fs->value) || !is_const_one(fs->predicate) || !plan_.has(fs->name)) return false;
    const BufferInfo &bi = plan_.buffer(fs->name);
    if (bi.place != Place::LX) return false;
    const int64_t elems = bi.elems;
    // The fill writes every element of the accumulator once ...
    const int64_t filled = const_extent_product(fl, fl.size());
    if (filled < 0 || filled * fs->value.type().lanes() != elems) return false;
    // ... and the next statement is a matmul nest (m, n, k_pe at most, nothing outside them) that
    // writes all of it, one MATMUL over the whole reduction.
    const Store *ms = loop_chain(first_statement(next), ml);
    if (!ms || ms->name != fs->name || ml.empty() || ml.size() > 3 || !plan_.loops.pe(ml.back()->name))
        return false;
    for (const For *f : ml)
        if (plan_.pipelines.count(f) || plan_.loops.dma_phases(f->name)) return false;
    // Constant extents throughout (emit_for collects the whole nest) and m x n covering it.
    if (const_extent_product(ml, ml.size()) < 0 || const_extent_product(ml, ml.size() - 1) != elems) return false;
    st_.deferred_fill_stmt = fill;
    st_.deferred_buf = fs->name;
    st_.deferred_for = ml.front();
    return true;
}

Stmt Selector::take_deferred_fill() {
    Stmt fill = st_.deferred_fill_stmt;
    st_.deferred_for = nullptr, st_.deferred_buf.clear(), st_.deferred_fill_stmt = Stmt();
    return fill;
}

void Selector::flush_deferred_fill() {
    if (st_.deferred_for) emit(take_deferred_fill());
}

void Selector::emit_matmul(const std::vector<Loop> &loops, const Store *st) {
    const std::string &kname = loops.back().name;
    auto fail = [&](const std::string &why) {
        unsupported("pe_matmul: " + why +
                    " (the update must be f(n, m) += f32(A(k, m)) * f32(B(n, k)) of float16 A and B, or "
                    "i32(A(k, m)) * i32(B(n, k)) of int8 A and B)");
    };
    const BufferInfo &cb = plan_.buffer(st->name);
    if (cb.type != DType::F32 && cb.type != DType::I32)
        fail("the accumulator must be float32 (or int32, for int8 operands)");
    // The operands' type: fp16 into an fp32 accumulator, int8 into an int32 one.
    const DType in_t = cb.type == DType::I32 ? DType::I8 : DType::F16;
    const int64_t eb = dtype_bytes(in_t), lanes_in = sb_ / eb;
    const Add *add = st->value.as<Add>();
    if (!add) fail("not an accumulation");
    Expr acc = add->a, prod = add->b;
    if (!(acc.as<Load>() && acc.as<Load>()->name == st->name)) std::swap(acc, prod);
    // Halide makes the int32 product of two int8 values a 16-bit one, widened: i32(i16(a) * i16(b)).
    if (const Cast *c = prod.as<Cast>(); c && in_t == DType::I8 && c->type.is_int() && c->value.as<Mul>())
        prod = c->value;
    const Load *cl = acc.as<Load>();
    const Mul *mul = prod.as<Mul>();
    if (!cl || cl->name != st->name || !equal(cl->index, st->index) || !mul) fail("not an accumulation of a product");
    auto operand = [&](const Expr &e) -> const Load * {
        const Cast *c = e.as<Cast>();
        const Load *l = c ? c->value.as<Load>() : e.as<Load>();
        if (!l || l->type.is_vector() || !plan_.has(l->name) || plan_.buffer(l->name).type != in_t) return nullptr;
        return l;
    };
    const Load *la = operand(mul->a), *lb = operand(mul->b);
    if (!la || !lb)
        fail(in_t == DType::I8 ? "operands must be int8 values widened to int32"
                               : "operands must be float16 values widened to float32");
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
    // No n loop: a single output column (Halide drops loops of extent 1), A and B as written.
    if (n_name.empty() && ac->of(kname) != 0) fail("no loop over n along which C is contiguous");
    if (aa->of(kname) != 1) fail("A must be sticked on k (contiguous along the reduction)");
    if (!m_name.empty() && (ab->of(m_name) != 0 || aa->of(m_name) <= 0)) fail("B must not move with m");
    // B sticked on n is what the PE array takes; B sticked on k is restickified first.
    const bool b_transposed = ab->of(kname) == 1;
    if (!b_transposed && !n_name.empty() && ab->of(n_name) != 1) fail("B must be sticked on n or on k");
    int64_t k_ext = loops.back().extent;
    int64_t lda = m_name.empty() ? 0 : aa->of(m_name) * eb;
    int64_t ldb = b_transposed ? (n_ext + lanes_in - 1) / lanes_in * sb_ : ab->of(kname) * eb;
    int64_t ldc = m_name.empty() ? 0 : ac->of(m_name) * 4;
    if (b_transposed && !n_name.empty() && ab->of(n_name) * eb != (k_ext * eb + sb_ - 1) / sb_ * sb_)
        fail("B sticked on k must have rows of k padded to whole sticks");
    // Row strides must be whole sticks (the layouts pad K and N); a single row needs none.
    if (m_name.empty()) lda = (k_ext * eb + sb_ - 1) / sb_ * sb_, ldc = (n_ext * 4 + sb_ - 1) / sb_ * sb_;
    for (int64_t ld : {lda, ldb, ldc})
        if (ld % sb_) fail("operand rows are not whole sticks");
    MatmulDesc md;
    md.m = int32_t(m_ext), md.n = int32_t(n_ext), md.k = int32_t(k_ext);
    md.lda = int32_t(lda), md.ldb = int32_t(ldb), md.ldc = int32_t(ldc);
    // The accumulator's zero fill was held back (defer_zero_fill): the one MATMUL overwrites it.
    const bool overwrite = st_.deferred_for && st_.deferred_buf == st->name && first == 0 &&
                           loops.front().name == st_.deferred_for->name;
    if (overwrite) take_deferred_fill();  // not emitted
    else flush_deferred_fill();
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
        Operand oa = base(la, in_t), ob = base(lb, in_t), oc = base(cl, cb.type);
        std::string bname = lb->name;
        if (b_transposed) {
            // Restickify B (n rows of k) into k rows of n, at the restickify rate.
            Operand t = new_temp(in_t, k_ext * ldb);
            vinstr(Opcode::VTRANSPOSE, in_t, t, &ob, nullptr, n_ext, k_ext);
            ob = t;
            bname = t.buf;
        }
        before(QPE, {la->name, bname, st->name}, {st->name});
        std::vector<Reg> regs;
        Lx xc = addr(oc, regs), xa = addr(oa, regs), xb = addr(ob, regs);
        b_.matmul(kTagPE, xc, xa, xb, di, !overwrite, in_t);
        for (Reg r : regs) b_.release(r);
        after(kTagPE, QPE, {la->name, bname, st->name}, {st->name});
        reset_temps();
    });
}

}  // namespace selection
}  // namespace spyre
